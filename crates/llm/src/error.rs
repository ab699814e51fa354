//! Errors of the model client. Each displays as one sentence a user can act on, without a
//! trailing period, so that callers can embed it or finish it.

use serde_json::Value;
use tooltrail_protocol::ErrorCode;

/// The longest server message quoted in an error.
const MAX_MESSAGE_CHARS: usize = 300;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("the request was cancelled")]
    Cancelled,
    /// No connection could be made, after every try. `url` is the configured base URL.
    #[error("the model endpoint {url} could not be reached ({detail})")]
    Unreachable { url: String, detail: String },
    /// The server answered with an error status (after every try, for the ones that retry).
    /// `message` is the server's own explanation, shortened, possibly empty.
    #[error("{}", http_sentence(*.status, .message))]
    Http {
        status: u16,
        message: String,
        code: ErrorCode,
    },
    /// Nothing arrived for the idle timeout: no response head, or no chunk of a stream.
    #[error("the model endpoint sent nothing for {} {}; it may be overloaded, or the timeout too short", .secs, if *.secs == 1 { "second" } else { "seconds" })]
    Timeout { secs: u64 },
    #[error("the model endpoint sent a response that is not a valid chat completion: {0}")]
    InvalidResponse(String),
    /// The stream ended before the model finished (no finish reason, no `[DONE]`).
    #[error(
        "the model's answer broke off before it was finished (the stream ended without a finish reason), so none of it was run; the server's log may say why"
    )]
    Incomplete,
    /// The server reported an error in place of an answer.
    #[error("the model reported an error: {0}")]
    Model(String),
}

/// A tool mode word that is none of `native`, `prompt`, `auto`.
impl LlmError {
    /// The protocol code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Cancelled => ErrorCode::Internal,
            Self::Unreachable { .. } => ErrorCode::Unreachable,
            Self::Http { code, .. } => *code,
            Self::Timeout { .. } => ErrorCode::Timeout,
            Self::InvalidResponse(_) => ErrorCode::InvalidResponse,
            Self::Incomplete => ErrorCode::IncompleteResponse,
            Self::Model(_) => ErrorCode::ModelError,
        }
    }

    /// An error status with the server's explanation, coded by status.
    pub fn http(status: u16, message: impl Into<String>) -> Self {
        let code = match status {
            401 | 403 => ErrorCode::Unauthorized,
            404 => ErrorCode::NotFound,
            408 => ErrorCode::Timeout,
            429 => ErrorCode::RateLimited,
            500..=599 => ErrorCode::ServerError,
            _ => ErrorCode::BadRequest,
        };
        Self::Http {
            status,
            message: message.into(),
            code,
        }
    }

    /// A timeout after waiting `waited`, counted in whole seconds (at least one).
    pub(crate) fn timeout(waited: std::time::Duration) -> Self {
        let secs = waited.as_millis().div_ceil(1000).max(1);
        Self::Timeout {
            secs: u64::try_from(secs).unwrap_or(u64::MAX),
        }
    }
}

fn http_sentence(status: u16, message: &str) -> String {
    let what = match status {
        401 => "the model endpoint refused the API key",
        403 => "the model endpoint refused access",
        404 => "the model endpoint has no such model or address",
        408 => "the model endpoint gave up waiting for the request",
        429 => "the model endpoint is refusing requests as too many, even after waiting",
        500..=599 => "the model server failed",
        400..=499 => "the model endpoint rejected the request",
        _ => "the model endpoint answered with an unexpected status",
    };
    if message.is_empty() {
        format!("{what} (HTTP {status})")
    } else {
        format!("{what} (HTTP {status}): {message}")
    }
}

/// The explanation in an error body: OpenAI's `{"error": {"message"}}`, `{"error": "text"}`,
/// `{"message"}` or `{"detail"}` (FastAPI-based servers), an HTML page's title, or the text.
pub(crate) fn body_message(body: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        return error_message(&value);
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.starts_with('<') {
        return html_title(text).map(shorten).unwrap_or_default();
    }
    shorten(text)
}

/// The message of an error value, wherever it keeps it.
pub(crate) fn error_message(value: &Value) -> String {
    match value {
        Value::String(text) => shorten(text),
        Value::Object(object) => {
            for key in ["error", "message", "detail", "msg"] {
                match object.get(key) {
                    Some(Value::Null) | None => {}
                    Some(inner) => return error_message(inner),
                }
            }
            shorten(&value.to_string())
        }
        Value::Null => String::new(),
        other => shorten(&other.to_string()),
    }
}

fn html_title(html: &str) -> Option<&str> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title>")? + "<title>".len();
    let end = start + lower[start..].find("</title>")?;
    html.get(start..end)
}

/// One line, at most [`MAX_MESSAGE_CHARS`] characters.
fn shorten(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= MAX_MESSAGE_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(MAX_MESSAGE_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn messages_are_found_in_every_usual_body() {
        let bodies: [&[u8]; 7] = [
            br#"{"error": {"message": "Invalid API key", "type": "auth"}}"#,
            br#"{"error": "model 'x' not found"}"#,
            br#"{"detail": "Not Found"}"#,
            br#"{"object": "error", "message": "too long", "code": 400}"#,
            b"<html><head><title>502 Bad Gateway</title></head></html>",
            b"  upstream\n  timed out  ",
            b"",
        ];
        let messages: Vec<String> = bodies.iter().map(|body| body_message(body)).collect();
        assert_eq!(
            messages,
            vec![
                "Invalid API key",
                "model 'x' not found",
                "Not Found",
                "too long",
                "502 Bad Gateway",
                "upstream timed out",
                "",
            ]
        );
    }

    #[test]
    fn long_messages_are_cut() {
        let message = body_message("x".repeat(1000).as_bytes());
        assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS);
        assert!(message.ends_with('…'));
    }

    #[test]
    fn sentences() {
        assert_eq!(
            LlmError::http(401, "Invalid API key").to_string(),
            "the model endpoint refused the API key (HTTP 401): Invalid API key"
        );
        assert_eq!(
            LlmError::http(503, "").to_string(),
            "the model server failed (HTTP 503)"
        );
        assert_eq!(LlmError::http(429, "").code(), ErrorCode::RateLimited);
        assert_eq!(LlmError::http(422, "").code(), ErrorCode::BadRequest);
        assert_eq!(
            LlmError::timeout(std::time::Duration::from_millis(200)).to_string(),
            "the model endpoint sent nothing for 1 second; it may be overloaded, or the timeout too short"
        );
    }
}
