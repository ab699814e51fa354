//! Scripts: a JSON list of replies, for the `scripted-model` binary and for tests that keep
//! their script in a file.
//!
//! ```json
//! [
//!   {"tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}]},
//!   {"text": "The README says hello.", "delay_ms": 20},
//!   {"status": 429, "body": {"error": {"message": "slow down"}}, "headers": {"Retry-After": "1"}},
//!   {"fixture": "llama-server-gemma3-270m-single-call"},
//!   {"sse": [{"choices": [{"index": 0, "delta": {"content": "hi"}}]}], "done": false},
//!   {"raw": "not json", "status": 200, "content_type": "text/plain"},
//!   {"hang": true}
//! ]
//! ```
//!
//! Every reply takes `delay_ms` (before each chunk of a stream, or before a JSON answer);
//! answers, `sse` and `raw` take `cut_after` (chunks, or bytes for `raw`); answers take
//! `finish_reason`, calls an optional `id`. `status` alone answers OpenAI's error shape with
//! a generic message.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::SupportError;
use crate::reply::{Answer, Reply, ScriptedCall};

/// Reads a script file.
pub fn load_script(path: &Path) -> Result<Vec<Reply>, SupportError> {
    let text = std::fs::read_to_string(path).map_err(|source| SupportError::Read {
        path: path.display().to_string(),
        source,
    })?;
    parse_script(&text)
}

/// Reads a script's JSON text.
pub fn parse_script(text: &str) -> Result<Vec<Reply>, SupportError> {
    let value: Value = serde_json::from_str(text)?;
    let Value::Array(items) = value else {
        return Err(SupportError::ScriptNotAList);
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            parse_reply(item).map_err(|reason| SupportError::BadReply {
                index: index + 1,
                reason,
            })
        })
        .collect()
}

fn parse_reply(item: &Value) -> Result<Reply, String> {
    let Value::Object(fields) = item else {
        return Err("it is not a JSON object".into());
    };
    let reply = if fields.get("hang").and_then(Value::as_bool) == Some(true) {
        Reply::hang()
    } else if let Some(name) = fields.get("fixture") {
        let name = name.as_str().ok_or("`fixture` must be a name")?;
        Reply::fixture(name).map_err(|error| error.to_string())?
    } else if let Some(chunks) = fields.get("sse") {
        let chunks = chunks.as_array().ok_or("`sse` must be a list of chunks")?;
        let mut reply = Reply::sse(chunks.iter().cloned());
        if fields.get("done").and_then(Value::as_bool) == Some(false) {
            reply = reply.without_done();
        }
        reply
    } else if let Some(body) = fields.get("raw") {
        let body = body.as_str().ok_or("`raw` must be a string")?;
        let content_type = fields
            .get("content_type")
            .and_then(Value::as_str)
            .unwrap_or("text/plain");
        Reply::raw(
            status(fields)?.unwrap_or(200),
            content_type,
            body.as_bytes(),
        )
    } else if let Some(status) = status(fields)? {
        let body = fields.get("body").cloned().unwrap_or_else(|| {
            serde_json::json!({ "error": {
                "message": format!("scripted HTTP {status}"), "type": "scripted_error" } })
        });
        Reply::json(status, body)
    } else if fields.contains_key("text") || fields.contains_key("tool_calls") {
        Reply::Answer(answer(fields)?)
    } else {
        return Err(
            "it has none of `text`, `tool_calls`, `status`, `fixture`, `sse`, `raw`, `hang`".into(),
        );
    };
    let mut reply = reply;
    if let Some(headers) = fields.get("headers") {
        let headers = headers
            .as_object()
            .ok_or("`headers` must be an object of strings")?;
        for (name, value) in headers {
            let value = value
                .as_str()
                .ok_or("`headers` must be an object of strings")?;
            reply = reply.header(name, value);
        }
    }
    if let Some(delay) = fields.get("delay_ms") {
        let millis = delay.as_u64().ok_or("`delay_ms` must be a whole number")?;
        reply = reply.delay(Duration::from_millis(millis));
    }
    if let Some(count) = fields.get("cut_after") {
        let count = count.as_u64().ok_or("`cut_after` must be a whole number")?;
        reply = reply.cut_after(usize::try_from(count).unwrap_or(usize::MAX));
    }
    Ok(reply)
}

fn status(fields: &Map<String, Value>) -> Result<Option<u16>, String> {
    match fields.get("status") {
        None => Ok(None),
        Some(status) => status
            .as_u64()
            .and_then(|status| u16::try_from(status).ok())
            .filter(|status| (100..=999).contains(status))
            .map(Some)
            .ok_or_else(|| "`status` must be an HTTP status number".into()),
    }
}

fn answer(fields: &Map<String, Value>) -> Result<Answer, String> {
    let text = match fields.get("text") {
        None => String::new(),
        Some(text) => text.as_str().ok_or("`text` must be a string")?.to_string(),
    };
    let mut tool_calls = Vec::new();
    if let Some(calls) = fields.get("tool_calls") {
        let calls = calls.as_array().ok_or("`tool_calls` must be a list")?;
        for call in calls {
            let name = call["name"]
                .as_str()
                .ok_or("each tool call needs a `name`")?
                .to_string();
            let arguments = match &call["arguments"] {
                Value::Null => "{}".to_string(),
                // Arguments given as text are sent as they are, valid JSON or not.
                Value::String(text) => text.clone(),
                object => object.to_string(),
            };
            tool_calls.push(ScriptedCall {
                id: call["id"].as_str().map(str::to_string),
                name,
                arguments,
            });
        }
    }
    Ok(Answer {
        text,
        tool_calls,
        finish_reason: fields
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        delay: Duration::ZERO,
        cut_after: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn every_kind_of_reply() {
        let replies = parse_script(
            r#"[
                {"text": "Hello", "delay_ms": 5},
                {"tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}]},
                {"status": 429, "headers": {"Retry-After": "1"}},
                {"fixture": "llama-server-gemma3-270m-single-call.txt"},
                {"hang": true}
            ]"#,
        )
        .unwrap();
        assert_eq!(replies.len(), 5);
        assert_eq!(
            replies[0],
            Reply::text("Hello").delay(Duration::from_millis(5))
        );
        assert_eq!(
            replies[1],
            Reply::tool_calls(&[("read_file", r#"{"path":"README.md"}"#)])
        );
        assert_eq!(
            replies[2],
            Reply::json(
                429,
                json!({ "error": { "message": "scripted HTTP 429", "type": "scripted_error" } })
            )
            .header("Retry-After", "1")
        );
        assert_eq!(replies[4], Reply::Hang);
    }

    #[test]
    fn mistakes_name_the_reply() {
        let error = parse_script(r#"[{"text": "ok"}, {"what": 1}]"#).unwrap_err();
        assert_eq!(
            error.to_string(),
            "reply 2 of the script is not valid: it has none of `text`, `tool_calls`, `status`, `fixture`, `sse`, `raw`, `hang`"
        );
        assert!(parse_script(r#"{"text": "ok"}"#).is_err());
        assert!(parse_script(r#"[{"fixture": "nope"}]"#).is_err());
    }
}
