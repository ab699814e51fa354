//! Updates: the app looks for a newer version when it starts (unless `[updates] check = false`;
//! Settings → Updates), shows what is new, and installs it only on the user's yes, then restarts.
//!
//! The work is `tauri-plugin-updater`'s: it reads `latest.json` from the endpoint in
//! `tauri.conf.json`, downloads the artifact for this system, and accepts it only when its
//! minisign signature verifies with the public key in `tauri.conf.json`, whose private half
//! signs releases in the release workflow and is kept off the repository, and only when that
//! signature names the version `latest.json` announced (`requireSignedVersion`): the answer
//! itself is not signed, so an older release, genuinely signed, cannot be passed off as a newer
//! one to put back a build with known flaws. This module decides
//! when to ask, keeps the update found until the user answers, and says every failure in a
//! sentence: a signature that does not match is refused, and nothing is changed.
//!
//! `TOOLTRAIL_UPDATE_ENDPOINT` names another `latest.json` (a mirror, or a test's own server).
//! A release build accepts only `https` there, as the plugin requires; a development build
//! also takes `http`, and looks for updates only when this variable is set, since it is not
//! what the releases replace.

use std::time::Duration;

use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State};
use tauri_plugin_updater::{Update, UpdaterExt};
use tooltrail_settings::ConfigEditor;
use ts_rs::TS;

use crate::error::{CommandError, CommandResult};

/// Another `latest.json` to read than `tauri.conf.json`'s.
pub const ENDPOINT_ENV: &str = "TOOLTRAIL_UPDATE_ENDPOINT";

/// How long the update server may take to answer, and then to send each part of a download.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Settings → Updates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct UpdateSettings {
    /// Whether Tooltrail looks for a new version when it starts (`[updates] check` in
    /// config.toml; on unless turned off).
    pub check_at_start: bool,
    /// The version running now.
    pub current_version: String,
}

/// A newer version the update server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct UpdateInfo {
    pub version: String,
    pub current_version: String,
    /// What is new, as the release notes say (Markdown), when the server gives them.
    pub notes: Option<String>,
    /// When it was published (RFC 3339), when the server says.
    pub date: Option<String>,
}

/// How an install goes, step by step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UpdateProgress {
    Downloading {
        #[ts(type = "number")]
        downloaded: u64,
        #[ts(type = "number | null")]
        total: Option<u64>,
    },
    Verifying,
    Installing,
    Restarting,
}

/// Why looking for, or installing, an update failed, in a sentence each.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    #[error(
        "The update's signature does not match Tooltrail's key, so it was not installed. Nothing was changed."
    )]
    Signature,
    #[error(
        "Tooltrail could not reach the update server ({0}). Check the connection and try again."
    )]
    Unreachable(String),
    #[error("The update server's answer is not a release Tooltrail can read ({0}).")]
    BadAnswer(String),
    #[error("Updates are not offered for this copy of Tooltrail ({0}).")]
    NotOffered(String),
    #[error(
        "The update was downloaded and its signature checked, but it could not be installed ({0}). Install it from the release page instead."
    )]
    Install(String),
    #[error("No update is waiting to be installed. Look for one again first.")]
    NothingFound,
    #[error("An update is being installed already.")]
    Busy,
}

impl UpdateError {
    /// The plugin's error, sorted by what the user can do about it.
    fn of(error: tauri_plugin_updater::Error) -> Self {
        use tauri_plugin_updater::Error as E;
        let detail = error.to_string().trim().trim_end_matches('.').to_string();
        match error {
            // A signature for another version, or for none, is the key's word on another
            // release than the one announced (`requireSignedVersion` in tauri.conf.json).
            E::Minisign(_)
            | E::Base64(_)
            | E::SignatureUtf8(_)
            | E::SignedVersionMismatch { .. }
            | E::MissingSignedVersion => Self::Signature,
            // A body that is not JSON (a captive portal's page) came from somewhere, at least.
            E::Reqwest(error) if error.is_decode() => Self::BadAnswer(detail),
            E::Reqwest(_) | E::Network(_) => Self::Unreachable(detail),
            E::ReleaseNotFound
            | E::Serialization(_)
            | E::Semver(_)
            | E::UrlParse(_)
            | E::TargetNotFound(_)
            | E::TargetsNotFound(_)
            | E::InvalidUpdaterFormat => Self::BadAnswer(detail),
            E::EmptyEndpoints
            | E::UnsupportedArch
            | E::UnsupportedOs
            | E::InsecureTransportProtocol
            | E::FailedToDetermineExtractPath => Self::NotOffered(detail),
            _ => Self::Install(detail),
        }
    }
}

impl From<UpdateError> for CommandError {
    fn from(error: UpdateError) -> Self {
        let code = match error {
            UpdateError::Signature => "signature",
            UpdateError::Unreachable(_) => "unreachable",
            UpdateError::Busy => "busy",
            _ => "updates",
        };
        CommandError::new(code, error.to_string())
    }
}

/// The app's side of updates: the start-up check's outcome, and the update found last.
#[derive(Default)]
pub struct Updates {
    at_start: tokio::sync::OnceCell<Option<UpdateInfo>>,
    found: tokio::sync::Mutex<Option<Update>>,
    installing: std::sync::atomic::AtomicBool,
}

/// The newer version the endpoint offers, if any.
pub(crate) async fn look<R: Runtime>(app: &AppHandle<R>) -> Result<Option<Update>, UpdateError> {
    let mut builder = app.updater_builder().timeout(TIMEOUT);
    if let Some(endpoint) = tooltrail_settings::env(ENDPOINT_ENV) {
        let url = endpoint.parse().map_err(|_| {
            UpdateError::NotOffered(format!("{ENDPOINT_ENV} is not an address: {endpoint}"))
        })?;
        builder = builder.endpoints(vec![url]).map_err(UpdateError::of)?;
    }
    let updater = builder.build().map_err(UpdateError::of)?;
    updater.check().await.map_err(UpdateError::of)
}

/// Downloads `update` and checks its signature, telling each step; the bytes only once the
/// signature held.
pub(crate) async fn fetch_verified(
    update: &Update,
    progress: &impl Fn(UpdateProgress),
) -> Result<Vec<u8>, UpdateError> {
    let mut downloaded = 0u64;
    let mut told = 0u64;
    update
        .download(
            |chunk, total| {
                downloaded += chunk as u64;
                // About a hundred steps however large the download, and the last one.
                let step = total.map_or(256 * 1024, |total| (total / 100).max(64 * 1024));
                if downloaded - told >= step || Some(downloaded) == total {
                    told = downloaded;
                    progress(UpdateProgress::Downloading { downloaded, total });
                }
            },
            || progress(UpdateProgress::Verifying),
        )
        .await
        .map_err(UpdateError::of)
}

/// What the window shows of `update`.
pub(crate) fn info(update: &Update) -> UpdateInfo {
    UpdateInfo {
        version: update.version.clone(),
        current_version: update.current_version.clone(),
        notes: update.body.clone().filter(|notes| !notes.trim().is_empty()),
        date: update.date.and_then(|date| {
            date.format(&time::format_description::well_known::Rfc3339)
                .ok()
        }),
    }
}

/// Whether this copy looks for updates at start: a release build unless turned off; a
/// development build only toward [`ENDPOINT_ENV`].
fn checks_at_start() -> bool {
    let on = tooltrail_settings::updates::read()
        .map(|section| section.check_at_start())
        .unwrap_or(true);
    on && (!cfg!(debug_assertions) || tooltrail_settings::env(ENDPOINT_ENV).is_some())
}

fn settings_view(app: &AppHandle) -> CommandResult<UpdateSettings> {
    Ok(UpdateSettings {
        check_at_start: tooltrail_settings::updates::read()?.check_at_start(),
        current_version: app.package_info().version.to_string(),
    })
}

#[tauri::command]
pub fn update_settings(app: AppHandle) -> CommandResult<UpdateSettings> {
    settings_view(&app)
}

#[tauri::command]
pub fn save_update_check(app: AppHandle, check_at_start: bool) -> CommandResult<UpdateSettings> {
    let mut editor = ConfigEditor::open(&tooltrail_settings::config_path()?)?;
    editor.set_update_check(check_at_start)?;
    editor.save()?;
    settings_view(&app)
}

/// The newer version, if there is one. `at_start`: the start-up check, made once per run
/// and only when it is on; its failure is logged, not shown (a person offline is not nagged).
#[tauri::command]
pub async fn check_for_update(
    app: AppHandle,
    updates: State<'_, Updates>,
    at_start: bool,
) -> CommandResult<Option<UpdateInfo>> {
    if at_start {
        let found = updates
            .at_start
            .get_or_init(|| async {
                if !checks_at_start() {
                    return None;
                }
                match find(&app, &updates).await {
                    Ok(found) => found,
                    Err(error) => {
                        eprintln!("tooltrail: looking for a new version: {error}");
                        None
                    }
                }
            })
            .await;
        return Ok(found.clone());
    }
    Ok(find(&app, &updates).await?)
}

async fn find(app: &AppHandle, updates: &Updates) -> Result<Option<UpdateInfo>, UpdateError> {
    let update = look(app).await?;
    let shown = update.as_ref().map(info);
    *updates.found.lock().await = update;
    Ok(shown)
}

/// Downloads the update found last, checks its signature, installs it and restarts the app.
#[tauri::command]
pub async fn install_update(
    app: AppHandle,
    updates: State<'_, Updates>,
    progress: Channel<UpdateProgress>,
) -> CommandResult<()> {
    use std::sync::atomic::Ordering;
    if updates.installing.swap(true, Ordering::SeqCst) {
        return Err(UpdateError::Busy.into());
    }
    let outcome = install(&updates, &progress).await;
    updates.installing.store(false, Ordering::SeqCst);
    outcome?;
    let _ = progress.send(UpdateProgress::Restarting);
    app.restart()
}

async fn install(updates: &Updates, progress: &Channel<UpdateProgress>) -> Result<(), UpdateError> {
    let update = updates
        .found
        .lock()
        .await
        .clone()
        .ok_or(UpdateError::NothingFound)?;
    let tell = |step: UpdateProgress| {
        let _ = progress.send(step);
    };
    let bytes = fetch_verified(&update, &tell).await?;
    tell(UpdateProgress::Installing);
    // On Windows the installer takes over and the app exits here.
    tauri::async_runtime::spawn_blocking(move || update.install(bytes))
        .await
        .map_err(|error| UpdateError::Install(error.to_string()))?
        .map_err(UpdateError::of)
}

#[cfg(test)]
mod tests;
