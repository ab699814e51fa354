//! `mcp.json` as a settings screen lists and edits it.
//!
//! The file is shared with other MCP hosts, so an edit touches only what it changes: fields the
//! screen does not show (`headers`, `type`, `description`, `autoApprove`, ...), keys next to
//! the servers, the other servers and the choice of `mcpServers` or VS Code's `servers` all stay
//! as they were written. A field the screen shows but the user did not change is left as written
//! too (a `timeout_secs` of `2.5`, an `env` value given as a number). An edit is refused when the
//! file would no longer load with [`McpConfig`]'s parser, and the file is replaced atomically (a
//! temporary file beside it, then a rename), so a failed save leaves it as it was. Keys are
//! written in sorted order: serde_json keeps a file's order only with its `preserve_order`
//! feature, which would change the order of every JSON object the workspace writes.
//!
//! ```no_run
//! # fn demo() -> Result<(), tooltrail_mcp::McpError> {
//! use std::path::Path;
//! use tooltrail_mcp::McpConfigEditor;
//!
//! let mut editor = McpConfigEditor::open(Path::new("/home/me/.config/tooltrail/mcp.json"))?;
//! let mut server = editor.servers().into_iter().find(|s| s.name == "fs").unwrap_or_default();
//! server.name = "files".into();
//! server.disabled = true;
//! editor.upsert_server(Some("fs"), server)?;
//! editor.save()?;
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tooltrail_protocol::sentence;
use ts_rs::TS;

use crate::config::{Approval, DEFAULT_TIMEOUT, McpConfig};
use crate::error::McpError;

/// The key of the servers object when a file has neither (the one most hosts write).
const MCP_SERVERS: &str = "mcpServers";
/// VS Code's key, kept when a file uses it.
const VSCODE_SERVERS: &str = "servers";

/// One server of `mcp.json` as a settings screen edits it. Values are as written in the file
/// (`${NAME}` is left as it is); either `command` or `url` is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct McpServerConfig {
    pub name: String,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    pub url: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    pub approval: Approval,
    /// Per-tool approval, by the server's own tool name; it wins over `approval`.
    #[serde(default)]
    pub tools: BTreeMap<String, Approval>,
    #[serde(default)]
    pub disabled: bool,
    pub timeout_secs: u64,
    /// Per-tool time limits in whole seconds (`tool_timeouts_secs`), by the server's own tool
    /// name: for a plain call it replaces `timeout_secs`; for a call the server runs as a task
    /// it bounds the whole task (an hour without one).
    #[serde(default)]
    pub tool_timeouts_secs: BTreeMap<String, u64>,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        Self {
            name: String::new(),
            command: None,
            args: Vec::new(),
            url: None,
            env: BTreeMap::new(),
            cwd: None,
            approval: Approval::default(),
            tools: BTreeMap::new(),
            disabled: false,
            timeout_secs: DEFAULT_TIMEOUT.as_secs(),
            tool_timeouts_secs: BTreeMap::new(),
        }
    }
}

/// The servers of `mcp.json` as a settings screen lists them, and why the file cannot be used
/// when it cannot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct McpConfigView {
    pub path: String,
    pub servers: Vec<McpServerConfig>,
    /// Set when the file exists but would not load, as a sentence; saving a server is refused
    /// until it is fixed (removing one is not, since that may be the fix).
    pub problem: Option<String>,
}

impl McpConfigView {
    /// Lists the file at `path`. Never fails: what is wrong with the file is the `problem`.
    pub fn load(path: &Path) -> Self {
        let shown = path.display().to_string();
        match McpConfigEditor::open(path) {
            Ok(editor) => Self {
                path: shown,
                servers: editor.servers(),
                problem: editor
                    .check()
                    .err()
                    .map(|error| sentence(&error.to_string())),
            },
            Err(error) => Self {
                path: shown,
                servers: Vec::new(),
                problem: Some(sentence(&error.to_string())),
            },
        }
    }
}

/// `mcp.json`, open for changes.
#[derive(Debug, Clone)]
pub struct McpConfigEditor {
    path: PathBuf,
    root: Map<String, Value>,
}

impl McpConfigEditor {
    /// Opens the file; a missing file is an empty one. A file that is not a JSON object cannot
    /// be edited (saving would lose it); one whose servers are wrong can, so they can be fixed.
    pub fn open(path: &Path) -> Result<Self, McpError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::from("{}"),
            Err(source) => {
                return Err(McpError::ReadConfig {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let root = match serde_json::from_str(&text) {
            Ok(Value::Object(root)) => root,
            Ok(_) => {
                return Err(McpError::Config {
                    path: path.to_path_buf(),
                    message: "the file must hold a JSON object with an \"mcpServers\" field".into(),
                });
            }
            Err(error) => {
                return Err(McpError::ConfigJson {
                    path: path.to_path_buf(),
                    message: error.to_string(),
                });
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            root,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every server, by name, as the screen shows it. Entries that are not objects are skipped
    /// (they are [`McpConfigEditor::check`]'s to report).
    pub fn servers(&self) -> Vec<McpServerConfig> {
        self.root
            .get(self.servers_key())
            .and_then(Value::as_object)
            .map(|servers| {
                servers
                    .iter()
                    .filter_map(|(name, fields)| fields.as_object().map(|f| view_of(name, f)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the file would load with [`McpConfig`]'s parser. `${NAME}` values count as set:
    /// they are filled in when the servers start, from an environment this process may not have.
    pub fn check(&self) -> Result<(), McpError> {
        let text = Value::Object(self.root.clone()).to_string();
        McpConfig::parse_with_env(&text, &self.path, &|_| Some(String::new())).map(|_| ())
    }

    /// Writes `server` in place of the one named `previous` (which may differ from its new name:
    /// a rename), or adds it when `previous` is `None`. Refused, leaving the file as it was, when
    /// the name is empty or taken, `previous` is not there, or the file would not load afterwards.
    pub fn upsert_server(
        &mut self,
        previous: Option<&str>,
        server: McpServerConfig,
    ) -> Result<(), McpError> {
        let server = normalised(server);
        if server.name.is_empty() {
            return Err(McpError::EmptyServerName);
        }
        let mut edited = self.clone();
        let key = edited.servers_key();
        let servers = edited
            .root
            .entry(key)
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(|| McpError::Config {
                path: self.path.clone(),
                message: format!("{key:?} must be an object of servers"),
            })?;
        if previous != Some(server.name.as_str()) && servers.contains_key(&server.name) {
            return Err(McpError::ServerExists(server.name));
        }
        // The edit works on a copy, so leaving early leaves the editor as it was.
        let old = match previous {
            Some(previous) => match servers.remove(previous) {
                Some(Value::Object(fields)) => fields,
                Some(_) => Map::new(),
                None => return Err(McpError::UnknownServer(previous.to_string())),
            },
            None => Map::new(),
        };
        servers.insert(server.name.clone(), Value::Object(apply(old, &server)));
        edited.check()?;
        *self = edited;
        Ok(())
    }

    /// Removes a server. Not checked against the parser: removing a broken server is how a
    /// file gets fixed, and removing a good one cannot break the rest.
    pub fn remove_server(&mut self, name: &str) -> Result<(), McpError> {
        let key = self.servers_key();
        self.root
            .get_mut(key)
            .and_then(Value::as_object_mut)
            .and_then(|servers| servers.remove(name))
            .map(|_| ())
            .ok_or_else(|| McpError::UnknownServer(name.to_string()))
    }

    /// Writes the file: a temporary file beside it, then a rename.
    pub fn save(&self) -> Result<(), McpError> {
        let write_error = |source| McpError::WriteConfig {
            path: self.path.clone(),
            source,
        };
        let mut text =
            serde_json::to_string_pretty(&self.root).map_err(|error| McpError::ConfigJson {
                path: self.path.clone(),
                message: error.to_string(),
            })?;
        text.push('\n');
        // A temporary file with a random name, made exclusively, then renamed: a link planted
        // beside `mcp.json` cannot lead the write elsewhere.
        tooltrail_atomic_write::write_atomically(&self.path, text.as_bytes()).map_err(write_error)
    }

    /// `servers` when the file uses VS Code's key and not the common one, as the parser reads it.
    fn servers_key(&self) -> &'static str {
        if !self.root.contains_key(MCP_SERVERS) && self.root.contains_key(VSCODE_SERVERS) {
            VSCODE_SERVERS
        } else {
            MCP_SERVERS
        }
    }
}

/// Names and texts trimmed; empty texts are absent.
fn normalised(server: McpServerConfig) -> McpServerConfig {
    let text = |value: Option<String>| {
        value
            .map(|value| value.trim().to_string())
            .filter(|value| !value.is_empty())
    };
    McpServerConfig {
        name: server.name.trim().to_string(),
        command: text(server.command),
        url: text(server.url),
        cwd: text(server.cwd),
        ..server
    }
}

/// The server's fields with the screen's values written over them: a field whose shown value
/// did not change stays exactly as written, everything else the screen does not show stays too.
fn apply(mut fields: Map<String, Value>, server: &McpServerConfig) -> Map<String, Value> {
    let before = view_of(&server.name, &fields);
    // The approval is always written, so a reader of the file sees the policy.
    let approval_written = fields.get("approval").and_then(Value::as_str).is_some();
    let mut set = |field: &str, changed: bool, value: Option<Value>| {
        if !changed {
            return;
        }
        match value {
            Some(value) => {
                fields.insert(field.to_string(), value);
            }
            None => {
                fields.remove(field);
            }
        }
    };
    let text = |value: &Option<String>| value.clone().map(Value::String);
    let strings = |map: &BTreeMap<String, String>| {
        (!map.is_empty()).then(|| {
            Value::Object(
                map.iter()
                    .map(|(key, value)| (key.clone(), Value::String(value.clone())))
                    .collect(),
            )
        })
    };
    set(
        "command",
        before.command != server.command,
        text(&server.command),
    );
    set("url", before.url != server.url, text(&server.url));
    set(
        "args",
        before.args != server.args,
        (!server.args.is_empty()).then(|| Value::from(server.args.clone())),
    );
    set("env", before.env != server.env, strings(&server.env));
    set("cwd", before.cwd != server.cwd, text(&server.cwd));
    set(
        "approval",
        before.approval != server.approval || !approval_written,
        Some(Value::from(server.approval.as_str())),
    );
    set(
        "tools",
        before.tools != server.tools,
        (!server.tools.is_empty()).then(|| {
            Value::Object(
                server
                    .tools
                    .iter()
                    .map(|(tool, approval)| (tool.clone(), Value::from(approval.as_str())))
                    .collect(),
            )
        }),
    );
    set(
        "disabled",
        before.disabled != server.disabled,
        server.disabled.then_some(Value::Bool(true)),
    );
    set(
        "tool_timeouts_secs",
        before.tool_timeouts_secs != server.tool_timeouts_secs,
        (!server.tool_timeouts_secs.is_empty()).then(|| {
            Value::Object(
                server
                    .tool_timeouts_secs
                    .iter()
                    .map(|(tool, secs)| (tool.clone(), Value::from(*secs)))
                    .collect(),
            )
        }),
    );
    set(
        "timeout_secs",
        before.timeout_secs != server.timeout_secs,
        (server.timeout_secs != DEFAULT_TIMEOUT.as_secs())
            .then(|| Value::from(server.timeout_secs)),
    );
    fields
}

/// One server's fields as the screen shows them, read leniently: a value of the wrong type is
/// shown as absent (the parser reports it).
fn view_of(name: &str, fields: &Map<String, Value>) -> McpServerConfig {
    let string = |key: &str| fields.get(key).and_then(Value::as_str).map(str::to_string);
    McpServerConfig {
        name: name.to_string(),
        command: string("command"),
        args: fields
            .get("args")
            .and_then(Value::as_array)
            .map(|args| {
                args.iter()
                    .filter_map(|arg| arg.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        url: string("url"),
        env: scalars_of(fields, "env"),
        cwd: string("cwd"),
        approval: fields
            .get("approval")
            .and_then(Value::as_str)
            .and_then(Approval::parse)
            .unwrap_or_default(),
        tools: fields
            .get("tools")
            .and_then(Value::as_object)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|(tool, approval)| {
                        let approval = approval.as_str().and_then(Approval::parse)?;
                        Some((tool.clone(), approval))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        disabled: fields
            .get("disabled")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        tool_timeouts_secs: fields
            .get("tool_timeouts_secs")
            .and_then(Value::as_object)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|(tool, secs)| {
                        let secs = secs.as_f64().filter(|secs| *secs > 0.0)?;
                        // Whole seconds on the screen, as for the server's limit.
                        Some((tool.clone(), secs.ceil() as u64))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        timeout_secs: fields
            .get("timeout_secs")
            .and_then(Value::as_f64)
            .filter(|secs| *secs > 0.0)
            // The screen edits whole seconds; a fraction shows rounded up.
            .map(|secs| secs.ceil() as u64)
            .unwrap_or(DEFAULT_TIMEOUT.as_secs()),
    }
}

/// A map of strings, with numbers and booleans as text, as the parser reads `env`.
fn scalars_of(fields: &Map<String, Value>, key: &str) -> BTreeMap<String, String> {
    fields
        .get(key)
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .filter_map(|(key, value)| {
                    let text = match value {
                        Value::String(text) => text.clone(),
                        Value::Number(number) => number.to_string(),
                        Value::Bool(flag) => flag.to_string(),
                        Value::Null | Value::Array(_) | Value::Object(_) => return None,
                    };
                    Some((key.clone(), text))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    /// An editor on a file holding `content`, in a folder that lives as long as the editor's use.
    fn editor_on(content: &Value) -> (tempfile::TempDir, McpConfigEditor) {
        let dir = tempfile::tempdir().unwrap();
        let path = McpConfig::path_in(dir.path());
        std::fs::write(&path, content.to_string()).unwrap();
        let editor = McpConfigEditor::open(&path).unwrap();
        (dir, editor)
    }

    fn saved(editor: &McpConfigEditor) -> Value {
        editor.save().unwrap();
        serde_json::from_str(&std::fs::read_to_string(editor.path()).unwrap()).unwrap()
    }

    fn server(editor: &McpConfigEditor, name: &str) -> McpServerConfig {
        editor
            .servers()
            .into_iter()
            .find(|server| server.name == name)
            .unwrap()
    }

    #[test]
    fn editing_a_server_keeps_what_the_screen_does_not_show() {
        let (_dir, mut editor) = editor_on(&json!({
            "mcpServers": {
                "web": {"url": "https://x/mcp", "headers": {"A": "${T}"}, "type": "http",
                        "description": "the wiki", "autoApprove": ["read_page"]},
                "fs": {"command": "npx", "args": ["-y", "fs"], "env": {"N": 3},
                       "timeout_secs": 2.5}
            },
            "inputs": [{"id": "token"}]
        }));
        let mut web = server(&editor, "web");
        assert_eq!((web.approval, web.timeout_secs), (Approval::Ask, 60));
        web.tools.insert("delete_page".into(), Approval::Never);
        web.disabled = true;
        editor.upsert_server(Some("web"), web).unwrap();
        let mut fs = server(&editor, "fs");
        assert_eq!(
            (fs.env.clone(), fs.timeout_secs),
            (BTreeMap::from([("N".into(), "3".into())]), 3)
        );
        fs.args.push(".".into());
        editor.upsert_server(Some("fs"), fs).unwrap();
        assert_eq!(
            saved(&editor),
            json!({
                "mcpServers": {
                    "web": {"url": "https://x/mcp", "headers": {"A": "${T}"}, "type": "http",
                            "description": "the wiki", "autoApprove": ["read_page"],
                            "approval": "ask", "tools": {"delete_page": "never"},
                            "disabled": true},
                    "fs": {"command": "npx", "args": ["-y", "fs", "."], "env": {"N": 3},
                           "timeout_secs": 2.5, "approval": "ask"}
                },
                "inputs": [{"id": "token"}]
            }),
            "unchanged fields stay as written, the default timeout is not written"
        );
    }

    #[test]
    fn renaming_a_server_keeps_its_fields() {
        let (_dir, mut editor) = editor_on(&json!({"mcpServers": {
            "z": {"command": "z"},
            "web": {"url": "https://x/mcp", "headers": {"A": "b"}, "approval": "allow"},
            "a": {"command": "a"}
        }}));
        let mut web = server(&editor, "web");
        web.name = "  site ".into();
        editor.upsert_server(Some("web"), web).unwrap();
        assert_eq!(
            saved(&editor),
            json!({"mcpServers": {
                "z": {"command": "z"},
                "site": {"url": "https://x/mcp", "headers": {"A": "b"}, "approval": "allow"},
                "a": {"command": "a"}
            }})
        );

        let mut site = server(&editor, "site");
        site.name = "a".into();
        let error = editor.upsert_server(Some("site"), site).unwrap_err();
        assert_eq!(
            error.to_string(),
            "there is already an MCP server named \"a\" in mcp.json"
        );
        let mut gone = server(&editor, "z");
        gone.name = "new".into();
        let error = editor.upsert_server(Some("gone"), gone).unwrap_err();
        assert_eq!(
            error.to_string(),
            "there is no MCP server named \"gone\" in mcp.json"
        );
    }

    #[test]
    fn a_file_with_vscode_servers_key_keeps_it() {
        let (_dir, mut editor) = editor_on(&json!({"servers": {"a": {"command": "a"}}}));
        editor
            .upsert_server(
                None,
                McpServerConfig {
                    name: "b".into(),
                    url: Some("https://b/mcp".into()),
                    ..McpServerConfig::default()
                },
            )
            .unwrap();
        editor.remove_server("a").unwrap();
        assert_eq!(
            saved(&editor),
            json!({"servers": {"b": {"url": "https://b/mcp", "approval": "ask"}}})
        );
    }

    #[test]
    fn an_edit_the_parser_would_refuse_leaves_the_file_as_it_was() {
        let (_dir, mut editor) = editor_on(&json!({"mcpServers": {"a": {"command": "a"}}}));
        let error = editor
            .upsert_server(
                None,
                McpServerConfig {
                    name: "x".into(),
                    ..McpServerConfig::default()
                },
            )
            .unwrap_err();
        assert!(error.to_string().contains("needs \"command\""), "{error}");
        let error = editor
            .upsert_server(None, McpServerConfig::default())
            .unwrap_err();
        assert_eq!(error.to_string(), "an MCP server needs a name");
        assert_eq!(
            saved(&editor),
            json!({"mcpServers": {"a": {"command": "a"}}})
        );
    }

    #[test]
    fn a_broken_file_is_listed_with_its_problem_and_its_broken_server_can_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = McpConfig::path_in(dir.path());
        std::fs::write(
            &path,
            json!({"mcpServers": {"ok": {"command": "a"}, "bad": {"url": "ftp://h"}}}).to_string(),
        )
        .unwrap();
        let view = McpConfigView::load(&path);
        assert_eq!(view.servers.len(), 2);
        assert_eq!(
            view.problem.unwrap(),
            format!(
                "{}: server \"bad\": \"url\" must start with http:// or https://.",
                path.display()
            )
        );
        let mut editor = McpConfigEditor::open(&path).unwrap();
        editor.remove_server("bad").unwrap();
        editor.save().unwrap();
        assert_eq!(McpConfigView::load(&path).problem, None);

        std::fs::write(&path, "{").unwrap();
        let view = McpConfigView::load(&path);
        assert!(view.servers.is_empty());
        assert!(
            view.problem.unwrap().contains("is not valid JSON"),
            "a file that is not JSON cannot be listed"
        );
    }

    #[test]
    fn attack_secrets_the_settings_view_shows_values_as_written_never_expanded() {
        // PATH is set wherever tests run, so an expansion would show.
        let expanded = std::env::var("PATH").unwrap();
        let (dir, _editor) = editor_on(&json!({"mcpServers": {
            "fs": {"command": "npx", "env": {"KEY": "${PATH}"}},
            "web": {"url": "https://x/mcp", "headers": {"Authorization": "Bearer ${PATH}"}}
        }}));
        let view = McpConfigView::load(&McpConfig::path_in(dir.path()));
        assert_eq!(view.problem, None);
        let fs = view
            .servers
            .iter()
            .find(|server| server.name == "fs")
            .unwrap();
        assert_eq!(fs.env["KEY"], "${PATH}");
        let shown = serde_json::to_string(&view).unwrap();
        assert!(!shown.contains(&expanded), "{shown}");
    }

    #[test]
    fn a_missing_file_lists_nothing_and_is_created_on_save() {
        let dir = tempfile::tempdir().unwrap();
        let path = McpConfig::path_in(&dir.path().join("new"));
        assert_eq!(
            McpConfigView::load(&path),
            McpConfigView {
                path: path.display().to_string(),
                servers: Vec::new(),
                problem: None,
            }
        );
        let mut editor = McpConfigEditor::open(&path).unwrap();
        let error = editor.remove_server("a").unwrap_err();
        assert_eq!(
            error.to_string(),
            "there is no MCP server named \"a\" in mcp.json"
        );
        editor
            .upsert_server(
                None,
                McpServerConfig {
                    name: "a".into(),
                    command: Some("a".into()),
                    timeout_secs: 5,
                    ..McpServerConfig::default()
                },
            )
            .unwrap();
        assert_eq!(
            saved(&editor),
            json!({"mcpServers": {"a": {"command": "a", "approval": "ask", "timeout_secs": 5}}})
        );
    }

    #[test]
    fn a_tools_time_limit_is_shown_written_and_removed_and_the_file_still_loads() {
        let (_dir, mut editor) = editor_on(&json!({
            "mcpServers": {"r": {"command": "research", "tool_timeouts_secs": {"deep": 5400.5}}}
        }));
        let mut research = server(&editor, "r");
        assert_eq!(research.tool_timeouts_secs["deep"], 5401);
        research.tool_timeouts_secs.insert("quick".into(), 30);
        editor.upsert_server(Some("r"), research.clone()).unwrap();
        let written = saved(&editor);
        assert_eq!(
            written["mcpServers"]["r"]["tool_timeouts_secs"],
            json!({"deep": 5401, "quick": 30})
        );
        let config = McpConfig::load(editor.path()).unwrap().unwrap();
        assert_eq!(
            config.servers["r"].task_timeout_for("quick"),
            std::time::Duration::from_secs(30)
        );
        research.tool_timeouts_secs.clear();
        editor.upsert_server(Some("r"), research).unwrap();
        assert_eq!(
            saved(&editor)["mcpServers"]["r"].get("tool_timeouts_secs"),
            None
        );
    }
}
