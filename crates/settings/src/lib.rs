//! Where Tooltrail's model settings come from, for the command line and the desktop app alike:
//! explicit overrides (command-line flags), then the environment (`TOOLTRAIL_BASE_URL`,
//! `TOOLTRAIL_MODEL`, `TOOLTRAIL_API_KEY`), then the active provider of `config.toml` in the
//! config folder (`TOOLTRAIL_CONFIG_DIR` overrides the folder), then the file's own fields,
//! then defaults.
//!
//! Settings are read anew for every question, so an edited file or variable applies at once.
//! API keys are never kept in the file: a provider's key is in the OS keychain ([`keychain`]),
//! and the file may name the environment variable that holds one.
//!
//! One provider needs no entry: [`LOCAL_PROVIDER_ID`] (`local`) is Tooltrail's own model
//! server, configured by the `[local]` table ([`LocalConfig`]); when it is active,
//! [`Settings::local`] is set and the host asks the runtime for its endpoint. The data folder
//! ([`data_dir`]) is found here too, beside the config folder, for every crate that keeps data.
//!
//! ```no_run
//! use tooltrail_settings::{Overrides, Settings};
//! let settings = Settings::resolve(&Overrides::default())?;
//! println!("asking {} at {}", settings.model.as_deref().unwrap_or("(first model)"), settings.base_url);
//! # Ok::<(), tooltrail_settings::SettingsError>(())
//! ```

pub mod edit;
pub mod keychain;
mod layers;
pub mod telemetry;
pub mod tool_modes;
pub mod updates;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use tooltrail_protocol::ToolMode;

pub use edit::{ConfigEditor, Limits, Provider};
use keychain::ProviderKeys;
use layers::{Endpoint, Layers};

/// The local Ollama server, which needs no key.
pub const DEFAULT_BASE_URL: &str = "http://localhost:11434/v1";
/// Tool rounds per question unless configured.
pub const DEFAULT_MAX_ROUNDS: u32 = 10;
/// Largest tool result sent to the model unless configured.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 32 * 1024;
/// Longest wait for the model's next byte unless configured.
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 120;
/// A shell command's time limit when the model names none, unless configured.
pub const DEFAULT_COMMAND_TIMEOUT_SECS: u64 = 30;

/// The config file, every field optional. Unknown fields are allowed: the command line and the
/// app share the file, and either may learn a setting first.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct ConfigFile {
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// The name of an environment variable holding the API key (keys are not kept in files).
    pub api_key_env: Option<String>,
    pub max_rounds: Option<u32>,
    pub max_result_bytes: Option<usize>,
    pub request_timeout_secs: Option<u64>,
    pub command_timeout_secs: Option<u64>,
    pub temperature: Option<f32>,
    /// The id of the provider questions go to.
    pub active_provider: Option<String>,
    pub providers: Vec<Provider>,
    /// Built-in tools not offered to the model.
    pub disabled_tools: Vec<String>,
    /// Built-in tools that are off until turned on (`file_write`) and are turned on.
    pub enabled_tools: Vec<String>,
    /// How tools are offered: `native`, `prompt` or `auto` (the default).
    pub tool_mode: Option<ToolMode>,
    /// The model's context window in tokens; unset, the server is asked.
    pub context_window: Option<u32>,
    /// The most tokens one answer may take; unset, a quarter of the window.
    pub max_tokens: Option<u32>,
    /// `max_tokens` or `max_completion_tokens`: the request field that carries that limit.
    pub max_tokens_field: Option<String>,
    /// Whether the model sees images; unset, the server is asked where it says.
    pub vision: Option<bool>,
    /// What commands may see besides the workspace (`[sandbox]`).
    pub sandbox: SandboxConfig,
    /// Tooltrail's own model server, the `local` provider (`[local]`).
    pub local: LocalConfig,
    /// More addresses to look for model servers at (`tooltrail providers detect`, the first-run
    /// guide), besides the default ports of Ollama, LM Studio, llama.cpp, vLLM and Jan on this
    /// machine: OpenAI-compatible base URLs such as `http://192.168.1.20:8080/v1`.
    pub detect_urls: Vec<String>,
    /// Where OpenTelemetry traces go (`[telemetry]`; see [`telemetry`]).
    pub telemetry: tooltrail_protocol::TelemetrySection,
    /// Whether the app looks for a new version (`[updates]`; see [`updates`]).
    pub updates: updates::UpdatesSection,
}

/// The `[sandbox]` table of `config.toml`.
#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(default)]
pub struct SandboxConfig {
    /// Folders commands may read, besides the workspace, the system's folders and the
    /// toolchains found in the home folder (`~` is the home folder). Secrets inside them stay
    /// hidden.
    pub read_only_folders: Vec<String>,
    /// Network rules: the words an approved command must start with to run with the network
    /// open (`npm install`); a command of several commands needs every one covered.
    pub network_commands: Vec<String>,
}

/// The id of the provider that is Tooltrail's own model server: llama.cpp's `llama-server` run
/// by Tooltrail on a model of the models folder. It needs no `[[providers]]` entry; a
/// `[[providers]]` entry with this id, written before there was such a provider, keeps meaning
/// what it says and wins.
pub const LOCAL_PROVIDER_ID: &str = "local";

/// The `[local]` table of `config.toml`: how Tooltrail runs a model itself when the active
/// provider is [`LOCAL_PROVIDER_ID`].
///
/// This table is the contract between the models folder and the runtime that serves a model
/// (both in `tooltrail-runtime`): `tooltrail models use NAME` writes `model` and makes `local`
/// the active provider; the host then asks the runtime for an endpoint serving that model.
///
/// ```toml
/// active_provider = "local"
///
/// [local]
/// model = "qwen3-1.7b"   # a name from `tooltrail models list`
/// context_size = 8192    # tokens; unset, chosen from the model and the free memory
/// idle_minutes = 10      # the server stops after this long without a question
/// ```
#[derive(Debug, Default, Clone, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(default)]
pub struct LocalConfig {
    /// The installed model to serve, by its name in the models folder.
    pub model: Option<String>,
    /// The context window to start the server with, in tokens.
    pub context_size: Option<u32>,
    /// Minutes without a request after which the server is stopped.
    pub idle_minutes: Option<u32>,
}

impl LocalConfig {
    /// Refuses values the runtime cannot honour, in a sentence.
    pub fn check(&self) -> Result<(), SettingsError> {
        if let Some(model) = &self.model
            && model.trim().is_empty()
        {
            return Err(SettingsError::BadValue(
                "the local model's name must not be empty".to_string(),
            ));
        }
        if let Some(tokens) = self.context_size {
            check_context_window(tokens)?;
        }
        if self.idle_minutes == Some(0) {
            return Err(SettingsError::BadValue(
                "the local model server's idle time must be at least 1 minute".to_string(),
            ));
        }
        Ok(())
    }
}

impl ConfigFile {
    /// The file at `path`; a missing file is an empty one.
    pub fn read(path: &Path) -> Result<Self, SettingsError> {
        read_config(path)
    }

    /// The active provider, when one is set and exists.
    pub fn active(&self) -> Option<&Provider> {
        let id = self.active_provider.as_deref()?;
        self.providers.iter().find(|p| p.id == id)
    }

    /// The limits, with defaults where the file says nothing.
    pub fn limits(&self) -> Limits {
        let defaults = Limits::default();
        Limits {
            max_rounds: self.max_rounds.unwrap_or(defaults.max_rounds),
            max_result_bytes: self.max_result_bytes.unwrap_or(defaults.max_result_bytes),
            request_timeout_secs: self
                .request_timeout_secs
                .unwrap_or(defaults.request_timeout_secs),
            command_timeout_secs: self
                .command_timeout_secs
                .unwrap_or(defaults.command_timeout_secs),
        }
    }
}

/// Settings given explicitly, such as command-line flags; they win over every other source.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Overrides {
    /// A provider of config.toml (or `local`) to ask instead of the active one; its own
    /// endpoint then, whatever a base URL flag or variable says, so its key goes nowhere else.
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub max_rounds: Option<u32>,
    pub tool_mode: Option<ToolMode>,
    /// Tools turned on for this run on top of `enabled_tools` (`--enable file_write`).
    pub enabled_tools: Vec<String>,
    /// The model's context window in tokens (`--context-window`).
    pub context_window: Option<u32>,
    /// Whether a new conversation follows the folder's project instructions (`AGENTS.md`);
    /// `None` leaves it to the folder's preference (`--no-project-instructions`: `Some(false)`).
    pub project_instructions: Option<bool>,
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
    pub request_timeout_secs: u64,
    pub command_timeout_secs: u64,
    pub temperature: Option<f32>,
    /// The provider whose endpoint is used, when one of `config.toml` is.
    pub provider: Option<String>,
    /// Why the provider's key could not be read from the keychain; questions then go without
    /// one (a local server needs none), and front ends say so.
    pub key_problem: Option<String>,
    pub disabled_tools: Vec<String>,
    /// Off-by-default built-in tools turned on: the file's `enabled_tools` and the overrides'.
    pub enabled_tools: Vec<String>,
    /// How tools are offered, as configured (flag, `TOOLTRAIL_TOOL_MODE`, the provider, the
    /// file). In `auto`, what a server was found to need is remembered per endpoint and model
    /// in [`tool_modes`].
    pub tool_mode: ToolMode,
    /// The model's context window in tokens, as configured (flag, `TOOLTRAIL_CONTEXT_WINDOW`,
    /// the provider, the file); `None` leaves it to the server to say.
    pub context_window: Option<u32>,
    /// The most tokens one answer may take (the provider's `max_tokens`, else the file's);
    /// `None` keeps a quarter of the context window.
    pub max_tokens: Option<u32>,
    /// The request field for that limit (the provider's `max_tokens_field`, else the file's):
    /// `max_tokens` or `max_completion_tokens`; `None` chooses by the endpoint.
    pub max_tokens_field: Option<String>,
    /// Whether the model sees images, as configured (the provider's `vision`, else the
    /// file's); `None` leaves it to the server to say, and off where it does not.
    pub vision: Option<bool>,
    /// The config file consulted (it need not exist).
    pub config_path: PathBuf,
    /// Extra folders commands may read, as written in `[sandbox] read_only_folders`.
    pub read_only_folders: Vec<String>,
    /// The network rules, as written in `[sandbox] network_commands`.
    pub network_commands: Vec<String>,
    /// `Some` when questions go to Tooltrail's own model server (the active provider is
    /// [`LOCAL_PROVIDER_ID`] and no flag or variable names another endpoint): the `[local]`
    /// table. `base_url` and `api_key` then say nothing about that server, which is started on
    /// a port and with a key of its own; a front end asks the runtime for its endpoint (the
    /// host does) before building a client.
    pub local: Option<LocalConfig>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("max_rounds", &self.max_rounds)
            .field("max_result_bytes", &self.max_result_bytes)
            .field("request_timeout_secs", &self.request_timeout_secs)
            .field("command_timeout_secs", &self.command_timeout_secs)
            .field("temperature", &self.temperature)
            .field("provider", &self.provider)
            .field("key_problem", &self.key_problem)
            .field("disabled_tools", &self.disabled_tools)
            .field("enabled_tools", &self.enabled_tools)
            .field("tool_mode", &self.tool_mode)
            .field("context_window", &self.context_window)
            .field("max_tokens", &self.max_tokens)
            .field("max_tokens_field", &self.max_tokens_field)
            .field("vision", &self.vision)
            .field("config_path", &self.config_path)
            .field("read_only_folders", &self.read_only_folders)
            .field("network_commands", &self.network_commands)
            .field("local", &self.local)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("could not find the user's config folder; set TOOLTRAIL_CONFIG_DIR")]
    NoConfigDir,
    #[error("could not find the user's data folder; set TOOLTRAIL_DATA_DIR")]
    NoDataDir,
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
    #[error("there is no provider {id:?} in config.toml; the providers are: {known}")]
    NoSuchProvider { id: String, known: String },
    #[error("{0}")]
    BadValue(String),
    #[error("could not write the config file {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("the system keychain could not be used: {0}")]
    Keychain(String),
    /// No keychain answers on the session's D-Bus: nothing can store keys until one runs.
    #[error(
        "API keys cannot be stored, because no keychain is running on this computer (the Secret Service, which GNOME Keyring or KWallet provides); start one (install gnome-keyring and log in again), and until then give the key in the TOOLTRAIL_API_KEY environment variable when you start Tooltrail"
    )]
    NoKeychainService,
}

/// Refuses a base URL that is not http(s), in a sentence.
pub fn check_base_url(base_url: &str) -> Result<(), SettingsError> {
    if base_url.starts_with("http://") || base_url.starts_with("https://") {
        Ok(())
    } else {
        Err(SettingsError::BadBaseUrl(base_url.to_string()))
    }
}

/// The smallest context window accepted: less holds no question with its tools.
pub const MIN_CONTEXT_WINDOW: u32 = 1024;

/// Refuses a context window too small to hold a question, in a sentence.
pub fn check_context_window(tokens: u32) -> Result<(), SettingsError> {
    if tokens < MIN_CONTEXT_WINDOW {
        return Err(SettingsError::BadValue(format!(
            "the context window must be at least {MIN_CONTEXT_WINDOW} tokens ({tokens} was given)"
        )));
    }
    Ok(())
}

/// The folder the config files live in: `TOOLTRAIL_CONFIG_DIR`, else the OS config folder.
pub fn config_dir() -> Result<PathBuf, SettingsError> {
    if let Some(dir) = std::env::var_os("TOOLTRAIL_CONFIG_DIR").filter(|dir| !dir.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("", "", "tooltrail")
        .map(|dirs| dirs.config_dir().to_path_buf())
        .ok_or(SettingsError::NoConfigDir)
}

/// Overrides the data folder (tests, portable installs).
pub const DATA_DIR_ENV: &str = "TOOLTRAIL_DATA_DIR";

/// The folder Tooltrail keeps its data in (the history database, the models folder, caches):
/// `TOOLTRAIL_DATA_DIR`, else `~/.local/share/tooltrail` on Linux,
/// `~/Library/Application Support/tooltrail` on macOS, `%APPDATA%\tooltrail\data` on Windows.
/// It lives here, beside [`config_dir`], so that every crate finds the same folder without
/// depending on the store.
pub fn data_dir() -> Result<PathBuf, SettingsError> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|dir| !dir.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("", "", "tooltrail")
        .map(|dirs| dirs.data_dir().to_path_buf())
        .ok_or(SettingsError::NoDataDir)
}

/// The path of `config.toml`.
pub fn config_path() -> Result<PathBuf, SettingsError> {
    Ok(config_dir()?.join("config.toml"))
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
    read_config_text(&text, path)
}

pub(crate) fn read_config_text(text: &str, path: &Path) -> Result<ConfigFile, SettingsError> {
    toml::from_str(text).map_err(|err| SettingsError::Invalid {
        path: path.display().to_string(),
        message: err.message().to_string(),
    })
}

/// An environment variable, when set to something other than blanks.
pub fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

impl Settings {
    /// Reads every source now.
    pub fn resolve(overrides: &Overrides) -> Result<Self, SettingsError> {
        let config_path = config_path()?;
        let file = read_config(&config_path)?;
        Self::merge(overrides, file, config_path, env, ProviderKeys::os())
    }

    fn merge(
        overrides: &Overrides,
        file: ConfigFile,
        config_path: PathBuf,
        env: impl Fn(&str) -> Option<String>,
        keys: ProviderKeys<'_>,
    ) -> Result<Self, SettingsError> {
        let Endpoint {
            provider,
            local,
            base_url,
            api_key,
            key_problem,
        } = Endpoint::choose(overrides, &file, &env, &keys)?;
        let limits = file.limits();
        let max_rounds = overrides.max_rounds.unwrap_or(limits.max_rounds);
        if max_rounds == 0 {
            return Err(SettingsError::ZeroRounds);
        }
        let layers = Layers {
            overrides,
            env: &env,
            provider: provider.as_ref(),
            file: &file,
        };
        let tool_mode = layers.tool_mode()?;
        let context_window = layers.context_window()?;
        let max_tokens = layers.max_tokens()?;
        let max_tokens_field = layers.max_tokens_field()?;
        let vision = layers.vision();
        let model = layers.model(local.as_ref());
        Ok(Self {
            base_url: base_url.trim_end_matches('/').to_string(),
            model,
            api_key,
            max_rounds,
            max_result_bytes: limits.max_result_bytes,
            request_timeout_secs: limits.request_timeout_secs,
            command_timeout_secs: limits.command_timeout_secs,
            temperature: file.temperature,
            provider: provider
                .map(|p| p.id)
                .or_else(|| local.as_ref().map(|_| LOCAL_PROVIDER_ID.to_string())),
            key_problem,
            disabled_tools: file.disabled_tools,
            enabled_tools: file
                .enabled_tools
                .into_iter()
                .chain(overrides.enabled_tools.iter().cloned())
                .collect(),
            tool_mode,
            context_window,
            max_tokens,
            max_tokens_field,
            vision,
            config_path,
            read_only_folders: file.sandbox.read_only_folders,
            network_commands: file.sandbox.network_commands,
            local,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tooltrail_keychain::{KeychainError, MemorySecrets, SecretStore};

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn merge(
        overrides: &Overrides,
        file: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, SettingsError> {
        let file: ConfigFile = toml::from_str(file).map_err(|err| SettingsError::Invalid {
            path: "c.toml".into(),
            message: err.message().to_string(),
        })?;
        Settings::merge(
            overrides,
            file,
            PathBuf::from("c.toml"),
            env,
            ProviderKeys::new(&MemorySecrets::default()),
        )
    }

    #[test]
    fn the_answer_limit_comes_from_the_provider_then_the_file() {
        let file = "max_tokens = 700\nactive_provider = \"p\"\n[[providers]]\nid = \"p\"\nname = \"P\"\nbase_url = \"https://api.openai.com/v1\"\nmax_tokens = 300\nmax_tokens_field = \"max_completion_tokens\"\n";
        let settings = merge(&Overrides::default(), file, no_env).unwrap();
        assert_eq!(settings.max_tokens, Some(300));
        assert_eq!(
            settings.max_tokens_field.as_deref(),
            Some("max_completion_tokens")
        );
        let settings = merge(&Overrides::default(), "max_tokens = 700\n", no_env).unwrap();
        assert_eq!(settings.max_tokens, Some(700));
        assert_eq!(settings.max_tokens_field, None);
        let error = merge(
            &Overrides::default(),
            "max_tokens_field = \"tokens\"\n",
            no_env,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            error,
            "max_tokens_field must be \"max_tokens\" or \"max_completion_tokens\" (\"tokens\" was given)"
        );
    }

    #[test]
    fn defaults_to_the_local_ollama_endpoint() {
        let settings = merge(&Overrides::default(), "", no_env).unwrap();
        assert_eq!(settings.base_url, DEFAULT_BASE_URL);
        assert_eq!(settings.model, None);
        assert_eq!(settings.max_rounds, 10);
        assert_eq!(settings.max_result_bytes, 32 * 1024);
    }

    #[test]
    fn overrides_win_then_the_environment_then_the_file() {
        let file = "base_url = \"http://file/v1/\"\nmodel = \"file-model\"\napi_key_env = \"MY_KEY\"\nmax_rounds = 4\nfuture_setting = 1";
        let env = |name: &str| match name {
            "TOOLTRAIL_MODEL" => Some("env-model".to_string()),
            "MY_KEY" => Some("sk-test".to_string()),
            _ => None,
        };
        let settings = merge(&Overrides::default(), file, env).unwrap();
        assert_eq!(settings.base_url, "http://file/v1");
        assert_eq!(settings.model.as_deref(), Some("env-model"));
        assert_eq!(settings.api_key.as_deref(), Some("sk-test"));
        assert_eq!(settings.max_rounds, 4);
        assert!(
            !format!("{settings:?}").contains("sk-test"),
            "the key is never shown"
        );

        let flags = Overrides {
            base_url: Some("https://flag/v1".into()),
            model: Some("flag-model".into()),
            max_rounds: Some(2),
            tool_mode: None,
            ..Overrides::default()
        };
        let settings = merge(&flags, file, env).unwrap();
        assert_eq!(
            (
                settings.base_url.as_str(),
                settings.model.as_deref(),
                settings.max_rounds
            ),
            ("https://flag/v1", Some("flag-model"), 2)
        );
    }

    #[test]
    fn the_active_provider_gives_the_endpoint_model_and_keychain_key() {
        const FILE: &str = r#"
base_url = "http://file/v1"
model = "file-model"
active_provider = "or"
[[providers]]
id = "or"
name = "OpenRouter"
base_url = "https://openrouter.ai/api/v1"
model = "qwen"
"#;
        let keychain = MemorySecrets::default();
        let keys = ProviderKeys::new(&keychain);
        keys.set("or", "sk-or").unwrap();
        let merge = |env: &dyn Fn(&str) -> Option<String>| {
            let file = toml::from_str::<ConfigFile>(FILE).unwrap();
            Settings::merge(
                &Overrides::default(),
                file,
                PathBuf::from("c.toml"),
                env,
                keys,
            )
            .unwrap()
        };
        let settings = merge(&no_env);
        assert_eq!(settings.base_url, "https://openrouter.ai/api/v1");
        assert_eq!(settings.model.as_deref(), Some("qwen"));
        assert_eq!(settings.api_key.as_deref(), Some("sk-or"));
        assert_eq!(settings.provider.as_deref(), Some("or"));
        assert!(!format!("{settings:?}").contains("sk-or"));

        // A variable naming another endpoint wins, and the provider's key does not go there.
        let other =
            |name: &str| (name == "TOOLTRAIL_BASE_URL").then(|| "http://elsewhere/v1".to_string());
        let settings = merge(&other);
        assert_eq!(settings.base_url, "http://elsewhere/v1");
        assert_eq!(settings.api_key, None);
        assert_eq!(settings.model.as_deref(), Some("file-model"));
        assert_eq!(settings.provider, None);

        // A keychain that cannot be reached: questions go without a key, and say why.
        struct NoKeychain;
        impl SecretStore for NoKeychain {
            fn get(&self, _: &str) -> Result<Option<String>, KeychainError> {
                Err(KeychainError::Failed("no D-Bus session".into()))
            }
            fn set(&self, _: &str, _: &str) -> Result<(), KeychainError> {
                unreachable!()
            }
            fn delete(&self, _: &str) -> Result<(), KeychainError> {
                unreachable!()
            }
        }
        let file = toml::from_str::<ConfigFile>(FILE).unwrap();
        let settings = Settings::merge(
            &Overrides::default(),
            file,
            PathBuf::from("c.toml"),
            no_env,
            ProviderKeys::new(&NoKeychain),
        )
        .unwrap();
        assert_eq!(settings.api_key, None);
        assert_eq!(
            settings.key_problem.as_deref(),
            Some(
                "the API key of provider \"OpenRouter\" could not be read, so none is sent: the \
                 system keychain could not be used: no D-Bus session"
            )
        );
    }

    #[test]
    fn extra_read_only_folders_come_from_the_sandbox_table() {
        let file = "[sandbox]\nread_only_folders = [\"~/notes\", \"/opt/sdk\"]\nnetwork_commands = [\"npm install\"]\n";
        let settings = merge(&Overrides::default(), file, no_env).unwrap();
        assert_eq!(settings.read_only_folders, ["~/notes", "/opt/sdk"]);
        assert_eq!(settings.network_commands, ["npm install"]);
        let settings = merge(&Overrides::default(), "", no_env).unwrap();
        assert!(settings.read_only_folders.is_empty());
    }

    #[test]
    fn bad_values_are_refused_with_a_sentence() {
        let env = |name: &str| (name == "TOOLTRAIL_BASE_URL").then(|| "localhost:1234".to_string());
        let error = merge(&Overrides::default(), "", env).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the base URL \"localhost:1234\" must start with http:// or https://"
        );
        let error = merge(&Overrides::default(), "max_rounds = 0", no_env).unwrap_err();
        assert_eq!(error.to_string(), "the round limit must be at least 1");
        let error = merge(&Overrides::default(), "base_url = 42", no_env).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("the config file c.toml is not valid")
        );
    }

    #[test]
    fn the_context_window_comes_from_the_flag_then_the_environment_then_the_provider_then_the_file()
    {
        let file = "context_window = 2048\nactive_provider = \"p\"\n[[providers]]\nid = \"p\"\nname = \"P\"\nbase_url = \"http://p/v1\"\ncontext_window = 16384";
        let window = |overrides: &Overrides, file: &str, env: &dyn Fn(&str) -> Option<String>| {
            merge(overrides, file, env).map(|settings| settings.context_window)
        };
        assert_eq!(window(&Overrides::default(), "", &no_env).unwrap(), None);
        assert_eq!(
            window(&Overrides::default(), "context_window = 2048", &no_env).unwrap(),
            Some(2048)
        );
        assert_eq!(
            window(&Overrides::default(), file, &no_env).unwrap(),
            Some(16384)
        );
        let env = |name: &str| (name == "TOOLTRAIL_CONTEXT_WINDOW").then(|| "8192".to_string());
        assert_eq!(
            window(&Overrides::default(), file, &env).unwrap(),
            Some(8192)
        );
        let flag = Overrides {
            context_window: Some(4096),
            ..Overrides::default()
        };
        assert_eq!(window(&flag, file, &env).unwrap(), Some(4096));
        let bad = |name: &str| (name == "TOOLTRAIL_CONTEXT_WINDOW").then(|| "lots".to_string());
        let error = window(&Overrides::default(), "", &bad)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("\"lots\" is not a number of tokens"),
            "{error}"
        );
        let small = Overrides {
            context_window: Some(100),
            ..Overrides::default()
        };
        let error = window(&small, "", &no_env).unwrap_err().to_string();
        assert!(error.contains("at least 1024 tokens"), "{error}");
    }

    #[test]
    fn the_tool_mode_comes_from_the_flag_then_the_environment_then_the_provider_then_the_file() {
        let file = "tool_mode = \"native\"\nactive_provider = \"p\"\n[[providers]]\nid = \"p\"\nname = \"P\"\nbase_url = \"http://p/v1\"\ntool_mode = \"prompt\"";
        let mode = |overrides: &Overrides, file: &str, env: &dyn Fn(&str) -> Option<String>| {
            merge(overrides, file, env).map(|settings| settings.tool_mode)
        };
        assert_eq!(
            mode(&Overrides::default(), "", &no_env).unwrap(),
            ToolMode::Auto
        );
        assert_eq!(
            mode(&Overrides::default(), "tool_mode = \"native\"", &no_env).unwrap(),
            ToolMode::Native
        );
        assert_eq!(
            mode(&Overrides::default(), file, &no_env).unwrap(),
            ToolMode::Prompt
        );
        let env = |name: &str| (name == "TOOLTRAIL_TOOL_MODE").then(|| "native".to_string());
        assert_eq!(
            mode(&Overrides::default(), file, &env).unwrap(),
            ToolMode::Native
        );
        let flag = Overrides {
            tool_mode: Some(ToolMode::Auto),
            ..Overrides::default()
        };
        assert_eq!(mode(&flag, file, &env).unwrap(), ToolMode::Auto);
        let bad = |name: &str| (name == "TOOLTRAIL_TOOL_MODE").then(|| "xml".to_string());
        let error = mode(&Overrides::default(), "", &bad)
            .unwrap_err()
            .to_string();
        assert!(error.contains("`xml` is not a tool mode"), "{error}");
    }

    #[test]
    fn the_local_provider_takes_its_model_from_the_local_table() {
        let file = "model = \"file-model\"\nactive_provider = \"local\"\n[local]\nmodel = \"qwen3-1.7b\"\ncontext_size = 8192\n";
        let settings = merge(&Overrides::default(), file, no_env).unwrap();
        assert_eq!(settings.provider.as_deref(), Some(LOCAL_PROVIDER_ID));
        assert_eq!(settings.model.as_deref(), Some("qwen3-1.7b"));
        assert_eq!(
            settings.local,
            Some(LocalConfig {
                model: Some("qwen3-1.7b".into()),
                context_size: Some(8192),
                idle_minutes: None,
            })
        );
        assert_eq!(settings.api_key, None);

        // A variable naming another endpoint wins over it, as over any provider.
        let other =
            |name: &str| (name == "TOOLTRAIL_BASE_URL").then(|| "http://elsewhere/v1".to_string());
        let settings = merge(&Overrides::default(), file, other).unwrap();
        assert_eq!(settings.local, None);
        assert_eq!(settings.provider, None);
        assert_eq!(settings.model.as_deref(), Some("file-model"));

        // A provider of the user's own with that id keeps meaning what it says.
        let own = format!(
            "{file}[[providers]]\nid = \"local\"\nname = \"Local Ollama\"\nbase_url = \"http://localhost:11434/v1\"\nmodel = \"gemma3:270m\"\n"
        );
        let settings = merge(&Overrides::default(), &own, no_env).unwrap();
        assert_eq!(settings.local, None);
        assert_eq!(settings.provider.as_deref(), Some("local"));
        assert_eq!(settings.base_url, "http://localhost:11434/v1");
        assert_eq!(settings.model.as_deref(), Some("gemma3:270m"));

        // Other providers leave the table alone.
        let settings = merge(&Overrides::default(), "[local]\nmodel = \"x\"\n", no_env).unwrap();
        assert_eq!(settings.local, None);

        let error = merge(
            &Overrides::default(),
            "active_provider = \"local\"\n[local]\ncontext_size = 10\n",
            no_env,
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("at least 1024 tokens"),
            "{error}"
        );
    }
}
