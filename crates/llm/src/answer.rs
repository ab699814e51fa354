//! Reading an answer from a successful response, streamed or whole.
//!
//! The body's content type decides how it is read, not the `stream` flag that was sent:
//! some servers ignore `stream: true` and answer with one JSON object, and a few stream when
//! they were not asked to.

use reqwest::Response;
use reqwest::header::CONTENT_TYPE;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::assemble::Assembler;
use crate::config::LlmConfig;
use crate::error::{LlmError, error_message};
use crate::response::{ChatResponse, StreamDelta};
use crate::sse::{SseDecoder, SseEvent};
use crate::transport::{body_reader, read_body};
use crate::wire::WireCompletion;

/// The largest non-streaming body accepted.
const MAX_BODY: usize = 32 * 1024 * 1024;

/// Reads the answer in `response`, telling `on_delta` about each piece as it arrives. Once
/// `stop` is cancelled (by `on_delta` itself, typically), the stream is read no further and
/// closed, and what came so far is the answer, finished [`FinishReason::Stopped`].
pub(crate) async fn read_answer(
    response: Response,
    config: &LlmConfig,
    cancel: &CancellationToken,
    stop: &CancellationToken,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
) -> Result<ChatResponse, LlmError> {
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if content_type.contains("json") {
        let body = read_body(response, config, cancel, MAX_BODY).await?;
        let completion = parse_whole(&body)?;
        Assembler::from_completion(completion, on_delta)
    } else {
        read_stream(response, config, cancel, stop, on_delta).await
    }
}

/// A whole JSON response body.
pub(crate) fn parse_whole(body: &[u8]) -> Result<WireCompletion, LlmError> {
    serde_json::from_slice(body)
        .map_err(|_| LlmError::InvalidResponse(format!("it is not JSON ({})", describe_body(body))))
}

/// What a stream is doing once its events are read.
enum Progress {
    Continue,
    /// `[DONE]` arrived: the answer is complete, whatever else may follow.
    Done,
    /// The caller asked to read no further.
    Stopped,
}

async fn read_stream(
    response: Response,
    config: &LlmConfig,
    cancel: &CancellationToken,
    stop: &CancellationToken,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
) -> Result<ChatResponse, LlmError> {
    let mut reader = body_reader(response, config);
    let mut decoder = SseDecoder::default();
    let mut assembler = Assembler::default();
    let mut events = Vec::new();
    let mut saw_event = false;
    // Everything before the first event, to describe a body that turns out not to be a stream.
    let mut head = Vec::new();
    loop {
        match reader.next(cancel).await? {
            Some(Ok(chunk)) => {
                if !saw_event && head.len() < 200 {
                    head.extend_from_slice(&chunk[..chunk.len().min(200)]);
                }
                decoder.feed(&chunk, &mut events);
                saw_event |= !events.is_empty();
                match handle(&mut events, &mut assembler, false, stop, on_delta)? {
                    Progress::Done => return Ok(assembler.finish()),
                    // Dropping the reader closes the connection: llama.cpp, Ollama and vLLM
                    // stop generating when their client goes away.
                    Progress::Stopped => return Ok(assembler.stopped()),
                    Progress::Continue => {}
                }
            }
            // The body ended: its last event may lack the blank line that ends it.
            None => {
                decoder.finish(&mut events);
                saw_event |= !events.is_empty();
                match handle(&mut events, &mut assembler, true, stop, on_delta)? {
                    Progress::Done => return Ok(assembler.finish()),
                    Progress::Stopped => return Ok(assembler.stopped()),
                    Progress::Continue => {}
                }
                break;
            }
            // The connection broke: what was cut is not read.
            Some(Err(_)) => break,
        }
    }
    if assembler.has_finish_reason() {
        return Ok(assembler.finish());
    }
    if !saw_event && decoder.stray_line().is_some() {
        return Err(LlmError::InvalidResponse(format!(
            "it is not an event stream ({})",
            describe_body(&head)
        )));
    }
    Err(LlmError::Incomplete)
}

/// Reads decoded events into the assembler. `at_end`: these are the last events of a body
/// that closed, so one whose data does not parse was cut, not garbage.
fn handle(
    events: &mut Vec<SseEvent>,
    assembler: &mut Assembler,
    at_end: bool,
    stop: &CancellationToken,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
) -> Result<Progress, LlmError> {
    for event in events.drain(..) {
        if stop.is_cancelled() {
            return Ok(Progress::Stopped);
        }
        let data = event.data.trim();
        if event.event == "error" {
            let message = serde_json::from_str::<Value>(data)
                .map(|value| error_message(&value))
                .unwrap_or_else(|_| data.to_string());
            return Err(LlmError::Model(message));
        }
        if data == "[DONE]" {
            return Ok(Progress::Done);
        }
        if data.is_empty() {
            continue;
        }
        match serde_json::from_str::<WireCompletion>(data) {
            Ok(chunk) => assembler.push_chunk(chunk, &mut *on_delta)?,
            Err(_) if at_end => break,
            Err(_) => {
                return Err(LlmError::InvalidResponse(format!(
                    "an event is not a JSON chunk ({})",
                    describe_body(data.as_bytes())
                )));
            }
        }
    }
    if stop.is_cancelled() {
        return Ok(Progress::Stopped);
    }
    Ok(Progress::Continue)
}

/// A short quote of a body for an error message.
fn describe_body(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return "it is empty".to_string();
    }
    let quote: String = line.chars().take(60).collect();
    let more = if line.chars().count() > 60 { "…" } else { "" };
    format!("it begins with `{quote}{more}`")
}
