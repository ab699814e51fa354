//! Settings → Models and the guide's "Run a model on this computer": the models folder (what
//! is installed, unfinished downloads, the catalogue), downloads and imports, removal, the
//! model the `local` provider serves, and the runtime serving it now, as `tooltrail models`
//! shows them. The work is `tooltrail_runtime`'s and `tooltrail_host::choose`'s; this module
//! only shapes it for the window.
//!
//! A download runs in the backend, not in the window: it goes on while the user moves between
//! views, and each step is broadcast as a `model-pull` event ([`PullUpdate`]) that the
//! window's state above the views folds in. [`Downloads`] holds the running ones, so a window
//! that loads again asks [`downloads`] for where they are, and so Cancel finds them. Cancel
//! stops the transfer and keeps the bytes that arrived (`NAME.gguf.part`); the next download
//! of the same model carries on from there.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Serialize;
use tauri::{AppHandle, Emitter, Manager, State};
use tauri_plugin_dialog::DialogExt;
use tokio_util::sync::CancellationToken;
use tooltrail_host::ModelsOverview;
use tooltrail_runtime::models::{
    Catalogue, Hub, InstalledModel, ModelError, ModelRef, ModelStore, PullOptions, PullProgress,
};
use tooltrail_runtime::supervisor::{Runtime, unix_now};
use tooltrail_settings::{ConfigFile, config_path};
use ts_rs::TS;

use crate::error::{CommandError, CommandResult, model_error, sentence};

/// The event every step of a download is sent as.
pub const PULL_EVENT: &str = "model-pull";

/// An installed model, as the list shows it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ModelView {
    pub name: String,
    pub size_bytes: u64,
    /// `1.7B`, from the file's size label or its counted weights.
    pub parameters: Option<String>,
    pub quantization: Option<String>,
    /// The context it was trained for, in tokens.
    pub context_length: Option<u64>,
    /// Whether the GGUF has a chat template (without one, tools go in the prompt).
    pub has_chat_template: bool,
    /// Where it came from, in a few words.
    pub source: String,
    /// The file is gone (the original of a linked import was moved or deleted).
    pub missing: bool,
    /// `[local] model` names it.
    pub chosen: bool,
}

impl ModelView {
    fn of(model: &InstalledModel, chosen: Option<&str>) -> Self {
        Self {
            name: model.name.clone(),
            size_bytes: model.size_bytes,
            parameters: tooltrail_host::parameters_label(model),
            quantization: model.metadata.quantization.clone(),
            context_length: model.metadata.context_length,
            has_chat_template: model.metadata.has_chat_template,
            source: model.source.describe(),
            missing: model.missing,
            chosen: chosen == Some(model.name.as_str()),
        }
    }
}

/// A model of the built-in catalogue.
#[derive(Debug, Clone, Serialize, TS)]
pub struct CatalogueModel {
    pub name: String,
    pub title: String,
    pub description: String,
    pub size_bytes: Option<u64>,
    /// Memory needed to serve it with an 8,192-token window, in GB.
    pub memory_gb: f64,
    /// The context it was trained for, in tokens.
    pub context_length: u64,
    pub licence: String,
    pub installed: bool,
}

/// A download stopped before it finished; downloading the same model again carries on.
#[derive(Debug, Clone, Serialize, TS)]
pub struct UnfinishedView {
    pub name: String,
    pub have: u64,
    pub total: Option<u64>,
}

/// The runtime serving a model now, as `tooltrail models ps` shows it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct RuntimeView {
    pub model: String,
    /// llama-server's process id.
    pub pid: u32,
    pub port: u16,
    pub context_size: u32,
    /// Resident memory of llama-server and its supervisor, where the system tells.
    pub memory_bytes: Option<u64>,
    /// A question holds it now.
    pub in_use: bool,
    /// Seconds until it stops for being idle; `None` while in use.
    pub stops_in_secs: Option<u64>,
}

/// Everything Settings → Models shows.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ModelsView {
    /// The models folder.
    pub dir: String,
    /// The model `[local] model` names.
    pub local_model: Option<String>,
    /// Questions go to the `local` provider.
    pub local_active: bool,
    pub installed: Vec<ModelView>,
    pub unfinished: Vec<UnfinishedView>,
    /// The catalogue, in its order.
    pub catalogue: Vec<CatalogueModel>,
    pub runtime: Option<RuntimeView>,
    /// Why no llama-server can be run, in a sentence; `None` when one was found.
    pub server_problem: Option<String>,
    /// Whether this system can run a model Tooltrail downloads at all (not on Windows yet):
    /// when not, the first-run guide offers no download and says why.
    pub runtime_supported: bool,
}

/// A step of a download, as the window shows it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum PullPhase {
    /// Asking the hub about the file.
    Checking,
    /// Reading the bytes an earlier download kept, before asking for the rest.
    Resuming { have: u64, total: Option<u64> },
    Downloading {
        done: u64,
        total: Option<u64>,
        bytes_per_sec: f64,
        seconds_left: Option<u64>,
    },
    /// The connection broke; trying again.
    Retrying {
        attempt: u32,
        of: u32,
        reason: String,
        have: u64,
    },
    /// Checking the SHA-256 and reading the model's header.
    Verifying,
    /// Installed; `used` when questions go to it now.
    Done { size_bytes: u64, used: bool },
    /// Stopped by the user; the bytes that arrived are kept.
    Cancelled { have: u64, total: Option<u64> },
    /// What went wrong, in sentences that say what was kept.
    Failed { message: String },
}

/// One download's latest step, sent as the `model-pull` event.
#[derive(Debug, Clone, Serialize, TS)]
pub struct PullUpdate {
    /// The model's name once installed.
    pub name: String,
    /// What the user asked for (a catalogue name or `hf.co/…`).
    pub reference: String,
    #[serde(flatten)]
    pub phase: PullPhase,
}

impl PullUpdate {
    fn finished(&self) -> bool {
        match self.phase {
            PullPhase::Done { .. } | PullPhase::Cancelled { .. } | PullPhase::Failed { .. } => true,
            PullPhase::Checking
            | PullPhase::Resuming { .. }
            | PullPhase::Downloading { .. }
            | PullPhase::Retrying { .. }
            | PullPhase::Verifying => false,
        }
    }
}

fn phase_of(progress: &PullProgress) -> PullPhase {
    match progress {
        PullProgress::Checking { .. } => PullPhase::Checking,
        PullProgress::Resuming { have, total } => PullPhase::Resuming {
            have: *have,
            total: *total,
        },
        PullProgress::Downloading {
            done,
            total,
            bytes_per_sec,
            ..
        } => PullPhase::Downloading {
            done: *done,
            total: *total,
            bytes_per_sec: *bytes_per_sec,
            seconds_left: progress.seconds_left(),
        },
        PullProgress::Retrying {
            attempt,
            of,
            reason,
            have,
        } => PullPhase::Retrying {
            attempt: *attempt,
            of: *of,
            reason: reason.clone(),
            have: *have,
        },
        PullProgress::Verifying => PullPhase::Verifying,
    }
}

/// The downloads running now, by model name.
#[derive(Default)]
pub struct Downloads {
    running: Mutex<HashMap<String, Pull>>,
}

struct Pull {
    cancel: CancellationToken,
    last: PullUpdate,
}

impl Downloads {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pull>> {
        // A panic while holding the map leaves it whole: every change is one insert or remove.
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes `update` and sends it to the window; a finished download leaves the map.
    fn report(&self, app: &AppHandle, update: PullUpdate) {
        {
            let mut running = self.lock();
            if update.finished() {
                running.remove(&update.name);
            } else if let Some(pull) = running.get_mut(&update.name) {
                pull.last = update.clone();
            }
        }
        let _ = app.emit(PULL_EVENT, update);
    }
}

fn store() -> CommandResult<ModelStore> {
    ModelStore::open_default().map_err(model_error)
}

/// What Settings → Models shows: [`ModelsOverview`] laid out for the window. Blocking: it
/// reads the models folder and `/proc`.
pub fn overview() -> CommandResult<ModelsView> {
    let overview = ModelsOverview::read(&config_path()?)?;
    let local_model = overview.local_model.as_deref();
    Ok(ModelsView {
        dir: overview.dir.display().to_string(),
        catalogue: overview
            .catalogue
            .iter()
            .map(|entry| CatalogueModel {
                name: entry.name.clone(),
                title: entry.title.clone(),
                description: entry.description.clone(),
                size_bytes: entry.size_bytes,
                memory_gb: entry.memory_gb,
                context_length: entry.context_length,
                licence: entry.licence.clone(),
                installed: overview.is_installed(&entry.name),
            })
            .collect(),
        installed: overview
            .installed
            .iter()
            .map(|model| ModelView::of(model, local_model))
            .collect(),
        unfinished: overview
            .unfinished
            .iter()
            .map(|pull| UnfinishedView {
                name: pull.name.clone(),
                have: pull.have,
                total: pull.total,
            })
            .collect(),
        runtime: overview.runtime.as_ref().map(|status| RuntimeView {
            model: status.state.model.clone(),
            pid: status.state.server_pid,
            port: status.state.port,
            context_size: status.state.context_size,
            memory_bytes: status
                .server_rss
                .map(|server| server + status.supervisor_rss.unwrap_or(0)),
            in_use: status.in_use,
            stops_in_secs: status.stops_in_secs(unix_now()),
        }),
        server_problem: overview.server_problem.as_deref().map(sentence),
        runtime_supported: overview.runtime_supported,
        local_active: overview.local_active,
        local_model: overview.local_model,
    })
}

/// Makes an installed model the one questions go to (`tooltrail models use`). Blocking.
fn use_installed(name: &str) -> CommandResult<ModelView> {
    let model = tooltrail_host::choose::use_local_model(&config_path()?, &store()?, name)?;
    Ok(ModelView::of(&model, Some(&model.name)))
}

/// Runs blocking work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> CommandResult<T> + Send + 'static,
) -> CommandResult<T> {
    crate::commands::off_main(work, "models", "The models folder could not be read.").await
}

#[tauri::command]
pub async fn list_models() -> CommandResult<ModelsView> {
    blocking(overview).await
}

/// Starts downloading `reference` (a catalogue name, or `hf.co/OWNER/REPO/FILE.gguf`) and
/// returns the name it installs under; the steps follow as `model-pull` events. With
/// `use_after`, questions go to the model once it is installed.
#[tauri::command]
pub async fn pull_model(
    app: AppHandle,
    downloads: State<'_, Downloads>,
    reference: String,
    use_after: bool,
) -> CommandResult<String> {
    let reference = reference.trim().to_string();
    let catalogue = Catalogue::builtin().map_err(model_error)?;
    let model_ref = ModelRef::parse(&reference, &catalogue).map_err(model_error)?;
    let name = model_ref.default_name().map_err(model_error)?;
    let options = PullOptions::new(Hub::from_env().map_err(model_error)?);
    let store = store()?;
    let cancel = CancellationToken::new();
    let first = PullUpdate {
        name: name.clone(),
        reference: reference.clone(),
        phase: PullPhase::Checking,
    };
    {
        let mut running = downloads.lock();
        if running.contains_key(&name) {
            return Err(CommandError::new(
                "busy",
                format!("{name} is downloading already."),
            ));
        }
        running.insert(
            name.clone(),
            Pull {
                cancel: cancel.clone(),
                last: first.clone(),
            },
        );
    }
    let _ = app.emit(PULL_EVENT, first);
    let task_name = name.clone();
    tauri::async_runtime::spawn(async move {
        let downloads = app.state::<Downloads>();
        let update = |phase| PullUpdate {
            name: task_name.clone(),
            reference: reference.clone(),
            phase,
        };
        let result = store
            .pull(
                &model_ref,
                &options,
                &mut |progress| {
                    downloads.report(&app, update(phase_of(progress)));
                },
                &cancel,
            )
            .await;
        let phase = match result {
            Ok(pulled) => {
                let model = pulled.model().clone();
                let used = use_after
                    && tauri::async_runtime::spawn_blocking({
                        let name = model.name.clone();
                        move || use_installed(&name)
                    })
                    .await
                    .is_ok_and(|used| used.is_ok());
                PullPhase::Done {
                    size_bytes: model.size_bytes,
                    used,
                }
            }
            Err(ModelError::Cancelled { have, total, .. }) => PullPhase::Cancelled { have, total },
            Err(error) => PullPhase::Failed {
                message: sentence(&error.to_string()),
            },
        };
        downloads.report(&app, update(phase));
    });
    Ok(name)
}

/// Stops a download, keeping what arrived; false when none of that name was running.
#[tauri::command]
pub fn cancel_pull(downloads: State<'_, Downloads>, name: String) -> bool {
    match downloads.lock().get(&name) {
        Some(pull) => {
            pull.cancel.cancel();
            true
        }
        None => false,
    }
}

/// The downloads running now, each at its latest step.
#[tauri::command]
pub fn downloads(downloads: State<'_, Downloads>) -> Vec<PullUpdate> {
    let mut running: Vec<PullUpdate> = downloads
        .lock()
        .values()
        .map(|pull| pull.last.clone())
        .collect();
    running.sort_by(|a, b| a.name.cmp(&b.name));
    running
}

/// What an import did.
#[derive(Debug, Clone, Serialize, TS)]
pub struct Imported {
    pub model: ModelView,
    /// Questions go to it now.
    pub used: bool,
}

/// Copies a GGUF file into the models folder: `path`, or the file the user picks in the native
/// dialog (`None` when the dialog was closed). With `use_after`, questions go to it from now on.
#[tauri::command]
pub async fn import_model(
    app: AppHandle,
    path: Option<String>,
    use_after: bool,
) -> CommandResult<Option<Imported>> {
    let Some(path) = crate::dialog::given_or_picked(
        path,
        |reply| {
            app.dialog()
                .file()
                .set_title("Import a GGUF model")
                .add_filter("GGUF model", &["gguf"])
                .pick_file(reply);
        },
        CommandError::new("not_found", "That file cannot be opened."),
    )
    .await?
    else {
        return Ok(None);
    };
    blocking(move || {
        let model = store()?
            .import(&path, None, false, &mut |_, _| {})
            .map_err(model_error)?;
        let used = use_after;
        let view = if used {
            use_installed(&model.name)?
        } else {
            let chosen = ConfigFile::read(&config_path()?)?.local.model;
            ModelView::of(&model, chosen.as_deref())
        };
        Ok(Some(Imported { model: view, used }))
    })
    .await
}

/// Removes a model (and any unfinished download of that name).
#[tauri::command]
pub async fn remove_model(name: String) -> CommandResult<()> {
    blocking(move || {
        store()?.remove(&name).map_err(model_error)?;
        Ok(())
    })
    .await
}

/// Questions go to this installed model from now on, served by Tooltrail itself.
#[tauri::command]
pub async fn use_model(name: String) -> CommandResult<ModelView> {
    blocking(move || use_installed(&name)).await
}

/// Stops the runtime now; the name of the model it served, or `None` when none was running.
#[tauri::command]
pub async fn stop_runtime() -> CommandResult<Option<String>> {
    let runtime = Runtime::new(&tooltrail_settings::data_dir()?);
    let stopped = runtime
        .stop()
        .await
        .map_err(|error| CommandError::new("runtime", sentence(&error.to_string())))?;
    Ok(stopped.map(|state| state.model))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_step_reaches_the_window_flat_with_its_phase() {
        let update = PullUpdate {
            name: "qwen3-1.7b".into(),
            reference: "qwen3-1.7b".into(),
            phase: phase_of(&PullProgress::Downloading {
                done: 250,
                total: Some(1000),
                resumed_from: 0,
                bytes_per_sec: 50.0,
            }),
        };
        assert_eq!(
            serde_json::to_value(&update).unwrap(),
            serde_json::json!({
                "name": "qwen3-1.7b",
                "reference": "qwen3-1.7b",
                "phase": "downloading",
                "done": 250,
                "total": 1000,
                "bytes_per_sec": 50.0,
                "seconds_left": 15,
            })
        );
        assert!(!update.finished());
        let cancelled = PullUpdate {
            phase: PullPhase::Cancelled {
                have: 250,
                total: Some(1000),
            },
            ..update
        };
        assert!(cancelled.finished());
    }
}
