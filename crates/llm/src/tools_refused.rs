//! Recognising a server that refuses `tools` because the model (or the server's setup) has
//! no function calling, which is when auto mode switches to prompt mode.
//!
//! Servers say it in their own words, with their own status, and there is no error code for
//! it, so the message is matched against the wordings real servers use:
//!
//! | server | status | message |
//! |---|---|---|
//! | Ollama | 400 | `registry.ollama.ai/library/gemma3:4b does not support tools` |
//! | llama.cpp `llama-server` without `--jinja` | 500 | `tools param requires --jinja flag` (and `tool_choice param …`) |
//! | older llama.cpp | 500 | `Cannot use tools with stream` |
//! | vLLM without a tool parser | 400 | `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set` |
//! | OpenRouter | 404 | `No endpoints found that support tool use.` |
//! | Bedrock-style gateways | 400 | `This model doesn't support tool use.` |
//!
//! Other wordings of the same ("tool calling is not supported", "does not support function
//! calling") are matched too. Only statuses that mean "not this request" count: a 401 or a
//! 429 that happens to mention tools is something else.

/// Lower-case fragments of the messages that say tools are unsupported.
const WORDINGS: &[&str] = &[
    "does not support tool",
    "doesn't support tool",
    "do not support tool",
    "not support function calling",
    "tools param requires --jinja",
    "tool_choice param requires --jinja",
    "cannot use tools with stream",
    "tool choice requires --enable-auto-tool-choice",
    "requires --tool-call-parser",
    "no endpoints found that support tool use",
    "tool use is not supported",
    "tools are not supported",
    "tool calling is not supported",
    "tool calls are not supported",
    "function calling is not supported",
];

/// Whether an HTTP error with this status and message says the server will not take `tools`.
pub(crate) fn tools_refused(status: u16, message: &str) -> bool {
    if !matches!(status, 400 | 404 | 422 | 500 | 501) {
        return false;
    }
    let message = message.to_ascii_lowercase();
    WORDINGS.iter().any(|wording| message.contains(wording))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_wordings_are_recognised() {
        let refusals = [
            (
                400,
                "registry.ollama.ai/library/deepseek-r1:latest does not support tools",
            ),
            (
                400,
                "registry.ollama.ai/library/Qwen3.5:0.8b does not support tools",
            ),
            (500, "tools param requires --jinja flag"),
            (500, "tool_choice param requires --jinja flag"),
            (500, "Cannot use tools with stream"),
            (
                400,
                "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set",
            ),
            (404, "No endpoints found that support tool use."),
            (400, "This model doesn't support tool use."),
            (
                400,
                "This model does not support tool use in streaming mode.",
            ),
            (422, "Tool calling is not supported for this model"),
        ];
        for (status, message) in refusals {
            assert!(tools_refused(status, message), "{status} {message}");
        }
    }

    #[test]
    fn other_errors_are_not_refusals() {
        let others = [
            (400, "messages: field required"),
            (400, "model 'x' not found, try pulling it first"),
            (401, "Invalid API key: this key does not support tools"),
            (429, "rate limit: does not support tools right now"),
            (500, "llama_decode failed"),
            (503, "does not support tools"),
        ];
        for (status, message) in others {
            assert!(!tools_refused(status, message), "{status} {message}");
        }
    }
}
