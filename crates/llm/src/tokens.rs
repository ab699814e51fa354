//! Counting tokens without the model's tokenizer.
//!
//! Every server tokenizes differently and none of the OpenAI-compatible ones says how before a
//! request is sent, so the count is an estimate, made to err on the high side: a request that
//! is estimated to fit must fit. Measured against a real tokenizer (Gemma 3's, through
//! llama.cpp's `/tokenize`): a `read_file` result of Rust code is 3.0 bytes a token, this
//! README 3.3, the tools' JSON schemas 4.0, and Chinese text 0.56 tokens a character. So ASCII
//! counts one token per 3 bytes and every other character one token, and each message adds
//! the few tokens its chat template wraps it in. The client then corrects the estimate by what
//! the server reported for its last request ([`Calibration`]), so a tokenizer that packs less
//! into a token than these figures is soon accounted for.

use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::Value;
use tooltrail_protocol::Message;

/// ASCII bytes per token, rounded down from the densest text measured.
const ASCII_BYTES_PER_TOKEN: usize = 3;
/// What a chat template adds around one message (role markers, separators).
pub(crate) const MESSAGE_OVERHEAD: u32 = 5;
/// What a chat template adds around the list of tools ("You may call these functions…").
pub(crate) const TOOLS_OVERHEAD: u32 = 100;

/// What one image part is counted as. Models spend from 256 (Gemma 3) to over 1,000 tokens
/// (a large picture at high detail) on an image; its base64 text says nothing of that.
pub(crate) const IMAGE_TOKENS: u32 = 1024;

/// The estimated number of tokens of `text`.
pub fn estimate_tokens(text: &str) -> u32 {
    let mut ascii = 0usize;
    let mut other = 0usize;
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
    }
    let tokens = ascii.div_ceil(ASCII_BYTES_PER_TOKEN) + other;
    u32::try_from(tokens).unwrap_or(u32::MAX)
}

/// The estimated number of tokens one message takes in a request (uncorrected: the client's
/// [`estimate_request`](crate::LlmClient::estimate_request) is the figure to trust; this one is
/// for weighing messages against each other).
pub fn estimate_message(message: &Message) -> u32 {
    let text = match message {
        Message::System { content } | Message::User { content } => estimate_tokens(content),
        Message::Assistant {
            content,
            tool_calls,
        } => tool_calls
            .iter()
            .fold(estimate_tokens(content), |sum, call| {
                sum.saturating_add(estimate_tokens(&call.name))
                    .saturating_add(estimate_tokens(&call.arguments))
                    .saturating_add(MESSAGE_OVERHEAD)
            }),
        Message::Tool { content, media, .. } => estimate_tokens(content).saturating_add(
            IMAGE_TOKENS.saturating_mul(u32::try_from(media.len()).unwrap_or(u32::MAX)),
        ),
    };
    text.saturating_add(MESSAGE_OVERHEAD)
}

/// The estimated number of tokens `tools` take in a request: their JSON as the `tools` field
/// carries it, and what a chat template adds around the list.
pub fn estimate_tools(tools: &[tooltrail_protocol::ToolSpec]) -> u32 {
    if tools.is_empty() {
        return 0;
    }
    let json: Vec<Value> = tools.iter().map(crate::request::tool_json).collect();
    TOOLS_OVERHEAD.saturating_add(estimate_tokens(&Value::Array(json).to_string()))
}

/// The estimated number of tokens a `/chat/completions` body puts in front of the model: each
/// message's text (and tool calls) with its template overhead, and the tools' JSON.
pub(crate) fn estimate_body(body: &Value) -> u32 {
    let mut total: u32 = 0;
    if let Some(messages) = body.get("messages").and_then(Value::as_array) {
        for message in messages {
            total = total.saturating_add(MESSAGE_OVERHEAD);
            match message.get("content") {
                Some(Value::String(content)) => {
                    total = total.saturating_add(estimate_tokens(content));
                }
                Some(Value::Array(parts)) => {
                    for part in parts {
                        let tokens = match part.get("text").and_then(Value::as_str) {
                            Some(text) => estimate_tokens(text),
                            None => IMAGE_TOKENS,
                        };
                        total = total.saturating_add(tokens);
                    }
                }
                _ => {}
            }
            if let Some(calls) = message.get("tool_calls") {
                total = total.saturating_add(estimate_tokens(&calls.to_string()));
            }
        }
    }
    if let Some(tools) = body.get("tools").filter(|tools| !tools.is_null()) {
        total = total
            .saturating_add(TOOLS_OVERHEAD)
            .saturating_add(estimate_tokens(&tools.to_string()));
    }
    total
}

/// How far the server's own counts exceed the estimates: the prompt tokens it reported for a
/// request divided by the estimate of that request, never below 1 (an estimate that is too
/// high only leaves room unused) and at most 3.
#[derive(Debug, Default)]
pub(crate) struct Calibration {
    /// The factor in thousandths; 0 until the server has reported a count.
    per_mille: AtomicU32,
}

impl Calibration {
    /// Learns from one request: estimated `estimate` tokens, the server counted `reported`.
    pub fn observe(&self, estimate: u32, reported: u32) {
        if estimate == 0 || reported == 0 {
            return;
        }
        let factor = u64::from(reported) * 1000 / u64::from(estimate);
        let factor = factor.clamp(1000, 3000);
        self.per_mille
            .store(u32::try_from(factor).unwrap_or(3000), Ordering::Relaxed);
    }

    /// `estimate` corrected by what was learned.
    pub fn apply(&self, estimate: u32) -> u32 {
        let factor = match self.per_mille.load(Ordering::Relaxed) {
            0 => 1000,
            factor => factor,
        };
        let corrected = (u64::from(estimate) * u64::from(factor)).div_ceil(1000);
        u32::try_from(corrected).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ascii_is_a_third_of_its_bytes_and_other_characters_one_each() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abc"), 1);
        assert_eq!(estimate_tokens("abcd"), 2);
        assert_eq!(estimate_tokens("这是一个"), 4);
        assert_eq!(estimate_tokens("a这"), 2);
    }

    #[test]
    fn a_body_counts_messages_calls_and_tools() {
        let body = json!({
            "model": "m",
            "messages": [
                { "role": "system", "content": "abcdef" },
                { "role": "assistant", "content": "", "tool_calls": [{ "id": "c" }] },
            ],
            "tools": [{ "type": "function" }],
        });
        let calls = estimate_tokens(r#"[{"id":"c"}]"#);
        let tools = estimate_tokens(r#"[{"type":"function"}]"#);
        assert_eq!(
            estimate_body(&body),
            MESSAGE_OVERHEAD + 2 + MESSAGE_OVERHEAD + calls + TOOLS_OVERHEAD + tools
        );
    }

    #[test]
    fn calibration_only_ever_raises_the_estimate() {
        let calibration = Calibration::default();
        assert_eq!(calibration.apply(100), 100);
        calibration.observe(100, 50);
        assert_eq!(calibration.apply(100), 100);
        calibration.observe(100, 150);
        assert_eq!(calibration.apply(100), 150);
        calibration.observe(100, 1000);
        assert_eq!(calibration.apply(100), 300);
    }
}
