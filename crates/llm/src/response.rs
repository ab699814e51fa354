//! What comes back: the assembled answer and the pieces of a stream.

use tooltrail_protocol::{ToolCall, Usage};

/// Why the model stopped, as the server said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    Other(String),
}

impl FinishReason {
    /// Reads the wire word. `function_call` is the legacy name of `tool_calls`.
    pub fn parse(word: &str) -> Self {
        match word {
            "stop" | "eos" | "end_turn" => Self::Stop,
            "tool_calls" | "function_call" | "tool_use" => Self::ToolCalls,
            "length" | "max_tokens" => Self::Length,
            "content_filter" => Self::ContentFilter,
            other => Self::Other(other.to_string()),
        }
    }
}

/// A whole answer: assembled from a stream, or read from a non-streaming response.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatResponse {
    pub content: String,
    /// The calls to run, in the order the model began them. Every call has an id and a name; a
    /// call sent with no arguments at all gets `{}`. Arguments that are not JSON are kept as
    /// received when the answer finished normally: running the call then gives the model an
    /// error that quotes the problem.
    pub tool_calls: Vec<ToolCall>,
    /// Calls the model began but did not finish (no name, or arguments that are not JSON in an
    /// answer cut by its length limit): never run. Their arguments are the text as received.
    pub dropped_calls: Vec<ToolCall>,
    pub finish_reason: Option<FinishReason>,
    pub usage: Option<Usage>,
}

impl ChatResponse {
    /// Whether the model asked for tools. Decided from the calls collected, not from
    /// `finish_reason`: servers say `stop` after calls, or `tool_calls` with none complete.
    pub fn wants_tools(&self) -> bool {
        !self.tool_calls.is_empty()
    }
}

/// A piece of a streaming answer, passed to the caller as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta {
    Text(String),
    /// A tool call as it streams: `name` once known, then argument fragments.
    ///
    /// `index` is the call's position among the calls of this answer (0, 1, 2, ... in the order
    /// they began), which is not always the server's index: some servers reuse index 0 for
    /// every call. `id` is stable for the call (generated when the server sends none).
    ToolCall {
        index: u32,
        id: String,
        name: Option<String>,
        arguments: String,
    },
    Usage(Usage),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_reason_words() {
        assert_eq!(FinishReason::parse("stop"), FinishReason::Stop);
        assert_eq!(FinishReason::parse("tool_calls"), FinishReason::ToolCalls);
        assert_eq!(
            FinishReason::parse("function_call"),
            FinishReason::ToolCalls
        );
        assert_eq!(FinishReason::parse("length"), FinishReason::Length);
        assert_eq!(
            FinishReason::parse("content_filter"),
            FinishReason::ContentFilter
        );
        assert_eq!(
            FinishReason::parse("abort"),
            FinishReason::Other("abort".into())
        );
    }
}
