//! A stand-in for llama.cpp's `llama-server`, so that the runtime's supervisor (start, reuse,
//! idle stop, restart after a crash, dying with its parent, a port taken by someone else) is
//! tested on every CI run, beside the test against the real server.
//!
//! It takes the command line the supervisor gives llama-server (`--model`, `--alias`, `--host`,
//! `--port`, `--api-key` or `--api-key-file`, `--jinja`, `--ctx-size`, `--threads`,
//! `--parallel`, `--slot-save-path`; an unknown flag is an error, as it is for llama-server), refuses to start
//! without a model file or when its port is taken (with llama-server's words, which the
//! supervisor reads), and answers as llama-server does:
//!
//! - `GET /health` (and `/v1/health`): `503` while "loading", then `{"status":"ok"}`; public.
//! - `GET /v1/models` (and `/models`): the model under its alias; public.
//! - `GET /props`, `GET /slots`, `POST /v1/chat/completions`: only with the key
//!   (`Authorization: Bearer KEY`), else `401` with llama-server's error body. The chat
//!   answer is a canned sentence ([`CANNED_ANSWER`]), streamed as OpenAI chunks when asked,
//!   after `prompt_progress` chunks when `return_progress` is set. Its usage says how much of
//!   the prompt came from the slot (one token a character).
//! - `POST /apply-template`, `POST /completion` (reads a prompt into the slot),
//!   `POST /slots/0?action=save|restore` (in `--slot-save-path`; a file it did not write is
//!   refused with llama-server's words): the prefix a runtime keeps across starts.
//!
//! What a test needs beyond that comes from the environment, which the supervisor passes on:
//! `TOOLTRAIL_STAND_IN_LOAD_MS` (how long `/health` says it is loading),
//! `TOOLTRAIL_STAND_IN_CHUNK_MS` (a pause before each streamed chunk, to keep a request in
//! flight), and `TOOLTRAIL_STAND_IN_SQUATTER` (`keyless` or `keyed`): before binding its
//! port, the stand-in starts another process of its own that takes the port first, as another
//! local program could between the supervisor choosing the port and llama-server binding it.
//! That squatter answers every request with `200` (`keyless`), or refuses requests without a
//! key as llama-server would (`keyed`), and appends each request it gets to the file
//! `TOOLTRAIL_STAND_IN_SQUATTER_LOG` (`METHOD PATH key=yes|no`) after its own process id on
//! the first line. The stand-in itself then fails to bind, as llama-server would.

use std::convert::Infallible;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use clap::Parser;
use futures::StreamExt;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// What every chat request is answered.
pub const CANNED_ANSWER: &str = "The stand-in for llama-server answers this question.";

/// The environment variables a test sets (see the module's docs).
pub const LOAD_MS_ENV: &str = "TOOLTRAIL_STAND_IN_LOAD_MS";
pub const CHUNK_MS_ENV: &str = "TOOLTRAIL_STAND_IN_CHUNK_MS";
pub const SQUATTER_ENV: &str = "TOOLTRAIL_STAND_IN_SQUATTER";
pub const SQUATTER_LOG_ENV: &str = "TOOLTRAIL_STAND_IN_SQUATTER_LOG";

/// The hidden first argument of the squatter's process.
const SQUAT_ARG: &str = "__squat";
/// How long a squatter stays, should its test forget it.
const SQUATTER_LIFE: Duration = Duration::from_secs(120);

type Body = BoxBody<Bytes, Infallible>;

/// llama-server's flags, as far as the supervisor uses them.
#[derive(Debug, Parser)]
#[command(
    name = "llama-server",
    about = "A stand-in for llama.cpp's llama-server, for tests."
)]
struct Args {
    #[arg(short = 'm', long)]
    model: PathBuf,
    #[arg(short = 'a', long)]
    alias: Option<String>,
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    #[arg(long, default_value_t = 8080)]
    port: u16,
    #[arg(long)]
    api_key: Option<String>,
    #[arg(long)]
    api_key_file: Option<PathBuf>,
    #[arg(long)]
    jinja: bool,
    #[arg(short = 'c', long, default_value_t = 4096)]
    ctx_size: u32,
    #[arg(short = 't', long)]
    threads: Option<u32>,
    #[arg(short = 'n', long)]
    parallel: Option<u32>,
    #[arg(long)]
    slot_save_path: Option<PathBuf>,
}

struct Served {
    alias: String,
    model: PathBuf,
    ctx_size: u32,
    key: Option<String>,
    ready_at: Instant,
    chunk_delay: Duration,
    in_flight: AtomicUsize,
    slot_save_path: Option<PathBuf>,
    /// The text the slot holds: the last prompt read. A token is a character here.
    slot: std::sync::Mutex<String>,
}

/// Runs the stand-in with `args` (without the program's name); returns only on failure, with
/// what llama-server would say.
pub async fn run(args: Vec<OsString>) -> anyhow::Result<()> {
    if args.first().and_then(|arg| arg.to_str()) == Some(SQUAT_ARG) {
        return squat(&args[1..]).await;
    }
    let args = Args::parse_from(std::iter::once(OsString::from("llama-server")).chain(args));
    if !args.model.is_file() {
        anyhow::bail!(
            "failed to load model '{}': no such file",
            args.model.display()
        );
    }
    let key = match (&args.api_key, &args.api_key_file) {
        (Some(key), _) => Some(key.clone()),
        (None, Some(file)) => Some(
            std::fs::read_to_string(file)
                .with_context(|| format!("failed to read the API key file {}", file.display()))?
                .trim()
                .to_string(),
        ),
        (None, None) => None,
    };
    if let Some(dir) = args.slot_save_path.as_ref().filter(|dir| !dir.is_dir()) {
        anyhow::bail!(
            "error while handling argument \"--slot-save-path\": not a directory: {}",
            dir.display()
        );
    }
    if let Some(mode) = std::env::var_os(SQUATTER_ENV) {
        start_squatter(&args, mode).await?;
    }
    let listener = TcpListener::bind((args.host.as_str(), args.port))
        .await
        .map_err(|error| {
            anyhow::anyhow!(
                "couldn't bind HTTP server socket, hostname: {}, port: {}: {error}",
                args.host,
                args.port
            )
        })?;
    let served = Arc::new(Served {
        alias: args
            .alias
            .clone()
            .unwrap_or_else(|| args.model.display().to_string()),
        model: args.model.clone(),
        ctx_size: args.ctx_size,
        key,
        ready_at: Instant::now() + millis_from_env(LOAD_MS_ENV),
        chunk_delay: millis_from_env(CHUNK_MS_ENV),
        in_flight: AtomicUsize::new(0),
        slot_save_path: args.slot_save_path.clone(),
        slot: std::sync::Mutex::new(String::new()),
    });
    eprintln!(
        "main: server is listening on http://{}:{}",
        args.host, args.port
    );
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let served = Arc::clone(&served);
        tokio::spawn(async move {
            let service = service_fn(move |request| answer(request, Arc::clone(&served)));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn millis_from_env(name: &str) -> Duration {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .map_or(Duration::ZERO, Duration::from_millis)
}

async fn answer(
    request: Request<Incoming>,
    served: Arc<Served>,
) -> Result<Response<Body>, Infallible> {
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or_default().to_string();
    let method = request.method().clone();
    let keyed = served.key.as_deref().is_none_or(|key| {
        request
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            == Some(key)
    });
    let body = request
        .into_body()
        .collect()
        .await
        .map(|body| body.to_bytes())
        .unwrap_or_default();
    let public = matches!(
        path.as_str(),
        "/health" | "/v1/health" | "/models" | "/v1/models"
    );
    if !public && !keyed {
        return Ok(json_response(
            StatusCode::UNAUTHORIZED,
            &json!({"error": {"code": 401, "message": "Invalid API Key", "type": "authentication_error"}}),
        ));
    }
    Ok(match (&method, path.as_str()) {
        (&Method::GET, "/health" | "/v1/health") => {
            if Instant::now() < served.ready_at {
                json_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &json!({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}),
                )
            } else {
                json_response(StatusCode::OK, &json!({"status": "ok"}))
            }
        }
        (&Method::GET, "/models" | "/v1/models") => json_response(
            StatusCode::OK,
            &json!({"object": "list", "data": [{"id": served.alias, "object": "model", "created": 0, "owned_by": "llamacpp", "meta": {"n_ctx_train": served.ctx_size}}]}),
        ),
        (&Method::GET, "/props") => json_response(
            StatusCode::OK,
            &json!({
                "default_generation_settings": {"n_ctx": served.ctx_size},
                "total_slots": 1,
                "model_path": served.model.display().to_string(),
                "chat_template": "{% for message in messages %}{{ message.content }}{% endfor %}",
                "chat_template_caps": {"supports_tools": false},
            }),
        ),
        (&Method::GET, "/slots") => json_response(
            StatusCode::OK,
            &json!([{"id": 0, "n_ctx": served.ctx_size, "is_processing": served.in_flight.load(Ordering::SeqCst) > 0}]),
        ),
        (&Method::POST, "/v1/chat/completions" | "/chat/completions") => {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            chat(&served, &request)
        }
        (&Method::POST, "/apply-template") => {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            json_response(StatusCode::OK, &json!({"prompt": render(&request)}))
        }
        (&Method::POST, "/completion") => {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let prompt = request["prompt"].as_str().unwrap_or_default().to_string();
            let tokens = prompt.chars().count();
            *lock(&served.slot) = prompt;
            json_response(
                StatusCode::OK,
                &json!({"content": "", "tokens_evaluated": tokens, "stop": true}),
            )
        }
        (&Method::POST, "/slots/0") => {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            slot_action(
                &served,
                &query,
                request["filename"].as_str().unwrap_or_default(),
            )
        }
        _ => json_response(
            StatusCode::NOT_FOUND,
            &json!({"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}),
        ),
    })
}

/// A chat request as this stand-in's template renders it: each message on a line after its
/// role, the tools (as JSON) after the first system message, then the assistant's turn.
fn render(request: &Value) -> String {
    let mut prompt = String::new();
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    for (at, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or("user");
        let content = match &message["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        prompt.push_str(&format!("<|{role}|>{content}\n"));
        if at == 0
            && role == "system"
            && let Some(tools) = request.get("tools").filter(|tools| !tools.is_null())
        {
            prompt.push_str(&format!("<|tools|>{tools}\n"));
        }
    }
    prompt.push_str("<|assistant|>");
    prompt
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// What a slot file begins with; a file without it is refused as llama-server refuses one it
/// cannot read.
const SLOT_FILE_HEAD: &str = "stand-in slot\n";

/// `POST /slots/0?action=save|restore` with `{"filename": ...}` in `--slot-save-path`.
fn slot_action(served: &Served, query: &str, filename: &str) -> Response<Body> {
    let refuse = |status: StatusCode, message: &str| {
        json_response(
            status,
            &json!({"error": {"code": status.as_u16(), "message": message, "type": "invalid_request_error"}}),
        )
    };
    let Some(dir) = &served.slot_save_path else {
        return refuse(
            StatusCode::NOT_IMPLEMENTED,
            "This server does not support slots action.",
        );
    };
    if filename.is_empty() || filename.contains(['/', '\\']) || filename.starts_with('.') {
        return refuse(StatusCode::BAD_REQUEST, "Invalid filename");
    }
    let path = dir.join(filename);
    match query {
        "action=save" => {
            let slot = lock(&served.slot).clone();
            let text = format!("{SLOT_FILE_HEAD}{slot}");
            if std::fs::write(&path, &text).is_err() {
                return refuse(StatusCode::INTERNAL_SERVER_ERROR, "Unable to save slot");
            }
            json_response(
                StatusCode::OK,
                &json!({"id_slot": 0, "filename": filename, "n_saved": slot.chars().count(), "n_written": text.len()}),
            )
        }
        "action=restore" => {
            let read = std::fs::read_to_string(&path).ok();
            let Some(slot) = read
                .as_deref()
                .and_then(|text| text.strip_prefix(SLOT_FILE_HEAD))
            else {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "Unable to restore slot, no available space in KV cache or invalid slot save file",
                );
            };
            *lock(&served.slot) = slot.to_string();
            json_response(
                StatusCode::OK,
                &json!({"id_slot": 0, "filename": filename, "n_restored": slot.chars().count()}),
            )
        }
        _ => refuse(StatusCode::BAD_REQUEST, "Invalid action"),
    }
}

/// The canned answer, streamed word by word when the request asks for a stream. The prompt is
/// read against the slot: what it shares with the slot's text comes from the cache, as the
/// usage says, and the slot then holds it.
fn chat(served: &Arc<Served>, request: &Value) -> Response<Body> {
    let model = served.alias.clone();
    let prompt = render(request);
    let total = prompt.chars().count();
    let cached = {
        let mut slot = lock(&served.slot);
        let shared = slot
            .chars()
            .zip(prompt.chars())
            .take_while(|(a, b)| a == b)
            .count();
        *slot = prompt;
        shared
    };
    let usage = json!({"prompt_tokens": total, "completion_tokens": 9, "total_tokens": total + 9,
        "prompt_tokens_details": {"cached_tokens": cached}});
    if request.get("stream").and_then(Value::as_bool) != Some(true) {
        return json_response(
            StatusCode::OK,
            &json!({
                "id": "chatcmpl-stand-in", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": CANNED_ANSWER}}],
                "usage": usage,
            }),
        );
    }
    let chunk = |delta: Value, finish: Option<&str>, usage: Option<&Value>| {
        let mut chunk = json!({
            "id": "chatcmpl-stand-in", "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        if let Some(usage) = usage {
            chunk["usage"] = usage.clone();
        }
        format!("data: {chunk}\n\n")
    };
    let mut pieces = Vec::new();
    if request.get("return_progress").and_then(Value::as_bool) == Some(true) {
        let mut progress = json!({
            "id": "chatcmpl-stand-in", "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": null}, "finish_reason": null}],
        });
        for processed in [cached, total] {
            progress["prompt_progress"] =
                json!({"total": total, "cache": cached, "processed": processed, "time_ms": 1.0});
            pieces.push(format!("data: {progress}\n\n"));
        }
    }
    pieces.push(chunk(
        json!({"role": "assistant", "content": ""}),
        None,
        None,
    ));
    let words: Vec<&str> = CANNED_ANSWER.split_inclusive(' ').collect();
    pieces.extend(
        words
            .iter()
            .map(|word| chunk(json!({"content": word}), None, None)),
    );
    pieces.push(chunk(json!({}), Some("stop"), Some(&usage)));
    pieces.push("data: [DONE]\n\n".to_string());
    let delay = served.chunk_delay;
    let in_flight = InFlight::new(Arc::clone(served));
    let frames = futures::stream::iter(pieces).then(move |piece| {
        // Held by the stream: the request counts as in flight until its body is done or dropped.
        let _held = &in_flight;
        async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            Ok::<_, Infallible>(Frame::data(Bytes::from(piece)))
        }
    });
    let mut response = Response::new(BodyExt::boxed(StreamBody::new(frames)));
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/event-stream"),
    );
    response
}

/// Counts a streamed answer as in flight for `/slots` while it lives.
struct InFlight(Arc<Served>);

impl InFlight {
    fn new(served: Arc<Served>) -> Self {
        served.in_flight.fetch_add(1, Ordering::SeqCst);
        Self(served)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from(body.to_string()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// Starts the squatter on the stand-in's port and waits until it listens there.
async fn start_squatter(args: &Args, mode: OsString) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("the stand-in could not find its own program")?;
    let log = std::env::var_os(SQUATTER_LOG_ENV).unwrap_or_default();
    std::process::Command::new(exe)
        .arg(SQUAT_ARG)
        .arg(&args.host)
        .arg(args.port.to_string())
        .arg(mode)
        .arg(log)
        .env_remove(SQUATTER_ENV)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("the squatter could not be started")?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect((args.host.as_str(), args.port))
        .await
        .is_err()
    {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the squatter did not take the port"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// The squatter: `__squat HOST PORT keyless|keyed LOG`.
async fn squat(args: &[OsString]) -> anyhow::Result<()> {
    let text: Vec<String> = args
        .iter()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let [host, port, mode, log] = text.as_slice() else {
        anyhow::bail!("the squatter takes HOST PORT MODE LOG");
    };
    let port: u16 = port
        .parse()
        .context("the squatter's port is not a number")?;
    let keyed_mode = mode == "keyed";
    let log = Arc::new(std::sync::Mutex::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("the squatter could not open {log}"))?,
    ));
    if let Ok(mut file) = log.lock() {
        writeln!(file, "{}", std::process::id())?;
    }
    let listener = TcpListener::bind((host.as_str(), port)).await?;
    let serving = async {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let log = Arc::clone(&log);
                    async move {
                        let key = request.headers().contains_key(hyper::header::AUTHORIZATION);
                        if let Ok(mut file) = log.lock() {
                            let _ = writeln!(
                                file,
                                "{} {} key={}",
                                request.method(),
                                request.uri().path(),
                                if key { "yes" } else { "no" }
                            );
                        }
                        let refused = keyed_mode && !key && request.uri().path() != "/health";
                        Ok::<_, Infallible>(if refused {
                            json_response(
                                StatusCode::UNAUTHORIZED,
                                &json!({"error": {"code": 401, "message": "Invalid API Key"}}),
                            )
                        } else {
                            json_response(StatusCode::OK, &json!({"status": "ok"}))
                        })
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    };
    let _ = tokio::time::timeout(SQUATTER_LIFE, serving).await;
    Ok(())
}
