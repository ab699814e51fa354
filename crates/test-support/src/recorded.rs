//! What the scripted server received, for tests to assert what was sent.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

/// One request as the server received it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedRequest {
    pub method: String,
    /// The path without the query, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Header names in lower case; repeated headers joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON; `null` when empty, a string when it is not JSON.
    pub body: Value,
}

impl RecordedRequest {
    /// A header's value, by name in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// Whether this is a chat completion request.
    pub fn is_chat(&self) -> bool {
        self.method == "POST" && self.path.ends_with("/chat/completions")
    }
}
