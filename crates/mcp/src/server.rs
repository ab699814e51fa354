//! One configured server over its lifetime: started on first use (or up front), its tools
//! listed and re-listed when it says they changed, restarted with backoff after it dies.

use std::sync::{Arc, Mutex as StdMutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use serde::Serialize;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::{Mutex, broadcast, watch};
use tokio_util::sync::CancellationToken;
use tooltrail_protocol::ToolProgress;

use crate::config::ServerConfig;
use crate::connection::{ConnectOptions, Connection, RequestFailure, ServerInfo};
use crate::error::McpError;
use crate::handler::{McpProgress, ProgressBoard, Shared};
use crate::stderr::StderrLog;

/// First wait after a failure; it doubles with each failure in a row.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// A connection that lived this long before dying resets the backoff.
const HEALTHY_UPTIME: Duration = Duration::from_secs(30);

/// How picking up a task of an earlier run went ([`McpServer::resume_task`]).
#[derive(Debug)]
pub enum Resumed {
    /// The task ended: the call's result or error.
    Ended(Result<tooltrail_protocol::ToolOutput, tooltrail_protocol::ToolError>),
    /// The server no longer holds the task; what it said.
    Gone(String),
    /// The server could not be reached; the task may be picked up later.
    Unreachable(String),
}

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum ServerState {
    /// Not started yet (servers start on first use).
    Idle,
    Running {
        #[serde(skip_serializing_if = "Option::is_none")]
        pid: Option<u32>,
        handshake_ms: u64,
    },
    /// Failed to start or died; it is tried again on next use once the backoff has passed.
    Failed {
        error: String,
        failures: u32,
    },
    Disabled,
    Stopped,
}

/// The outcome of one call, before it becomes a tool result.
pub(crate) struct CallOutcome {
    pub result: Result<rmcp::model::CallToolResult, RequestFailure>,
    pub progress: Vec<McpProgress>,
    /// The task the server made of the call (the Tasks extension), to be followed.
    pub task: Option<serde_json::Value>,
}

enum Life {
    Idle,
    Running {
        connection: Arc<Connection>,
        /// Failures in a row before this start; a crash soon after starting adds to them.
        prior_failures: u32,
    },
    Failed {
        error: String,
        failures: u32,
        at: Instant,
    },
    Stopped,
}

/// One configured server. Cheap to share: tools hold an `Arc` to it.
pub struct McpServer {
    config: ServerConfig,
    options: ConnectOptions,
    shared: Arc<Shared>,
    life: Mutex<Life>,
    /// The last tool list, for listings without a round trip.
    tools: StdMutex<Option<Vec<rmcp::model::Tool>>>,
    /// Bumped whenever the tool list is re-read after `tools/list_changed`.
    tools_version: watch::Sender<u64>,
    /// Ends the re-listing task when the server goes away.
    dropped: CancellationToken,
    /// The tools (by the server's own name) found to run only as tasks (`taskSupport:
    /// "required"`), called as tasks from then on. The tool list does not carry that flag
    /// through the MCP library, so a tool's first plain call finds it out, once for the server
    /// and not once for every question's tools.
    task_only: StdMutex<std::collections::HashSet<String>>,
}

impl Drop for McpServer {
    fn drop(&mut self) {
        self.dropped.cancel();
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.config.name)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    pub(crate) fn new(
        config: ServerConfig,
        options: ConnectOptions,
        live_progress: broadcast::Sender<McpProgress>,
    ) -> Arc<Self> {
        // What scrubs the server's own secrets, made once from its config for every use.
        let redactor = config.redactor();
        let shared = Arc::new(Shared {
            server: config.name.clone(),
            redactor: redactor.clone(),
            log: StderrLog::redacting(redactor),
            progress: ProgressBoard::default(),
            live_progress,
            tools_changed: tokio::sync::Notify::new(),
            answerer: Default::default(),
            tool_notices: Default::default(),
            resources: crate::resource_hub::ResourceHub::default(),
        });
        let server = Arc::new(Self {
            config,
            options,
            shared,
            life: Mutex::new(Life::Idle),
            tools: StdMutex::new(None),
            tools_version: watch::channel(0).0,
            dropped: CancellationToken::new(),
            task_only: StdMutex::default(),
        });
        spawn_relister(Arc::downgrade(&server), server.dropped.clone());
        server
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The server's recent stderr lines and log messages.
    pub fn stderr(&self) -> &StderrLog {
        &self.shared.log
    }

    /// Changes whenever the tool list was re-read after the server said it changed.
    pub fn tools_changed(&self) -> watch::Receiver<u64> {
        self.tools_version.subscribe()
    }

    /// Whether the server said its tool list changed and the list has not been read again
    /// yet (it is being read).
    pub fn tools_pending(&self) -> bool {
        self.shared
            .tool_notices
            .load(std::sync::atomic::Ordering::SeqCst)
            > *self.tools_version.borrow()
    }

    pub async fn state(&self) -> ServerState {
        if self.config.disabled {
            return ServerState::Disabled;
        }
        let mut life = self.life.lock().await;
        self.notice_death(&mut life);
        match &*life {
            Life::Idle => ServerState::Idle,
            Life::Running { connection, .. } => ServerState::Running {
                pid: connection.pid,
                handshake_ms: u64::try_from(connection.handshake.as_millis()).unwrap_or(u64::MAX),
            },
            Life::Failed {
                error, failures, ..
            } => ServerState::Failed {
                error: error.clone(),
                failures: *failures,
            },
            Life::Stopped => ServerState::Stopped,
        }
    }

    /// What the server said about itself in the handshake, once running.
    pub async fn info(&self) -> Option<ServerInfo> {
        match &*self.life.lock().await {
            Life::Running { connection, .. } => connection.info.clone(),
            Life::Idle | Life::Failed { .. } | Life::Stopped => None,
        }
    }

    /// Starts the server if it is not running; returns how long the handshake took.
    pub async fn start(&self) -> Result<Duration, McpError> {
        Ok(self.connection().await?.handshake)
    }

    /// Stops the server. A later call starts it again.
    pub async fn stop(&self) {
        let previous = std::mem::replace(&mut *self.life.lock().await, Life::Stopped);
        if let Life::Running { connection, .. } = previous {
            connection.close().await;
        }
    }

    /// The server's tools, listed (every page) when not known yet.
    pub async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, McpError> {
        let connection = self.connection().await?;
        let cached = self
            .tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(tools) = cached {
            return Ok(tools);
        }
        self.relist(&connection).await
    }

    async fn relist(&self, connection: &Connection) -> Result<Vec<rmcp::model::Tool>, McpError> {
        let tools = connection
            .list_tools(self.config.timeout)
            .await
            .map_err(|failure| McpError::Request {
                server: self.config.name.clone(),
                action: "list its tools",
                message: self.redactor().redact(&describe(&failure)).into_owned(),
            })?;
        *self.tools.lock().unwrap_or_else(PoisonError::into_inner) = Some(tools.clone());
        Ok(tools)
    }

    /// The tools from the last listing, without asking the server.
    pub fn known_tools(&self) -> Option<Vec<rmcp::model::Tool>> {
        self.tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) async fn call_tool(
        &self,
        params: CallToolRequestParams,
        cancel: &CancellationToken,
        forward: Option<UnboundedSender<ToolProgress>>,
    ) -> Result<CallOutcome, McpError> {
        let connection = self.connection().await?;
        let timeout = self.config.timeout_for(&params.name);
        let (result, progress, task) = connection
            .call_tool(&self.shared, params, timeout, cancel, forward)
            .await;
        self.notice_failure(&result).await;
        Ok(CallOutcome {
            result,
            progress,
            task,
        })
    }

    /// Calls `tool` as a task (MCP Tasks) and follows the task to its end, within the tool's
    /// timeout in all (see `task.rs`).
    pub(crate) async fn call_task(
        &self,
        params: CallToolRequestParams,
        cancel: &CancellationToken,
        forward: Option<UnboundedSender<ToolProgress>>,
    ) -> Result<Result<rmcp::model::CallToolResult, RequestFailure>, McpError> {
        let connection = self.connection().await?;
        let limit = self.config.task_timeout_for(&params.name);
        let meta = params
            .meta
            .as_ref()
            .and_then(|meta| serde_json::to_value(meta).ok());
        let created = crate::task::Follow::create(
            connection.peer(),
            &params.name,
            params.arguments.clone().unwrap_or_default(),
            limit,
            meta,
            self.config.timeout,
        )
        .await;
        let result = match created {
            Ok(crate::task::Created::Done(result)) => Ok(result),
            Ok(crate::task::Created::Task(first)) => {
                self.follow(&connection, &params.name, limit, cancel, forward, first)
                    .await
            }
            Err(failure) => Err(failure),
        };
        self.notice_failure(&result).await;
        Ok(result)
    }

    /// Follows a task the server made of a plain call (the Tasks extension).
    pub(crate) async fn follow_created(
        &self,
        tool: &str,
        created: &serde_json::Value,
        cancel: &CancellationToken,
        forward: Option<UnboundedSender<ToolProgress>>,
    ) -> Result<Result<rmcp::model::CallToolResult, RequestFailure>, McpError> {
        let Some(first) = crate::task::read_task(created) else {
            return Ok(Err(RequestFailure::Other(
                "the server answered with a task Tooltrail cannot read".into(),
            )));
        };
        let connection = self.connection().await?;
        let limit = self.config.task_timeout_for(tool);
        let result = self
            .follow(&connection, tool, limit, cancel, forward, first)
            .await;
        self.notice_failure(&result).await;
        Ok(result)
    }

    /// Picks up a task this server runs for a call of an earlier run (the record kept it
    /// open), and follows it to its end within the tool's task timeout: how it ended, as the
    /// model and the record take a call's end (the server's secrets scrubbed); or that the
    /// server no longer holds it; or that the server cannot be reached now.
    pub async fn resume_task(
        &self,
        tool: &str,
        task_id: &str,
        cancel: &CancellationToken,
        forward: Option<UnboundedSender<ToolProgress>>,
    ) -> Resumed {
        let connection = match self.connection().await {
            Ok(connection) => connection,
            Err(err) => return Resumed::Unreachable(err.to_string()),
        };
        let limit = self.config.task_timeout_for(tool);
        let first = crate::task::Snapshot {
            task_id: task_id.to_string(),
            status: tooltrail_protocol::TaskStatus::Working,
            message: None,
            poll: None,
            result: None,
            error: None,
            input_requests: None,
        };
        let result = self
            .follow(&connection, tool, limit, cancel, forward, first)
            .await;
        self.notice_failure(&result).await;
        match result {
            // The server answers about the task with an error: it does not hold it any more
            // (its time to live passed, it restarted without keeping its tasks).
            Err(RequestFailure::Rpc(error)) => {
                Resumed::Gone(self.redactor().redact(&error.message).into_owned())
            }
            Err(RequestFailure::Closed) => {
                Resumed::Unreachable("the connection closed (the server may have exited)".into())
            }
            result => {
                let output =
                    crate::tool::finish(self, tool, crate::tool::Ran::AsTask, result, &[], None);
                Resumed::Ended(self.redactor().redact_result(output))
            }
        }
    }

    async fn follow(
        &self,
        connection: &Connection,
        tool: &str,
        limit: Duration,
        cancel: &CancellationToken,
        forward: Option<UnboundedSender<ToolProgress>>,
        first: crate::task::Snapshot,
    ) -> Result<rmcp::model::CallToolResult, RequestFailure> {
        let asker = crate::handler::TaskAsker {
            elicitation: self.options.elicitation,
            shared: &self.shared,
        };
        crate::task::Follow {
            peer: connection.peer(),
            server: &self.config.name,
            tool,
            limit,
            request_timeout: self.config.timeout,
            cancel,
            forward,
            questions: Some(&asker),
        }
        .run(first)
        .await
    }

    async fn notice_failure<T>(&self, result: &Result<T, RequestFailure>) {
        if matches!(result, Err(RequestFailure::Closed)) {
            let mut life = self.life.lock().await;
            self.notice_death(&mut life);
        }
    }

    /// Whether `tool` was found to run only as a task.
    pub(crate) fn runs_as_task(&self, tool: &str) -> bool {
        self.task_only
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tool)
    }

    /// Remembers that `tool` runs only as a task.
    pub(crate) fn remember_task_only(&self, tool: &str) {
        self.task_only
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(tool.to_string());
    }

    /// The live connection's peer, starting the server as needed (for resources and prompts).
    pub(crate) async fn peer(&self) -> Result<rmcp::Peer<rmcp::RoleClient>, McpError> {
        Ok(self.connection().await?.peer().clone())
    }

    /// What the server shares with its connection's handler.
    /// What scrubs this server's own secrets out of what it sends back (see `redact.rs`).
    pub(crate) fn redactor(&self) -> &crate::redact::Redactor {
        &self.shared.redactor
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// The live connection, starting or restarting the server as needed.
    async fn connection(&self) -> Result<Arc<Connection>, McpError> {
        if self.config.disabled {
            return Err(McpError::Disabled(self.config.name.clone()));
        }
        let mut life = self.life.lock().await;
        self.notice_death(&mut life);
        let failures = match &*life {
            Life::Running { connection, .. } => return Ok(Arc::clone(connection)),
            Life::Idle | Life::Stopped => 0,
            Life::Failed {
                error,
                failures,
                at,
            } => {
                let wait = backoff(*failures);
                let waited = at.elapsed();
                if waited < wait {
                    return Err(McpError::Backoff {
                        server: self.config.name.clone(),
                        last_error: error.clone(),
                        wait_secs: (wait - waited).as_secs().max(1),
                    });
                }
                *failures
            }
        };
        match Connection::open(&self.config, &self.options, Arc::clone(&self.shared)).await {
            Ok(connection) => {
                let connection = Arc::new(connection);
                *life = Life::Running {
                    connection: Arc::clone(&connection),
                    prior_failures: failures,
                };
                // A fresh process may offer other tools, and other views, than the last one, and
                // run other tools only as tasks.
                *self.tools.lock().unwrap_or_else(PoisonError::into_inner) = None;
                self.task_only
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clear();
                self.shared.resources.forget_views();
                Ok(connection)
            }
            Err(err) => {
                *life = Life::Failed {
                    error: err.to_string(),
                    failures: failures + 1,
                    at: Instant::now(),
                };
                Err(err)
            }
        }
    }

    /// Turns a running server whose connection is gone into a failed one.
    fn notice_death(&self, life: &mut Life) {
        let Life::Running {
            connection,
            prior_failures,
        } = &*life
        else {
            return;
        };
        if !connection.is_closed() {
            return;
        }
        let failures = if connection.connected_at.elapsed() >= HEALTHY_UPTIME {
            // It ran well for a while: restart at once.
            0
        } else {
            prior_failures + 1
        };
        let tail = self.shared.log.tail(3).join(" | ");
        let error = if tail.is_empty() {
            "the server exited".to_string()
        } else {
            format!("the server exited; its last stderr lines: {tail}")
        };
        *life = Life::Failed {
            error,
            failures,
            at: Instant::now(),
        };
    }
}

/// How long to wait before the next start after `failures` failures in a row.
fn backoff(failures: u32) -> Duration {
    if failures == 0 {
        return Duration::ZERO;
    }
    let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(16));
    FIRST_BACKOFF.saturating_mul(factor).min(MAX_BACKOFF)
}

/// Re-lists a server's tools whenever it says they changed, for as long as the server exists.
fn spawn_relister(server: Weak<McpServer>, dropped: CancellationToken) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let Some(shared) = server.upgrade().map(|server| Arc::clone(&server.shared)) else {
        return;
    };
    runtime.spawn(async move {
        loop {
            tokio::select! {
                () = shared.tools_changed.notified() => {}
                () = dropped.cancelled() => return,
            }
            let Some(server) = server.upgrade() else {
                return;
            };
            let connection = match &*server.life.lock().await {
                Life::Running { connection, .. } => Arc::clone(connection),
                Life::Idle | Life::Failed { .. } | Life::Stopped => continue,
            };
            // The notices this listing answers: the version says the list is read up to them.
            let notices = shared
                .tool_notices
                .load(std::sync::atomic::Ordering::SeqCst);
            if server.relist(&connection).await.is_ok() {
                server
                    .tools_version
                    .send_modify(|version| *version = notices.max(*version + 1));
            }
        }
    });
}

/// One sentence for a failed request.
pub(crate) fn describe(failure: &RequestFailure) -> String {
    match failure {
        RequestFailure::Timeout(after) => format!("no answer within {} s", after.as_secs()),
        RequestFailure::Cancelled => "the request was cancelled".to_string(),
        RequestFailure::Closed => "the connection closed (the server may have exited)".to_string(),
        RequestFailure::Rpc(error) => format!("{} (code {})", error.message, error.code.0),
        RequestFailure::Other(message) => message.clone(),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn backoff_doubles_up_to_a_minute() {
        let secs: Vec<u64> = (0..9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(secs, vec![0, 1, 2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }
}
