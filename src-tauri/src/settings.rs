//! Where the model settings come from: the environment, then `config.toml`, then defaults —
//! the same sources, in the same order, as the `tooltrail` command line (`crates/cli`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The local Ollama server, which needs no key.
pub const DEFAULT_BASE_URL: &str = "http://localhost:11434/v1";

/// The config file, every field optional. Unknown fields are allowed: the command line and the
/// app share the file, and either may learn a setting first.
#[derive(Debug, Default, Deserialize, PartialEq)]
struct ConfigFile {
    base_url: Option<String>,
    model: Option<String>,
    /// The name of an environment variable holding the API key (keys are not kept in files).
    api_key_env: Option<String>,
    max_rounds: Option<u32>,
    max_result_bytes: Option<usize>,
    temperature: Option<f32>,
}

/// Settings after every source is merged.
#[derive(Clone, PartialEq)]
pub struct Settings {
    pub base_url: String,
    /// `None` when no source names a model: the endpoint's first model is used.
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub max_rounds: u32,
    pub max_result_bytes: usize,
    pub temperature: Option<f32>,
    pub config_path: PathBuf,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("max_rounds", &self.max_rounds)
            .finish_non_exhaustive()
    }
}

/// What the first-run screen tells the user about the endpoint. Never carries the key.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EndpointInfo {
    pub base_url: String,
    pub model: Option<String>,
    pub api_key_set: bool,
    pub config_path: String,
    /// Set when the settings could not be read; the sentence says why.
    pub problem: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("could not find the user's config folder; set TOOLTRAIL_CONFIG_DIR")]
    NoConfigDir,
    #[error("could not read the config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the config file {path} is not valid: {message}")]
    Invalid { path: String, message: String },
    #[error("the base URL {0:?} must start with http:// or https://")]
    BadBaseUrl(String),
    #[error("the round limit must be at least 1")]
    ZeroRounds,
}

/// The folder the config file lives in: `TOOLTRAIL_CONFIG_DIR`, else the OS config folder.
pub fn config_dir() -> Result<PathBuf, SettingsError> {
    if let Some(dir) = std::env::var_os("TOOLTRAIL_CONFIG_DIR").filter(|dir| !dir.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("", "", "tooltrail")
        .map(|dirs| dirs.config_dir().to_path_buf())
        .ok_or(SettingsError::NoConfigDir)
}

fn read_config(path: &Path) -> Result<ConfigFile, SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(ConfigFile::default()),
        Err(source) => {
            return Err(SettingsError::Read {
                path: path.display().to_string(),
                source,
            });
        }
    };
    toml::from_str(&text).map_err(|err| SettingsError::Invalid {
        path: path.display().to_string(),
        message: err.message().to_string(),
    })
}

fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

impl Settings {
    /// Reads the settings now, so a changed file or variable applies to the next question.
    pub fn resolve() -> Result<Self, SettingsError> {
        let config_path = config_dir()?.join("config.toml");
        let file = read_config(&config_path)?;
        Self::merge(file, config_path, env)
    }

    fn merge(
        file: ConfigFile,
        config_path: PathBuf,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, SettingsError> {
        let api_key =
            env("TOOLTRAIL_API_KEY").or_else(|| file.api_key_env.as_deref().and_then(&env));
        let base_url = env("TOOLTRAIL_BASE_URL")
            .or(file.base_url)
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(SettingsError::BadBaseUrl(base_url));
        }
        let max_rounds = file.max_rounds.unwrap_or(10);
        if max_rounds == 0 {
            return Err(SettingsError::ZeroRounds);
        }
        Ok(Self {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: env("TOOLTRAIL_MODEL").or(file.model),
            api_key,
            max_rounds,
            max_result_bytes: file.max_result_bytes.unwrap_or(32 * 1024),
            temperature: file.temperature,
            config_path,
        })
    }

    pub fn endpoint_info(&self) -> EndpointInfo {
        EndpointInfo {
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            api_key_set: self.api_key.is_some(),
            config_path: self.config_path.display().to_string(),
            problem: None,
        }
    }
}

/// The endpoint as the first-run screen shows it, even when the settings are broken.
pub fn endpoint_info() -> EndpointInfo {
    match Settings::resolve() {
        Ok(settings) => settings.endpoint_info(),
        Err(error) => EndpointInfo {
            base_url: env("TOOLTRAIL_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_string()),
            model: env("TOOLTRAIL_MODEL"),
            api_key_set: env("TOOLTRAIL_API_KEY").is_some(),
            config_path: config_dir()
                .map(|dir| dir.join("config.toml").display().to_string())
                .unwrap_or_default(),
            problem: Some(error.to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn defaults_to_the_local_ollama_endpoint() {
        let settings = Settings::merge(ConfigFile::default(), PathBuf::from("c.toml"), no_env)
            .expect("defaults");
        assert_eq!(settings.base_url, DEFAULT_BASE_URL);
        assert_eq!(settings.model, None);
        assert_eq!(settings.max_rounds, 10);
    }

    #[test]
    fn environment_wins_over_the_file_and_the_key_can_come_from_a_named_variable() {
        let file: ConfigFile = toml::from_str(
            "base_url = \"http://file/v1/\"\nmodel = \"file-model\"\napi_key_env = \"MY_KEY\"\nfuture_setting = 1",
        )
        .expect("parse");
        let env = |name: &str| match name {
            "TOOLTRAIL_MODEL" => Some("env-model".to_string()),
            "MY_KEY" => Some("sk-test".to_string()),
            _ => None,
        };
        let settings = Settings::merge(file, PathBuf::from("c.toml"), env).expect("merge");
        assert_eq!(settings.base_url, "http://file/v1");
        assert_eq!(settings.model.as_deref(), Some("env-model"));
        assert_eq!(settings.api_key.as_deref(), Some("sk-test"));
        assert!(!format!("{settings:?}").contains("sk-test"));
        assert!(settings.endpoint_info().api_key_set);
    }

    #[test]
    fn a_base_url_without_a_scheme_is_refused() {
        let env = |name: &str| (name == "TOOLTRAIL_BASE_URL").then(|| "localhost:1234".to_string());
        let error = Settings::merge(ConfigFile::default(), PathBuf::from("c.toml"), env)
            .expect_err("refused");
        assert!(error.to_string().contains("must start with http"));
    }
}
