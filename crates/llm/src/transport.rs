//! HTTP: one request with its retries, error statuses turned into sentences, and bodies read
//! chunk by chunk under the idle timeout, all abandoned the moment the caller cancels.

use std::error::Error as _;
use std::future::Future;
use std::time::SystemTime;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::header::{ACCEPT, RETRY_AFTER};
use reqwest::{Method, Response};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::config::LlmConfig;
use crate::error::{LlmError, body_message};
use crate::retry::{backoff, is_retryable_status, parse_retry_after};
use crate::tools_refused::tools_refused;

/// The most of an error body read for its message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Runs `future` unless `cancel` fires first, in which case the future is dropped at once
/// (and with it any connection it held).
pub(crate) async fn cancellable<F: Future>(
    cancel: &CancellationToken,
    future: F,
) -> Result<F::Output, LlmError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(LlmError::Cancelled),
        output = future => Ok(output),
    }
}

/// Sends a request until it gets a success status, retrying 408, 429, 5xx and failed
/// connections up to `max_attempts` tries in all, waiting as `Retry-After` asks or with
/// jittered exponential back-off.
pub(crate) async fn send(
    http: &reqwest::Client,
    config: &LlmConfig,
    method: Method,
    path: &str,
    body: Option<&Value>,
    cancel: &CancellationToken,
) -> Result<Response, LlmError> {
    let url = config.endpoint(path);
    let max_attempts = config.max_attempts.max(1);
    let mut attempt = 1;
    loop {
        let mut request = http
            .request(method.clone(), &url)
            .header(ACCEPT, "application/json, text/event-stream");
        if let Some(key) = config.api_key.as_deref().filter(|key| !key.is_empty()) {
            // reqwest marks the header sensitive, so it stays out of its Debug output too.
            request = request.bearer_auth(key);
        }
        if let Some(traceparent) = crate::trace::current_traceparent() {
            request = request.header("traceparent", traceparent);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let sent = cancellable(
            cancel,
            tokio::time::timeout(config.idle_timeout, request.send()),
        )
        .await?;
        let (error, retry_after) = match sent {
            Err(_elapsed) => return Err(LlmError::timeout(config.idle_timeout)),
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) => {
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get(RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|value| parse_retry_after(value, SystemTime::now()));
                let body = read_error_body(response, config, cancel).await?;
                let message = body_message(&body);
                // llama.cpp refuses tools with a 500, which would otherwise be tried again;
                // the answer will not change, and auto mode is waiting for it.
                if !is_retryable_status(status) || tools_refused(status, &message) {
                    return Err(LlmError::http(status, message));
                }
                let error = LlmError::http(status, message);
                (error, retry_after)
            }
            Ok(Err(error)) => (unreachable(config, &error), None),
        };
        if attempt >= max_attempts {
            return Err(error);
        }
        let wait = retry_after
            .unwrap_or_else(|| backoff(attempt, config.retry_base_delay))
            .min(config.max_retry_delay);
        cancellable(cancel, tokio::time::sleep(wait)).await?;
        attempt += 1;
    }
}

/// The chunks of a body, each awaited under the idle timeout and the cancel token.
/// `Ok(None)` is the end of the body; `Ok(Some(Err(_)))` a connection that broke.
pub(crate) struct BodyReader<S> {
    chunks: S,
    idle_timeout: std::time::Duration,
}

impl<S> BodyReader<S>
where
    S: Stream<Item = reqwest::Result<Bytes>> + Unpin,
{
    pub async fn next(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<Option<reqwest::Result<Bytes>>, LlmError> {
        cancellable(
            cancel,
            tokio::time::timeout(self.idle_timeout, self.chunks.next()),
        )
        .await?
        .map_err(|_elapsed| LlmError::timeout(self.idle_timeout))
    }
}

pub(crate) fn body_reader(
    response: Response,
    config: &LlmConfig,
) -> BodyReader<impl Stream<Item = reqwest::Result<Bytes>> + Unpin> {
    BodyReader {
        chunks: Box::pin(response.bytes_stream()),
        idle_timeout: config.idle_timeout,
    }
}

/// A whole body, at most `limit` bytes. A connection that breaks before the end is an
/// incomplete answer.
pub(crate) async fn read_body(
    response: Response,
    config: &LlmConfig,
    cancel: &CancellationToken,
    limit: usize,
) -> Result<Vec<u8>, LlmError> {
    let mut reader = body_reader(response, config);
    let mut body = Vec::new();
    while let Some(chunk) = reader.next(cancel).await? {
        let chunk = chunk.map_err(|_| LlmError::Incomplete)?;
        body.extend_from_slice(&chunk);
        if body.len() > limit {
            return Err(LlmError::InvalidResponse(format!(
                "it is larger than {} MiB",
                limit / (1024 * 1024)
            )));
        }
    }
    Ok(body)
}

/// As much of an error body as helps to explain it; whatever arrived if it breaks off.
async fn read_error_body(
    response: Response,
    config: &LlmConfig,
    cancel: &CancellationToken,
) -> Result<Vec<u8>, LlmError> {
    let mut reader = body_reader(response, config);
    let mut body = Vec::new();
    loop {
        match reader.next(cancel).await {
            Ok(Some(Ok(chunk))) => {
                body.extend_from_slice(&chunk);
                if body.len() >= MAX_ERROR_BODY {
                    break;
                }
            }
            Err(LlmError::Cancelled) => return Err(LlmError::Cancelled),
            Ok(None) | Ok(Some(Err(_))) | Err(_) => break,
        }
    }
    Ok(body)
}

/// A failed connection, said plainly: the configured URL and what went wrong.
fn unreachable(config: &LlmConfig, error: &reqwest::Error) -> LlmError {
    LlmError::Unreachable {
        url: config.base_url.clone(),
        detail: connection_detail(config, error),
    }
}

fn connection_detail(config: &LlmConfig, error: &reqwest::Error) -> String {
    if error.is_connect() && error.is_timeout() {
        return format!(
            "no connection within {} seconds",
            config.connect_timeout.as_secs().max(1)
        );
    }
    let mut innermost: &dyn std::error::Error = error;
    let mut source = error.source();
    while let Some(next) = source {
        if let Some(io) = next.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind;
            let said = match io.kind() {
                ErrorKind::ConnectionRefused => Some("connection refused"),
                ErrorKind::ConnectionReset => Some("connection reset"),
                ErrorKind::ConnectionAborted => Some("connection aborted"),
                ErrorKind::TimedOut => Some("connection timed out"),
                ErrorKind::AddrNotAvailable => Some("address not available"),
                ErrorKind::HostUnreachable => Some("host unreachable"),
                ErrorKind::NetworkUnreachable => Some("network unreachable"),
                _ => None,
            };
            if let Some(said) = said {
                return said.to_string();
            }
        }
        innermost = next;
        source = next.source();
    }
    let text = innermost.to_string();
    if text.contains("dns error") || text.contains("failed to lookup address") {
        return "the host name could not be resolved".to_string();
    }
    text
}
