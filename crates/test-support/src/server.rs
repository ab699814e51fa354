//! The scripted server: hyper on a loopback port, one task per connection, all of them
//! stopped when the [`ScriptedServer`] is dropped.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

use crate::error::SupportError;
use crate::recorded::RecordedRequest;
use crate::reply::{Rendered, Reply, RequestContext};

/// The model id `GET /v1/models` lists.
pub const SCRIPTED_MODEL: &str = "scripted-model";

type Body = BoxBody<Bytes, std::io::Error>;

/// How to start a [`ScriptedServer`].
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// The loopback port; 0 (the default) for any free one.
    pub port: u16,
    /// Append every request received to this file as one JSON line.
    pub record: Option<PathBuf>,
    /// Answer `GET /props` as llama.cpp's server does, with this context window (`n_ctx`).
    pub n_ctx: Option<u32>,
}

/// A scripted OpenAI-compatible server on `127.0.0.1`.
///
/// `POST /v1/chat/completions` is answered with the next [`Reply`] of the script; once the
/// script is used up, with HTTP 500 and a message saying so. `GET /v1/models` lists
/// [`SCRIPTED_MODEL`]. `GET /props` answers as llama.cpp does when
/// [`ServerOptions::n_ctx`] is set. Any other path is a 404 with OpenAI's error shape. Every request is
/// recorded. The server stops when dropped, breaking any connection still open.
#[derive(Debug)]
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

#[derive(Debug)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    /// Replies ever scripted, for the message once they are used up.
    scripted: AtomicUsize,
    requests: Mutex<Vec<RecordedRequest>>,
    record: Option<Mutex<std::fs::File>>,
    n_ctx: Option<u32>,
    /// Tool calls given a generated id so far.
    calls: AtomicUsize,
    /// Pieces of streamed bodies handed to a connection so far.
    pieces_sent: Arc<AtomicUsize>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ScriptedServer {
    /// Starts a server on a free loopback port with these replies.
    ///
    /// # Panics
    /// When no loopback port can be had, which leaves a test nothing to do.
    pub async fn start(replies: Vec<Reply>) -> Self {
        match Self::start_with(replies, ServerOptions::default()).await {
            Ok(server) => server,
            Err(error) => panic!("the scripted server could not start: {error}"),
        }
    }

    /// Starts a server with options (a fixed port, a record file).
    pub async fn start_with(
        replies: Vec<Reply>,
        options: ServerOptions,
    ) -> Result<Self, SupportError> {
        let listener = TcpListener::bind(("127.0.0.1", options.port))
            .await
            .map_err(|source| SupportError::Listen {
                port: options.port,
                source,
            })?;
        let addr = listener
            .local_addr()
            .map_err(|source| SupportError::Listen {
                port: options.port,
                source,
            })?;
        let record = match &options.record {
            Some(path) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|source| SupportError::Read {
                        path: path.display().to_string(),
                        source,
                    })?,
            )),
            None => None,
        };
        let shared = Arc::new(Shared {
            scripted: AtomicUsize::new(replies.len()),
            replies: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
            record,
            n_ctx: options.n_ctx,
            calls: AtomicUsize::new(0),
            pieces_sent: Arc::new(AtomicUsize::new(0)),
        });
        let task = tokio::spawn(serve(listener, Arc::clone(&shared)));
        Ok(Self { addr, shared, task })
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL to give a client.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// The chat completion requests received so far, in order.
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(RecordedRequest::is_chat)
            .collect()
    }

    /// Adds a reply at the end of the script.
    pub fn push(&self, reply: Reply) {
        self.shared.scripted.fetch_add(1, Ordering::SeqCst);
        lock(&self.shared.replies).push_back(reply);
    }

    /// How many pieces of streamed bodies (SSE chunks, for a scripted stream) the server has
    /// written so far. A client that stops reading a long stream and closes it leaves the rest
    /// unwritten.
    pub fn pieces_sent(&self) -> usize {
        self.shared.pieces_sent.load(Ordering::SeqCst)
    }

    /// Replies not yet served.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.replies).len()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        // The connection tasks live in a JoinSet inside this task: aborting it aborts them.
        self.task.abort();
    }
}

async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // As model servers do: a stream's small writes go out at once instead of
                    // waiting, under Nagle's algorithm, for the client's delayed ACK (40 ms
                    // per answer on a kept-alive connection).
                    let _ = stream.set_nodelay(true);
                    let shared = Arc::clone(&shared);
                    connections.spawn(async move {
                        let service = service_fn(move |request| {
                            handle(request, Arc::clone(&shared))
                        });
                        // A connection that breaks (a client that hung up, a scripted cut)
                        // is nothing to report.
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
                // Out of file descriptors, say: try again shortly.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn handle(
    request: Request<Incoming>,
    shared: Arc<Shared>,
) -> Result<Response<Body>, Infallible> {
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let mut headers = BTreeMap::<String, String>::new();
    for (name, value) in request.headers() {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        headers
            .entry(name.as_str().to_string())
            .and_modify(|seen| {
                seen.push_str(", ");
                seen.push_str(&value);
            })
            .or_insert(value);
    }
    let bytes = request
        .into_body()
        .collect()
        .await
        .map(|body| body.to_bytes())
        .unwrap_or_default();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    let recorded = RecordedRequest {
        method,
        path,
        headers,
        body,
    };
    shared.record(&recorded);

    let rendered = match (recorded.method.as_str(), recorded.path.as_str()) {
        ("POST", "/v1/chat/completions") => {
            let reply = lock(&shared.replies).pop_front();
            match reply {
                Some(reply) => {
                    let context = RequestContext::of(&recorded.body);
                    let mut next_id =
                        || format!("call_{}", shared.calls.fetch_add(1, Ordering::SeqCst) + 1);
                    match reply.render(&context, &mut next_id) {
                        Some(rendered) => rendered,
                        None => std::future::pending().await,
                    }
                }
                None => {
                    let scripted = shared.scripted.load(Ordering::SeqCst);
                    error_reply(
                        500,
                        &format!(
                            "the scripted server has no reply left: its script had {scripted} \
                             and this is one request more"
                        ),
                        "script_exhausted",
                    )
                }
            }
        }
        ("GET", "/v1/models") => json_reply(
            200,
            json!({ "object": "list", "data": [
                { "id": SCRIPTED_MODEL, "object": "model", "created": 0, "owned_by": "tooltrail" }
            ] }),
        ),
        ("GET", "/props") if shared.n_ctx.is_some() => json_reply(
            200,
            json!({ "default_generation_settings": { "n_ctx": shared.n_ctx }, "total_slots": 1 }),
        ),
        (method, path) => error_reply(
            404,
            &format!("the scripted server has no {method} {path}"),
            "not_found",
        ),
    };
    Ok(respond(rendered, Arc::clone(&shared.pieces_sent)).await)
}

impl Shared {
    fn record(&self, request: &RecordedRequest) {
        if let Some(file) = &self.record
            && let Ok(line) = serde_json::to_string(request)
        {
            let mut file = lock(file);
            // A test that reads the file sees each request as soon as it was received.
            let _ = writeln!(file, "{line}").and_then(|()| file.flush());
        }
        lock(&self.requests).push(request.clone());
    }
}

fn json_reply(status: u16, body: Value) -> Rendered {
    Rendered::json(status, &body)
}

fn error_reply(status: u16, message: &str, kind: &str) -> Rendered {
    json_reply(
        status,
        json!({ "error": { "message": message, "type": kind, "code": status } }),
    )
}

async fn respond(rendered: Rendered, sent: Arc<AtomicUsize>) -> Response<Body> {
    if !rendered.head_delay.is_zero() {
        tokio::time::sleep(rendered.head_delay).await;
    }
    let mut response = Response::builder()
        .status(StatusCode::from_u16(rendered.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR));
    for (name, value) in &rendered.headers {
        response = response.header(name.as_str(), value.as_str());
    }
    let body = if rendered.piece_delay.is_zero() && !rendered.cut && rendered.pieces.len() <= 1 {
        Full::new(Bytes::from(rendered.pieces.concat()))
            .map_err(|never| match never {})
            .boxed()
    } else {
        pieces_body(rendered.pieces, rendered.piece_delay, rendered.cut, sent)
    };
    response.body(body).unwrap_or_else(|_| {
        // A scripted header that is not valid HTTP: say so rather than answer wrongly.
        let mut fallback = Response::new(
            Full::new(Bytes::from_static(
                b"{\"error\":{\"message\":\"the scripted reply has an invalid header\"}}",
            ))
            .map_err(|never| match never {})
            .boxed(),
        );
        *fallback.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        fallback
    })
}

/// A body written piece by piece (each a network write), waiting `delay` before each, and
/// broken off with an error after the last when `cut`.
fn pieces_body(pieces: Vec<Vec<u8>>, delay: Duration, cut: bool, sent: Arc<AtomicUsize>) -> Body {
    let frames = futures::stream::iter(pieces).then(move |piece| {
        let sent = Arc::clone(&sent);
        async move {
            if delay.is_zero() {
                // Give the connection a chance to write each piece on its own.
                tokio::task::yield_now().await;
            } else {
                tokio::time::sleep(delay).await;
            }
            sent.fetch_add(1, Ordering::SeqCst);
            Ok::<_, std::io::Error>(Frame::data(Bytes::from(piece)))
        }
    });
    let ending = futures::stream::iter(cut.then_some(())).then(|()| async {
        // Let the pieces already given reach the client before the connection breaks.
        tokio::time::sleep(Duration::from_millis(20)).await;
        Err(std::io::Error::other("the script cuts the stream here"))
    });
    BodyExt::boxed(StreamBody::new(frames.chain(ending)))
}
