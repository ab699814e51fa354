//! Choosing where questions go, the same way in every front end: `tooltrail providers use`,
//! `tooltrail models use`, and the app's first-run guide and Settings → Models.
//!
//! - [`look`]: the model servers running on this machine (and at `detect_urls`), with how long
//!   the look took.
//! - [`use_url`]: a server at a URL becomes the active provider — the provider already saved
//!   for that URL, or a new one named by what answered there ("Ollama"), with the model asked
//!   for or the first one that calls tools.
//! - [`use_local_model`]: an installed model becomes the `local` provider's, and `local` the
//!   active provider.
//!
//! Each writes `config.toml` through [`ConfigEditor`], which keeps the file's comments and
//! every field it does not set.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tooltrail_host::ChooseError> {
//! let config = tooltrail_settings::config_path()?;
//! let chosen = tooltrail_host::choose::use_url(&config, "http://127.0.0.1:11434", None).await?;
//! println!("questions go to {} now", chosen.provider.name);
//! # Ok(()) }
//! ```

use std::path::Path;
use std::time::{Duration, Instant};

use tooltrail_runtime::detect::{
    FoundModel, FoundServer, ServerKind, Support, Target, default_targets, detect,
};
use tooltrail_runtime::models::{Catalogue, InstalledModel, ModelError, ModelStore};
use tooltrail_settings::{ConfigEditor, ConfigFile, LOCAL_PROVIDER_ID, Provider};

use crate::error::ChooseError;

/// What one look for model servers found.
#[derive(Debug, Clone)]
pub struct Looked {
    pub targets: Vec<Target>,
    pub found: Vec<FoundServer>,
    pub took: Duration,
}

/// Looks at the usual addresses and `config_urls` (`detect_urls` of `config.toml`) at once.
pub async fn look(config_urls: &[String]) -> Result<Looked, ChooseError> {
    let targets = default_targets(config_urls)?;
    let started = Instant::now();
    let found = detect(&targets).await;
    Ok(Looked {
        targets,
        found,
        took: started.elapsed(),
    })
}

/// The model to suggest at a server: the first that calls tools, else the first.
pub fn suggested_model(server: &FoundServer) -> Option<&FoundModel> {
    server
        .models
        .iter()
        .find(|model| model.tools == Support::Yes)
        .or_else(|| server.models.first())
}

/// A server made the active provider.
#[derive(Debug, Clone)]
pub struct UsedServer {
    /// The provider as saved (its id is new when the URL had none).
    pub provider: Provider,
    /// What answered at the URL just now; `None` when nothing did.
    pub found: Option<FoundServer>,
}

/// Makes the server at `url` the active provider of the config file at `config`. A server's
/// own address (`http://host:11434`) becomes its API's (`…/v1`), as detection takes it,
/// whether or not anything answers there. Without `model`, the provider's model is the first
/// there that calls tools (or the one it had).
pub async fn use_url(
    config: &Path,
    url: &str,
    model: Option<String>,
) -> Result<UsedServer, ChooseError> {
    let url = url.trim().trim_end_matches('/');
    tooltrail_settings::check_base_url(url)?;
    let place = Target::url(url)?;
    let found = detect(std::slice::from_ref(&place))
        .await
        .into_iter()
        .next();
    let base_url = found.as_ref().map_or_else(
        || place.base_url().to_string(),
        |server| server.base_url.clone(),
    );
    let model = model.or_else(|| {
        found
            .as_ref()
            .and_then(suggested_model)
            .map(|model| model.id.clone())
    });
    let file = ConfigFile::read(config)?;
    let mut editor = ConfigEditor::open(config)?;
    let existing = file
        .providers
        .iter()
        .find(|p| p.base_url.trim_end_matches('/') == base_url);
    let provider = match existing {
        Some(provider) => Provider {
            model: model.or_else(|| provider.model.clone()),
            ..provider.clone()
        },
        None => Provider {
            id: String::new(),
            name: match &found {
                Some(server) if server.kind != ServerKind::OpenAiCompatible => {
                    server.kind.name().to_string()
                }
                _ => host_and_port(&base_url),
            },
            base_url,
            model,
            ..Provider::default()
        },
    };
    let stored = editor.upsert_provider(provider)?;
    editor.set_active(&stored.id)?;
    editor.save()?;
    Ok(UsedServer {
        provider: stored,
        found,
    })
}

/// Makes the installed model `name` the one the `local` provider serves (`[local] model`), and
/// `local` the active provider, in the config file at `config`.
pub fn use_local_model(
    config: &Path,
    store: &ModelStore,
    name: &str,
) -> Result<InstalledModel, ChooseError> {
    let Some(model) = store.find(name)? else {
        if let Some(entry) = Catalogue::builtin()?.get(name) {
            return Err(ChooseError::NotPulled {
                name: entry.name.clone(),
            });
        }
        return Err(ModelError::NotInstalled {
            name: name.trim().to_string(),
        }
        .into());
    };
    if model.missing {
        return Err(ChooseError::ModelFileMissing {
            from: model.source.describe(),
            name: model.name,
        });
    }
    let mut editor = ConfigEditor::open(config)?;
    if let Some(own) = editor.provider_name(LOCAL_PROVIDER_ID) {
        return Err(ChooseError::LocalIdTaken {
            config: config.to_path_buf(),
            own,
        });
    }
    editor.set_local_model(&model.name)?;
    editor.set_active(LOCAL_PROVIDER_ID)?;
    editor.save()?;
    Ok(model)
}

/// `host:port` of a URL, to name a provider nothing else names.
pub fn host_and_port(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tooltrail_test_support::gguf::GgufBuilder;

    fn model(id: &str, tools: Support) -> FoundModel {
        FoundModel {
            id: id.to_string(),
            tools,
            vision: Support::Unknown,
            context_window: None,
            max_context_window: None,
        }
    }

    #[test]
    fn the_suggested_model_is_the_first_that_calls_tools() {
        let server = FoundServer {
            kind: ServerKind::Ollama,
            base_url: "http://127.0.0.1:11434/v1".to_string(),
            needs_api_key: false,
            models: vec![
                model("embed", Support::Unknown),
                model("qwen3:1.7b", Support::Yes),
            ],
        };
        assert_eq!(
            suggested_model(&server).map(|m| m.id.as_str()),
            Some("qwen3:1.7b")
        );
        assert_eq!(host_and_port("http://127.0.0.1:9000/v1"), "127.0.0.1:9000");
    }

    #[tokio::test]
    async fn a_url_where_nothing_answers_is_saved_by_its_address_and_made_active() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(&config, "# mine\nmax_rounds = 7\n").unwrap();
        // A port that was free a moment ago: nothing answers there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let used = use_url(&config, &format!("http://127.0.0.1:{port}"), None)
            .await
            .unwrap();
        assert!(used.found.is_none());
        assert_eq!(used.provider.name, format!("127.0.0.1:{port}"));
        assert_eq!(
            used.provider.base_url,
            format!("http://127.0.0.1:{port}/v1")
        );
        let file = ConfigFile::read(&config).unwrap();
        assert_eq!(
            file.active_provider.as_deref(),
            Some(used.provider.id.as_str())
        );
        assert_eq!(file.max_rounds, Some(7));
        assert!(
            std::fs::read_to_string(&config)
                .unwrap()
                .starts_with("# mine")
        );
    }

    #[test]
    fn an_installed_model_becomes_the_local_providers_and_a_catalogue_one_must_be_pulled_first() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        let store = ModelStore::open(dir.path().join("models")).unwrap();
        let file = dir.path().join("Tiny-Q4_K_M.gguf");
        let bytes = GgufBuilder::new()
            .string("general.architecture", "qwen3")
            .u32("qwen3.context_length", 40960)
            .tensor("token_embd.weight", &[8, 8], 0)
            .data_bytes(256)
            .build();
        std::fs::write(&file, bytes).unwrap();
        store.import(&file, None, false, &mut |_, _| {}).unwrap();

        let used = use_local_model(&config, &store, "tiny-q4_k_m").unwrap();
        assert_eq!(used.name, "tiny-q4_k_m");
        let read = ConfigFile::read(&config).unwrap();
        assert_eq!(read.active_provider.as_deref(), Some(LOCAL_PROVIDER_ID));
        assert_eq!(read.local.model.as_deref(), Some("tiny-q4_k_m"));

        let error = use_local_model(&config, &store, "qwen3-1.7b").unwrap_err();
        assert_eq!(
            error.to_string(),
            "qwen3-1.7b is not installed yet; pull it first with `tooltrail models pull qwen3-1.7b`"
        );
    }
}
