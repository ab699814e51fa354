//! The listening server: configuration, routes, the token check, and shutting down.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use futures::StreamExt;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tooltrail_host::Host;
use tooltrail_host::ToolContext;
use tooltrail_settings::Overrides;
use tower_http::limit::RequestBodyLimitLayer;

use crate::chat;
use crate::error::{ApiError, ErrorCodeTag, ServerError};
use crate::metrics::Metrics;
use crate::origin::{self, Origins, Verdict};
use crate::plan::DefaultTools;
use crate::sessions::Sessions;
use crate::state::AppState;
pub use crate::state::Approve;
use crate::token::Token;

/// How `tooltrail serve` was asked to run.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub addr: SocketAddr,
    /// Where requests without a session work, and every session without
    /// `session_workspaces`.
    pub workspace: PathBuf,
    /// Gives each session a folder of its own beneath this one.
    pub session_workspaces: Option<PathBuf>,
    /// How long a session may be idle before it expires.
    pub session_ttl: Duration,
    /// Requests answered at once; more are refused with 429.
    pub max_concurrent: usize,
    pub approve: Approve,
    /// `--token` or `TOOLTRAIL_SERVE_TOKEN`; otherwise the one kept in the config folder.
    pub token: Option<String>,
    /// The model flags, as `tooltrail ask` has them.
    pub overrides: Overrides,
    /// Largest request body, in bytes.
    pub body_limit: usize,
    /// How long running turns may go on after Ctrl+C or SIGTERM before they are cancelled.
    pub drain: Duration,
    /// What a request that declares no tools is offered (`--default-tools`).
    pub default_tools: DefaultTools,
    /// Web pages allowed to send requests (`--allow-origin`), by origin
    /// (`http://localhost:3000`); none by default.
    pub allowed_origins: Vec<String>,
}

impl ServeConfig {
    /// Loopback port 8080, the current folder, and the defaults of the flags.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            workspace: workspace.into(),
            session_workspaces: None,
            session_ttl: Duration::from_secs(3600),
            max_concurrent: 8,
            approve: Approve::Deny,
            token: None,
            overrides: Overrides::default(),
            body_limit: 4 * 1024 * 1024,
            drain: Duration::from_secs(10),
            default_tools: DefaultTools::None,
            allowed_origins: Vec::new(),
        }
    }
}

/// A bound server, ready to run.
pub struct Server {
    listener: TcpListener,
    state: Arc<AppState>,
    drain: Duration,
}

impl Server {
    /// Checks the configuration, finds the token and binds the address.
    pub async fn bind(config: ServeConfig, host: Arc<Host>) -> Result<Self, ServerError> {
        let given = config.token.filter(|token| !token.trim().is_empty());
        if given.is_none() && !config.addr.ip().is_loopback() {
            return Err(ServerError::NonLoopbackWithoutToken { addr: config.addr });
        }
        let token = match given {
            Some(token) => Token::given(token.trim()),
            None => Token::resolve(None, &tooltrail_settings::config_dir()?)?,
        };
        let shared =
            ToolContext::open(&config.workspace).map_err(|error| ServerError::Workspace {
                path: config.workspace.clone(),
                reason: error.to_string(),
            })?;
        let sessions = Sessions::new(shared, config.session_workspaces, config.session_ttl)?;
        let listener =
            TcpListener::bind(config.addr)
                .await
                .map_err(|source| ServerError::Bind {
                    addr: config.addr,
                    source,
                })?;
        // The address served as clients name it: with port 0, the port the OS chose.
        let served = listener.local_addr().map_err(|source| ServerError::Bind {
            addr: config.addr,
            source,
        })?;
        let max_concurrent = config.max_concurrent.max(1);
        let state = Arc::new(AppState {
            host,
            overrides: config.overrides,
            approve: config.approve,
            sessions: Arc::new(sessions),
            metrics: Arc::new(Metrics::default()),
            slots: Arc::new(Semaphore::new(max_concurrent)),
            max_concurrent,
            token,
            origins: Origins::new(served, &config.allowed_origins),
            default_tools: config.default_tools,
            body_limit: config.body_limit,
            draining: CancellationToken::new(),
            turns: CancellationToken::new(),
        });
        Ok(Self {
            listener,
            state,
            drain: config.drain,
        })
    }

    /// The address bound (with port 0, the port the OS chose).
    pub fn local_addr(&self) -> Result<SocketAddr, ServerError> {
        self.listener.local_addr().map_err(ServerError::Serve)
    }

    pub fn token(&self) -> &Token {
        &self.state.token
    }

    pub fn metrics(&self) -> Arc<Metrics> {
        Arc::clone(&self.state.metrics)
    }

    /// Serves until `shutdown` completes, then stops taking requests, lets running turns
    /// finish for the drain time, cancels the rest, and stops the MCP servers.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let Self {
            listener,
            state,
            drain,
        } = self;
        let sweeper = tokio::spawn(sweep(Arc::clone(&state)));
        let draining = state.draining.clone();
        let turns = state.turns.clone();
        // A streamed answer is many small writes; each goes out at once rather than waiting
        // for the client's delayed ACK.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let serving = axum::serve(listener, router(Arc::clone(&state)))
            .with_graceful_shutdown(async move {
                shutdown.await;
                draining.cancel();
            })
            .into_future();
        let deadline = {
            let draining = state.draining.clone();
            async move {
                draining.cancelled().await;
                tokio::time::sleep(drain).await;
                // Time is up: cancel what still runs, give the turns a moment to record
                // their end, and stop waiting for connections that do not close.
                turns.cancel();
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        };
        let result = tokio::select! {
            result = serving => result.map_err(ServerError::Serve),
            () = deadline => Ok(()),
        };
        sweeper.abort();
        state.turns.cancel();
        state.host.shutdown().await;
        result
    }
}

fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat::completions))
        .route("/api/chat/completions", post(chat::completions))
        .route("/v1/models", get(models))
        .route("/api/models", get(models))
        .route("/api/metrics", get(metrics_json))
        .route("/metrics", get(metrics_text))
        .fallback(|| async { ApiError::not_found() })
        .layer(RequestBodyLimitLayer::new(state.body_limit))
        .layer(middleware::from_fn_with_state(Arc::clone(&state), guard))
        .with_state(state)
}

/// Every request must be sent to the address served, from no web page but those allowed
/// ([`crate::origin`]), and needs the token; a body refused by the size limit gets OpenAI's
/// error shape.
async fn guard(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let chat = request.uri().path().ends_with("/chat/completions");
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
        .or_else(|| {
            request
                .uri()
                .authority()
                .map(|authority| authority.to_string())
        });
    let cors = match state
        .origins
        .check(request.method(), host.as_deref(), request.headers())
    {
        Verdict::Pass { cors } => cors,
        Verdict::Preflight(origin) => return origin::preflight(origin),
        Verdict::Refuse(error) => {
            if chat {
                state
                    .metrics
                    .request(started.elapsed(), false, Some(&error.code));
            }
            return error.into_response();
        }
    };
    let mut response = checked(&state, request, next, started, chat).await;
    if let Some(origin) = cors {
        origin::allow(&mut response, origin);
    }
    response
}

/// The token and the body's size, for a request that passed the origin checks.
async fn checked(
    state: &AppState,
    request: Request,
    next: Next,
    started: Instant,
    chat: bool,
) -> Response {
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|value| value.as_bytes());
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    let error = if !state.token.admits(authorization) {
        ApiError::unauthorized()
    } else if declared.is_some_and(|length| length > state.body_limit as u64) {
        drain(request.into_body()).await;
        ApiError::too_large(state.body_limit)
    } else {
        let response = next.run(request).await;
        let untagged_413 = response.status() == StatusCode::PAYLOAD_TOO_LARGE
            && response.extensions().get::<ErrorCodeTag>().is_none();
        if !untagged_413 {
            return response;
        }
        ApiError::too_large(state.body_limit)
    };
    // The chat handler counts its own requests; these never reached it.
    if chat {
        state
            .metrics
            .request(started.elapsed(), false, Some(&error.code));
    }
    error.into_response()
}

/// Reads and drops what the client is still sending (up to a bound), so that it is reading
/// when the error comes: a server that closes a connection with unread data makes the
/// system reset it, and the client then sees "connection reset" instead of the 413.
async fn drain(body: axum::body::Body) {
    const DRAIN_BYTES: usize = 64 * 1024 * 1024;
    const DRAIN_TIME: Duration = Duration::from_secs(10);
    let mut stream = body.into_data_stream();
    let mut read = 0;
    let _ = tokio::time::timeout(DRAIN_TIME, async {
        while let Some(Ok(chunk)) = stream.next().await {
            read += chunk.len();
            if read > DRAIN_BYTES {
                break;
            }
        }
    })
    .await;
}

/// `GET /v1/models`: the model requests are answered with.
async fn models(State(state): State<Arc<AppState>>) -> Response {
    let ctx = state.sessions.shared().clone();
    match state.host.engine(&state.overrides, ctx).await {
        Ok(engine) => axum::Json(json!({
            "object": "list",
            "data": [{
                "id": engine.agent.model(),
                "object": "model",
                "created": 0,
                "owned_by": "tooltrail",
            }],
        }))
        .into_response(),
        Err(error) => ApiError::from(error).into_response(),
    }
}

async fn metrics_json(State(state): State<Arc<AppState>>) -> Response {
    axum::Json(state.metrics.report()).into_response()
}

async fn metrics_text(State(state): State<Arc<AppState>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics.prometheus(),
    )
        .into_response()
}

/// Expires idle sessions: removes their folders and forgets their conversations' state.
async fn sweep(state: Arc<AppState>) {
    let every =
        (state.sessions.ttl() / 2).clamp(Duration::from_millis(100), Duration::from_secs(60));
    loop {
        tokio::time::sleep(every).await;
        for expired in state.sessions.expire(Instant::now()) {
            if let Some(conversation) = &expired.conversation {
                state.host.conversations().forget(conversation);
            }
            if let Some(folder) = expired.folder {
                let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(folder)).await;
            }
        }
    }
}
