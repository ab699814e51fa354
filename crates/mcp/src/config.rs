//! `mcp.json`: the `mcpServers` shape other MCP hosts use, plus Tooltrail's own optional fields.
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "fs":  { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
//!              "env": {"DEBUG": "1"}, "cwd": "/some/folder",
//!              "timeout_secs": 30, "approval": "allow",
//!              "tool_timeouts_secs": {"index_everything": 3600} },
//!     "web": { "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${WEB_TOKEN}"},
//!              "approval": "ask", "tools": {"delete_page": "never"} },
//!     "old": { "command": "old-server", "disabled": true }
//!   }
//! }
//! ```
//!
//! The file is read field by field rather than through a derived deserializer, so every mistake
//! is reported with the server and field it is in. Fields other hosts add (`type`,
//! `description`, `autoApprove`, ...) are accepted and ignored, so a pasted config works.
//! `${NAME}` in `env` and `headers` values is replaced by our environment variable `NAME`, so
//! tokens need not be written into the file. Those values are [`ConfigValue`]s: the expanded
//! value reaches only the server, and every listing, `Debug` and error shows the value as
//! written, or a mask (see `redact.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

use crate::error::McpError;
use crate::redact::{ConfigValue, Redactor};

/// The file name inside the config folder.
pub const CONFIG_FILE: &str = "mcp.json";

/// How long a call may go without an answer or progress, unless a server says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a call the server runs as a task (MCP Tasks) may take in all, unless its tool's
/// timeout in `tool_timeouts_secs` says otherwise: tasks are for work that outlives a request.
pub const DEFAULT_TASK_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// The longest timeout `mcp.json` accepts, for a server or a tool: a week.
pub const MAX_TIMEOUT_SECS: f64 = 7.0 * 86_400.0;

/// Whether calls of a tool run freely, wait for the user, or are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "McpApproval")]
pub enum Approval {
    /// Runs without asking (and in parallel with other such calls).
    Allow,
    /// The user is asked before every call. The default: a server's own hints are not trusted.
    #[default]
    Ask,
    /// Never runs.
    Never,
}

impl Approval {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Never => "never",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text {
            "allow" => Some(Self::Allow),
            "ask" => Some(Self::Ask),
            "never" => Some(Self::Never),
            _ => None,
        }
    }
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Transport {
    /// A program speaking MCP on its stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Added to the minimal environment the server starts with.
        env: BTreeMap<String, ConfigValue>,
        /// Working folder; the workspace when absent.
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        url: String,
        headers: BTreeMap<String, ConfigValue>,
    },
}

impl Transport {
    /// One line for listings: the command line or the URL.
    pub fn summary(&self) -> String {
        match self {
            Self::Stdio { command, args, .. } => {
                let mut line = command.clone();
                for arg in args {
                    line.push(' ');
                    line.push_str(arg);
                }
                line
            }
            Self::Http { url, .. } => url.clone(),
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    /// Longest wait for an answer to one request, or for a call's next progress notification
    /// (a call that keeps reporting progress may run up to ten times this). The handshake gets
    /// at least 30 s, for first runs of `npx` that download the server.
    pub timeout: Duration,
    /// The policy for this server's tools.
    pub approval: Approval,
    /// Per-tool policies, by the server's own tool name; they win over `approval`.
    pub tools: BTreeMap<String, Approval>,
    /// Per-tool timeouts (`tool_timeouts_secs`), by the server's own tool name: for a plain
    /// call it replaces `timeout`; for a call the server runs as a task it bounds the task's
    /// whole run (else [`DEFAULT_TASK_TIMEOUT`]).
    pub tool_timeouts: BTreeMap<String, Duration>,
    pub disabled: bool,
    /// How Tooltrail identifies itself when the server asks it to sign in (HTTP servers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthConfig>,
}

/// The `oauth` field of an HTTP server: a client registered with the authorization server
/// beforehand, and the scopes to ask for. Without it Tooltrail uses a Client ID Metadata
/// Document where the server supports one, else registers itself (RFC 7591). Tokens are never
/// kept here: they live in the OS keychain. Its `Debug` masks the secret.
#[derive(Clone, Default, PartialEq, Eq, Serialize)]
pub struct OAuthConfig {
    pub client_id: Option<String>,
    /// Never shown in listings; `${NAME}` reads it from the environment.
    #[serde(skip_serializing)]
    pub client_secret: Option<String>,
    /// Scopes to ask for instead of the ones the server suggests.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The HTTPS URL of a Client ID Metadata Document describing Tooltrail, used as the
    /// client id where the authorization server supports them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// Whether the sign-in metadata this server points to may name hosts on private networks
    /// (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7): off unless `mcp.json` says so for
    /// a server on the LAN, so a server cannot have Tooltrail probe the user's network.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub allow_private_addresses: bool,
    /// A sign-in without a person (`"grant"`): client credentials, enterprise-managed or a
    /// workload's token, with where each secret is read from (`auth/grant.rs`). Listings show
    /// the grant, never a secret.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub grant: Option<crate::auth::MachineGrant>,
    /// The issuer the server's authorization server must have for a grant's secret to be sent
    /// to it, when `mcp.json` pins one (`"authorization_server"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorization_server: Option<String>,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "********"),
            )
            .field("scopes", &self.scopes)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("allow_private_addresses", &self.allow_private_addresses)
            .field("grant", &self.grant)
            .field("authorization_server", &self.authorization_server)
            .finish()
    }
}

impl ServerConfig {
    /// A stdio server with default settings.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>, args: &[&str]) -> Self {
        Self::with_transport(
            name,
            Transport::Stdio {
                command: command.into(),
                args: args.iter().map(|arg| (*arg).to_string()).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
        )
    }

    /// A Streamable HTTP server with default settings.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self::with_transport(
            name,
            Transport::Http {
                url: url.into(),
                headers: BTreeMap::new(),
            },
        )
    }

    fn with_transport(name: impl Into<String>, transport: Transport) -> Self {
        Self {
            name: name.into(),
            transport,
            timeout: DEFAULT_TIMEOUT,
            approval: Approval::default(),
            tools: BTreeMap::new(),
            tool_timeouts: BTreeMap::new(),
            disabled: false,
            oauth: None,
        }
    }

    /// The policy for one of this server's tools.
    pub fn approval_for(&self, tool: &str) -> Approval {
        self.tools.get(tool).copied().unwrap_or(self.approval)
    }

    /// How long one request of a plain call of `tool` may wait: the tool's own timeout, else
    /// the server's.
    pub fn timeout_for(&self, tool: &str) -> Duration {
        self.tool_timeouts
            .get(tool)
            .copied()
            .unwrap_or(self.timeout)
    }

    /// How long a call of `tool` that the server runs as a task may take in all: the tool's
    /// own timeout, else [`DEFAULT_TASK_TIMEOUT`] (never less than the server's timeout).
    pub fn task_timeout_for(&self, tool: &str) -> Duration {
        self.tool_timeouts
            .get(tool)
            .copied()
            .unwrap_or(DEFAULT_TASK_TIMEOUT.max(self.timeout))
    }

    /// What scrubs this server's secrets (its `env` or `headers` values and its OAuth client
    /// secret) out of text it sends back: its stderr, an error that echoes a header.
    pub fn redactor(&self) -> Redactor {
        let named = match &self.transport {
            Transport::Stdio { env, .. } => env,
            Transport::Http { headers, .. } => headers,
        };
        // A token pasted straight into the file under a name that says so (`Authorization`,
        // `API_KEY`) is as secret as one taken from a variable.
        let literal: Vec<String> = named
            .iter()
            .flat_map(|(name, value)| value.literal_secrets(name))
            .collect();
        let client_secret = self
            .oauth
            .as_ref()
            .and_then(|oauth| oauth.client_secret.as_deref());
        let grant_secrets = self
            .oauth
            .iter()
            .flat_map(|oauth| oauth.grant.iter())
            .flat_map(|grant| grant.written_secrets());
        Redactor::new(
            named.values(),
            client_secret
                .into_iter()
                .chain(grant_secrets)
                .chain(literal.iter().map(String::as_str)),
        )
    }
}

/// Every configured server, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct McpConfig {
    pub servers: BTreeMap<String, ServerConfig>,
}

impl McpConfig {
    /// `mcp.json` in `dir`.
    pub fn path_in(dir: &Path) -> PathBuf {
        dir.join(CONFIG_FILE)
    }

    /// Reads the file; `Ok(None)` when it does not exist.
    pub fn load(path: &Path) -> Result<Option<Self>, McpError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text, path).map(Some),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(McpError::ReadConfig {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Parses the text of a config file; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, McpError> {
        Self::parse_with_env(text, path, &|name| std::env::var(name).ok())
    }

    /// Like [`McpConfig::parse`], with `${NAME}` looked up through `lookup`.
    pub fn parse_with_env(
        text: &str,
        path: &Path,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, McpError> {
        let root: Value = serde_json::from_str(text).map_err(|err| McpError::ConfigJson {
            path: path.to_path_buf(),
            message: err.to_string(),
        })?;
        let fail = |message: String| McpError::Config {
            path: path.to_path_buf(),
            message,
        };
        let Value::Object(root) = root else {
            return Err(fail(
                "the file must hold a JSON object with an \"mcpServers\" field".into(),
            ));
        };
        // VS Code writes "servers"; everyone else "mcpServers".
        let servers = match root.get("mcpServers").or_else(|| root.get("servers")) {
            None => return Ok(Self::default()),
            Some(Value::Object(servers)) => servers,
            Some(_) => return Err(fail("\"mcpServers\" must be an object of servers".into())),
        };
        let mut config = Self::default();
        for (name, value) in servers {
            let server = parse_server(name, value, lookup).map_err(fail)?;
            config.servers.insert(name.clone(), server);
        }
        Ok(config)
    }
}

/// Reads one server; errors name the server and the field. Each step reads one group of
/// fields; their order is the order in which a file with several mistakes reports them.
fn parse_server(
    name: &str,
    value: &Value,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerConfig, String> {
    if name.trim().is_empty() {
        return Err("a server has an empty name".into());
    }
    let Value::Object(fields) = value else {
        return Err(format!("server {name:?} must be an object"));
    };
    let server = ServerFields { name, fields };
    let transport = server.transport(lookup)?;
    let timeout = server.timeout()?;
    let approval = server.approval()?;
    let tools = server.tool_policies()?;
    let tool_timeouts = server.tool_timeouts()?;
    let disabled = server.disabled()?;
    let oauth = server.oauth(&transport, lookup)?;
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        timeout,
        approval,
        tools,
        tool_timeouts,
        disabled,
        oauth,
    })
}

/// One server's entry in `mcp.json` while it is read: its name goes into every error, so a
/// mistake is reported with the server and field it is in.
struct ServerFields<'a> {
    name: &'a str,
    fields: &'a Map<String, Value>,
}

impl ServerFields<'_> {
    fn field_error(&self, field: &str, what: &str) -> String {
        format!("server {:?}: {field:?} {what}", self.name)
    }

    fn optional_string(&self, field: &str) -> Result<Option<String>, String> {
        optional_string(self.fields, field).map_err(|what| self.field_error(field, &what))
    }

    fn is_set(&self, field: &str) -> bool {
        self.fields.get(field).is_some_and(|value| !value.is_null())
    }

    /// `command` (stdio) or `url` (Streamable HTTP), exactly one, with the fields that belong
    /// to it; `type`, which other hosts write, only has to agree.
    fn transport(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Result<Transport, String> {
        let name = self.name;
        let kind = self.optional_string("type")?;
        let command = self.optional_string("command")?;
        let url = self.optional_string("url")?;
        if let Some(kind) = kind.as_deref() {
            self.check_type(kind)?;
        }
        match (command, url) {
            (Some(_), Some(_)) => Err(format!(
                "server {name:?} has both \"command\" and \"url\"; give one"
            )),
            (None, None) => Err(format!(
                "server {name:?} needs \"command\" (a program to run) or \"url\" (a Streamable \
                 HTTP endpoint)"
            )),
            (Some(command), None) => self.stdio(command, lookup),
            (None, Some(url)) => self.http(url, lookup),
        }
    }

    /// The `type` other hosts write. The old HTTP+SSE transport gets its own sentence, since
    /// a config pasted from elsewhere often names it and the fix is a different URL.
    fn check_type(&self, kind: &str) -> Result<(), String> {
        match kind {
            "stdio" | "http" | "streamable-http" | "streamableHttp" | "streamable_http" => Ok(()),
            "sse" => Err(self.field_error(
                "type",
                "is \"sse\": the old HTTP+SSE transport is not supported; use the server's \
                 Streamable HTTP endpoint (usually ending in /mcp)",
            )),
            other => Err(self.field_error(
                "type",
                &format!("must be \"stdio\" or \"http\", not {other:?}"),
            )),
        }
    }

    fn stdio(
        &self,
        command: String,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Transport, String> {
        if command.trim().is_empty() {
            return Err(self.field_error("command", "is empty"));
        }
        let args = match self.fields.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| self.field_error("args", "must be an array of strings"))?,
            Some(_) => return Err(self.field_error("args", "must be an array of strings")),
        };
        let env = string_map(self.fields, "env", lookup)
            .map_err(|what| self.field_error("env", &what))?;
        let cwd = self.optional_string("cwd")?.map(PathBuf::from);
        // A field of the other transport is a mistake, not something to ignore: the user
        // meant it to do something.
        for field in ["url", "headers"] {
            if self.is_set(field) {
                return Err(self.field_error(field, "only applies to servers with a \"url\""));
            }
        }
        Ok(Transport::Stdio {
            command,
            args,
            env,
            cwd,
        })
    }

    fn http(
        &self,
        url: String,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Transport, String> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(self.field_error("url", "must start with http:// or https://"));
        }
        let headers = string_map(self.fields, "headers", lookup)
            .map_err(|what| self.field_error("headers", &what))?;
        // Checked here so a bad name is reported with its server, not as a failed request.
        for header in headers.keys() {
            if reqwest::header::HeaderName::from_bytes(header.as_bytes()).is_err() {
                return Err(self.field_error(
                    "headers",
                    &format!("has {header:?}, which is not a valid header name"),
                ));
            }
        }
        for field in ["args", "env", "cwd"] {
            if self.is_set(field) {
                return Err(self.field_error(field, "only applies to servers with a \"command\""));
            }
        }
        Ok(Transport::Http { url, headers })
    }

    fn timeout(&self) -> Result<Duration, String> {
        match self.fields.get("timeout_secs") {
            None | Some(Value::Null) => Ok(DEFAULT_TIMEOUT),
            Some(value) => match value.as_f64() {
                Some(secs) if secs > 0.0 && secs <= 86_400.0 => Ok(Duration::from_secs_f64(secs)),
                _ => Err(self.field_error(
                    "timeout_secs",
                    "must be a number of seconds above 0 (at most a day)",
                )),
            },
        }
    }

    /// `tool_timeouts_secs`: a timeout per tool, by the server's own tool name, in seconds
    /// (up to a week, since a task may run for hours).
    fn tool_timeouts(&self) -> Result<BTreeMap<String, Duration>, String> {
        let name = self.name;
        let mut timeouts = BTreeMap::new();
        match self.fields.get("tool_timeouts_secs") {
            None | Some(Value::Null) => {}
            Some(Value::Object(entries)) => {
                for (tool, value) in entries {
                    match value.as_f64() {
                        Some(secs) if secs > 0.0 && secs <= MAX_TIMEOUT_SECS => {
                            timeouts.insert(tool.clone(), Duration::from_secs_f64(secs));
                        }
                        _ => {
                            return Err(format!(
                                "server {name:?}: \"tool_timeouts_secs\" entry {tool:?} must be \
                                 a number of seconds above 0 (at most a week)"
                            ));
                        }
                    }
                }
            }
            Some(_) => {
                return Err(self.field_error(
                    "tool_timeouts_secs",
                    "must be an object of tool names to seconds",
                ));
            }
        }
        Ok(timeouts)
    }

    fn approval(&self) -> Result<Approval, String> {
        match self.fields.get("approval") {
            None | Some(Value::Null) => Ok(Approval::default()),
            Some(value) => parse_approval(value).ok_or_else(|| {
                self.field_error("approval", "must be \"allow\", \"ask\" or \"never\"")
            }),
        }
    }

    /// `tools`: a policy per tool, by the server's own tool name.
    fn tool_policies(&self) -> Result<BTreeMap<String, Approval>, String> {
        let name = self.name;
        let mut tools = BTreeMap::new();
        match self.fields.get("tools") {
            None | Some(Value::Null) => {}
            Some(Value::Object(entries)) => {
                for (tool, value) in entries {
                    let policy = parse_approval(value).ok_or_else(|| {
                        format!(
                            "server {name:?}: \"tools\" entry {tool:?} must be \"allow\", \"ask\" \
                             or \"never\""
                        )
                    })?;
                    tools.insert(tool.clone(), policy);
                }
            }
            Some(_) => {
                return Err(self.field_error(
                    "tools",
                    "must be an object of tool names to \"allow\", \"ask\" or \"never\"",
                ));
            }
        }
        Ok(tools)
    }

    fn disabled(&self) -> Result<bool, String> {
        match self.fields.get("disabled") {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(_) => Err(self.field_error("disabled", "must be true or false")),
        }
    }

    /// `oauth`, for HTTP servers only: a program on stdin and stdout signs in no one.
    fn oauth(
        &self,
        transport: &Transport,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<OAuthConfig>, String> {
        match self.fields.get("oauth") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(oauth)) => {
                if matches!(transport, Transport::Stdio { .. }) {
                    return Err(self.field_error("oauth", "only applies to servers with a \"url\""));
                }
                parse_oauth(oauth, lookup)
                    .map(Some)
                    .map_err(|what| self.field_error("oauth", &what))
            }
            Some(_) => Err(self.field_error("oauth", "must be an object")),
        }
    }
}

/// The `oauth` object: `client_id`, `client_secret`, `scopes` (an array or one space-separated
/// string), `client_metadata_url` and `allow_private_addresses`.
fn parse_oauth(
    fields: &Map<String, Value>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<OAuthConfig, String> {
    let text = |field: &str| -> Result<Option<String>, String> {
        match optional_string(fields, field) {
            Ok(Some(value)) => ConfigValue::expand(&value, lookup)
                .map(|value| Some(value.expose().to_string()))
                .map_err(|var| format!("field {field:?} uses ${{{var}}}, which is not set")),
            Ok(None) => Ok(None),
            Err(what) => Err(format!("field {field:?} {what}")),
        }
    };
    let client_id = text("client_id")?;
    // A `{"keychain"}` or `{"file"}` secret is read at sign-in, by a grant.
    let client_secret = match fields.get("client_secret") {
        Some(Value::Object(_)) if fields.contains_key("grant") => None,
        _ => text("client_secret")?,
    };
    if client_secret.is_some() && client_id.is_none() {
        return Err("has a \"client_secret\" without the \"client_id\" it belongs to".into());
    }
    let client_metadata_url = text("client_metadata_url")?;
    if let Some(url) = &client_metadata_url
        && !url.starts_with("https://")
    {
        return Err("field \"client_metadata_url\" must be an https:// URL".into());
    }
    let scopes = match fields.get("scopes") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(scopes)) => scopes.split_whitespace().map(str::to_string).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| "field \"scopes\" must be an array of strings".to_string())?,
        Some(_) => return Err("field \"scopes\" must be an array of strings".into()),
    };
    let allow_private_addresses = match fields.get("allow_private_addresses") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(allow)) => *allow,
        Some(_) => return Err("field \"allow_private_addresses\" must be true or false".into()),
    };
    let grant = crate::auth::grant::parse(fields, client_id.as_deref(), lookup)?;
    let authorization_server = text("authorization_server")?;
    Ok(OAuthConfig {
        client_id,
        client_secret,
        scopes,
        client_metadata_url,
        allow_private_addresses,
        grant,
        authorization_server,
    })
}

fn parse_approval(value: &Value) -> Option<Approval> {
    value.as_str().and_then(Approval::parse)
}

fn optional_string(fields: &Map<String, Value>, field: &str) -> Result<Option<String>, String> {
    match fields.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err("must be a string".into()),
    }
}

fn string_map(
    fields: &Map<String, Value>,
    field: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, ConfigValue>, String> {
    let mut map = BTreeMap::new();
    match fields.get(field) {
        None | Some(Value::Null) => {}
        Some(Value::Object(entries)) => {
            for (key, value) in entries {
                let text = match value {
                    Value::String(text) => text.clone(),
                    Value::Number(number) => number.to_string(),
                    Value::Bool(flag) => flag.to_string(),
                    _ => return Err(format!("value of {key:?} must be a string")),
                };
                let text = ConfigValue::expand(&text, lookup)
                    .map_err(|var| format!("value of {key:?} uses ${{{var}}}, which is not set"))?;
                map.insert(key.clone(), text);
            }
        }
        Some(_) => return Err("must be an object of strings".into()),
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn parse(text: &str) -> Result<McpConfig, String> {
        let lookup = |name: &str| (name == "TOKEN").then(|| "s3cret".to_string());
        McpConfig::parse_with_env(text, Path::new("mcp.json"), &lookup).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_the_common_shape_and_our_fields() {
        let config = parse(
            r#"{"mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server-filesystem", "."],
                       "env": {"DEBUG": "1", "N": 3}, "cwd": "/tmp", "timeout_secs": 2.5,
                       "approval": "allow", "tools": {"write_file": "never"},
                       "tool_timeouts_secs": {"index": 7200},
                       "type": "stdio", "description": "ignored"},
                "web": {"url": "https://example.com/mcp",
                        "headers": {"Authorization": "Bearer ${TOKEN}"}, "disabled": true}
            }}"#,
        )
        .unwrap();
        let fs = &config.servers["fs"];
        assert_eq!(
            fs.transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "server-filesystem".into(), ".".into()],
                env: BTreeMap::from([("DEBUG".into(), "1".into()), ("N".into(), "3".into())]),
                cwd: Some(PathBuf::from("/tmp")),
            }
        );
        assert_eq!(fs.timeout, Duration::from_millis(2500));
        assert_eq!(fs.timeout_for("read_file"), Duration::from_millis(2500));
        assert_eq!(fs.timeout_for("index"), Duration::from_secs(7200));
        assert_eq!(fs.task_timeout_for("index"), Duration::from_secs(7200));
        assert_eq!(fs.task_timeout_for("read_file"), DEFAULT_TASK_TIMEOUT);
        assert_eq!(fs.approval_for("read_file"), Approval::Allow);
        assert_eq!(fs.approval_for("write_file"), Approval::Never);
        assert!(!fs.disabled);
        let web = &config.servers["web"];
        let Transport::Http { url, headers } = &web.transport else {
            panic!("{:?}", web.transport);
        };
        assert_eq!(url, "https://example.com/mcp");
        assert_eq!(headers["Authorization"].expose(), "Bearer s3cret");
        assert_eq!(headers["Authorization"].shown(), "Bearer ${TOKEN}");
        assert_eq!(web.timeout, DEFAULT_TIMEOUT);
        assert_eq!(web.approval_for("anything"), Approval::Ask);
        assert!(web.disabled);
    }

    #[test]
    fn empty_and_vscode_shapes() {
        assert_eq!(parse("{}").unwrap(), McpConfig::default());
        let config = parse(r#"{"servers": {"a": {"command": "a"}}}"#).unwrap();
        assert_eq!(config.servers.len(), 1);
    }

    #[test]
    fn the_oauth_field_names_a_client_and_scopes_and_never_shows_the_secret() {
        let config = parse(
            r#"{"mcpServers": {"t": {"url": "https://t.example/mcp", "oauth": {
                "client_id": "desk", "client_secret": "${TOKEN}", "scopes": "a b"}}}}"#,
        )
        .unwrap();
        let server = &config.servers["t"];
        assert_eq!(
            server.oauth,
            Some(OAuthConfig {
                client_id: Some("desk".into()),
                client_secret: Some("s3cret".into()),
                scopes: vec!["a".into(), "b".into()],
                client_metadata_url: None,
                allow_private_addresses: false,
                grant: None,
                authorization_server: None,
            })
        );
        assert!(!serde_json::to_string(server).unwrap().contains("s3cret"));
        assert!(!format!("{server:?}").contains("s3cret"));
        assert!(!format!("{:?}", server.oauth).contains("s3cret"));
        for (oauth, message) in [
            (
                r#"{"client_secret": "x"}"#,
                "has a \"client_secret\" without the \"client_id\" it belongs to",
            ),
            (
                r#"{"client_metadata_url": "http://x/c.json"}"#,
                "field \"client_metadata_url\" must be an https:// URL",
            ),
            (
                r#"{"allow_private_addresses": "yes"}"#,
                "field \"allow_private_addresses\" must be true or false",
            ),
        ] {
            let text = format!(
                r#"{{"mcpServers": {{"t": {{"url": "https://t/mcp", "oauth": {oauth}}}}}}}"#
            );
            assert_eq!(
                parse(&text).unwrap_err(),
                format!("mcp.json: server \"t\": \"oauth\" {message}")
            );
        }
        assert_eq!(
            parse(r#"{"mcpServers": {"s": {"command": "x", "oauth": {}}}}"#).unwrap_err(),
            "mcp.json: server \"s\": \"oauth\" only applies to servers with a \"url\""
        );
    }

    #[test]
    fn errors_name_the_server_and_field() {
        let cases = [
            (
                "[]",
                "mcp.json: the file must hold a JSON object with an \"mcpServers\" field",
            ),
            (
                r#"{"mcpServers": []}"#,
                "mcp.json: \"mcpServers\" must be an object of servers",
            ),
            (
                r#"{"mcpServers": {"a": 1}}"#,
                "mcp.json: server \"a\" must be an object",
            ),
            (
                r#"{"mcpServers": {"a": {}}}"#,
                "mcp.json: server \"a\" needs \"command\" (a program to run) or \"url\" (a \
                 Streamable HTTP endpoint)",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#,
                "mcp.json: server \"a\" has both \"command\" and \"url\"; give one",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "args": "-y"}}}"#,
                "mcp.json: server \"a\": \"args\" must be an array of strings",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "timeout_secs": 0}}}"#,
                "mcp.json: server \"a\": \"timeout_secs\" must be a number of seconds above 0 \
                 (at most a day)",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "tool_timeouts_secs": {"t": -1}}}}"#,
                "mcp.json: server \"a\": \"tool_timeouts_secs\" entry \"t\" must be a number \
                 of seconds above 0 (at most a week)",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "tool_timeouts_secs": 5}}}"#,
                "mcp.json: server \"a\": \"tool_timeouts_secs\" must be an object of tool \
                 names to seconds",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "approval": "yes"}}}"#,
                "mcp.json: server \"a\": \"approval\" must be \"allow\", \"ask\" or \"never\"",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "tools": {"t": true}}}}"#,
                "mcp.json: server \"a\": \"tools\" entry \"t\" must be \"allow\", \"ask\" or \
                 \"never\"",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "ftp://h"}}}"#,
                "mcp.json: server \"a\": \"url\" must start with http:// or https://",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://h", "headers": {"X": "${NOPE}"}}}}"#,
                "mcp.json: server \"a\": \"headers\" value of \"X\" uses ${NOPE}, which is not set",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://h", "env": {}}}}"#,
                "mcp.json: server \"a\": \"env\" only applies to servers with a \"command\"",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "http://h", "type": "sse"}}}"#,
                "mcp.json: server \"a\": \"type\" is \"sse\": the old HTTP+SSE transport is not \
                 supported; use the server's Streamable HTTP endpoint (usually ending in /mcp)",
            ),
            (
                r#"{"mcpServers": {"a": {"command": "x", "disabled": "no"}}}"#,
                "mcp.json: server \"a\": \"disabled\" must be true or false",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse(text).unwrap_err(), expected, "{text}");
        }
        let json_error = parse("{").unwrap_err();
        assert!(
            json_error.starts_with("mcp.json is not valid JSON: EOF while parsing"),
            "{json_error}"
        );
    }

    #[test]
    fn attack_secrets_debug_and_json_of_the_config_show_no_expanded_value() {
        let lookup = |name: &str| (name == "TOKEN").then(|| "s3cret-token-42".to_string());
        let config = McpConfig::parse_with_env(
            r#"{"mcpServers": {
                "fs": {"command": "npx", "env": {"API_KEY": "${TOKEN}", "PASTED": "sk-pasted-4242"}},
                "web": {"url": "https://example.com/mcp",
                        "headers": {"Authorization": "Bearer ${TOKEN}"}}
            }}"#,
            Path::new("mcp.json"),
            &lookup,
        )
        .unwrap();
        let shown = [
            format!("{config:?}"),
            format!("{config:#?}"),
            serde_json::to_string(&config).unwrap(),
            format!("{:?}", config.servers["web"].transport),
        ];
        for text in &shown {
            assert!(!text.contains("s3cret"), "{text}");
            assert!(!text.contains("sk-pasted-4242"), "{text}");
        }
        let json = serde_json::to_value(&config.servers["fs"].transport).unwrap();
        assert_eq!(
            json["env"],
            serde_json::json!({"API_KEY": "${TOKEN}", "PASTED": "********"})
        );
        let json = serde_json::to_value(&config.servers["web"].transport).unwrap();
        assert_eq!(
            json["headers"],
            serde_json::json!({"Authorization": "Bearer ${TOKEN}"})
        );
        // Text the server sends back is scrubbed of the same values.
        assert_eq!(
            config.servers["web"]
                .redactor()
                .redact("refused Bearer s3cret-token-42"),
            "refused Bearer ${TOKEN}"
        );
    }

    #[test]
    fn missing_file_is_no_config() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            McpConfig::load(&McpConfig::path_in(dir.path())).unwrap(),
            None
        );
    }
}
