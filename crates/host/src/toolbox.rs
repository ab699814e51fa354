//! The tools a folder's questions use, built in one documented order:
//!
//! 1. every built-in tool;
//! 2. minus the built-in tools turned off in the settings (`disabled_tools` names built-ins
//!    only, so it never hides an MCP tool that happens to share a name);
//! 3. plus every tool of the MCP servers of `mcp.json`, named `server__tool`.
//!
//! Two tools never share a name: an MCP tool whose name is already taken is left out (the
//! registry refuses it), and the sentence saying so is reported like a server that failed and
//! shown with the servers, never a silent replacement.
//!
//! The servers start once per folder and stay up across questions; they are started again when
//! `mcp.json` changes. A few folders are kept at once (the HTTP API answers sessions in folders
//! of their own), the least recently asked about stopped first. The registry itself is kept
//! while the folder, the file and the disabled tools stay the same, so argument schemas
//! compiled by one question serve the next.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;
use serde::Serialize;
use tokio::sync::{Mutex, watch};
use tooltrail_agent::LiveTools;
use tooltrail_mcp::{
    McpAnswerer, McpConfig, McpManager, McpOptions, ServerFailure, ServerState, ServerStatus,
};
use tooltrail_protocol::ToolSource;
use tooltrail_tools::ToolRegistry;
use ts_rs::TS;

/// One MCP server as a front end lists it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, TS)]
pub struct McpServerView {
    pub name: String,
    pub state: McpServerState,
    /// How many of its tools the model is offered.
    pub tools: usize,
    /// Why it failed, in one sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<String>,
    /// The last lines it wrote to stderr, when it failed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub stderr: Vec<String>,
    /// Where signing in stands, for servers reached over HTTP.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sign_in: Option<tooltrail_mcp::SignInState>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, TS)]
#[serde(rename_all = "snake_case")]
pub enum McpServerState {
    Idle,
    Running,
    Failed,
    Disabled,
    Stopped,
}

impl McpServerView {
    fn of(status: ServerStatus, tools: usize) -> Self {
        let (state, error) = match status.state {
            ServerState::Idle => (McpServerState::Idle, None),
            ServerState::Running { .. } => (McpServerState::Running, None),
            ServerState::Failed { error, .. } => (McpServerState::Failed, Some(error)),
            ServerState::Disabled => (McpServerState::Disabled, None),
            ServerState::Stopped => (McpServerState::Stopped, None),
        };
        Self {
            name: status.name,
            state,
            tools,
            error,
            stderr: status.stderr,
            sign_in: status.sign_in,
        }
    }
}

/// The servers as they are now, and whether `mcp.json` could be read.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, Default, TS)]
pub struct McpOverview {
    pub servers: Vec<McpServerView>,
    /// Set when `mcp.json` exists but cannot be used; the sentence says why.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub problem: Option<String>,
}

/// The tools of one question, and what went wrong while gathering them.
pub struct Tools {
    pub registry: Arc<ToolRegistry>,
    /// Servers that could not be started this time (each also shows as failed in
    /// [`Toolbox::overview`]). Reported once, when the servers start.
    pub failures: Vec<ServerFailure>,
    /// Why `mcp.json` could not be used, when it could not (reported once too).
    pub problem: Option<String>,
    /// The registry as the servers' tool lists change while a question runs; `None` without
    /// servers.
    pub live: Option<Arc<dyn LiveTools>>,
    /// What the running servers say of themselves (`instructions`), by server.
    pub instructions: Vec<(String, String)>,
}

/// The servers of one folder and the registry built on them.
struct Loaded {
    workspace: PathBuf,
    /// When `mcp.json` was last changed as these servers were started (`None`: no file).
    stamp: Option<SystemTime>,
    manager: Option<Arc<McpManager>>,
    /// One per server: changes when the server's tool list was re-read after it said it
    /// changed, so the next question rebuilds the registry.
    versions: Vec<watch::Receiver<u64>>,
    /// The MCP tools alone, to join the built-ins.
    mcp: ToolRegistry,
    problem: Option<String>,
    /// The registry handed out, and the disabled tools it was built for.
    built: Option<(Vec<String>, Arc<ToolRegistry>)>,
    /// Why tools were left out of that registry (a name already taken), one sentence each.
    clashes: Vec<String>,
}

/// How many folders keep their servers running at once.
const FOLDERS_KEPT: usize = 8;

/// The tools of the folders asked about lately, the most recent last.
pub struct Toolbox {
    /// `mcp.json`, or `None` when there is no config folder.
    config: Option<PathBuf>,
    loaded: Mutex<Vec<Loaded>>,
    /// Who answers the servers' elicitation and sampling requests.
    answerer: Option<Arc<dyn McpAnswerer>>,
    /// How servers that ask for sign-in get it: kept in the keychain; no browser opens unless
    /// the front end says so ([`Toolbox::set_sign_in`]).
    sign_in: tooltrail_mcp::SignInOptions,
}

impl Toolbox {
    /// A toolbox reading the servers from `mcp_json` (which need not exist).
    pub fn new(mcp_json: Option<PathBuf>) -> Self {
        Self {
            config: mcp_json,
            loaded: Mutex::new(Vec::new()),
            answerer: None,
            sign_in: crate::mcp_sign_in::sign_in_options(false),
        }
    }

    /// How the servers started from now on sign in (the app lets them open the browser).
    pub fn set_sign_in(&mut self, options: tooltrail_mcp::SignInOptions) {
        self.sign_in = options;
    }

    /// The same toolbox, with the servers it starts sending their elicitation and sampling
    /// requests to `answerer` (and told, in their handshake, that they may).
    pub fn with_answerer(self, answerer: Arc<dyn McpAnswerer>) -> Self {
        Self {
            answerer: Some(answerer),
            ..self
        }
    }

    /// The registry for a question in `workspace` with the built-in tools `disabled` turned
    /// off: see the module documentation for the order. Servers that fail are left out (and
    /// shown as failed); the built-in tools are always there.
    pub async fn tools(&self, workspace: &Path, disabled: &[String]) -> Tools {
        let stamp = self.config.as_deref().and_then(modified);
        let mut loaded = self.loaded.lock().await;
        let mut failures = Vec::new();
        let mut problem = None;
        let found = loaded
            .iter()
            .position(|current| current.workspace == workspace);
        let mut current = match found.map(|index| loaded.remove(index)) {
            Some(current) if current.stamp == stamp => current,
            stale => {
                if let Some(manager) = stale.and_then(|old| old.manager) {
                    manager.shutdown().await;
                }
                let (fresh, failed) = load(
                    workspace,
                    self.config.as_deref(),
                    stamp,
                    self.answerer.as_ref(),
                    &self.sign_in,
                )
                .await;
                failures = failed;
                problem = fresh.problem.clone();
                fresh
            }
        };
        // A server changed its tools since: its tools are listed again.
        let relist = current.versions.iter_mut().fold(false, |any, version| {
            let changed = version.has_changed().unwrap_or(false);
            version.mark_unchanged();
            any || changed
        });
        if relist && let Some(manager) = &current.manager {
            let mut mcp = ToolRegistry::new();
            failures.extend(manager.register_into(&mut mcp).await);
            current.mcp = mcp;
            current.built = None;
        }
        let registry = match &current.built {
            Some((built_for, registry)) if built_for.as_slice() == disabled => Arc::clone(registry),
            _ => {
                let (registry, clashes) = compose(disabled, &current.mcp);
                let registry = Arc::new(registry);
                current.built = Some((disabled.to_vec(), Arc::clone(&registry)));
                current.clashes = clashes
                    .iter()
                    .map(|clash| tooltrail_protocol::sentence(&clash.error.to_string()))
                    .collect();
                failures.extend(clashes);
                registry
            }
        };
        let live = current.manager.as_ref().map(|manager| {
            Arc::new(LiveRegistry {
                manager: Arc::clone(manager),
                disabled: disabled.to_vec(),
                versions: std::sync::Mutex::new(current.versions.clone()),
            }) as Arc<dyn LiveTools>
        });
        let mut instructions = Vec::new();
        if let Some(manager) = &current.manager {
            for server in manager.servers() {
                if let Some(text) = server.info().await.and_then(|info| info.instructions) {
                    instructions.push((server.name().to_string(), text));
                }
            }
        }
        loaded.push(current);
        if loaded.len() > FOLDERS_KEPT {
            let oldest = loaded.remove(0);
            if let Some(manager) = oldest.manager {
                manager.shutdown().await;
            }
        }
        Tools {
            registry,
            failures,
            problem,
            live,
            instructions,
        }
    }

    /// The servers of the folder asked about last, with their state and tool counts (none
    /// before a folder is asked about).
    pub async fn overview(&self) -> McpOverview {
        let loaded = self.loaded.lock().await;
        let Some(loaded) = loaded.last() else {
            return McpOverview::default();
        };
        let servers = match &loaded.manager {
            Some(manager) => manager
                .status(false)
                .await
                .into_iter()
                .map(|status| {
                    let tools = tools_of(&loaded.mcp, &status.name);
                    McpServerView::of(status, tools)
                })
                .collect(),
            None => Vec::new(),
        };
        let problems: Vec<String> = loaded
            .problem
            .iter()
            .chain(&loaded.clashes)
            .cloned()
            .collect();
        McpOverview {
            servers,
            problem: (!problems.is_empty()).then(|| problems.join(" ")),
        }
    }

    /// The MCP servers of `workspace`, when its tools were gathered (by a question or
    /// [`Host::warm_up`](crate::Host::warm_up)); none otherwise.
    pub async fn mcp_servers(&self, workspace: &Path) -> Vec<Arc<tooltrail_mcp::McpServer>> {
        let loaded = self.loaded.lock().await;
        loaded
            .iter()
            .find(|current| current.workspace == workspace)
            .and_then(|current| current.manager.as_ref())
            .map(|manager| manager.servers().cloned().collect())
            .unwrap_or_default()
    }

    /// Signs in to `server` of the folder asked about last, through the user's browser (the
    /// `BROWSER` variable names another). Returns that folder, whose tools are gathered again
    /// on next use (the server's tools come with the sign-in): see [`crate::Host::warm_up`].
    pub async fn sign_in(&self, server: &str) -> Result<PathBuf, tooltrail_mcp::McpError> {
        let manager = self.last_manager(server).await?;
        let signed_in = manager
            .sign_in(server, &tooltrail_mcp::Browser::System)
            .await;
        self.stale(signed_in.map(|_| ())).await
    }

    /// Signs out of `server` of the folder asked about last; returns that folder, as
    /// [`Toolbox::sign_in`] does.
    pub async fn sign_out(&self, server: &str) -> Result<PathBuf, tooltrail_mcp::McpError> {
        let manager = self.last_manager(server).await?;
        let signed_out = manager.sign_out(server).await;
        self.stale(signed_out.map(|_| ())).await
    }

    /// After a sign-in or out: the last folder's tools are gathered afresh on next use.
    async fn stale(
        &self,
        outcome: Result<(), tooltrail_mcp::McpError>,
    ) -> Result<PathBuf, tooltrail_mcp::McpError> {
        let mut loaded = self.loaded.lock().await;
        let Some(last) = loaded.last_mut() else {
            return outcome.map(|()| PathBuf::new());
        };
        if outcome.is_ok() {
            last.stamp = None;
        }
        outcome.map(|()| last.workspace.clone())
    }

    async fn last_manager(&self, server: &str) -> Result<Arc<McpManager>, tooltrail_mcp::McpError> {
        self.loaded
            .lock()
            .await
            .last()
            .and_then(|loaded| loaded.manager.clone())
            .ok_or_else(|| tooltrail_mcp::McpError::UnknownServer(server.to_string()))
    }

    /// Stops every server (the front end is quitting).
    pub async fn shutdown(&self) {
        let loaded = std::mem::take(&mut *self.loaded.lock().await);
        for manager in loaded.into_iter().filter_map(|loaded| loaded.manager) {
            manager.shutdown().await;
        }
    }
}

/// Built-ins, minus the disabled ones, plus the MCP tools, and the MCP tools left out because
/// their name was taken (by a built-in tool: MCP names are already unique among themselves).
fn compose(disabled: &[String], mcp: &ToolRegistry) -> (ToolRegistry, Vec<ServerFailure>) {
    let mut registry = ToolRegistry::with_builtins();
    for name in disabled {
        registry.remove(name);
    }
    let mut clashes = Vec::new();
    for name in mcp.names() {
        let Some(tool) = mcp.get(name) else {
            continue;
        };
        let server = match tool.source() {
            ToolSource::Mcp { server } => server,
            ToolSource::Builtin => String::new(),
        };
        if let Err(clash) = registry.register(tool) {
            clashes.push(ServerFailure {
                server,
                error: clash.into(),
            });
        }
    }
    (registry, clashes)
}

/// How long a question waits for a server to read its changed tool list again.
const RELIST_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The tools of one folder's servers as they are now, for a question under way.
struct LiveRegistry {
    manager: Arc<McpManager>,
    disabled: Vec<String>,
    /// What this question has seen of each server's tool list.
    versions: std::sync::Mutex<Vec<watch::Receiver<u64>>>,
}

#[async_trait]
impl LiveTools for LiveRegistry {
    async fn refreshed(&self) -> Option<Arc<ToolRegistry>> {
        // A server that said its list changed during the last call is reading it again now;
        // the next request should have it, so wait for that (briefly: a server that cannot
        // list its tools keeps its old ones).
        let deadline = tokio::time::Instant::now() + RELIST_WAIT;
        while self.manager.servers().any(|server| server.tools_pending())
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let changed = {
            let mut versions = self
                .versions
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            versions.iter_mut().fold(false, |any, version| {
                let changed = version.has_changed().unwrap_or(false);
                version.mark_unchanged();
                any || changed
            })
        };
        if !changed {
            return None;
        }
        let mut mcp = ToolRegistry::new();
        // A server that fails now keeps its error in its state; its tools are left out.
        let _ = self.manager.register_into(&mut mcp).await;
        Some(Arc::new(compose(&self.disabled, &mcp).0))
    }
}

async fn load(
    workspace: &Path,
    path: Option<&Path>,
    stamp: Option<SystemTime>,
    answerer: Option<&Arc<dyn McpAnswerer>>,
    sign_in: &tooltrail_mcp::SignInOptions,
) -> (Loaded, Vec<ServerFailure>) {
    let mut mcp = ToolRegistry::new();
    let config = match path.map(McpConfig::load) {
        None | Some(Ok(None)) => Ok(None),
        Some(Ok(Some(config))) => Ok(Some(config)),
        Some(Err(error)) => Err(error.to_string()),
    };
    let (manager, problem, failures) = match config {
        Ok(Some(config)) if !config.servers.is_empty() => {
            let mut options = McpOptions::for_workspace(workspace);
            options.sign_in = sign_in.clone();
            let mut manager = McpManager::new(config, options);
            if let Some(answerer) = answerer {
                manager = manager.answer_with(Arc::clone(answerer));
            }
            // Failed servers keep their error in their state, which listings show.
            let failures = manager.register_into(&mut mcp).await;
            (Some(Arc::new(manager)), None, failures)
        }
        Ok(_) => (None, None, Vec::new()),
        Err(problem) => (None, Some(problem), Vec::new()),
    };
    let versions = manager
        .iter()
        .flat_map(|manager| manager.servers().map(|server| server.tools_changed()))
        .collect();
    let loaded = Loaded {
        workspace: workspace.to_path_buf(),
        stamp,
        versions,
        manager,
        mcp,
        problem,
        built: None,
        clashes: Vec::new(),
    };
    (loaded, failures)
}

/// How many tools of the MCP server `server` the registry holds.
fn tools_of(registry: &ToolRegistry, server: &str) -> usize {
    registry
        .names()
        .filter_map(|name| registry.get(name))
        .filter(|tool| matches!(tool.source(), ToolSource::Mcp { server: from } if from == server))
        .count()
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

    fn builtin_names() -> Vec<String> {
        ToolRegistry::with_builtins()
            .names()
            .map(str::to_string)
            .collect()
    }

    #[tokio::test]
    async fn without_mcp_json_the_registry_holds_the_builtin_tools_and_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let toolbox = Toolbox::new(Some(dir.path().join("mcp.json")));
        let first = toolbox.tools(dir.path(), &[]).await;
        assert_eq!(first.problem, None);
        let names: Vec<String> = first.registry.names().map(str::to_string).collect();
        assert_eq!(names, builtin_names());
        // The next question gets the same registry, with its compiled schemas.
        let second = toolbox.tools(dir.path(), &[]).await;
        assert!(Arc::ptr_eq(&first.registry, &second.registry));
        // Turning a tool off builds a new one without it.
        let off = ["execute_bash".to_string()];
        let third = toolbox.tools(dir.path(), &off).await;
        assert!(third.registry.get("execute_bash").is_none());
        assert!(third.registry.get("read_file").is_some());
    }

    /// A tool as an MCP server named `fs` would bring it.
    struct FromServer(tooltrail_protocol::ToolSpec);

    #[async_trait::async_trait]
    impl tooltrail_tools::Tool for FromServer {
        fn spec(&self) -> &tooltrail_protocol::ToolSpec {
            &self.0
        }

        fn source(&self) -> ToolSource {
            ToolSource::Mcp {
                server: "fs".into(),
            }
        }

        async fn call(
            &self,
            _args: serde_json::Value,
            _ctx: &tooltrail_tools::ToolContext,
        ) -> Result<tooltrail_protocol::ToolOutput, tooltrail_protocol::ToolError> {
            Ok(tooltrail_protocol::ToolOutput::new(
                "",
                serde_json::Value::Null,
            ))
        }
    }

    #[test]
    fn disabled_tools_are_built_ins_only_and_never_hide_an_mcp_tool() {
        let mut mcp = ToolRegistry::new();
        mcp.register(Arc::new(FromServer(tooltrail_protocol::ToolSpec {
            name: "fs__read_file".into(),
            description: "Reads a file through the server.".into(),
            parameters: serde_json::json!({"type": "object"}),
            read_only: true,
        })))
        .unwrap();
        let disabled = ["read_file".to_string(), "fs__read_file".to_string()];
        let (registry, clashes) = compose(&disabled, &mcp);
        assert!(clashes.is_empty());
        assert!(registry.get("read_file").is_none());
        assert!(registry.get("fs__read_file").is_some());
        assert_eq!(registry.len(), builtin_names().len());
        assert_eq!(tools_of(&registry, "fs"), 1);
    }

    #[test]
    fn an_mcp_tool_named_like_a_built_in_is_left_out_and_said_so() {
        let mut mcp = ToolRegistry::new();
        mcp.register(Arc::new(FromServer(tooltrail_protocol::ToolSpec {
            name: "read_file".into(),
            description: "Reads a file through the server.".into(),
            parameters: serde_json::json!({"type": "object"}),
            read_only: true,
        })))
        .unwrap();
        let (registry, clashes) = compose(&[], &mcp);
        // The built-in keeps its name; the server's tool is not offered under it.
        assert_eq!(
            registry.get("read_file").unwrap().source(),
            ToolSource::Builtin
        );
        assert_eq!(registry.len(), builtin_names().len());
        let said: Vec<(String, String)> = clashes
            .iter()
            .map(|clash| (clash.server.clone(), clash.error.to_string()))
            .collect();
        assert_eq!(
            said,
            vec![(
                "fs".to_string(),
                "two tools are named \"read_file\" (the built-in tool and the tool of the MCP \
                 server \"fs\"); the second was left out, since a name can belong to one tool \
                 only"
                    .to_string()
            )]
        );
    }

    #[tokio::test]
    async fn a_clash_is_reported_with_the_servers_until_the_registry_is_built_without_it() {
        let dir = tempfile::tempdir().unwrap();
        let toolbox = Toolbox::new(Some(dir.path().join("mcp.json")));
        toolbox.tools(dir.path(), &[]).await;
        let mut mcp = ToolRegistry::new();
        mcp.register(Arc::new(FromServer(tooltrail_protocol::ToolSpec {
            name: "count_lines".into(),
            description: "Counts lines on the server.".into(),
            parameters: serde_json::json!({"type": "object"}),
            read_only: true,
        })))
        .unwrap();
        {
            let mut loaded = toolbox.loaded.lock().await;
            let current = loaded.last_mut().unwrap();
            current.mcp = mcp;
            current.built = None;
        }
        let tools = toolbox.tools(dir.path(), &[]).await;
        assert_eq!(tools.failures.len(), 1);
        let problem = toolbox.overview().await.problem.unwrap_or_default();
        assert!(
            problem.starts_with("Two tools are named \"count_lines\""),
            "{problem}"
        );
        // Reported once: the kept registry brings no new failure.
        assert!(toolbox.tools(dir.path(), &[]).await.failures.is_empty());
        // With count_lines turned off, the server's tool takes the free name.
        let off = ["count_lines".to_string()];
        let rebuilt = toolbox.tools(dir.path(), &off).await;
        assert!(rebuilt.failures.is_empty());
        assert_eq!(
            rebuilt.registry.get("count_lines").unwrap().source(),
            ToolSource::Mcp {
                server: "fs".into()
            }
        );
        assert_eq!(toolbox.overview().await.problem, None);
    }

    #[tokio::test]
    async fn several_folders_keep_their_tools_side_by_side() {
        let config = tempfile::tempdir().unwrap();
        let toolbox = Toolbox::new(Some(config.path().join("mcp.json")));
        let folders: Vec<tempfile::TempDir> = (0..=FOLDERS_KEPT)
            .map(|_| tempfile::tempdir().unwrap())
            .collect();
        let first = toolbox.tools(folders[0].path(), &[]).await.registry;
        let second = toolbox.tools(folders[1].path(), &[]).await.registry;
        // Back to the first folder: its registry was kept, not rebuilt.
        let again = toolbox.tools(folders[0].path(), &[]).await.registry;
        assert!(Arc::ptr_eq(&first, &again));
        assert!(!Arc::ptr_eq(&first, &second));
        // Past the limit, the folder asked about longest ago goes first.
        for folder in &folders[1..] {
            toolbox.tools(folder.path(), &[]).await;
        }
        assert_eq!(toolbox.loaded.lock().await.len(), FOLDERS_KEPT);
        let rebuilt = toolbox.tools(folders[0].path(), &[]).await.registry;
        assert!(!Arc::ptr_eq(&first, &rebuilt));
    }

    #[tokio::test]
    async fn a_broken_mcp_json_is_reported_once_and_the_builtin_tools_stay() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, r#"{"mcpServers": {"fs": {"args": []}}}"#).unwrap();
        let toolbox = Toolbox::new(Some(path));
        let tools = toolbox.tools(dir.path(), &[]).await;
        let problem = tools.problem.expect("a problem");
        assert!(problem.contains("fs"), "{problem}");
        assert!(tools.registry.get("read_file").is_some());
        assert_eq!(toolbox.tools(dir.path(), &[]).await.problem, None);
        assert!(toolbox.overview().await.problem.is_some());
    }

    #[tokio::test]
    async fn a_server_that_cannot_start_is_listed_as_failed_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {"gone": {"command": "no-such-program-anywhere"}}}"#,
        )
        .unwrap();
        let toolbox = Toolbox::new(Some(path));
        let tools = toolbox.tools(dir.path(), &[]).await;
        assert_eq!(tools.failures.len(), 1);
        let overview = toolbox.overview().await;
        assert_eq!(overview.servers.len(), 1);
        let server = &overview.servers[0];
        assert_eq!(
            (server.name.as_str(), server.state),
            ("gone", McpServerState::Failed)
        );
        let error = server.error.as_deref().unwrap_or_default();
        assert!(error.contains("was not found"), "{error}");
    }
}
