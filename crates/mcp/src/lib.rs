//! Tooltrail as an MCP host: external MCP servers' tools become Tooltrail tools.
//!
//! Servers are configured in `mcp.json` in the `mcpServers` shape other MCP hosts use
//! ([`McpConfig`]), so a user can paste the config they already have; a settings screen edits it
//! through [`McpConfigEditor`], which keeps every field it does not show. An [`McpManager`] holds
//! one [`McpServer`] per entry. A server starts on first use (or all at once with
//! [`McpManager::start_all`]): a stdio server as a child process in its own process group, with
//! a minimal environment (no API keys of ours) plus what the config adds, the login shell's PATH
//! merged in so `npx` and `uvx` are found; a Streamable HTTP server as a session on its URL. The
//! handshake is the official Rust SDK's (`rmcp`); we answer `roots/list` with the workspace.
//!
//! Each server's tools (listed page by page, re-listed when the server sends
//! `notifications/tools/list_changed`) become [`McpTool`]s named `server__tool`, sanitised to
//! what OpenAI accepts and made unique. They go into the same `ToolRegistry` as the built-in
//! tools, so they share its argument validation, the agent's approval gate and the audit log.
//! The user's policy per server and per tool decides the gate (`allow` runs freely, `ask`
//! — the default — asks every time, `never` refuses); a server's `readOnlyHint` is shown to the
//! user when asking, never trusted.
//!
//! A call waits up to the server's timeout (restarted by each progress notification); on
//! timeout or when the turn is cancelled the server is sent `notifications/cancelled`. Text
//! content goes to the model; images, audio and resources are summarised for the model and kept
//! whole in the result's `data` (the audit record); `isError` results are `failed` errors with
//! the server's text. A server that dies is started again, with backoff, on its next use; its
//! stderr is kept in a bounded [`StderrLog`] for display.
//!
//! `env` and `headers` values are [`ConfigValue`]s: expanded only for the server, shown
//! everywhere else as written (`${NAME}`) or masked, and scrubbed by the server's [`Redactor`]
//! from what it sends back (stderr, errors, results). The model's `read_resource` is gated by
//! the named server's approval and recorded as that server's call.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::path::Path;
//! use tooltrail_mcp::{McpConfig, McpManager, McpOptions};
//! use tooltrail_tools::{ToolContext, ToolRegistry};
//!
//! let config = McpConfig::load(Path::new("/home/me/.config/tooltrail/mcp.json"))?.unwrap_or_default();
//! let manager = McpManager::new(config, McpOptions::for_workspace("/home/me/project"));
//! let mut registry = ToolRegistry::with_builtins();
//! for failure in manager.register_into(&mut registry).await {
//!     eprintln!("warning: {}", failure.error);
//! }
//! let ctx = ToolContext::open("/home/me/project")?;
//! let out = registry.call("fs__list_directory", r#"{"path": "/home/me/project"}"#, &ctx).await?;
//! println!("{}", out.text);
//! manager.shutdown().await;
//! # Ok(()) }
//! ```

mod answerer;
mod app_views;
mod apps;
mod auth;
mod config;
pub mod conformance;
mod connection;
mod edit;
mod env;
mod error;
mod handler;
mod http_layer;
mod manager;
mod naming;
mod noticing;
mod passed_through;
mod prompts;
mod redact;
mod resource_hub;
mod resources;
mod result;
mod server;
mod server_route;
mod skills;
mod standing_stream;
mod stderr;
mod task;
mod tool;

pub use answerer::{ElicitationAsk, ElicitationReply, McpAnswerer, SamplingAsk, SamplingReply};
pub use apps::{
    EXTENSION_ID, MAX_VIEW_BYTES, ToolUi, VIEW_MIME_TYPE, ViewResource, extension_capability, ui_of,
};
pub use auth::{
    Browser, DEFAULT_SIGN_IN_WAIT, MAX_STEP_UPS, MemorySecrets, SecretStore, SignInObserver,
    SignInOptions, SignInPolicy, SignInState, launcher, record_key,
};
pub use config::{
    Approval, CONFIG_FILE, DEFAULT_TASK_TIMEOUT, DEFAULT_TIMEOUT, McpConfig, OAuthConfig,
    ServerConfig, Transport,
};
pub use connection::ServerInfo;
pub use edit::{McpConfigEditor, McpConfigView, McpServerConfig};
pub use env::{login_shell_path, merge_paths};
pub use error::{McpError, SignInError};
pub use handler::{ElicitationPolicy, McpProgress};
pub use manager::{McpManager, McpOptions, ServerFailure, ServerStatus, ToolSummary};
pub use naming::{MAX_NAME_LEN, Namer, sanitise};
pub use prompts::PromptText;
pub use redact::{ConfigValue, MASK, Redactor};
pub use resource_hub::ResourceNotice;
pub use resources::{READ_RESOURCE, ReadResourceTool, ResourceContent};
pub use server::{McpServer, Resumed, ServerState};
pub use skills::{LOAD_SKILL, LoadSkillTool, SkillFile};
pub use stderr::StderrLog;
pub use task::{DEFAULT_POLL_INTERVAL, MAX_POLL_INTERVAL, MIN_POLL_INTERVAL};
pub use tool::McpTool;
