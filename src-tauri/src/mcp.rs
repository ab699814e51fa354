//! The MCP servers of `mcp.json` for the open folder. They are started in the background as soon
//! as a folder opens, so the first question does not wait for their handshakes; their tools join
//! the built-in ones in the registry every turn uses; they are started again when another folder
//! opens, or at the next question once `mcp.json` has changed, and stopped when the app quits.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use serde::Serialize;
use tauri::{AppHandle, Emitter, Manager};
use tokio::sync::Mutex;
use tooltrail_mcp::{McpConfig, McpManager, McpOptions, ServerState, ServerStatus};
use tooltrail_protocol::ToolSource;
use tooltrail_tools::ToolRegistry;

use crate::settings;
use crate::workspace::MCP_CHANGED_EVENT;

/// One server as the sidebar shows it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct McpServerView {
    pub name: String,
    /// `idle`, `running`, `failed`, `disabled` or `stopped`.
    pub state: &'static str,
    pub tools: usize,
    /// Why it failed, in one sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The last lines it wrote to stderr, when it failed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stderr: Vec<String>,
}

impl McpServerView {
    /// `tools`: how many of the server's tools the registry holds.
    fn of(status: ServerStatus, tools: usize) -> Self {
        let (state, error) = match status.state {
            ServerState::Idle => ("idle", None),
            ServerState::Running { .. } => ("running", None),
            ServerState::Failed { error, .. } => ("failed", Some(error)),
            ServerState::Disabled => ("disabled", None),
            ServerState::Stopped => ("stopped", None),
        };
        Self {
            name: status.name,
            state,
            tools,
            error,
            stderr: status.stderr,
        }
    }
}

/// What the servers look like now, and whether `mcp.json` could be read.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, Default)]
pub struct McpOverview {
    pub servers: Vec<McpServerView>,
    /// Set when `mcp.json` exists but cannot be used; the sentence says why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// The tools a folder's turns use, and the servers behind the MCP ones.
struct Loaded {
    workspace: PathBuf,
    /// When `mcp.json` was last changed as these servers were started (`None`: no file).
    stamp: Option<SystemTime>,
    registry: Arc<ToolRegistry>,
    manager: Option<McpManager>,
    problem: Option<String>,
}

/// The app's MCP servers, for whichever folder is open.
#[derive(Default)]
pub struct McpTools {
    loaded: Mutex<Option<Loaded>>,
}

impl McpTools {
    /// The registry for a turn in `workspace`: the built-in tools and every tool of the servers
    /// in `mcp.json`, which are (re)started first when needed. A server that fails is left out
    /// and shown as failed; the built-in tools are always there.
    pub async fn registry(&self, workspace: &Path) -> Arc<ToolRegistry> {
        let path = config_path();
        let stamp = path.as_deref().and_then(modified);
        let mut loaded = self.loaded.lock().await;
        if let Some(current) = loaded.as_ref()
            && current.workspace == workspace
            && current.stamp == stamp
        {
            return Arc::clone(&current.registry);
        }
        if let Some(old) = loaded.take()
            && let Some(manager) = old.manager
        {
            manager.shutdown().await;
        }
        let fresh = load(workspace, path.as_deref(), stamp).await;
        let registry = Arc::clone(&fresh.registry);
        *loaded = Some(fresh);
        registry
    }

    /// The servers with their state and tool counts (none before a folder is open).
    pub async fn overview(&self) -> McpOverview {
        let loaded = self.loaded.lock().await;
        let Some(loaded) = loaded.as_ref() else {
            return McpOverview::default();
        };
        let servers = match &loaded.manager {
            Some(manager) => manager
                .status(false)
                .await
                .into_iter()
                .map(|status| {
                    let tools = tools_of(&loaded.registry, &status.name);
                    McpServerView::of(status, tools)
                })
                .collect(),
            None => Vec::new(),
        };
        McpOverview {
            servers,
            problem: loaded.problem.clone(),
        }
    }

    /// Stops every server (the app is quitting).
    pub async fn shutdown(&self) {
        if let Some(loaded) = self.loaded.lock().await.take()
            && let Some(manager) = loaded.manager
        {
            manager.shutdown().await;
        }
    }
}

async fn load(workspace: &Path, path: Option<&Path>, stamp: Option<SystemTime>) -> Loaded {
    let mut registry = ToolRegistry::with_builtins();
    let config = match path.map(McpConfig::load) {
        None | Some(Ok(None)) => Ok(None),
        Some(Ok(Some(config))) => Ok(Some(config)),
        Some(Err(error)) => Err(error.to_string()),
    };
    let (manager, problem) = match config {
        Ok(Some(config)) if !config.servers.is_empty() => {
            let manager = McpManager::new(config, McpOptions::for_workspace(workspace));
            // Failed servers keep their error in their state, which the sidebar shows.
            for failure in manager.register_into(&mut registry).await {
                eprintln!(
                    "tooltrail: going on without MCP server {:?}: {}",
                    failure.server, failure.error
                );
            }
            (Some(manager), None)
        }
        Ok(_) => (None, None),
        Err(problem) => (None, Some(problem)),
    };
    Loaded {
        workspace: workspace.to_path_buf(),
        stamp,
        registry: Arc::new(registry),
        manager,
        problem,
    }
}

/// How many tools of the MCP server `server` the registry holds.
fn tools_of(registry: &ToolRegistry, server: &str) -> usize {
    registry
        .names()
        .filter_map(|name| registry.get(name))
        .filter(|tool| matches!(tool.source(), ToolSource::Mcp { server: from } if from == server))
        .count()
}

/// Starts (or restarts, when `mcp.json` changed) the servers of `root` in the background, and
/// tells the window when they are up or have failed.
pub fn start_in_background(app: &AppHandle, root: PathBuf) {
    let starter = app.clone();
    tauri::async_runtime::spawn(async move {
        starter.state::<McpTools>().registry(&root).await;
        let _ = starter.emit(MCP_CHANGED_EVENT, ());
    });
}

fn config_path() -> Option<PathBuf> {
    settings::config_dir()
        .ok()
        .map(|dir| McpConfig::path_in(&dir))
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path)
        .and_then(|meta| meta.modified())
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn without_mcp_json_the_registry_holds_the_builtin_tools() {
        let dir = tempfile::tempdir().expect("temp dir");
        let loaded = load(dir.path(), Some(&dir.path().join("mcp.json")), None).await;
        assert!(loaded.manager.is_none());
        assert_eq!(loaded.problem, None);
        let builtins: Vec<String> = ToolRegistry::with_builtins()
            .names()
            .map(str::to_string)
            .collect();
        let names: Vec<String> = loaded.registry.names().map(str::to_string).collect();
        assert_eq!(names, builtins);
    }

    #[tokio::test]
    async fn a_broken_mcp_json_is_reported_and_the_builtin_tools_stay() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, r#"{"mcpServers": {"fs": {"args": []}}}"#).expect("write");
        let loaded = load(dir.path(), Some(&path), modified(&path)).await;
        assert!(loaded.manager.is_none());
        let problem = loaded.problem.expect("a problem");
        assert!(problem.contains("fs"), "{problem}");
        assert!(loaded.registry.get("read_file").is_some());
    }

    #[tokio::test]
    async fn a_server_that_cannot_start_is_listed_as_failed_with_its_reason() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {"gone": {"command": "no-such-program-anywhere"}}}"#,
        )
        .expect("write");
        let tools = McpTools::default();
        *tools.loaded.lock().await = Some(load(dir.path(), Some(&path), modified(&path)).await);
        let overview = tools.overview().await;
        assert_eq!(overview.servers.len(), 1);
        let server = &overview.servers[0];
        assert_eq!((server.name.as_str(), server.state), ("gone", "failed"));
        let error = server.error.as_deref().unwrap_or_default();
        assert!(error.contains("was not found"), "{error}");
    }
}
