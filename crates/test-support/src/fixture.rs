//! Streams captured from real servers, embedded so that tests need no files at run time.
//!
//! Each fixture is an HTTP response as it came over the wire: optional `#` comment lines (the
//! request that produced it), the status line, the headers, a blank line, and the body.

use std::path::Path;

use crate::error::SupportError;

/// The captured streams, by name (the file name without `.txt`).
const EMBEDDED: &[(&str, &[u8])] = &[
    (
        "llama-cpp-python-gemma3-270m-auto-empty",
        include_bytes!("../fixtures/sse/llama-cpp-python-gemma3-270m-auto-empty.txt"),
    ),
    (
        "llama-cpp-python-gemma3-270m-forced-function",
        include_bytes!("../fixtures/sse/llama-cpp-python-gemma3-270m-forced-function.txt"),
    ),
    (
        "llama-cpp-python-gemma3-270m-required-http500",
        include_bytes!("../fixtures/sse/llama-cpp-python-gemma3-270m-required-http500.txt"),
    ),
    (
        "llama-server-gemma3-270m-auto-nocall",
        include_bytes!("../fixtures/sse/llama-server-gemma3-270m-auto-nocall.txt"),
    ),
    (
        "llama-server-gemma3-270m-multi-call-truncated",
        include_bytes!("../fixtures/sse/llama-server-gemma3-270m-multi-call-truncated.txt"),
    ),
    (
        "llama-server-gemma3-270m-single-call",
        include_bytes!("../fixtures/sse/llama-server-gemma3-270m-single-call.txt"),
    ),
];

/// Headers that belong to one connection, not to the response: the replaying server sets
/// its own.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "content-length",
    "keep-alive",
    "transfer-encoding",
    "date",
];

/// A captured HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixture {
    pub name: String,
    /// The `#` lines before the status line, without their `# ` (the request, where kept).
    pub comments: Vec<String>,
    pub status: u16,
    /// The headers as captured, less the hop-by-hop ones.
    pub headers: Vec<(String, String)>,
    /// The body, byte for byte.
    pub body: Vec<u8>,
}

impl Fixture {
    /// The names of the embedded fixtures.
    pub fn names() -> Vec<&'static str> {
        EMBEDDED.iter().map(|(name, _)| *name).collect()
    }

    /// An embedded fixture by name (with or without `.txt`).
    pub fn load(name: &str) -> Result<Self, SupportError> {
        let name = name.strip_suffix(".txt").unwrap_or(name);
        let (name, bytes) = EMBEDDED
            .iter()
            .find(|(known, _)| *known == name)
            .ok_or_else(|| SupportError::UnknownFixture {
                name: name.to_string(),
                known: Self::names().join(", "),
            })?;
        Self::parse(name, bytes)
    }

    /// A fixture from a file, in the same format.
    pub fn from_path(path: &Path) -> Result<Self, SupportError> {
        let bytes = std::fs::read(path).map_err(|source| SupportError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let name = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self::parse(&name, &bytes)
    }

    /// Reads the captured format: comments, status line, headers, blank line, body.
    pub fn parse(name: &str, bytes: &[u8]) -> Result<Self, SupportError> {
        let bad = |reason: &str| SupportError::BadFixture {
            name: name.to_string(),
            reason: reason.to_string(),
        };
        let mut rest = bytes;
        let mut comments = Vec::new();
        let mut status = None;
        let mut headers = Vec::new();
        loop {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .ok_or_else(|| bad("the head does not end with a blank line"))?;
            let line = String::from_utf8_lossy(&rest[..end]);
            let line = line.strip_suffix('\r').unwrap_or(&line).to_string();
            rest = &rest[end + 1..];
            if status.is_none() {
                if let Some(comment) = line.strip_prefix('#') {
                    comments.push(comment.trim_start().to_string());
                    continue;
                }
                let code = line
                    .strip_prefix("HTTP/")
                    .and_then(|line| line.split_whitespace().nth(1))
                    .and_then(|code| code.parse::<u16>().ok())
                    .ok_or_else(|| bad("it has no `HTTP/1.1 STATUS` line"))?;
                status = Some(code);
                continue;
            }
            if line.is_empty() {
                break;
            }
            let (header, value) = line
                .split_once(':')
                .ok_or_else(|| bad("a header line has no colon"))?;
            if !HOP_BY_HOP.contains(&header.trim().to_ascii_lowercase().as_str()) {
                headers.push((header.trim().to_string(), value.trim().to_string()));
            }
        }
        Ok(Self {
            name: name.to_string(),
            comments,
            status: status.ok_or_else(|| bad("it has no status line"))?,
            headers,
            body: rest.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_embedded_fixture_parses() {
        for name in Fixture::names() {
            let fixture = Fixture::load(name).unwrap();
            assert_eq!(fixture.status, 200, "{name}");
            assert!(
                fixture.headers.iter().any(|(header, value)| header
                    .eq_ignore_ascii_case("content-type")
                    && value.starts_with("text/event-stream")),
                "{name}"
            );
        }
    }

    #[test]
    fn head_and_body_are_split() {
        let fixture = Fixture::parse(
            "x",
            b"# request: {}\nHTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\ndata: 1\n\n",
        )
        .unwrap();
        assert_eq!(
            fixture,
            Fixture {
                name: "x".into(),
                comments: vec!["request: {}".into()],
                status: 200,
                headers: vec![("Content-Type".into(), "text/event-stream".into())],
                body: b"data: 1\n\n".to_vec(),
            }
        );
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let error = Fixture::load("nope").unwrap_err().to_string();
        assert!(
            error.contains("llama-server-gemma3-270m-single-call"),
            "{error}"
        );
    }
}
