//! The first-run guide's side: whether a question could be answered now, the model servers
//! running on this machine, and one click to send questions to one of them.
//!
//! The window shows the guide instead of an error when nothing answers: on the start screen
//! of a new machine, and from a question whose endpoint could not be reached. Both ask
//! [`check`], which asks the endpoint for its model list (the `local` provider instead has to
//! have its model installed and a llama-server to run it) while it looks for servers with the
//! same detection as `tooltrail providers detect`. Choosing one writes `config.toml` through
//! the same service as `tooltrail providers use` (`tooltrail_host::choose`).

use std::time::Duration;

use serde::Serialize;
use tooltrail_runtime::detect::FoundServer;
use tooltrail_runtime::models::ModelStore;
use tooltrail_runtime::supervisor::SearchPlaces;
use tooltrail_settings::{ConfigFile, Settings, config_path};
use ts_rs::TS;

use crate::error::{CommandResult, sentence};
use crate::settings::{EndpointInfo, endpoint_info, resolve};

/// How long the endpoint may take to accept a connection: one on this machine answers at once.
const CONNECT: Duration = Duration::from_secs(3);
/// How long it may take to list its models.
const ANSWER: Duration = Duration::from_secs(8);

/// What the guide shows.
#[derive(Debug, Clone, Serialize, TS)]
pub struct GuideView {
    /// A question can go where the settings say: the endpoint listed its models, or the
    /// `local` provider has its model and a llama-server to run it.
    pub ready: bool,
    /// Why not, in a sentence.
    pub problem: Option<String>,
    /// Questions go to Tooltrail's own model server.
    pub local: bool,
    pub endpoint: EndpointInfo,
    /// The model servers that answered on this machine (and at `detect_urls`).
    pub servers: Vec<FoundServer>,
    /// How long the look took, in milliseconds.
    pub looked_ms: u32,
}

/// Checks the endpoint and looks for servers, both at once.
pub async fn check() -> GuideView {
    let urls = config_path()
        .ok()
        .and_then(|path| ConfigFile::read(&path).ok())
        .map(|file| file.detect_urls)
        .unwrap_or_default();
    let (readiness, looked) = tokio::join!(readiness(), async {
        // A `detect_urls` entry that is not a URL leaves the usual addresses to look at.
        match tooltrail_host::choose::look(&urls).await {
            Ok(looked) => Some(looked),
            Err(_) => tooltrail_host::choose::look(&[]).await.ok(),
        }
    });
    let (ready, problem, local) = readiness;
    let (servers, looked_ms) = looked.map_or((Vec::new(), 0), |looked| {
        let ms = u32::try_from(looked.took.as_millis()).unwrap_or(u32::MAX);
        (looked.found, ms)
    });
    GuideView {
        ready,
        problem,
        local,
        endpoint: endpoint_info(),
        servers,
        looked_ms,
    }
}

/// `(ready, why not, local)`.
async fn readiness() -> (bool, Option<String>, bool) {
    let settings = match resolve() {
        Ok(settings) => settings,
        Err(error) => return (false, Some(sentence(&error.to_string())), false),
    };
    if settings.local.is_some() {
        let problem = tauri::async_runtime::spawn_blocking(move || local_problem(&settings))
            .await
            .unwrap_or_else(|_| Some("The models folder could not be read.".to_string()));
        return (problem.is_none(), problem, true);
    }
    match endpoint_problem(&settings).await {
        None => (true, None, false),
        Some(problem) => (false, Some(problem), false),
    }
}

/// Why the `local` provider cannot answer, if it cannot.
fn local_problem(settings: &Settings) -> Option<String> {
    let Some(name) = &settings.model else {
        return Some(sentence(
            "Questions go to a model Tooltrail runs itself, but none is chosen yet",
        ));
    };
    let installed = ModelStore::open_default().and_then(|store| store.find(name));
    match installed {
        Ok(Some(model)) if !model.missing => {}
        Ok(Some(_)) => {
            return Some(sentence(&format!(
                "The file of the model {name} is missing"
            )));
        }
        Ok(None) => {
            return Some(sentence(&format!(
                "The model {name} is not in the models folder"
            )));
        }
        Err(error) => return Some(sentence(&error.to_string())),
    }
    SearchPlaces::from_env()
        .find()
        .err()
        .map(|error| sentence(&error.to_string()))
}

/// Why the endpoint of `settings` did not list its models, if it did not.
async fn endpoint_problem(settings: &Settings) -> Option<String> {
    let probe = tooltrail_host::EndpointProbe {
        base_url: settings.base_url.clone(),
        api_key: settings.api_key.clone(),
        connect: CONNECT,
        answer: ANSWER,
    };
    probe.models().await.err().map(|error| sentence(&error))
}

/// What the guide reports after a server was chosen.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ChosenServer {
    /// The provider's name ("Ollama", or the server's address).
    pub name: String,
    pub base_url: String,
    pub model: Option<String>,
}

#[tauri::command]
pub async fn model_guide() -> GuideView {
    check().await
}

/// Sends questions to the server at `base_url` from now on, asking for `model` (the first
/// there that calls tools when `None`).
#[tauri::command]
pub async fn use_server(base_url: String, model: Option<String>) -> CommandResult<ChosenServer> {
    let config = config_path()?;
    let used = tooltrail_host::choose::use_url(&config, &base_url, model).await?;
    Ok(ChosenServer {
        name: used.provider.name,
        base_url: used.provider.base_url,
        model: used.provider.model,
    })
}
