//! Where settings come from: flags, then environment, then the config file, then defaults.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Deserialize;

/// The local Ollama server, which needs no key.
pub const DEFAULT_BASE_URL: &str = "http://localhost:11434/v1";

/// The config file, every field optional.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// The name of an environment variable holding the API key (keys are not kept in files).
    pub api_key_env: Option<String>,
    pub max_rounds: Option<u32>,
    pub max_result_bytes: Option<usize>,
    pub temperature: Option<f32>,
}

/// Settings given on the command line.
#[derive(Debug, Default, Clone)]
pub struct Flags {
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub max_rounds: Option<u32>,
}

/// Settings after every source is merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub base_url: String,
    /// `None` when no source names a model: the endpoint's first model is used.
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub max_rounds: u32,
    pub max_result_bytes: usize,
    pub temperature: Option<f32>,
    /// The config file that was read, if one exists.
    pub config_path: PathBuf,
}

/// The folder the config file lives in: `TOOLTRAIL_CONFIG_DIR`, else the OS config folder.
pub fn config_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("TOOLTRAIL_CONFIG_DIR").filter(|dir| !dir.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("", "", "tooltrail")
        .map(|dirs| dirs.config_dir().to_path_buf())
        .context("could not find the user's config folder; set TOOLTRAIL_CONFIG_DIR")
}

fn read_config(path: &Path) -> anyhow::Result<ConfigFile> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(ConfigFile::default()),
        Err(err) => bail!("could not read the config file {}: {err}", path.display()),
    };
    toml::from_str(&text).map_err(|err| {
        anyhow::anyhow!(
            "the config file {} is not valid: {}",
            path.display(),
            err.message()
        )
    })
}

fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

impl Settings {
    pub fn resolve(flags: &Flags) -> anyhow::Result<Self> {
        let config_path = config_dir()?.join("config.toml");
        let file = read_config(&config_path)?;
        let api_key =
            env("TOOLTRAIL_API_KEY").or_else(|| file.api_key_env.as_deref().and_then(env));
        let base_url = flags
            .base_url
            .clone()
            .or_else(|| env("TOOLTRAIL_BASE_URL"))
            .or(file.base_url)
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            bail!("the base URL {base_url:?} must start with http:// or https://");
        }
        let max_rounds = flags.max_rounds.or(file.max_rounds).unwrap_or(10);
        if max_rounds == 0 {
            bail!("the round limit must be at least 1");
        }
        Ok(Self {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: flags
                .model
                .clone()
                .or_else(|| env("TOOLTRAIL_MODEL"))
                .or(file.model),
            api_key,
            max_rounds,
            max_result_bytes: file.max_result_bytes.unwrap_or(32 * 1024),
            temperature: file.temperature,
            config_path,
        })
    }
}
