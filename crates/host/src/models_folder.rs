//! The models folder at a glance, the same for every front end: `tooltrail models list` and
//! Settings → Models (and the first-run guide) read one [`ModelsOverview`]; each only lays it
//! out (a table, or the window's view).

use std::path::PathBuf;

use tooltrail_runtime::models::{
    Catalogue, CatalogueEntry, InstalledModel, ModelStore, PendingPull,
};
use tooltrail_runtime::supervisor::{Runtime, RuntimeStatus, SearchPlaces};
use tooltrail_settings::{ConfigFile, LOCAL_PROVIDER_ID};

use crate::error::ChooseError;

/// What is in the models folder, what could be pulled, and what serves now.
pub struct ModelsOverview {
    /// The models folder.
    pub dir: PathBuf,
    /// The model `[local] model` names.
    pub local_model: Option<String>,
    /// Questions go to the `local` provider (and it is Tooltrail's, not a provider of the
    /// user's own with that id).
    pub local_active: bool,
    pub installed: Vec<InstalledModel>,
    /// Downloads stopped before they finished; pulling again carries on.
    pub unfinished: Vec<PendingPull>,
    /// The built-in catalogue, in its order.
    pub catalogue: Vec<CatalogueEntry>,
    /// The runtime serving a model now.
    pub runtime: Option<RuntimeStatus>,
    /// Why no llama-server can be run, as the runtime says it; `None` when one was found.
    pub server_problem: Option<String>,
    /// Whether this system can serve a model Tooltrail downloads at all.
    pub runtime_supported: bool,
}

impl ModelsOverview {
    /// Reads the models folder, config.toml and the runtime's state. Blocking: it reads
    /// files and `/proc`.
    pub fn read(config: &std::path::Path) -> Result<Self, ChooseError> {
        let store = ModelStore::open_default()?;
        let file = ConfigFile::read(config)?;
        // A provider of the user's own with the id `local` is not Tooltrail's server.
        let own_local = file.providers.iter().any(|p| p.id == LOCAL_PROVIDER_ID);
        let local_active = !own_local && file.active_provider.as_deref() == Some(LOCAL_PROVIDER_ID);
        Ok(Self {
            dir: store.dir().to_path_buf(),
            local_model: file.local.model,
            local_active,
            installed: store.list()?,
            unfinished: store.pending()?,
            catalogue: Catalogue::builtin()?.entries().to_vec(),
            runtime: tooltrail_settings::data_dir()
                .ok()
                .and_then(|dir| Runtime::new(&dir).status()),
            server_problem: SearchPlaces::from_env()
                .find()
                .err()
                .map(|error| error.to_string()),
            runtime_supported: tooltrail_runtime::supervisor::runtime_supported(),
        })
    }

    /// Whether a model of that name is installed.
    pub fn is_installed(&self, name: &str) -> bool {
        self.installed.iter().any(|model| model.name == name)
    }

    /// The catalogue's models not installed yet.
    pub fn available(&self) -> Vec<&CatalogueEntry> {
        self.catalogue
            .iter()
            .filter(|entry| !self.is_installed(&entry.name))
            .collect()
    }
}

/// A model's size in parameters as people say it (`1.7B`, `270M`): from the file's size
/// label, else from its counted weights.
pub fn parameters_label(model: &InstalledModel) -> Option<String> {
    if let Some(label) = &model.metadata.size_label {
        return Some(label.clone());
    }
    model.metadata.parameter_count.map(|n| match n {
        n if n >= 1_000_000_000 => format!("{:.1}B", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{}M", n / 1_000_000),
        n => n.to_string(),
    })
}
