//! The model settings, from the same sources and in the same order as the `tooltrail` command
//! line (`tooltrail-settings`), and what the first-run screen shows of them.

use serde::Serialize;
pub use tooltrail_settings::{
    DEFAULT_BASE_URL, Overrides, Settings, SettingsError, config_dir, env,
};
use ts_rs::TS;

/// What the first-run screen tells the user about the endpoint. Never carries the key.
#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct EndpointInfo {
    pub base_url: String,
    pub model: Option<String>,
    pub api_key_set: bool,
    pub config_path: String,
    /// Set when the settings could not be read; the sentence says why.
    pub problem: Option<String>,
    /// Set when the active provider's key could not be read from the keychain.
    pub key_problem: Option<String>,
    /// Set when questions go to the model Tooltrail runs itself (the `local` provider): that
    /// model's name. The base URL is then only known once its server runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub local_model: Option<String>,
}

impl EndpointInfo {
    fn of(settings: &Settings) -> Self {
        Self {
            base_url: settings.base_url.clone(),
            model: settings.model.clone(),
            api_key_set: settings.api_key.is_some(),
            config_path: settings.config_path.display().to_string(),
            problem: None,
            key_problem: settings.key_problem.clone(),
            local_model: settings
                .local
                .as_ref()
                .map(|local| local.model.clone().unwrap_or_default()),
        }
    }
}

/// The settings as the app reads them: no command-line overrides.
pub fn resolve() -> Result<Settings, SettingsError> {
    Settings::resolve(&Overrides::default())
}

/// The endpoint as the first-run screen shows it, even when the settings are broken.
pub fn endpoint_info() -> EndpointInfo {
    match resolve() {
        Ok(settings) => EndpointInfo::of(&settings),
        Err(error) => EndpointInfo {
            base_url: env("TOOLTRAIL_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_string()),
            model: env("TOOLTRAIL_MODEL"),
            api_key_set: env("TOOLTRAIL_API_KEY").is_some(),
            config_path: config_dir()
                .map(|dir| dir.join("config.toml").display().to_string())
                .unwrap_or_default(),
            problem: Some(error.to_string()),
            key_problem: None,
            local_model: None,
        },
    }
}
