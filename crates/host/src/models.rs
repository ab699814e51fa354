//! The model client, kept while the endpoint stays the same: one connection pool across
//! questions, no `GET /models` per question when no model is configured, and — in auto tool
//! mode — what the server was found to need, used from the start and remembered for the
//! endpoint and model (`tooltrail_settings::tool_modes`).

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::Mutex;
use tooltrail_llm::{LlmClient, LlmConfig, LlmError, ToolMode};
use tooltrail_settings::Settings;
use tooltrail_settings::tool_modes::LearnedToolModes;

use crate::error::HostError;

/// What makes a client: a question whose settings say the same reuses it.
#[derive(Clone, PartialEq, Eq)]
struct Key {
    base_url: String,
    /// As configured: `None` means "the endpoint's first model", looked up once.
    model: Option<String>,
    api_key: Option<String>,
    idle_timeout: Duration,
    /// As configured, before what was learned is applied.
    tool_mode: ToolMode,
    /// As configured; `None` asks the server (once per client).
    context_window: Option<u32>,
    /// As configured; `None` chooses by the endpoint.
    max_tokens_field: Option<String>,
    /// As configured; `None` asks the server (once per client).
    vision: Option<bool>,
    /// The server is Tooltrail's own llama-server: it reports how far it has read a prompt.
    prompt_progress: bool,
}

struct Current {
    key: Key,
    client: LlmClient,
    /// Where learned tool modes are kept (the config folder).
    config_dir: Option<PathBuf>,
    /// Whether what this client found out has been written down.
    remembered: bool,
}

/// The client of the last question.
#[derive(Default)]
pub struct Models {
    current: Mutex<Option<Current>>,
}

impl Models {
    /// A client for the endpoint and model `settings` name (the endpoint's first model when
    /// they name none), reused while base URL, model, key and tool mode are unchanged.
    pub async fn client(&self, settings: &Settings) -> Result<LlmClient, HostError> {
        let key = Key {
            base_url: settings.base_url.clone(),
            model: settings.model.clone(),
            api_key: settings.api_key.clone(),
            idle_timeout: Duration::from_secs(settings.request_timeout_secs),
            tool_mode: settings.tool_mode,
            context_window: settings.context_window,
            max_tokens_field: settings.max_tokens_field.clone(),
            vision: settings.vision,
            prompt_progress: settings.local.is_some(),
        };
        let mut current = self.current.lock().await;
        if let Some(current) = current.as_ref()
            && current.key == key
        {
            return Ok(current.client.clone());
        }
        let config_dir = settings.config_path.parent().map(PathBuf::from);
        let client = connect(&key, settings, config_dir.as_deref()).await?;
        *current = Some(Current {
            key,
            client: client.clone(),
            config_dir,
            remembered: false,
        });
        Ok(client)
    }

    /// Writes down what auto mode found out (the server refused native tools) for the
    /// endpoint and model, once, so that the next client starts in prompt mode. Called after
    /// each question; a question still running is left to the next call.
    pub fn remember_detected(&self) {
        let Ok(mut current) = self.current.try_lock() else {
            return;
        };
        let Some(current) = current.as_mut() else {
            return;
        };
        let config = current.client.config();
        if current.remembered
            || config.tool_mode != ToolMode::Auto
            || current.client.detected_tool_mode() != Some(ToolMode::Prompt)
        {
            return;
        }
        current.remembered = true;
        if let Some(dir) = &current.config_dir
            && let Err(error) =
                LearnedToolModes::remember(dir, &config.base_url, &config.model, ToolMode::Prompt)
        {
            crate::warning::warn(&error.to_string());
        }
    }
}

async fn connect(
    key: &Key,
    settings: &Settings,
    config_dir: Option<&std::path::Path>,
) -> Result<LlmClient, HostError> {
    let mut config = LlmConfig::new(key.base_url.clone(), key.model.clone().unwrap_or_default());
    config.api_key = key.api_key.clone();
    config.idle_timeout = key.idle_timeout;
    config.context_window = key.context_window;
    config.max_tokens_field = key
        .max_tokens_field
        .as_deref()
        .and_then(tooltrail_llm::MaxTokensField::parse);
    if key.model.is_none() {
        // Local servers usually serve one model; ask which.
        let lister = LlmClient::new(config.clone()).map_err(model_error)?;
        config.model = lister
            .list_models()
            .await
            .map_err(model_error)?
            .into_iter()
            .next()
            .ok_or_else(|| HostError::NoModel {
                base_url: key.base_url.clone(),
                config_path: settings.config_path.clone(),
            })?;
    }
    config.tool_mode = match (key.tool_mode, config_dir) {
        (ToolMode::Auto, Some(dir)) => LearnedToolModes::read(dir)
            .get(&config.base_url, &config.model)
            .unwrap_or(ToolMode::Auto),
        (mode, _) => mode,
    };
    config.prompt_progress = key.prompt_progress;
    config.vision = match key.vision {
        Some(vision) => vision,
        None => {
            let asker = LlmClient::new(config.clone()).map_err(model_error)?;
            asker
                .detect_vision(&tokio_util::sync::CancellationToken::new())
                .await
        }
    };
    LlmClient::new(config).map_err(model_error)
}

fn model_error(error: LlmError) -> HostError {
    HostError::Model(crate::error::ModelFailure {
        code: error.code(),
        message: error.to_string(),
    })
}
