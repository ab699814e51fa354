//! A model hub on loopback, laid out like Hugging Face's, for pulling models in tests.
//!
//! `HEAD` and `GET /{owner}/{repo}/resolve/{revision}/{file}` answer as the real hub does for
//! a file kept in large-file storage: the file's SHA-256 in `X-Linked-Etag` (quoted), its size
//! in `X-Linked-Size`, and either the file itself or, with [`HubOptions::redirect`], a `302` to
//! a content URL (`http://localhost:PORT/cdn/...`, another host name standing for the hub's
//! CDN, which sends the bytes without those headers). Byte ranges (`Range: bytes=N-`) are answered with `206`; a range past the end with
//! `416`. A file the repository does not have is a `404` (`X-Error-Code: EntryNotFound`), a
//! repository the hub does not know a `401` (`X-Error-Code: RepoNotFound`), as the real hub
//! answers a request without a token. Any revision is accepted.
//!
//! Faults for tests: break the connection after some bytes of the first downloads
//! ([`HubOptions::cut_after`]), advertise another SHA-256 than the file's
//! ([`HubOptions::advertised_sha256`]), send no size at all ([`HubOptions::hide_size`]), or
//! slow every chunk down ([`HubOptions::chunk_delay`]). Every request is recorded with its
//! `Range` header ([`HubServer::requests`]).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

use crate::error::SupportError;

// Unsync: a download's body is a stream that holds an open file.
type Body = UnsyncBoxBody<Bytes, std::io::Error>;

/// Bytes per chunk of a download.
const CHUNK: usize = 64 * 1024;

/// A file the hub serves.
#[derive(Debug, Clone)]
pub struct HubFile {
    /// `owner/name`.
    pub repo: String,
    /// The file's path in the repository.
    pub file: String,
    pub content: HubContent,
}

/// Where a served file's bytes come from.
#[derive(Debug, Clone)]
pub enum HubContent {
    Bytes(Arc<Vec<u8>>),
    /// A file on disk, read as it is served (a real model of hundreds of megabytes).
    Path(PathBuf),
}

impl HubFile {
    pub fn bytes(repo: &str, file: &str, bytes: Vec<u8>) -> Self {
        Self {
            repo: repo.to_string(),
            file: file.to_string(),
            content: HubContent::Bytes(Arc::new(bytes)),
        }
    }

    pub fn path(repo: &str, file: &str, path: impl Into<PathBuf>) -> Self {
        Self {
            repo: repo.to_string(),
            file: file.to_string(),
            content: HubContent::Path(path.into()),
        }
    }
}

/// How the hub behaves.
#[derive(Debug, Clone, Default)]
pub struct HubOptions {
    /// The loopback port; 0 for any free one.
    pub port: u16,
    /// Answer `resolve` URLs with a `302` to a content URL, as the real hub does.
    pub redirect: bool,
    /// Break the connection after this many bytes of a download's body, for the first
    /// `.1` downloads.
    pub cut_after: Option<(u64, usize)>,
    /// Advertise this SHA-256 in `X-Linked-Etag` instead of the file's own.
    pub advertised_sha256: Option<String>,
    /// Send neither `X-Linked-Size` nor `Content-Length` (the body is chunked).
    pub hide_size: bool,
    /// Wait this long before each chunk of a download.
    pub chunk_delay: Duration,
    /// With `redirect`: where the redirect points instead of this hub's content URL on
    /// `localhost`: this text followed by `/cdn/{repo}/{file}` (another server's address, say,
    /// or a look-alike of this hub's own such as `//host:port` or `http://{hub}@host`, where
    /// `{hub}` stands for this hub's own `127.0.0.1:PORT`).
    pub redirect_to: Option<String>,
    /// With `redirect`: the redirect carries neither the SHA-256 nor the size, as the hub's
    /// redirects within itself (a renamed repository) do not.
    pub bare_redirect: bool,
}

/// A request the hub received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubRequest {
    pub method: String,
    pub path: String,
    /// The `Range` header, when there was one.
    pub range: Option<String>,
    /// Whether an `Authorization` header came with it.
    pub authorized: bool,
}

/// A hub on `127.0.0.1`, stopped when dropped.
#[derive(Debug)]
pub struct HubServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

#[derive(Debug)]
struct Served {
    file: HubFile,
    size: u64,
    sha256: String,
}

#[derive(Debug)]
struct Shared {
    files: Vec<Served>,
    options: HubOptions,
    requests: Mutex<Vec<HubRequest>>,
    downloads: AtomicUsize,
    addr: SocketAddr,
}

impl HubServer {
    /// Starts a hub serving `files`; each file's size and SHA-256 are worked out first (a file
    /// on disk is read once for it).
    pub async fn start(files: Vec<HubFile>, options: HubOptions) -> Result<Self, SupportError> {
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
        let mut served = Vec::new();
        for file in files {
            let (size, sha256) = match &file.content {
                HubContent::Bytes(bytes) => (
                    u64::try_from(bytes.len()).unwrap_or(u64::MAX),
                    sha256_hex(bytes),
                ),
                HubContent::Path(path) => {
                    let path = path.clone();
                    tokio::task::spawn_blocking(move || hash_file(&path))
                        .await
                        .map_err(|error| SupportError::Read {
                            path: file_name(&file),
                            source: std::io::Error::other(error),
                        })??
                }
            };
            served.push(Served { file, size, sha256 });
        }
        let shared = Arc::new(Shared {
            files: served,
            options,
            requests: Mutex::new(Vec::new()),
            downloads: AtomicUsize::new(0),
            addr,
        });
        let task = tokio::spawn(serve(listener, Arc::clone(&shared)));
        Ok(Self { addr, shared, task })
    }

    /// `http://127.0.0.1:PORT`, the value for `HF_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The SHA-256 of a served file, in lower-case hex.
    pub fn sha256(&self, repo: &str, file: &str) -> Option<String> {
        self.shared
            .find(repo, file)
            .map(|served| served.sha256.clone())
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<HubRequest> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The downloads (`GET`s of a file's bytes) received so far, in order.
    pub fn downloads(&self) -> Vec<HubRequest> {
        self.requests()
            .into_iter()
            .filter(|request| request.method == "GET")
            .collect()
    }
}

impl Drop for HubServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Shared {
    fn find(&self, repo: &str, file: &str) -> Option<&Served> {
        self.files
            .iter()
            .find(|served| served.file.repo == repo && served.file.file == file)
    }
}

fn file_name(file: &HubFile) -> String {
    format!("{}/{}", file.repo, file.file)
}

fn hash_file(path: &std::path::Path) -> Result<(u64, String), SupportError> {
    use sha2::Digest;
    use std::io::Read;
    let read_error = |source| SupportError::Read {
        path: path.display().to_string(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(read_error)?;
    let mut hasher = sha2::Sha256::new();
    let mut buffer = vec![0u8; 1024 * 1024];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buffer).map_err(read_error)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        size += u64::try_from(n).unwrap_or(0);
    }
    Ok((size, hex(&hasher.finalize())))
}

/// The SHA-256 of `bytes` in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    let shared = Arc::clone(&shared);
                    connections.spawn(async move {
                        let service = service_fn(move |request| handle(request, Arc::clone(&shared)));
                        // A broken connection (a scripted cut, a client that left) is expected.
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
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
    let range = request
        .headers()
        .get(hyper::header::RANGE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string);
    let path = request.uri().path().to_string();
    shared
        .requests
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(HubRequest {
            method: request.method().to_string(),
            path: path.clone(),
            range: range.clone(),
            authorized: request.headers().contains_key(hyper::header::AUTHORIZATION),
        });
    let head = request.method() == Method::HEAD;
    if request.method() != Method::GET && !head {
        return Ok(status(
            StatusCode::METHOD_NOT_ALLOWED,
            &[],
            "Method not allowed",
        ));
    }
    let path = percent_decode(&path);
    // /cdn/{owner}/{repo}/{file...}: the content URL a redirect points at.
    if let Some(rest) = path.strip_prefix("/cdn/") {
        let mut parts = rest.splitn(3, '/');
        let (Some(owner), Some(name), Some(file)) = (parts.next(), parts.next(), parts.next())
        else {
            return Ok(status(StatusCode::NOT_FOUND, &[], "Not found"));
        };
        let repo = format!("{owner}/{name}");
        return Ok(match shared.find(&repo, file) {
            Some(served) => content(&shared, served, range.as_deref(), head, false).await,
            None => status(StatusCode::NOT_FOUND, &[], "Not found"),
        });
    }
    // /{owner}/{repo}/resolve/{revision}/{file...}
    let parts: Vec<&str> = path.trim_start_matches('/').splitn(5, '/').collect();
    let [owner, name, "resolve", _revision, file] = parts.as_slice() else {
        return Ok(status(StatusCode::NOT_FOUND, &[], "Not found"));
    };
    let repo = format!("{owner}/{name}");
    let Some(served) = shared.find(&repo, file) else {
        let known = shared.files.iter().any(|served| served.file.repo == repo);
        return Ok(if known {
            status(
                StatusCode::NOT_FOUND,
                &[("X-Error-Code", "EntryNotFound")],
                "Entry not found",
            )
        } else {
            status(
                StatusCode::UNAUTHORIZED,
                &[("X-Error-Code", "RepoNotFound")],
                "Repository not found",
            )
        });
    };
    if shared.options.redirect {
        // Another host name for the same server, as the real hub's CDN is another host: a
        // client must not send the hub's token there.
        let base = shared
            .options
            .redirect_to
            .as_ref()
            .map(|base| base.replace("{hub}", &shared.addr.to_string()))
            .unwrap_or_else(|| format!("http://localhost:{}", shared.addr.port()));
        let location = format!("{base}/cdn/{}/{}", served.file.repo, served.file.file);
        let mut response = Response::builder()
            .status(StatusCode::FOUND)
            .header(hyper::header::LOCATION, location);
        if !shared.options.bare_redirect {
            response = response.header(
                "X-Linked-Etag",
                format!("\"{}\"", advertised(&shared, served)),
            );
            if !shared.options.hide_size {
                response = response.header("X-Linked-Size", served.size.to_string());
            }
        }
        return Ok(response
            .body(empty())
            .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR, &[], "")));
    }
    Ok(content(&shared, served, range.as_deref(), head, true).await)
}

fn advertised<'a>(shared: &'a Shared, served: &'a Served) -> &'a str {
    shared
        .options
        .advertised_sha256
        .as_deref()
        .unwrap_or(&served.sha256)
}

/// The file's bytes, or the requested range of them.
async fn content(
    shared: &Arc<Shared>,
    served: &Served,
    range: Option<&str>,
    head: bool,
    linked_headers: bool,
) -> Response<Body> {
    let size = served.size;
    let start = match range.map(parse_range) {
        None => None,
        Some(Some(start)) if start < size || (start == 0 && size == 0) => Some(start),
        Some(Some(_)) => {
            return status(
                StatusCode::RANGE_NOT_SATISFIABLE,
                &[("Content-Range", &format!("bytes */{size}"))],
                "",
            );
        }
        Some(None) => {
            return status(StatusCode::BAD_REQUEST, &[], "Bad range");
        }
    };
    let from = start.unwrap_or(0);
    let mut response = Response::builder()
        .status(if start.is_some() {
            StatusCode::PARTIAL_CONTENT
        } else {
            StatusCode::OK
        })
        .header("Accept-Ranges", "bytes")
        .header(hyper::header::ETAG, format!("\"{}\"", served.sha256));
    if linked_headers {
        response = response.header(
            "X-Linked-Etag",
            format!("\"{}\"", advertised(shared, served)),
        );
        if !shared.options.hide_size {
            response = response.header("X-Linked-Size", size.to_string());
        }
    }
    if !shared.options.hide_size {
        response = response.header(hyper::header::CONTENT_LENGTH, (size - from).to_string());
    }
    if start.is_some() {
        let last = size.saturating_sub(1);
        response = response.header("Content-Range", format!("bytes {from}-{last}/{size}"));
    }
    if head {
        return response
            .body(empty())
            .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR, &[], ""));
    }
    let number = shared.downloads.fetch_add(1, Ordering::SeqCst);
    let cut = shared
        .options
        .cut_after
        .filter(|(_, times)| number < *times)
        .map(|(bytes, _)| bytes);
    let body = body_stream(
        served.file.content.clone(),
        from,
        size,
        cut,
        shared.options.chunk_delay,
    );
    response
        .body(body)
        .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR, &[], ""))
}

/// `bytes=N-` or `bytes=N-M` (the end is ignored: downloads ask for the rest of the file).
fn parse_range(range: &str) -> Option<u64> {
    let spec = range.trim().strip_prefix("bytes=")?;
    let (start, _end) = spec.split_once('-')?;
    start.trim().parse().ok()
}

fn body_stream(
    content: HubContent,
    from: u64,
    size: u64,
    cut: Option<u64>,
    delay: Duration,
) -> Body {
    struct State {
        content: HubContent,
        file: Option<tokio::fs::File>,
        at: u64,
        sent: u64,
        size: u64,
        cut: Option<u64>,
        delay: Duration,
        broken: bool,
    }
    let state = State {
        content,
        file: None,
        at: from,
        sent: 0,
        size,
        cut,
        delay,
        broken: false,
    };
    let stream = futures::stream::unfold(state, |mut state| async move {
        if state.broken || state.at >= state.size {
            return None;
        }
        if let Some(cut) = state.cut
            && state.sent >= cut
        {
            // Let the bytes before the cut go out first: hyper sends what it holds when the
            // body has nothing ready, and drops it when the body fails.
            tokio::time::sleep(Duration::from_millis(50)).await;
            state.broken = true;
            let error = std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "the hub broke the connection, as the test asked",
            );
            return Some((Err(error), state));
        }
        if !state.delay.is_zero() {
            tokio::time::sleep(state.delay).await;
        }
        let mut want = u64::try_from(CHUNK)
            .unwrap_or(u64::MAX)
            .min(state.size - state.at);
        if let Some(cut) = state.cut {
            want = want.min(cut - state.sent).max(1);
        }
        let want = usize::try_from(want).unwrap_or(CHUNK);
        let chunk = match &state.content {
            HubContent::Bytes(bytes) => {
                let at = usize::try_from(state.at).unwrap_or(usize::MAX);
                Ok(Bytes::copy_from_slice(&bytes[at..at + want]))
            }
            HubContent::Path(path) => read_chunk(&mut state.file, path, state.at, want).await,
        };
        match chunk {
            Ok(chunk) => {
                let n = u64::try_from(chunk.len()).unwrap_or(0);
                state.at += n;
                state.sent += n;
                if n == 0 {
                    state.broken = true;
                }
                Some((Ok(Frame::data(chunk)), state))
            }
            Err(error) => {
                state.broken = true;
                Some((Err(error), state))
            }
        }
    });
    BodyExt::boxed_unsync(StreamBody::new(stream.boxed()))
}

async fn read_chunk(
    file: &mut Option<tokio::fs::File>,
    path: &std::path::Path,
    at: u64,
    want: usize,
) -> std::io::Result<Bytes> {
    if file.is_none() {
        let mut opened = tokio::fs::File::open(path).await?;
        opened.seek(std::io::SeekFrom::Start(at)).await?;
        *file = Some(opened);
    }
    let Some(file) = file.as_mut() else {
        return Err(std::io::Error::other("the file is not open"));
    };
    let mut buffer = vec![0u8; want];
    let mut filled = 0;
    while filled < want {
        let n = file.read(&mut buffer[filled..]).await?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    buffer.truncate(filled);
    Ok(Bytes::from(buffer))
}

fn empty() -> Body {
    Empty::<Bytes>::new()
        .map_err(|never: Infallible| match never {})
        .boxed_unsync()
}

fn status(code: StatusCode, headers: &[(&str, &str)], body: &str) -> Response<Body> {
    let mut response = Response::builder().status(code);
    for (name, value) in headers {
        response = response.header(*name, *value);
    }
    let body = Full::new(Bytes::from(body.to_string()))
        .map_err(|never: Infallible| match never {})
        .boxed_unsync();
    response.body(body).unwrap_or_else(|_| {
        let mut response = Response::new(empty());
        *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        response
    })
}

/// Decodes `%XX` escapes in a path (file names may hold spaces or `+`).
fn percent_decode(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(byte) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|digits| u8::from_str_radix(digits, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
