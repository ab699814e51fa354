//! What the scripted server answers, one reply per chat request, in order.

use std::time::Duration;

use serde_json::{Value, json};

use crate::error::SupportError;
use crate::fixture::Fixture;

/// Token counts every scripted answer reports.
pub const SCRIPTED_USAGE: (u32, u32, u32) = (10, 5, 15);

/// How many bytes a replayed fixture or raw body is written in, so that lines and events
/// arrive split across network chunks as they do from real servers.
pub const DEFAULT_WRITE_SIZE: usize = 16;

/// One scripted answer to `POST /v1/chat/completions`.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// An assistant answer, streamed as SSE when the request asked to stream (text in a few
    /// pieces, each call's arguments in several fragments, a usage chunk when
    /// `stream_options.include_usage` was asked, then `[DONE]`) and as one JSON
    /// `chat.completion` otherwise.
    Answer(Answer),
    /// SSE events made from chunk JSON values, whatever the request asked.
    Sse(SseReply),
    /// A status, headers and body bytes, sent as given in small writes.
    Raw(RawReply),
    /// A status with a JSON body (an error, say).
    Json(JsonReply),
    /// No answer at all: the request waits until the server is dropped.
    Hang,
}

/// An assistant answer: text and tool calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    pub text: String,
    pub tool_calls: Vec<ScriptedCall>,
    /// `stop`, or `tool_calls` when there are calls, unless set.
    pub finish_reason: Option<String>,
    /// Wait before each streamed chunk (or before a whole answer).
    pub delay: Duration,
    /// Stream only this many chunks, then break the connection: no finish, no `[DONE]`.
    pub cut_after: Option<usize>,
}

/// A tool call in a scripted answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptedCall {
    /// `call_N` (counting the server's calls from 1) unless set.
    pub id: Option<String>,
    pub name: String,
    /// JSON text, sent in fragments when streamed.
    pub arguments: String,
}

/// SSE events from chunk values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SseReply {
    /// Each becomes one `data: {json}` event.
    pub chunks: Vec<Value>,
    /// End with `data: [DONE]`.
    pub done: bool,
    /// Wait before each event.
    pub delay: Duration,
    /// Send only this many events, then break the connection (no `[DONE]`).
    pub cut_after: Option<usize>,
    pub headers: Vec<(String, String)>,
}

/// A body sent as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawReply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Bytes per network write.
    pub write_size: usize,
    /// Wait before each write.
    pub delay: Duration,
    /// Send only this many bytes, then break the connection.
    pub cut_after: Option<usize>,
}

/// A status with a JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonReply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// Wait before answering.
    pub delay: Duration,
}

impl Reply {
    /// An answer with this text, streamed in a few pieces.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Answer(Answer {
            text: text.into(),
            ..Answer::default()
        })
    }

    /// An answer with these parallel calls, `(name, arguments JSON text)`, each call's
    /// arguments streamed in several fragments.
    pub fn tool_calls(calls: &[(&str, &str)]) -> Self {
        Self::Answer(Answer {
            tool_calls: calls
                .iter()
                .map(|(name, arguments)| ScriptedCall {
                    id: None,
                    name: (*name).to_string(),
                    arguments: (*arguments).to_string(),
                })
                .collect(),
            ..Answer::default()
        })
    }

    /// SSE events from these chunk values, then `[DONE]`.
    pub fn sse(chunks: impl IntoIterator<Item = Value>) -> Self {
        Self::Sse(SseReply {
            chunks: chunks.into_iter().collect(),
            done: true,
            ..SseReply::default()
        })
    }

    /// A status with a JSON body.
    pub fn json(status: u16, body: Value) -> Self {
        Self::Json(JsonReply {
            status,
            headers: Vec::new(),
            body,
            delay: Duration::ZERO,
        })
    }

    /// An error status with OpenAI's error body: `{"error": {"message", "type", "code"}}`.
    pub fn error(status: u16, message: impl Into<String>) -> Self {
        Self::json(
            status,
            json!({ "error": { "message": message.into(), "type": "scripted_error", "code": status } }),
        )
    }

    /// A body sent byte for byte, with this status and content type.
    pub fn raw(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self::Raw(RawReply {
            status,
            headers: vec![("Content-Type".to_string(), content_type.to_string())],
            body: body.into(),
            write_size: DEFAULT_WRITE_SIZE,
            delay: Duration::ZERO,
            cut_after: None,
        })
    }

    /// A captured real-server response, replayed byte for byte in small writes (see
    /// [`Fixture`]).
    pub fn fixture(name: &str) -> Result<Self, SupportError> {
        Ok(Fixture::load(name)?.into())
    }

    /// No answer, until the server is dropped.
    pub fn hang() -> Self {
        Self::Hang
    }

    /// Text before the calls of an answer.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        if let Self::Answer(answer) = &mut self {
            answer.text = text.into();
        }
        self
    }

    /// The finish reason of an answer.
    pub fn finish_reason(mut self, reason: impl Into<String>) -> Self {
        if let Self::Answer(answer) = &mut self {
            answer.finish_reason = Some(reason.into());
        }
        self
    }

    /// Wait this long before each chunk or write (a slow stream), or before a JSON answer.
    pub fn delay(mut self, delay: Duration) -> Self {
        match &mut self {
            Self::Answer(answer) => answer.delay = delay,
            Self::Sse(sse) => sse.delay = delay,
            Self::Raw(raw) => raw.delay = delay,
            Self::Json(json) => json.delay = delay,
            Self::Hang => {}
        }
        self
    }

    /// Send this many chunks (or bytes, for a raw body), then break the connection: no
    /// finish reason, no `[DONE]`.
    pub fn cut_after(mut self, count: usize) -> Self {
        match &mut self {
            Self::Answer(answer) => answer.cut_after = Some(count),
            Self::Sse(sse) => sse.cut_after = Some(count),
            Self::Raw(raw) => raw.cut_after = Some(count),
            Self::Json(_) | Self::Hang => {}
        }
        self
    }

    /// An SSE reply without the closing `[DONE]`.
    pub fn without_done(mut self) -> Self {
        if let Self::Sse(sse) = &mut self {
            sse.done = false;
        }
        self
    }

    /// One more response header (`Retry-After`, say).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        let header = (name.to_string(), value.to_string());
        match &mut self {
            Self::Sse(sse) => sse.headers.push(header),
            Self::Raw(raw) => raw.headers.push(header),
            Self::Json(json) => json.headers.push(header),
            Self::Answer(_) | Self::Hang => {}
        }
        self
    }

    /// Bytes per network write of a raw body.
    pub fn write_size(mut self, size: usize) -> Self {
        if let Self::Raw(raw) = &mut self {
            raw.write_size = size.max(1);
        }
        self
    }
}

impl From<Fixture> for Reply {
    fn from(fixture: Fixture) -> Self {
        Self::Raw(RawReply {
            status: fixture.status,
            headers: fixture.headers,
            body: fixture.body,
            write_size: DEFAULT_WRITE_SIZE,
            delay: Duration::ZERO,
            cut_after: None,
        })
    }
}

/// What a reply needs to know of the request it answers.
#[derive(Debug, Clone)]
pub(crate) struct RequestContext {
    pub stream: bool,
    pub include_usage: bool,
    pub model: String,
}

impl RequestContext {
    pub fn of(body: &Value) -> Self {
        Self {
            stream: body["stream"].as_bool().unwrap_or(false),
            include_usage: body["stream_options"]["include_usage"]
                .as_bool()
                .unwrap_or(false),
            model: body["model"]
                .as_str()
                .unwrap_or("scripted-model")
                .to_string(),
        }
    }
}

/// A reply made concrete for one request: the head, then the body in pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Wait before the head.
    pub head_delay: Duration,
    pub pieces: Vec<Vec<u8>>,
    /// Wait before each piece.
    pub piece_delay: Duration,
    /// Break the connection after the pieces instead of ending the body.
    pub cut: bool,
}

impl Rendered {
    /// A status with a JSON body, at once.
    pub fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            headers: vec![content_type("application/json")],
            head_delay: Duration::ZERO,
            pieces: vec![body.to_string().into_bytes()],
            piece_delay: Duration::ZERO,
            cut: false,
        }
    }
}

impl Reply {
    /// The response for one request. `next_id` numbers calls that have no id. `None` for
    /// [`Reply::Hang`].
    pub(crate) fn render(
        &self,
        request: &RequestContext,
        next_id: &mut dyn FnMut() -> String,
    ) -> Option<Rendered> {
        match self {
            Self::Answer(answer) if request.stream => Some(render_sse(
                &answer.stream_chunks(request, next_id),
                &SseReply {
                    chunks: Vec::new(),
                    done: answer.cut_after.is_none(),
                    delay: answer.delay,
                    cut_after: answer.cut_after,
                    headers: Vec::new(),
                },
            )),
            Self::Answer(answer) => Some(Rendered {
                status: 200,
                headers: vec![content_type("application/json")],
                head_delay: answer.delay,
                pieces: vec![answer.whole(request, next_id).to_string().into_bytes()],
                piece_delay: Duration::ZERO,
                cut: false,
            }),
            Self::Sse(sse) => Some(render_sse(&sse.chunks, sse)),
            Self::Raw(raw) => {
                let body = match raw.cut_after {
                    Some(count) => &raw.body[..count.min(raw.body.len())],
                    None => &raw.body[..],
                };
                Some(Rendered {
                    status: raw.status,
                    headers: raw.headers.clone(),
                    head_delay: Duration::ZERO,
                    pieces: body
                        .chunks(raw.write_size.max(1))
                        .map(<[u8]>::to_vec)
                        .collect(),
                    piece_delay: raw.delay,
                    cut: raw.cut_after.is_some(),
                })
            }
            Self::Json(reply) => {
                let mut rendered = Rendered::json(reply.status, &reply.body);
                rendered.headers.extend(reply.headers.iter().cloned());
                rendered.head_delay = reply.delay;
                Some(rendered)
            }
            Self::Hang => None,
        }
    }
}

fn content_type(value: &str) -> (String, String) {
    ("Content-Type".to_string(), value.to_string())
}

fn render_sse(chunks: &[Value], sse: &SseReply) -> Rendered {
    let mut headers = vec![
        content_type("text/event-stream"),
        ("Cache-Control".to_string(), "no-cache".to_string()),
    ];
    headers.extend(sse.headers.iter().cloned());
    let mut pieces: Vec<Vec<u8>> = chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\n\n").into_bytes())
        .collect();
    let cut = match sse.cut_after {
        Some(count) => {
            pieces.truncate(count);
            true
        }
        None => {
            if sse.done {
                pieces.push(b"data: [DONE]\n\n".to_vec());
            }
            false
        }
    };
    Rendered {
        status: 200,
        headers,
        head_delay: Duration::ZERO,
        pieces,
        piece_delay: sse.delay,
        cut,
    }
}

impl Answer {
    fn finish(&self) -> String {
        self.finish_reason.clone().unwrap_or_else(|| {
            if self.tool_calls.is_empty() {
                "stop".to_string()
            } else {
                "tool_calls".to_string()
            }
        })
    }

    fn ids(&self, next_id: &mut dyn FnMut() -> String) -> Vec<String> {
        self.tool_calls
            .iter()
            .map(|call| call.id.clone().unwrap_or_else(&mut *next_id))
            .collect()
    }

    /// The chunks of the streamed answer, without `[DONE]`.
    fn stream_chunks(
        &self,
        request: &RequestContext,
        next_id: &mut dyn FnMut() -> String,
    ) -> Vec<Value> {
        let chunk = |delta: Value, finish: Value| {
            json!({
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": request.model,
                "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
            })
        };
        let mut chunks = vec![chunk(
            json!({ "role": "assistant", "content": "" }),
            Value::Null,
        )];
        for piece in pieces(&self.text, 3) {
            chunks.push(chunk(json!({ "content": piece }), Value::Null));
        }
        for (index, (call, id)) in self.tool_calls.iter().zip(self.ids(next_id)).enumerate() {
            chunks.push(chunk(
                json!({ "tool_calls": [{ "index": index, "id": id, "type": "function",
                    "function": { "name": call.name, "arguments": "" } }] }),
                Value::Null,
            ));
            for fragment in pieces(&call.arguments, 3) {
                chunks.push(chunk(
                    json!({ "tool_calls": [{ "index": index, "function": { "arguments": fragment } }] }),
                    Value::Null,
                ));
            }
        }
        chunks.push(chunk(json!({}), json!(self.finish())));
        if request.include_usage {
            chunks.push(json!({
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": request.model,
                "choices": [],
                "usage": usage(),
            }));
        }
        chunks
    }

    /// The answer as one `chat.completion`.
    fn whole(&self, request: &RequestContext, next_id: &mut dyn FnMut() -> String) -> Value {
        let mut message = json!({
            "role": "assistant",
            "content": if self.text.is_empty() && !self.tool_calls.is_empty() {
                Value::Null
            } else {
                json!(self.text)
            },
        });
        if !self.tool_calls.is_empty() {
            message["tool_calls"] = self
                .tool_calls
                .iter()
                .zip(self.ids(next_id))
                .map(|(call, id)| {
                    json!({ "id": id, "type": "function",
                        "function": { "name": call.name, "arguments": call.arguments } })
                })
                .collect();
        }
        json!({
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": request.model,
            "choices": [{ "index": 0, "message": message, "finish_reason": self.finish() }],
            "usage": usage(),
        })
    }
}

fn usage() -> Value {
    let (prompt, completion, total) = SCRIPTED_USAGE;
    json!({ "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total })
}

/// `text` in at most `count` pieces of about equal length, split between characters.
fn pieces(text: &str, count: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(count.max(1));
    chars
        .chunks(size)
        .map(|piece| piece.iter().collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn context(stream: bool) -> RequestContext {
        RequestContext {
            stream,
            include_usage: stream,
            model: "m".into(),
        }
    }

    #[test]
    fn text_is_split_between_characters() {
        assert_eq!(pieces("Hello", 3), vec!["He", "ll", "o"]);
        assert_eq!(pieces("héé", 3), vec!["h", "é", "é"]);
        assert_eq!(pieces("", 3), Vec::<String>::new());
    }

    #[test]
    fn a_streamed_answer_ends_with_done() {
        let mut n = 0;
        let rendered = Reply::tool_calls(&[("read_file", r#"{"path":"a"}"#)])
            .render(&context(true), &mut || {
                n += 1;
                format!("call_{n}")
            })
            .unwrap();
        let body = String::from_utf8(rendered.pieces.concat()).unwrap();
        assert!(body.contains(r#""id":"call_1""#), "{body}");
        assert!(body.contains(r#""finish_reason":"tool_calls""#), "{body}");
        assert!(body.contains(r#""usage""#), "{body}");
        assert!(body.ends_with("data: [DONE]\n\n"), "{body}");
        assert!(!rendered.cut);
    }

    #[test]
    fn a_whole_answer_is_one_completion() {
        let rendered = Reply::text("Hi")
            .render(&context(false), &mut || "x".into())
            .unwrap();
        let body: Value = serde_json::from_slice(&rendered.pieces.concat()).unwrap();
        assert_eq!(body["choices"][0]["message"]["content"], "Hi");
        assert_eq!(body["choices"][0]["finish_reason"], "stop");
    }

    #[test]
    fn a_cut_stream_has_no_done() {
        let rendered = Reply::text("Hello there")
            .cut_after(2)
            .render(&context(true), &mut || "x".into())
            .unwrap();
        assert_eq!(rendered.pieces.len(), 2);
        assert!(rendered.cut);
    }
}
