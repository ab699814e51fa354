//! The settings screen's side: providers with their keys in the OS keychain, limits, tools on
//! and off, the sandbox's status, and the servers of `mcp.json`. Every change is written to the
//! same files the `tooltrail` command line reads, and applies from the next question.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tooltrail_mcp::{McpConfig, McpConfigEditor};
pub use tooltrail_mcp::{McpConfigView, McpServerConfig};
use tooltrail_protocol::ToolMode;
use tooltrail_settings::keychain::ProviderKeys;
use tooltrail_settings::tool_modes::{LearnedToolMode, LearnedToolModes};
use tooltrail_settings::{ConfigEditor, ConfigFile, Limits, Provider, config_path};
use ts_rs::TS;

use crate::error::{CommandError, CommandResult, sentence};
use crate::settings::{EndpointInfo, endpoint_info};

#[derive(Debug, Clone, Serialize, TS)]
pub struct ProviderView {
    pub id: String,
    pub name: String,
    pub base_url: String,
    /// `None`: the endpoint's first model.
    pub model: Option<String>,
    /// Whether an API key for it is in the OS keychain.
    pub key_stored: bool,
    /// Whether questions go to it.
    pub active: bool,
    /// How tools are offered to its models; `None` follows the file (auto by default).
    pub tool_mode: Option<ToolMode>,
    /// The context window of its models in tokens, when set; otherwise the server is asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub context_window: Option<u32>,
    /// US dollars per million prompt tokens, when the user gave a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub price_input_per_mtok: Option<f64>,
    /// US dollars per million answer tokens, when the user gave a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub price_output_per_mtok: Option<f64>,
    /// Whether its models see images; `None`: as the server says (off where it says nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub vision: Option<bool>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct ToolToggle {
    pub name: String,
    pub description: String,
    pub enabled: bool,
    /// Off until the user turns it on (it changes files: `file_write`).
    pub off_by_default: bool,
    /// About how many tokens its description takes in every request while it is on
    /// (Tooltrail's estimate of the tool as the model is offered it).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tokens: Option<u32>,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct KeychainStatus {
    pub available: bool,
    /// Why it is not, in a sentence.
    pub message: Option<String>,
    /// No keychain runs at all (no Secret Service on D-Bus): the window says so in its own
    /// words, with what to do and what works meanwhile.
    pub no_service: bool,
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct AppSettings {
    pub providers: Vec<ProviderView>,
    pub limits: Limits,
    /// The built-in tools.
    pub tools: Vec<ToolToggle>,
    pub config_path: String,
    /// Where questions go now, after the environment variables are applied.
    pub endpoint: EndpointInfo,
    pub keychain: KeychainStatus,
    /// Endpoints and models found to refuse native tools, which get prompt mode from the
    /// start; each can be forgotten.
    pub learned_tool_modes: Vec<LearnedToolMode>,
}

/// What the window sends to add or change a provider. The optional fields may be left out or
/// `null`.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[serde(default)]
#[ts(optional_fields = nullable)]
pub struct ProviderInput {
    /// Absent for a new provider.
    pub id: Option<String>,
    pub name: String,
    pub base_url: String,
    pub model: Option<String>,
    /// `None` keeps the stored key, `""` removes it, anything else replaces it.
    pub api_key: Option<String>,
    /// `None` follows the file's `tool_mode` (auto by default).
    pub tool_mode: Option<ToolMode>,
    /// The context window in tokens; `None` keeps the one stored (or none).
    pub context_window: Option<u32>,
    /// US dollars per million prompt tokens; `None` for no price.
    pub price_input_per_mtok: Option<f64>,
    /// US dollars per million answer tokens; `None` for no price.
    pub price_output_per_mtok: Option<f64>,
    /// Whether its models see images; `None` asks the server.
    pub vision: Option<bool>,
}

fn path() -> CommandResult<PathBuf> {
    Ok(config_path()?)
}

/// Everything the settings screen shows. Blocking: it asks the keychain.
pub fn load() -> CommandResult<AppSettings> {
    let path = path()?;
    let file = ConfigFile::read(&path)?;
    let keys = ProviderKeys::os();
    let keychain = match keys.check() {
        Ok(()) => KeychainStatus {
            available: true,
            message: None,
            no_service: false,
        },
        Err(error) => KeychainStatus {
            available: false,
            no_service: matches!(error, tooltrail_settings::SettingsError::NoKeychainService),
            message: Some(sentence(&error.to_string())),
        },
    };
    let active = file.active().map(|p| p.id.clone());
    let providers = file
        .providers
        .iter()
        .map(|p| ProviderView {
            key_stored: keychain.available && matches!(keys.get(&p.id), Ok(Some(_))),
            active: active.as_deref() == Some(p.id.as_str()),
            id: p.id.clone(),
            name: p.name.clone(),
            base_url: p.base_url.clone(),
            model: p.model.clone(),
            tool_mode: p.tool_mode,
            context_window: p.context_window,
            price_input_per_mtok: p.price_input_per_mtok,
            price_output_per_mtok: p.price_output_per_mtok,
            vision: p.vision,
        })
        .collect();
    let tools = tooltrail_host::builtin_tools()
        .into_iter()
        .map(|tool| ToolToggle {
            tokens: tool.offered_tokens,
            enabled: if tool.off_by_default {
                file.enabled_tools.contains(&tool.spec.name)
            } else {
                !file.disabled_tools.contains(&tool.spec.name)
            },
            off_by_default: tool.off_by_default,
            description: first_sentence(&tool.spec.description),
            name: tool.spec.name,
        })
        .collect();
    Ok(AppSettings {
        providers,
        limits: file.limits(),
        tools,
        config_path: path.display().to_string(),
        endpoint: endpoint_info(),
        keychain,
        learned_tool_modes: path
            .parent()
            .map(|dir| LearnedToolModes::read(dir).entries)
            .unwrap_or_default(),
    })
}

/// Forgets that `model` at `base_url` needed prompt mode: the next question tries native tools
/// again (and learns anew if the server still refuses them).
pub fn forget_tool_mode(base_url: &str, model: &str) -> CommandResult<()> {
    let path = path()?;
    let dir = path
        .parent()
        .ok_or_else(|| CommandError::new("settings", "The config folder cannot be found."))?;
    LearnedToolModes::forget(dir, base_url, model)?;
    Ok(())
}

fn first_sentence(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.find(". ") {
        Some(end) => flat[..=end].to_string(),
        None => flat,
    }
}

fn edit(change: impl FnOnce(&mut ConfigEditor) -> CommandResult<()>) -> CommandResult<()> {
    let mut editor = ConfigEditor::open(&path()?)?;
    change(&mut editor)?;
    Ok(editor.save()?)
}

/// Adds or changes a provider and its key; with `activate`, questions go to it from now on.
/// The key goes to the keychain before the file is written, so a keychain that refuses it
/// leaves everything as it was. Blocking.
pub fn save_provider(input: ProviderInput, activate: bool) -> CommandResult<ProviderView> {
    let mut editor = ConfigEditor::open(&path()?)?;
    // The window is set in config.toml; a form that does not show it keeps it.
    let stored_window = input.id.as_deref().and_then(|id| {
        ConfigFile::read(&path().ok()?)
            .ok()?
            .providers
            .into_iter()
            .find(|p| p.id == id)?
            .context_window
    });
    let stored = editor.upsert_provider(Provider {
        id: input.id.clone().unwrap_or_default(),
        name: input.name,
        base_url: input.base_url,
        model: input.model,
        tool_mode: input.tool_mode,
        context_window: input.context_window.or(stored_window),
        price_input_per_mtok: input.price_input_per_mtok,
        price_output_per_mtok: input.price_output_per_mtok,
        vision: input.vision,
        // The answer's limit is set in config.toml; saving here keeps what is there.
        ..Provider::default()
    })?;
    let key_stored = match input.api_key.as_deref().map(str::trim) {
        None => matches!(ProviderKeys::os().get(&stored.id), Ok(Some(_))),
        Some("") => {
            ProviderKeys::os().delete(&stored.id)?;
            false
        }
        Some(key) => {
            ProviderKeys::os().set(&stored.id, key)?;
            true
        }
    };
    if activate {
        editor.set_active(&stored.id)?;
    }
    editor.save()?;
    Ok(ProviderView {
        key_stored,
        active: editor.active_provider() == Some(stored.id.as_str()),
        id: stored.id,
        name: stored.name,
        base_url: stored.base_url,
        model: stored.model,
        tool_mode: stored.tool_mode,
        context_window: stored.context_window,
        price_input_per_mtok: stored.price_input_per_mtok,
        price_output_per_mtok: stored.price_output_per_mtok,
        vision: stored.vision,
    })
}

/// Removes a provider and its key. Blocking.
pub fn delete_provider(id: &str) -> CommandResult<()> {
    edit(|editor| {
        if editor.remove_provider(id) {
            Ok(())
        } else {
            Err(CommandError::new(
                "not_found",
                format!("There is no provider {id:?}."),
            ))
        }
    })?;
    // The provider is gone either way; a key the keychain would not delete is only reported.
    if let Err(error) = ProviderKeys::os().delete(id) {
        eprintln!(
            "tooltrail: the key of the removed provider {id:?} stays in the keychain: {error}"
        );
    }
    Ok(())
}

pub fn activate_provider(id: &str) -> CommandResult<()> {
    edit(|editor| Ok(editor.set_active(id)?))
}

pub fn save_limits(limits: Limits) -> CommandResult<Limits> {
    edit(|editor| Ok(editor.set_limits(&limits)?))?;
    Ok(limits)
}

pub fn set_tool_enabled(name: &str, enabled: bool) -> CommandResult<()> {
    if !tooltrail_host::is_builtin(name) {
        return Err(CommandError::new(
            "not_found",
            format!("There is no built-in tool {name:?}."),
        ));
    }
    edit(|editor| {
        if tooltrail_host::is_off_by_default(name) {
            editor.set_tool_turned_on(name, enabled);
        } else {
            editor.set_tool_enabled(name, enabled);
        }
        Ok(())
    })
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct ConnectionTest {
    pub ok: bool,
    /// The models the endpoint lists.
    pub models: Vec<String>,
    /// What failed, in a sentence.
    pub message: Option<String>,
}

/// Lists the endpoint's models with the key given, or the stored key of the provider.
pub async fn test_connection(input: ProviderInput) -> ConnectionTest {
    let failed = |message: String| ConnectionTest {
        ok: false,
        models: Vec::new(),
        message: Some(sentence(&message)),
    };
    let base_url = input.base_url.trim().trim_end_matches('/').to_string();
    if let Err(error) = tooltrail_settings::check_base_url(&base_url) {
        return failed(error.to_string());
    }
    let typed = input.api_key.filter(|key| !key.trim().is_empty());
    let api_key = match (typed, input.id) {
        (Some(key), _) => Some(key),
        (None, Some(id)) => {
            match tauri::async_runtime::spawn_blocking(move || ProviderKeys::os().get(&id)).await {
                Ok(Ok(key)) => key,
                Ok(Err(error)) => return failed(error.to_string()),
                Err(_) => None,
            }
        }
        (None, None) => None,
    };
    let probe = tooltrail_host::EndpointProbe {
        base_url,
        api_key,
        connect: Duration::from_secs(5),
        answer: Duration::from_secs(15),
    };
    match probe.models().await {
        Ok(models) => ConnectionTest {
            ok: true,
            models,
            message: None,
        },
        Err(error) => failed(error),
    }
}

/// The sandbox's status as the settings screen shows it, with what a command in the open
/// folder sees (as `tooltrail doctor` lists it).
#[derive(Debug, Clone, Serialize, TS)]
pub struct SandboxView {
    pub enforced: bool,
    /// The report's first line.
    pub summary: String,
    /// Its other lines.
    pub details: Vec<String>,
    /// What an approved command in the open folder can read and change, and why; without an
    /// open folder, all but the workspace and its caches.
    pub folders: Vec<SandboxFolder>,
    /// Secrets left out of those folders.
    pub hidden: Vec<SandboxSecret>,
    /// `[sandbox] read_only_folders` as written in `config.toml`.
    pub read_only_folders: Vec<String>,
    /// `[sandbox] network_commands` as written in `config.toml`: approved commands starting
    /// with these words run with the network open.
    pub network_commands: Vec<String>,
    /// Configured folders left out, each with why, in a sentence.
    pub skipped: Vec<String>,
}

/// One folder (or file) commands may use.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SandboxFolder {
    pub path: String,
    /// `read` or `write`.
    pub access: String,
    /// `workspace`, `temp`, `cache`, `toolchain`, `extra`, `processes`, `system` or `device`.
    pub kind: String,
    /// Why, in words (`toolchain: rustup`).
    pub reason: String,
}

/// A secret left out of a folder commands may read.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SandboxSecret {
    pub path: String,
    /// What it is (`SSH keys`).
    pub what: String,
}

impl SandboxView {
    /// The status, and what a command in `workspace` sees with the settings as they are.
    pub fn of(status: &tooltrail_host::SandboxStatus, workspace: Option<&Path>) -> Self {
        let report = status.report();
        let mut lines = report
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty());
        let summary = lines.next().unwrap_or_default().to_string();
        let sandbox = path()
            .ok()
            .and_then(|path| ConfigFile::read(&path).ok())
            .map(|file| file.sandbox)
            .unwrap_or_default();
        let overview = tooltrail_host::SandboxOverview::of(status.clone(), workspace, &sandbox);
        let seen = overview.reach;
        let configured = sandbox.read_only_folders;
        let folders = seen
            .shown(status.own_processes)
            .into_iter()
            .filter(|grant| {
                workspace.is_some()
                    || !matches!(
                        grant.reason,
                        tooltrail_host::Reason::Workspace | tooltrail_host::Reason::Cache
                    )
            })
            .map(|grant| SandboxFolder {
                path: grant.path.display().to_string(),
                access: grant.access.as_str().to_string(),
                kind: grant.reason.key().to_string(),
                reason: grant.reason.describe(),
            })
            .collect();
        Self {
            enforced: status.enforced,
            summary,
            details: lines.map(str::to_string).collect(),
            folders,
            hidden: seen
                .hidden
                .iter()
                .map(|hidden| SandboxSecret {
                    path: hidden.path.display().to_string(),
                    what: hidden.what.to_string(),
                })
                .collect(),
            read_only_folders: configured,
            network_commands: sandbox.network_commands,
            skipped: seen
                .skipped
                .iter()
                .map(|skipped| {
                    sentence(&format!(
                        "{} is left out: {}",
                        skipped.path.display(),
                        skipped.why
                    ))
                })
                .collect(),
        }
    }
}

/// Sets the extra folders commands may read (`[sandbox] read_only_folders`).
pub fn save_read_only_folders(folders: &[String]) -> CommandResult<()> {
    edit(|editor| Ok(editor.set_read_only_folders(folders)?))
}

/// Sets the commands that get the network once approved (`[sandbox] network_commands`).
pub fn save_network_commands(commands: &[String]) -> CommandResult<()> {
    edit(|editor| Ok(editor.set_network_commands(commands)?))
}

// ---- mcp.json ----

pub fn mcp_path() -> CommandResult<PathBuf> {
    Ok(McpConfig::path_in(&tooltrail_settings::config_dir()?))
}

/// The servers of `mcp.json`, and why the file cannot be used when it cannot.
pub fn mcp_config() -> CommandResult<McpConfigView> {
    Ok(McpConfigView::load(&mcp_path()?))
}

/// Writes `server` in place of `previous` (or adds it), keeping fields the screen does not edit
/// and every other server as it was.
pub fn save_mcp_server(previous: Option<&str>, server: McpServerConfig) -> CommandResult<()> {
    let mut editor = McpConfigEditor::open(&mcp_path()?)?;
    editor.upsert_server(previous, server)?;
    Ok(editor.save()?)
}

pub fn remove_mcp_server(name: &str) -> CommandResult<()> {
    let mut editor = McpConfigEditor::open(&mcp_path()?)?;
    editor.remove_server(name)?;
    Ok(editor.save()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_first_sentence_of_a_description_is_kept() {
        assert_eq!(
            first_sentence("Read a file.  It has\n numbers. More."),
            "Read a file."
        );
        assert_eq!(first_sentence("No stop"), "No stop");
    }
}
