//! One live connection to a server: starting it (a child process or an HTTP session), the
//! handshake, and the requests we send.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use process_wrap::tokio::CommandWrap;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ErrorData, JsonObject, ServerResult,
};
use rmcp::model::{ProtocolVersion, RequestParamsMeta};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, PeerRequestOptions,
    RunningService, ServiceError,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{Peer, RoleClient, ServiceExt};
use serde::Serialize;
use tokio::sync::Mutex;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use tooltrail_protocol::ToolProgress;

use crate::auth::{ServerAuth, SignInClient};
use crate::config::{ServerConfig, Transport};
use crate::env::{login_shell_path, merge_paths, resolve_program, server_env};
use crate::error::McpError;
use crate::handler::{ElicitationPolicy, Handler, McpProgress, Shared};
use crate::http_layer::Layered;
use crate::noticing::Noticing;
use crate::standing_stream::{STANDING_STREAM_WAIT, StandingStream};

/// Stderr lines an error carries for display.
const STDERR_TAIL: usize = 20;
/// The handshake gets at least this long, whatever the call timeout (first `npx` runs download).
const MIN_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// A call that keeps reporting progress may run this many timeouts in all.
const MAX_TOTAL_TIMEOUTS: u32 = 10;

/// Where and how servers are started.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// The workspace: the default working folder of stdio servers, and the root we report.
    pub workspace: Option<PathBuf>,
    /// Merge the login shell's PATH into the PATH servers get (for apps started from a menu).
    pub login_shell_path: bool,
    pub elicitation: ElicitationPolicy,
    /// The server's sign-in, for HTTP servers (one per server, kept across reconnections).
    pub(crate) auth: Option<Arc<ServerAuth>>,
}

/// What the server told us in the handshake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub protocol_version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// How a request failed.
#[derive(Debug)]
pub(crate) enum RequestFailure {
    Timeout(Duration),
    Cancelled,
    /// The connection is gone (the process exited, the session ended).
    Closed,
    /// The server answered with a JSON-RPC error.
    Rpc(ErrorData),
    Other(String),
}

pub(crate) struct Connection {
    peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, Handler>>>,
    pub(crate) connected_at: Instant,
    pub(crate) handshake: Duration,
    pub(crate) info: Option<ServerInfo>,
    pub(crate) pid: Option<u32>,
}

impl Connection {
    pub(crate) async fn open(
        config: &ServerConfig,
        options: &ConnectOptions,
        shared: Arc<Shared>,
    ) -> Result<Self, McpError> {
        let workspace_uri = options.workspace.as_deref().map(file_uri);
        let handler = Handler::new(
            workspace_uri.clone(),
            options.elicitation,
            Arc::clone(&shared),
        );
        let opening = Opening {
            config,
            options,
            shared: &shared,
            handshake_timeout: config.timeout.max(MIN_HANDSHAKE_TIMEOUT),
        };
        let started = Instant::now();
        let (service, pid) = match &config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                opening
                    .stdio(handler, command, args, env, cwd.as_deref())
                    .await?
            }
            Transport::Http { url, headers } => (
                opening.http(handler, workspace_uri, url, headers).await?,
                None,
            ),
        };
        let handshake = started.elapsed();
        let info = server_info(&service);
        Ok(Self {
            peer: service.peer().clone(),
            service: Mutex::new(Some(service)),
            connected_at: Instant::now(),
            handshake,
            info,
            pid,
        })
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.peer.is_transport_closed()
    }

    /// Every tool, following `nextCursor` page by page.
    pub(crate) async fn list_tools(
        &self,
        timeout: Duration,
    ) -> Result<Vec<rmcp::model::Tool>, RequestFailure> {
        match tokio::time::timeout(timeout, self.peer.list_all_tools()).await {
            Err(_) => Err(RequestFailure::Timeout(timeout)),
            Ok(result) => result.map_err(failure),
        }
    }

    /// Calls one tool. The timeout restarts with every progress notification (up to
    /// [`MAX_TOTAL_TIMEOUTS`] in all); on timeout or `cancel` the server is sent
    /// `notifications/cancelled`. A call the server made a task comes back with the task
    /// (the Tasks extension's `CreateTaskResult`), for the caller to follow.
    pub(crate) async fn call_tool(
        &self,
        shared: &Shared,
        params: CallToolRequestParams,
        timeout: Duration,
        cancel: &CancellationToken,
        forward: Option<UnboundedSender<ToolProgress>>,
    ) -> (
        Result<CallToolResult, RequestFailure>,
        Vec<McpProgress>,
        Option<serde_json::Value>,
    ) {
        let tool = params.name.to_string();
        let mut task = None;
        let retry = params.clone();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let options = PeerRequestOptions::with_timeout(timeout)
            .reset_timeout_on_progress()
            .with_max_total_timeout(timeout.saturating_mul(MAX_TOTAL_TIMEOUTS));
        let handle = match self.peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(err) => return (Err(failure(err)), Vec::new(), None),
        };
        let token = handle.progress_token.clone();
        shared.progress.watch(&token, &tool, forward);
        let id = handle.id.clone();
        // If this future is dropped mid-call (the turn moved on), the server still hears of it.
        let mut guard = CancelOnDrop {
            peer: Some(self.peer.clone()),
            id: Some(id.clone()),
        };
        let outcome = tokio::select! {
            response = handle.await_response() => match response {
                Ok(ServerResult::CallToolResult(result)) => Ok(result),
                // SEP-2322: the server needs input (a form, the model, the roots) before it
                // answers. The SDK's helper asks our handler for each and sends the call again
                // with the answers and the server's requestState, round after round; it starts
                // from a fresh first round, which such a server answers the same way.
                Ok(ServerResult::InputRequiredResult(_)) => {
                    self.call_with_input_rounds(retry, timeout).await
                }
                // The Tasks extension: the server runs the call as a task, which the caller
                // follows (`task.rs`).
                Ok(ServerResult::CreateTaskResult(created)) => {
                    task = serde_json::to_value(created).ok();
                    Err(RequestFailure::Other("the server made the call a task".into()))
                }
                Ok(_) => Err(RequestFailure::Other(
                    "the server answered tools/call with something other than a tool result"
                        .into(),
                )),
                Err(err) => Err(failure(err)),
            },
            () = cancel.cancelled() => {
                let _ = self
                    .peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(id),
                        Some("the user stopped the call".to_string()),
                    ))
                    .await;
                Err(RequestFailure::Cancelled)
            }
        };
        guard.disarm();
        (outcome, shared.progress.finish(&token), task)
    }

    /// The session's peer, for the requests other modules send (resources, prompts).
    pub(crate) fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// A call driven through the server's input rounds (SEP-2322) by the SDK.
    async fn call_with_input_rounds(
        &self,
        params: CallToolRequestParams,
        timeout: Duration,
    ) -> Result<CallToolResult, RequestFailure> {
        let service = self.service.lock().await;
        let Some(service) = service.as_ref() else {
            return Err(RequestFailure::Closed);
        };
        let rounds = timeout.saturating_mul(MAX_TOTAL_TIMEOUTS);
        match tokio::time::timeout(rounds, service.call_tool(params)).await {
            Err(_) => Err(RequestFailure::Timeout(rounds)),
            Ok(result) => result.map_err(failure),
        }
    }

    /// Ends the session (and, for stdio, the process) within a few seconds.
    pub(crate) async fn close(&self) {
        let service = self.service.lock().await.take();
        if let Some(mut service) = service {
            let _ = service.close_with_timeout(Duration::from_secs(5)).await;
        }
    }
}

struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: Option<rmcp::model::RequestId>,
}

impl CancelOnDrop {
    fn disarm(&mut self) {
        self.peer = None;
        self.id = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let (Some(peer), Some(id)) = (self.peer.take(), self.id.take())
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(id),
                        Some("the call was abandoned".to_string()),
                    ))
                    .await;
            });
        }
    }
}

pub(crate) fn failure(err: ServiceError) -> RequestFailure {
    match err {
        ServiceError::Timeout { timeout } => RequestFailure::Timeout(timeout),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => RequestFailure::Closed,
        ServiceError::McpError(data) => RequestFailure::Rpc(data),
        ServiceError::Cancelled { .. } => RequestFailure::Cancelled,
        other => RequestFailure::Other(other.to_string()),
    }
}

/// A `tools/call` request: the tool, its arguments and, when traces are on, the W3C
/// `traceparent` of the call's span in `_meta` (SEP-414), so a server that traces files its work
/// under it.
pub(crate) fn call_request(
    tool: &str,
    arguments: JsonObject,
    traceparent: Option<&str>,
) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(tool.to_string());
    params.arguments = Some(arguments);
    if let Some(traceparent) = traceparent {
        params.set_traceparent(traceparent);
    }
    params
}

/// How an HTTP session starts: with the newest revision's `server/discover`, falling back to
/// `initialize` when the server answers that it does not know it (every server of a revision
/// before 2026-07-28), so old and new servers both work.
fn newest_then_initialize() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::LATEST],
        legacy_version: None,
    }
}

/// A server being started and shaken hands with.
struct Opening<'a> {
    config: &'a ServerConfig,
    options: &'a ConnectOptions,
    shared: &'a Arc<Shared>,
    handshake_timeout: Duration,
}

impl Opening<'_> {
    /// Starts the server's program and shakes hands over its stdin and stdout; the service and
    /// the program's process id.
    async fn stdio(
        &self,
        handler: Handler,
        command: &str,
        args: &[String],
        env: &std::collections::BTreeMap<String, crate::redact::ConfigValue>,
        cwd: Option<&Path>,
    ) -> Result<(RunningService<RoleClient, Handler>, Option<u32>), McpError> {
        let config = self.config;
        let child = spawn(command, args, env, cwd, self.options, self.shared)
            .await
            .map_err(|message| McpError::Start {
                server: config.name.clone(),
                message,
                stderr: Vec::new(),
            })?;
        let pid = child.id();
        let transport = Noticing::new(child, Arc::clone(self.shared));
        let served = tokio::time::timeout(self.handshake_timeout, handler.serve(transport)).await;
        Ok((
            finish_handshake(config, served, self.handshake_timeout, self.shared).await?,
            pid,
        ))
    }

    /// Starts a Streamable HTTP session with the newest revision, and again with `initialize`
    /// for a server of an older one.
    async fn http(
        &self,
        handler: Handler,
        workspace_uri: Option<String>,
        url: &str,
        headers: &std::collections::BTreeMap<String, crate::redact::ConfigValue>,
    ) -> Result<RunningService<RoleClient, Handler>, McpError> {
        let (config, options, shared) = (self.config, self.options, self.shared);
        let transport_config = StreamableHttpClientTransportConfig::with_uri(url)
            .custom_headers(http_headers(config, headers)?)
            .reinit_on_expired_session(true);
        let mut served = serve_http(
            config,
            handler,
            shared,
            transport_config.clone(),
            options.auth.as_ref(),
            newest_then_initialize(),
            self.handshake_timeout,
        )
        .await?;
        // A server that answers `server/discover` with something else than what it
        // discovers (an empty result, as some answer every method they do not know) is
        // of an older revision all the same: start again with `initialize`.
        if matches!(
            served,
            Ok(Err(ClientInitializeError::ExpectedInitResult(_)))
        ) {
            let handler = Handler::new(workspace_uri, options.elicitation, Arc::clone(shared));
            served = serve_http(
                config,
                handler,
                shared,
                transport_config,
                options.auth.as_ref(),
                ClientLifecycleMode::Initialize,
                self.handshake_timeout,
            )
            .await?;
        }
        let service = finish_handshake(config, served, self.handshake_timeout, shared).await;
        // A handshake that failed because the sign-in did is told as the sign-in's failure.
        if let (Err(_), Some(auth)) = (&service, &options.auth)
            && let Some(sign_in) = auth.take_error()
        {
            return Err(McpError::SignIn(sign_in));
        }
        service
    }
}

/// The `headers` of `mcp.json` as the HTTP client sends them.
fn http_headers(
    config: &ServerConfig,
    headers: &std::collections::BTreeMap<String, crate::redact::ConfigValue>,
) -> Result<HashMap<HeaderName, HeaderValue>, McpError> {
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| start_error(config, format!("{name:?} is not a valid header name")))?;
        let value = HeaderValue::from_str(value.expose())
            .map_err(|_| start_error(config, format!("the value of header {name} is not valid")))?;
        custom.insert(name, value);
    }
    Ok(custom)
}

/// What the server said of itself in the handshake.
fn server_info(service: &RunningService<RoleClient, Handler>) -> Option<ServerInfo> {
    service.peer_info().map(|info| ServerInfo {
        name: info
            .server_info
            .as_ref()
            .map(|server| server.name.clone())
            .unwrap_or_default(),
        version: info
            .server_info
            .as_ref()
            .map(|server| server.version.clone())
            .unwrap_or_default(),
        protocol_version: info.protocol_version.to_string(),
        instructions: info.instructions.clone(),
    })
}

type Served = Result<
    Result<RunningService<RoleClient, Handler>, ClientInitializeError>,
    tokio::time::error::Elapsed,
>;

/// Starts an HTTP session: the handshake in `mode`, within `timeout` (plus the time a sign-in
/// may take, which is the user's: the sign-in has its own limit).
async fn serve_http(
    config: &ServerConfig,
    handler: Handler,
    shared: &Arc<Shared>,
    transport_config: StreamableHttpClientTransportConfig,
    auth: Option<&Arc<ServerAuth>>,
    mode: ClientLifecycleMode,
    timeout: Duration,
) -> Result<Served, McpError> {
    let (served, standing) = match auth {
        // A server that may ask for sign-in: the SDK's OAuth client under ours.
        Some(auth) => {
            let client = SignInClient::new(Arc::clone(auth))
                .await
                .map_err(McpError::SignIn)?;
            let (client, standing) = StandingStream::new(Layered(client));
            let transport = StreamableHttpClientTransport::with_client(client, transport_config);
            let transport = Noticing::new(transport, Arc::clone(shared));
            let started = handler.serve_with_lifecycle(transport, mode);
            let served = tokio::time::timeout(timeout + auth.sign_in_wait(), started).await;
            (served, standing)
        }
        None => {
            let client = http_client().map_err(|message| start_error(config, message))?;
            let (client, standing) = StandingStream::new(client);
            let transport = StreamableHttpClientTransport::with_client(client, transport_config);
            let transport = Noticing::new(transport, Arc::clone(shared));
            let started = handler.serve_with_lifecycle(transport, mode);
            (tokio::time::timeout(timeout, started).await, standing)
        }
    };
    // Nothing is sent on a new session before its standing stream is answered (why: in
    // `standing_stream.rs`).
    if matches!(served, Ok(Ok(_))) {
        standing.wait(STANDING_STREAM_WAIT).await;
    }
    Ok(served)
}

/// The HTTP client of a session with no sign-in, as the SDK makes its own: no idle connections
/// kept (a reused one can stall on a delayed ACK), and only a same-origin 307 or 308 followed
/// (they keep the method and body; any other redirect would lose the message or carry the
/// session's headers to another host), at most ten times.
fn http_client() -> Result<reqwest::Client, String> {
    const MAX_REDIRECTS: usize = 10;
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .last()
            .is_some_and(|from| from.origin() == attempt.url().origin());
        let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
        if same_origin && keeps_body && attempt.previous().len() <= MAX_REDIRECTS {
            attempt.follow()
        } else {
            attempt.stop()
        }
    });
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(policy)
        .build()
        .map_err(|err| format!("the HTTP client could not be made ({err})"))
}

fn start_error(config: &ServerConfig, message: String) -> McpError {
    McpError::Start {
        server: config.name.clone(),
        message,
        stderr: Vec::new(),
    }
}

async fn finish_handshake(
    config: &ServerConfig,
    served: Served,
    timeout: Duration,
    shared: &Shared,
) -> Result<RunningService<RoleClient, Handler>, McpError> {
    let message = match served {
        Ok(Ok(service)) => return Ok(service),
        Ok(Err(err)) => handshake_message(&err),
        Err(_) => format!("no answer within {} s", timeout.as_secs()),
    };
    // Give a dying process a moment to finish writing its last words to stderr.
    tokio::time::sleep(Duration::from_millis(200)).await;
    Err(McpError::Handshake {
        server: config.name.clone(),
        // An HTTP error may quote the request it refused, headers and all.
        message: config.redactor().redact(&message).into_owned(),
        stderr: shared.log.tail(STDERR_TAIL),
    })
}

/// What a server that went away during the handshake is told as, whichever end closed first.
const CLOSED_BEFORE_ANSWERING: &str =
    "the server closed its output before answering (it may have exited)";

fn is_broken_pipe(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(error);
    while let Some(current) = source {
        if current
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        {
            return true;
        }
        source = current.source();
    }
    false
}

/// A handshake failure in words, without the SDK's type names.
fn handshake_message(err: &ClientInitializeError) -> String {
    match err {
        ClientInitializeError::ConnectionClosed(_) => CLOSED_BEFORE_ANSWERING.to_string(),
        // A server that exits at once can be gone before our request is written: the write
        // then fails with a broken pipe, which means the same to the user.
        ClientInitializeError::TransportError { error, .. }
            if is_broken_pipe(error.error.as_ref()) =>
        {
            CLOSED_BEFORE_ANSWERING.to_string()
        }
        ClientInitializeError::JsonRpcError(data) => {
            format!("the server refused it: {}", data.message)
        }
        // Both ways of starting failed: the older one's reason is what the server last said.
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => handshake_message(fallback),
        ClientInitializeError::TransportError { error, .. } => {
            let mut parts: Vec<String> = Vec::new();
            let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
            // The HTTP client's own error is not linked as a source; follow it by hand.
            if let Some(StreamableHttpError::Client(client)) = error
                .error
                .downcast_ref::<StreamableHttpError<reqwest::Error>>()
            {
                source = Some(client);
            }
            while let Some(current) = source {
                let text = current.to_string();
                let text = text
                    .strip_prefix("Client error: ")
                    .unwrap_or(&text)
                    .to_string();
                if !parts.iter().any(|part| part.contains(&text)) {
                    parts.push(text);
                }
                source = current.source();
            }
            parts.join(": ")
        }
        other => other.to_string(),
    }
}

async fn spawn(
    command: &str,
    args: &[String],
    env: &std::collections::BTreeMap<String, crate::redact::ConfigValue>,
    cwd: Option<&Path>,
    options: &ConnectOptions,
    shared: &Shared,
) -> Result<TokioChildProcess, String> {
    let workspace = match &options.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map_err(|err| format!("could not read the current folder: {err}"))?,
    };
    let cwd = match cwd {
        Some(dir) if dir.is_absolute() => dir.to_path_buf(),
        Some(dir) => workspace.join(dir),
        None => workspace,
    };
    let login = if options.login_shell_path {
        login_shell_path().await
    } else {
        None
    };
    // A PATH in the config's env is the server's PATH, and the one its program is found in.
    let path = match env.get("PATH") {
        Some(path) => Some(path.expose().into()),
        None => merge_paths(std::env::var_os("PATH").as_deref(), login.as_deref()),
    };
    let program = resolve_program(command, path.as_deref(), &cwd);
    let mut cmd = tokio::process::Command::new(&program);
    // The workspace's root is canonical, which on Windows is `\\?\C:\...`: cmd.exe, which runs
    // `npx.cmd`, takes such a folder for a network share it cannot start in and starts in the
    // Windows folder instead. `simplified` drops the prefix where the plain path means the same.
    cmd.args(args)
        .env_clear()
        .envs(server_env(path.as_deref(), env))
        .current_dir(dunce::simplified(&cwd));
    let mut wrapped = CommandWrap::from(cmd);
    // Its own process group (job object on Windows), so `npx` and the node it starts go together.
    #[cfg(unix)]
    wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
    #[cfg(windows)]
    wrapped.wrap(process_wrap::tokio::JobObject);
    wrapped.wrap(process_wrap::tokio::KillOnDrop);
    let (child, stderr) = TokioChildProcess::builder(wrapped)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => format!(
                "\"{command}\" was not found (searched the PATH{})",
                if cwd.is_dir() {
                    ""
                } else {
                    "; the working folder does not exist either"
                }
            ),
            _ => format!("\"{command}\" could not be run: {err}"),
        })?;
    if let Some(stderr) = stderr {
        shared.log.follow(stderr);
    }
    Ok(child)
}

/// What a `file:` URI has percent-encoded: all but RFC 3986's unreserved characters, the `/`
/// between parts and the `:` of a Windows drive.
const ENCODED_IN_FILE_URI: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b':');

/// `file:///path` for a folder, percent-encoding what a URI cannot hold. Not
/// `Url::from_file_path`: it takes only an absolute path of the system it runs on and leaves
/// more characters as they are, so the roots servers are told of would change.
pub(crate) fn file_uri(path: &Path) -> String {
    let text = without_verbatim_prefix(&path.to_string_lossy()).replace('\\', "/");
    let slash = if text.starts_with('/') { "" } else { "/" };
    format!(
        "file://{slash}{}",
        utf8_percent_encode(&text, ENCODED_IN_FILE_URI)
    )
}

/// `path` without the `\\?\` that `canonicalize` puts before every path on Windows (the
/// workspace's root is such a path there): `\\?\C:\w` is `C:\w`, `\\?\UNC\host\share` is
/// `\\host\share`. A server told of `file:////%3F/C:/w` would find no folder.
fn without_verbatim_prefix(path: &str) -> std::borrow::Cow<'_, str> {
    if let Some(share) = path.strip_prefix(r"\\?\UNC\") {
        format!(r"\\{share}").into()
    } else if let Some(local) = path.strip_prefix(r"\\?\") {
        local.into()
    } else {
        path.into()
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn file_uris_are_encoded() {
        assert_eq!(
            file_uri(Path::new("/home/u/my proj")),
            "file:///home/u/my%20proj"
        );
        assert_eq!(file_uri(Path::new("C:\\w\\x")), "file:///C:/w/x");
        // As `canonicalize` gives the workspace's root on Windows.
        assert_eq!(
            file_uri(Path::new(r"\\?\C:\Users\me\my proj")),
            "file:///C:/Users/me/my%20proj"
        );
        assert_eq!(
            file_uri(Path::new(r"\\?\UNC\host\share\w")),
            file_uri(Path::new(r"\\host\share\w"))
        );
    }
}
