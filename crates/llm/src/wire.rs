//! What servers send, read leniently.
//!
//! Every field is optional and unknown fields are ignored: real servers add their own
//! (`timings`, `logprobs`, `reasoning_content`, `system_fingerprint`), send explicit `null`s,
//! and leave out what OpenAI always sends. A non-streaming `message` and a streaming `delta`
//! have the same fields, so one type reads both.

use serde::Deserialize;
use serde_json::Value;
use tooltrail_protocol::Usage;

/// A streaming chunk (`chat.completion.chunk`) or a whole response (`chat.completion`).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireCompletion {
    #[serde(default)]
    pub choices: Option<Vec<WireChoice>>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    /// An error reported in place of an answer, inside a stream or a 200 response.
    #[serde(default)]
    pub error: Option<Value>,
    /// `"error"` in vLLM's error shape, whose text is then in `message`.
    #[serde(default)]
    pub object: Option<String>,
    #[serde(default)]
    pub message: Option<Value>,
    /// llama.cpp's flag for an answer cut because the context window was full.
    #[serde(default)]
    pub truncated: Option<bool>,
    /// llama.cpp's report of how far it has read the prompt (asked for with
    /// `return_progress`).
    #[serde(default)]
    pub prompt_progress: Option<WirePromptProgress>,
}

/// llama.cpp's `prompt_progress`: tokens in the prompt, from the cache, read so far (the cached
/// ones included), and the milliseconds spent reading.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WirePromptProgress {
    #[serde(default)]
    pub total: u32,
    #[serde(default)]
    pub cache: u32,
    #[serde(default)]
    pub processed: u32,
    #[serde(default)]
    pub time_ms: f64,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireChoice {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub delta: Option<WireMessage>,
    #[serde(default)]
    pub message: Option<WireMessage>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireMessage {
    /// A string, `null`, or (some servers) a list of `{type: "text", text}` parts.
    #[serde(default)]
    pub content: Option<Value>,
    #[serde(default)]
    pub tool_calls: Option<Vec<WireToolCall>>,
    /// The legacy single-call field. Used only when `tool_calls` is absent.
    #[serde(default)]
    pub function_call: Option<WireFunction>,
}

impl WireMessage {
    /// The text of `content`, whatever shape it came in.
    pub fn text(&self) -> String {
        match &self.content {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|part| match part {
                    Value::String(text) => Some(text.as_str()),
                    Value::Object(part) => part.get("text").and_then(Value::as_str),
                    _ => None,
                })
                .collect(),
            _ => String::new(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireToolCall {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<WireFunction>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireFunction {
    #[serde(default)]
    pub name: Option<String>,
    /// A string fragment, or (some servers) the whole arguments as an object.
    #[serde(default)]
    pub arguments: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    #[serde(default)]
    pub completion_tokens: Option<u64>,
    #[serde(default)]
    pub total_tokens: Option<u64>,
}

impl WireUsage {
    pub fn to_usage(&self) -> Usage {
        let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let prompt = self.prompt_tokens.map_or(0, clamp);
        let completion = self.completion_tokens.map_or(0, clamp);
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: self
                .total_tokens
                .map_or(prompt.saturating_add(completion), clamp),
        }
    }
}

/// The `models` list of `GET /models`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireModels {
    #[serde(default)]
    pub data: Option<Vec<WireModel>>,
    /// Ollama's native shape, which some proxies pass through.
    #[serde(default)]
    pub models: Option<Vec<WireModel>>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireModel {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_in_every_shape() {
        let read = |content: Value| {
            serde_json::from_value::<WireMessage>(json!({ "content": content }))
                .map(|message| message.text())
                .unwrap_or_default()
        };
        assert_eq!(read(json!("hi")), "hi");
        assert_eq!(read(Value::Null), "");
        assert_eq!(
            read(json!([{ "type": "text", "text": "a" }, { "type": "text", "text": "b" }])),
            "ab"
        );
    }

    #[test]
    fn usage_total_is_filled_in() {
        let usage = WireUsage {
            prompt_tokens: Some(3),
            completion_tokens: Some(4),
            total_tokens: None,
        };
        assert_eq!(
            usage.to_usage(),
            Usage {
                prompt_tokens: 3,
                completion_tokens: 4,
                total_tokens: 7
            }
        );
    }
}
