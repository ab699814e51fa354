//! The model client, kept while the endpoint stays the same: one connection pool across
//! questions, and no `GET /models` per question when no model is configured.

use std::time::Duration;

use tokio::sync::Mutex;
use tooltrail_llm::{LlmClient, LlmConfig, LlmError};
use tooltrail_settings::Settings;

use crate::error::HostError;

/// What makes a client: a question whose settings say the same reuses it.
#[derive(Clone, PartialEq, Eq)]
struct Key {
    base_url: String,
    /// As configured: `None` means "the endpoint's first model", looked up once.
    model: Option<String>,
    api_key: Option<String>,
    idle_timeout: Duration,
}

/// The client of the last question.
#[derive(Default)]
pub struct Models {
    current: Mutex<Option<(Key, LlmClient)>>,
}

impl Models {
    /// A client for the endpoint and model `settings` name (the endpoint's first model when
    /// they name none), reused while base URL, model and key are unchanged.
    pub async fn client(&self, settings: &Settings) -> Result<LlmClient, HostError> {
        let key = Key {
            base_url: settings.base_url.clone(),
            model: settings.model.clone(),
            api_key: settings.api_key.clone(),
            idle_timeout: Duration::from_secs(settings.request_timeout_secs),
        };
        let mut current = self.current.lock().await;
        if let Some((cached, client)) = current.as_ref()
            && *cached == key
        {
            return Ok(client.clone());
        }
        let client = connect(&key, settings).await?;
        *current = Some((key, client.clone()));
        Ok(client)
    }
}

async fn connect(key: &Key, settings: &Settings) -> Result<LlmClient, HostError> {
    let mut config = LlmConfig::new(key.base_url.clone(), key.model.clone().unwrap_or_default());
    config.api_key = key.api_key.clone();
    config.idle_timeout = key.idle_timeout;
    let client = LlmClient::new(config).map_err(model_error)?;
    if key.model.is_some() {
        return Ok(client);
    }
    // Local servers usually serve one model; ask which.
    let first = client
        .list_models()
        .await
        .map_err(model_error)?
        .into_iter()
        .next()
        .ok_or_else(|| HostError::NoModel {
            base_url: key.base_url.clone(),
            config_path: settings.config_path.clone(),
        })?;
    let mut config = client.config().clone();
    config.model = first;
    LlmClient::new(config).map_err(model_error)
}

fn model_error(error: LlmError) -> HostError {
    HostError::Model(error.to_string())
}
