//! Every configured server, and their tools as one set of uniquely named [`McpTool`]s.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::join_all;
use serde::Serialize;
use tokio::sync::broadcast;
use tooltrail_tools::{Tool, ToolRegistry};

use crate::auth::{Browser, ServerAuth, SignInOptions, SignInState};
use crate::config::{Approval, McpConfig, Transport};
use crate::connection::{ConnectOptions, ServerInfo};
use crate::error::{McpError, SignInError};
use crate::handler::{ElicitationPolicy, McpProgress};
use crate::naming::Namer;
use crate::server::{McpServer, ServerState};
use crate::tool::McpTool;

/// How the manager starts servers.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// The workspace folder: default working folder of stdio servers and the root reported to
    /// servers (`roots/list`).
    pub workspace: Option<PathBuf>,
    /// Merge the login shell's PATH into the servers' PATH. On by default; needed by apps
    /// started from a desktop menu.
    pub login_shell_path: bool,
    pub elicitation: ElicitationPolicy,
    /// How HTTP servers that ask for it are signed in to, and where the tokens are kept.
    pub sign_in: SignInOptions,
}

impl Default for McpOptions {
    fn default() -> Self {
        Self {
            workspace: None,
            login_shell_path: true,
            elicitation: ElicitationPolicy::Decline,
            sign_in: SignInOptions::default(),
        }
    }
}

impl McpOptions {
    /// Options for a workspace folder.
    pub fn for_workspace(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: Some(workspace.into()),
            ..Self::default()
        }
    }
}

/// A server that could not give its tools.
#[derive(Debug)]
pub struct ServerFailure {
    pub server: String,
    pub error: McpError,
}

/// A tool as listings show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolSummary {
    /// The name the model sees.
    pub name: String,
    /// The server's own name.
    pub remote_name: String,
    pub description: String,
    pub approval: Approval,
    /// The server's `readOnlyHint`, shown but not trusted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// Its MCP App view (`ui://…`), when it has one; its result is shown as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<String>,
}

/// One server in a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerStatus {
    pub name: String,
    pub transport: Transport,
    #[serde(flatten)]
    pub state: ServerState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub info: Option<ServerInfo>,
    pub tools: Vec<ToolSummary>,
    /// The last stderr lines, when the server failed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stderr: Vec<String>,
    /// Where signing in stands, for HTTP servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sign_in: Option<SignInState>,
}

/// The configured servers.
pub struct McpManager {
    servers: BTreeMap<String, Arc<McpServer>>,
    /// Each HTTP server's sign-in, by server name.
    auth: BTreeMap<String, Arc<ServerAuth>>,
    live_progress: broadcast::Sender<McpProgress>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager")
            .field("servers", &self.servers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl McpManager {
    /// Servers are not started here: on first use, or by [`McpManager::start_all`].
    pub fn new(config: McpConfig, options: McpOptions) -> Self {
        let live_progress = broadcast::channel(256).0;
        let connect = ConnectOptions {
            workspace: options.workspace,
            login_shell_path: options.login_shell_path,
            elicitation: options.elicitation,
            auth: None,
        };
        let mut auth = BTreeMap::new();
        let servers = config
            .servers
            .into_iter()
            .map(|(name, server)| {
                let mut connect = connect.clone();
                connect.auth = ServerAuth::for_server(&server, &options.sign_in);
                if let Some(server_auth) = &connect.auth {
                    auth.insert(name.clone(), Arc::clone(server_auth));
                }
                let server = McpServer::new(server, connect, live_progress.clone());
                (name, server)
            })
            .collect();
        Self {
            servers,
            auth,
            live_progress,
        }
    }

    pub fn server(&self, name: &str) -> Result<&Arc<McpServer>, McpError> {
        self.servers
            .get(name)
            .ok_or_else(|| McpError::UnknownServer(name.to_string()))
    }

    /// Servers by name.
    pub fn servers(&self) -> impl Iterator<Item = &Arc<McpServer>> {
        self.servers.values()
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Progress notifications of every call, as they arrive.
    pub fn progress(&self) -> broadcast::Receiver<McpProgress> {
        self.live_progress.subscribe()
    }

    /// Starts every enabled server at once; the ones that failed.
    pub async fn start_all(&self) -> Vec<ServerFailure> {
        let starts = self
            .servers
            .values()
            .filter(|server| !server.config().disabled)
            .map(|server| async move {
                server.start().await.err().map(|error| ServerFailure {
                    server: server.name().to_string(),
                    error,
                })
            });
        join_all(starts).await.into_iter().flatten().collect()
    }

    /// Every enabled server's tools that may be offered to the model, named `server__tool`
    /// without clashing with `taken` or each other. A tool meant for its server's views alone
    /// (MCP Apps' `visibility` without `"model"`) is not among them. Servers are started (in
    /// parallel) as needed; those that fail are returned beside.
    pub async fn tools<'a>(
        &self,
        taken: impl IntoIterator<Item = &'a str>,
    ) -> (Vec<Arc<McpTool>>, Vec<ServerFailure>) {
        let (listings, failures) = self.list_on_enabled(|server| server.list_tools()).await;
        let mut namer = Namer::new(taken);
        let mut tools = Vec::new();
        for (server, remote) in listings {
            for tool in remote
                .iter()
                .filter(|tool| crate::apps::offered_to_model(tool))
            {
                let name = namer.name(server.name(), &tool.name);
                tools.push(Arc::new(McpTool::new(Arc::clone(server), name, tool)));
            }
        }
        (tools, failures)
    }

    /// What `list` lists on every enabled server, asked of all at once (each started as
    /// needed): each server's listing in the order of the servers, and the servers that could
    /// not list theirs. Tools, prompts and resources are all gathered this way.
    pub(crate) async fn list_on_enabled<'a, T, Fut>(
        &'a self,
        list: impl Fn(&'a Arc<McpServer>) -> Fut,
    ) -> (Vec<(&'a Arc<McpServer>, Vec<T>)>, Vec<ServerFailure>)
    where
        Fut: Future<Output = Result<Vec<T>, McpError>>,
    {
        let listings = join_all(
            self.servers
                .values()
                .filter(|server| !server.config().disabled)
                .map(|server| {
                    let listing = list(server);
                    async move { (server, listing.await) }
                }),
        )
        .await;
        let mut found = Vec::new();
        let mut failures = Vec::new();
        for (server, listing) in listings {
            match listing {
                Ok(items) => found.push((server, items)),
                Err(error) => failures.push(ServerFailure {
                    server: server.name().to_string(),
                    error,
                }),
            }
        }
        (found, failures)
    }

    /// Adds every server's tools to `registry`; returns the servers that failed, and any tool
    /// left out because its name was taken (the names are made unique against the registry,
    /// so that would take a tool added to it meanwhile).
    pub async fn register_into(&self, registry: &mut ToolRegistry) -> Vec<ServerFailure> {
        let taken: Vec<String> = registry.names().map(str::to_string).collect();
        let (tools, mut failures) = self.tools(taken.iter().map(String::as_str)).await;
        for tool in tools {
            let server = tool.server().name().to_string();
            if let Err(clash) = registry.register(tool as Arc<dyn Tool>) {
                failures.push(ServerFailure {
                    server,
                    error: clash.into(),
                });
            }
        }
        let resource_tool = self
            .resource_tool()
            .await
            .map(|tool| Arc::new(tool) as Arc<dyn Tool>);
        let skill_tool = self
            .skill_tool()
            .await
            .map(|tool| Arc::new(tool) as Arc<dyn Tool>);
        for tool in resource_tool.into_iter().chain(skill_tool) {
            if let Err(clash) = registry.register(tool) {
                failures.push(ServerFailure {
                    server: String::new(),
                    error: clash.into(),
                });
            }
        }
        failures
    }

    /// Every server with its state and tools. `start` starts the enabled ones first.
    pub async fn status(&self, start: bool) -> Vec<ServerStatus> {
        let (tools, _) = if start {
            self.tools(std::iter::empty()).await
        } else {
            (Vec::new(), Vec::new())
        };
        let mut statuses = Vec::new();
        for server in self.servers.values() {
            let sign_in = self.sign_in_state(server.name());
            statuses.push(status_of(server, &tools, sign_in).await);
        }
        statuses
    }

    /// One server with its state and tools, started first when `start` is set. Other servers
    /// are left alone, so tool names are as this server alone would have them.
    pub async fn server_status(&self, name: &str, start: bool) -> Result<ServerStatus, McpError> {
        let server = self.server(name)?;
        let mut tools = Vec::new();
        if start && !server.config().disabled {
            // A failure shows in the state.
            if let Ok(remote) = server.list_tools().await {
                let mut namer = Namer::default();
                for tool in remote
                    .iter()
                    .filter(|tool| crate::apps::offered_to_model(tool))
                {
                    let name = namer.name(server.name(), &tool.name);
                    tools.push(Arc::new(McpTool::new(Arc::clone(server), name, tool)));
                }
            }
        }
        Ok(status_of(server, &tools, self.sign_in_state(name)).await)
    }

    /// Where signing in to `name` stands; `None` for servers that do not sign in (stdio).
    pub fn sign_in_state(&self, name: &str) -> Option<SignInState> {
        self.auth.get(name).map(|auth| auth.state())
    }

    /// Signs in to `name` now, through `browser`, whatever the sign-in policy; the server is
    /// restarted so its session uses the new token.
    pub async fn sign_in(&self, name: &str, browser: &Browser) -> Result<SignInState, McpError> {
        let server = self.server(name)?;
        let auth = self
            .auth
            .get(name)
            .ok_or_else(|| McpError::SignIn(SignInError::NotAsked(name.to_string())))?;
        let state = auth.sign_in_now(browser).await?;
        server.stop().await;
        Ok(state)
    }

    /// Forgets the sign-in to `name` (revoking its tokens where the server supports it);
    /// whether the authorization server confirmed the revocation.
    pub async fn sign_out(&self, name: &str) -> Result<bool, McpError> {
        let server = self.server(name)?;
        let auth = self
            .auth
            .get(name)
            .ok_or_else(|| McpError::SignIn(SignInError::NotAsked(name.to_string())))?;
        let revoked = auth.sign_out().await?;
        server.stop().await;
        Ok(revoked)
    }

    /// Answers the servers' elicitation and sampling requests with `answerer`, and announces
    /// that they may send them. Set before the servers start: a server learns what we can
    /// answer in its handshake.
    pub fn answer_with(self, answerer: Arc<dyn crate::McpAnswerer>) -> Self {
        for server in self.servers.values() {
            server.shared().answerer.set(Arc::clone(&answerer));
        }
        self
    }

    /// Stops every server.
    pub async fn shutdown(&self) {
        join_all(self.servers.values().map(|server| server.stop())).await;
    }
}

async fn status_of(
    server: &Arc<McpServer>,
    tools: &[Arc<McpTool>],
    sign_in: Option<SignInState>,
) -> ServerStatus {
    let state = server.state().await;
    let tools = tools
        .iter()
        .filter(|tool| tool.server().name() == server.name())
        .map(|tool| summary(tool))
        .collect();
    let stderr = match state {
        ServerState::Failed { .. } => server.stderr().tail(20),
        ServerState::Idle
        | ServerState::Running { .. }
        | ServerState::Disabled
        | ServerState::Stopped => Vec::new(),
    };
    ServerStatus {
        name: server.name().to_string(),
        transport: server.config().transport.clone(),
        state,
        info: server.info().await,
        tools,
        stderr,
        sign_in,
    }
}

fn summary(tool: &McpTool) -> ToolSummary {
    let remote = tool
        .server()
        .known_tools()
        .and_then(|tools| tools.into_iter().find(|t| t.name == tool.remote_name()));
    ToolSummary {
        name: tool.spec().name.clone(),
        remote_name: tool.remote_name().to_string(),
        description: remote
            .as_ref()
            .and_then(|t| t.description.as_deref())
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string(),
        approval: tool.approval(),
        read_only_hint: remote
            .as_ref()
            .and_then(|t| t.annotations.as_ref())
            .and_then(|a| a.read_only_hint),
        view: remote
            .as_ref()
            .and_then(|t| crate::apps::ui_of(t).resource_uri),
    }
}
