//! The settings screen's side: providers with their keys in the OS keychain, limits, tools on
//! and off, the sandbox's status, and the servers of `mcp.json`. Every change is written to the
//! same files the `tooltrail` command line reads, and applies from the next question.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tooltrail_llm::{LlmClient, LlmConfig};
use tooltrail_mcp::McpConfig;
use tooltrail_settings::keychain::{KeyStore, OsKeychain};
use tooltrail_settings::{ConfigEditor, ConfigFile, Limits, Provider, config_path};
use tooltrail_tools::ToolRegistry;

use crate::error::{CommandError, CommandResult, sentence};
use crate::settings::{EndpointInfo, endpoint_info};

#[derive(Debug, Clone, Serialize)]
pub struct ProviderView {
    pub id: String,
    pub name: String,
    pub base_url: String,
    pub model: Option<String>,
    pub key_stored: bool,
    pub active: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolToggle {
    pub name: String,
    pub description: String,
    pub enabled: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct KeychainStatus {
    pub available: bool,
    pub message: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AppSettings {
    pub providers: Vec<ProviderView>,
    pub limits: Limits,
    pub tools: Vec<ToolToggle>,
    pub config_path: String,
    pub endpoint: EndpointInfo,
    pub keychain: KeychainStatus,
}

/// What the window sends to add or change a provider.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ProviderInput {
    pub id: Option<String>,
    pub name: String,
    pub base_url: String,
    pub model: Option<String>,
    /// `None` keeps the stored key, `""` removes it, anything else replaces it.
    pub api_key: Option<String>,
}

fn path() -> CommandResult<PathBuf> {
    Ok(config_path()?)
}

/// Everything the settings screen shows. Blocking: it asks the keychain.
pub fn load() -> CommandResult<AppSettings> {
    let path = path()?;
    let file = ConfigFile::read(&path)?;
    let keychain = match OsKeychain.check() {
        Ok(()) => KeychainStatus {
            available: true,
            message: None,
        },
        Err(error) => KeychainStatus {
            available: false,
            message: Some(sentence(&error.to_string())),
        },
    };
    let active = file.active().map(|p| p.id.clone());
    let providers = file
        .providers
        .iter()
        .map(|p| ProviderView {
            key_stored: keychain.available && matches!(OsKeychain.get(&p.id), Ok(Some(_))),
            active: active.as_deref() == Some(p.id.as_str()),
            id: p.id.clone(),
            name: p.name.clone(),
            base_url: p.base_url.clone(),
            model: p.model.clone(),
        })
        .collect();
    let tools = ToolRegistry::with_builtins()
        .specs()
        .into_iter()
        .map(|spec| ToolToggle {
            enabled: !file.disabled_tools.contains(&spec.name),
            description: first_sentence(&spec.description),
            name: spec.name,
        })
        .collect();
    Ok(AppSettings {
        providers,
        limits: file.limits(),
        tools,
        config_path: path.display().to_string(),
        endpoint: endpoint_info(),
        keychain,
    })
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
    let stored = editor.upsert_provider(Provider {
        id: input.id.clone().unwrap_or_default(),
        name: input.name,
        base_url: input.base_url,
        model: input.model,
    })?;
    let key_stored = match input.api_key.as_deref().map(str::trim) {
        None => matches!(OsKeychain.get(&stored.id), Ok(Some(_))),
        Some("") => {
            OsKeychain.delete(&stored.id)?;
            false
        }
        Some(key) => {
            OsKeychain.set(&stored.id, key)?;
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
    if let Err(error) = OsKeychain.delete(id) {
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
    if ToolRegistry::with_builtins().get(name).is_none() {
        return Err(CommandError::new(
            "not_found",
            format!("There is no built-in tool {name:?}."),
        ));
    }
    edit(|editor| {
        editor.set_tool_enabled(name, enabled);
        Ok(())
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct ConnectionTest {
    pub ok: bool,
    pub models: Vec<String>,
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
            match tauri::async_runtime::spawn_blocking(move || OsKeychain.get(&id)).await {
                Ok(Ok(key)) => key,
                Ok(Err(error)) => return failed(error.to_string()),
                Err(_) => None,
            }
        }
        (None, None) => None,
    };
    let mut config = LlmConfig::new(base_url, String::new());
    config.api_key = api_key;
    config.connect_timeout = Duration::from_secs(5);
    config.idle_timeout = Duration::from_secs(15);
    config.max_attempts = 1;
    let client = match LlmClient::new(config) {
        Ok(client) => client,
        Err(error) => return failed(error.to_string()),
    };
    match client.list_models().await {
        Ok(models) => ConnectionTest {
            ok: true,
            models,
            message: None,
        },
        Err(error) => failed(error.to_string()),
    }
}

/// The sandbox's status as the settings screen shows it.
#[derive(Debug, Clone, Serialize)]
pub struct SandboxView {
    pub enforced: bool,
    /// The report's first line.
    pub summary: String,
    /// Its other lines.
    pub details: Vec<String>,
}

impl SandboxView {
    pub fn of(status: &tooltrail_sandbox::SandboxStatus) -> Self {
        let report = status.report();
        let mut lines = report
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty());
        let summary = lines.next().unwrap_or_default().to_string();
        Self {
            enforced: status.enforced,
            summary,
            details: lines.map(str::to_string).collect(),
        }
    }
}

// ---- mcp.json ----

/// One server of `mcp.json` as the settings screen edits it. Values are as written in the file
/// (`${NAME}` left as it is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpServerConfig {
    pub name: String,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    pub url: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    pub approval: String,
    #[serde(default)]
    pub tools: BTreeMap<String, String>,
    #[serde(default)]
    pub disabled: bool,
    pub timeout_secs: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct McpConfigView {
    pub path: String,
    pub servers: Vec<McpServerConfig>,
    pub problem: Option<String>,
}

pub fn mcp_path() -> CommandResult<PathBuf> {
    Ok(McpConfig::path_in(&tooltrail_settings::config_dir()?))
}

/// The file's JSON, `{}` when it does not exist.
fn read_mcp(path: &Path) -> CommandResult<Map<String, Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(error) => {
            return Err(CommandError::new(
                "mcp_config",
                format!("{} could not be read: {error}.", path.display()),
            ));
        }
    };
    match serde_json::from_str(&text) {
        Ok(Value::Object(root)) => Ok(root),
        Ok(_) => Err(CommandError::new(
            "mcp_config",
            format!("{} must hold a JSON object.", path.display()),
        )),
        Err(error) => Err(CommandError::new(
            "mcp_config",
            format!("{} is not valid JSON: {error}.", path.display()),
        )),
    }
}

fn servers_key(root: &Map<String, Value>) -> &'static str {
    if !root.contains_key("mcpServers") && root.contains_key("servers") {
        "servers"
    } else {
        "mcpServers"
    }
}

fn string_of(fields: &Map<String, Value>, key: &str) -> Option<String> {
    fields.get(key).and_then(Value::as_str).map(str::to_string)
}

fn strings_of(fields: &Map<String, Value>, key: &str) -> BTreeMap<String, String> {
    fields
        .get(key)
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn view_of(name: &str, fields: &Map<String, Value>) -> McpServerConfig {
    McpServerConfig {
        name: name.to_string(),
        command: string_of(fields, "command"),
        args: fields
            .get("args")
            .and_then(Value::as_array)
            .map(|args| {
                args.iter()
                    .filter_map(|a| a.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        url: string_of(fields, "url"),
        env: strings_of(fields, "env"),
        cwd: string_of(fields, "cwd"),
        approval: string_of(fields, "approval").unwrap_or_else(|| "ask".to_string()),
        tools: strings_of(fields, "tools"),
        disabled: fields
            .get("disabled")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        timeout_secs: fields
            .get("timeout_secs")
            .and_then(Value::as_u64)
            .unwrap_or(tooltrail_mcp::DEFAULT_TIMEOUT.as_secs()),
    }
}

/// The servers of `mcp.json`, and why the file cannot be used when it cannot.
pub fn mcp_config() -> CommandResult<McpConfigView> {
    let path = mcp_path()?;
    let shown = path.display().to_string();
    let root = match read_mcp(&path) {
        Ok(root) => root,
        Err(error) => {
            return Ok(McpConfigView {
                path: shown,
                servers: Vec::new(),
                problem: Some(error.message),
            });
        }
    };
    let problem = validate(&root, &path).err().map(|error| error.message);
    let servers = root
        .get(servers_key(&root))
        .and_then(Value::as_object)
        .map(|servers| {
            servers
                .iter()
                .filter_map(|(name, fields)| fields.as_object().map(|f| view_of(name, f)))
                .collect()
        })
        .unwrap_or_default();
    Ok(McpConfigView {
        path: shown,
        servers,
        problem,
    })
}

/// Whether the JSON would load, `${NAME}` values aside (they are filled in when servers start).
fn validate(root: &Map<String, Value>, path: &Path) -> CommandResult<()> {
    let text = serde_json::to_string(root).unwrap_or_default();
    McpConfig::parse_with_env(&text, path, &|_| Some(String::new()))
        .map(|_| ())
        .map_err(|error| CommandError::new("mcp_config", sentence(&error.to_string())))
}

/// Writes `server` in place of `previous` (or adds it), keeping fields the screen does not edit
/// (`headers`, other hosts' fields) and every other server as it was.
pub fn save_mcp_server(previous: Option<&str>, server: McpServerConfig) -> CommandResult<()> {
    let path = mcp_path()?;
    let mut root = read_mcp(&path)?;
    apply_server(&mut root, previous, server)?;
    validate(&root, &path)?;
    write_mcp(&path, &root)
}

fn apply_server(
    root: &mut Map<String, Value>,
    previous: Option<&str>,
    server: McpServerConfig,
) -> CommandResult<()> {
    let name = server.name.trim().to_string();
    if name.is_empty() {
        return Err(CommandError::new("bad_input", "A server needs a name."));
    }
    if !matches!(server.approval.as_str(), "allow" | "ask" | "never")
        || server
            .tools
            .values()
            .any(|a| !matches!(a.as_str(), "allow" | "ask" | "never"))
    {
        return Err(CommandError::new(
            "bad_input",
            "Approval must be allow, ask or never.",
        ));
    }
    let key = servers_key(root);
    let servers = root
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| {
            CommandError::new(
                "mcp_config",
                format!("\"{key}\" in mcp.json must be an object."),
            )
        })?;
    if previous != Some(name.as_str()) && servers.contains_key(&name) {
        return Err(CommandError::new(
            "bad_input",
            format!("There is already a server named {name:?}."),
        ));
    }
    let mut fields = previous
        .and_then(|old| servers.remove(old))
        .and_then(|value| match value {
            Value::Object(fields) => Some(fields),
            _ => None,
        })
        .unwrap_or_default();
    let mut set = |field: &str, value: Option<Value>| match value {
        Some(value) => {
            fields.insert(field.to_string(), value);
        }
        None => {
            fields.remove(field);
        }
    };
    let text = |value: Option<String>| {
        value
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .map(Value::String)
    };
    set("command", text(server.command));
    set("url", text(server.url));
    set(
        "args",
        (!server.args.is_empty()).then(|| Value::from(server.args.clone())),
    );
    set(
        "env",
        (!server.env.is_empty()).then(|| serde_json::to_value(&server.env).unwrap_or_default()),
    );
    set("cwd", text(server.cwd));
    set("approval", Some(Value::from(server.approval)));
    set(
        "tools",
        (!server.tools.is_empty()).then(|| serde_json::to_value(&server.tools).unwrap_or_default()),
    );
    set("disabled", server.disabled.then_some(Value::Bool(true)));
    set(
        "timeout_secs",
        (server.timeout_secs != tooltrail_mcp::DEFAULT_TIMEOUT.as_secs())
            .then(|| Value::from(server.timeout_secs)),
    );
    servers.insert(name, Value::Object(fields));
    Ok(())
}

pub fn remove_mcp_server(name: &str) -> CommandResult<()> {
    let path = mcp_path()?;
    let mut root = read_mcp(&path)?;
    let key = servers_key(&root);
    let removed = root
        .get_mut(key)
        .and_then(Value::as_object_mut)
        .and_then(|servers| servers.remove(name))
        .is_some();
    if !removed {
        return Err(CommandError::new(
            "not_found",
            format!("There is no server named {name:?}."),
        ));
    }
    write_mcp(&path, &root)
}

fn write_mcp(path: &Path, root: &Map<String, Value>) -> CommandResult<()> {
    let cannot = |error: std::io::Error| {
        CommandError::new(
            "mcp_config",
            format!("{} could not be written: {error}.", path.display()),
        )
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(cannot)?;
    }
    let mut text = serde_json::to_string_pretty(root).unwrap_or_default();
    text.push('\n');
    let temporary = path.with_extension("json.tmp");
    std::fs::write(&temporary, text).map_err(cannot)?;
    std::fs::rename(&temporary, path).map_err(cannot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn editing_a_server_keeps_what_the_screen_does_not_show() {
        let mut root: Map<String, Value> = serde_json::from_str(
            r#"{"mcpServers": {
                "web": {"url": "https://x/mcp", "headers": {"A": "${T}"}, "type": "http"},
                "fs": {"command": "npx", "args": ["-y", "fs"]}}}"#,
        )
        .unwrap();
        let mut web = view_of("web", root["mcpServers"]["web"].as_object().unwrap());
        assert_eq!((web.approval.as_str(), web.timeout_secs), ("ask", 60));
        web.name = "site".into();
        web.tools.insert("delete_page".into(), "never".into());
        web.disabled = true;
        apply_server(&mut root, Some("web"), web.clone()).unwrap();
        let site = &root["mcpServers"]["site"];
        assert_eq!(
            site["headers"]["A"], "${T}",
            "fields the screen does not edit stay"
        );
        assert_eq!(site["type"], "http");
        assert_eq!(site["tools"]["delete_page"], "never");
        assert_eq!(site["disabled"], true);
        assert!(
            site.get("timeout_secs").is_none(),
            "the default is not written"
        );
        assert!(root["mcpServers"].get("web").is_none());
        assert!(validate(&root, Path::new("mcp.json")).is_ok());

        web.name = "fs".into();
        let error = apply_server(&mut root, Some("site"), web.clone()).unwrap_err();
        assert_eq!(error.message, "There is already a server named \"fs\".");
        web.name = "site".into();
        web.approval = "sometimes".into();
        let error = apply_server(&mut root, Some("site"), web).unwrap_err();
        assert_eq!(error.message, "Approval must be allow, ask or never.");

        // A server with neither a command nor a URL is refused before anything is written.
        let mut empty = view_of("x", &Map::new());
        empty.name = "x".into();
        apply_server(&mut root, None, empty).unwrap();
        let error = validate(&root, Path::new("mcp.json")).unwrap_err();
        assert!(
            error.message.contains("needs \"command\""),
            "{}",
            error.message
        );
    }

    #[test]
    fn the_first_sentence_of_a_description_is_kept() {
        assert_eq!(
            first_sentence("Read a file.  It has\n numbers. More."),
            "Read a file."
        );
        assert_eq!(first_sentence("No stop"), "No stop");
    }
}
