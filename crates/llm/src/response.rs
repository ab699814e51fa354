//! What comes back: the assembled answer and the pieces of a stream.

use tooltrail_protocol::{ToolCall, Usage};

use tooltrail_protocol::ToolMode;

/// Why the model stopped, as the server said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    /// Tooltrail stopped reading the answer before the server finished it (the model was
    /// repeating itself; see [`LlmClient::stream_until`](crate::LlmClient::stream_until)).
    /// Calls begun but not finished at that point are dropped, as at the length limit.
    Stopped,
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

    /// Whether the answer ended before the model was done: its last call may be incomplete.
    pub fn cut_short(&self) -> bool {
        matches!(self, Self::Length | Self::Stopped)
    }
}

/// A whole answer: assembled from a stream, or read from a non-streaming response.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// The answer's text. In prompt mode, without the `<tool_use>` blocks (they are in
    /// `tool_calls`), exactly as the [`StreamDelta::Text`] pieces added up.
    pub content: String,
    /// The calls to run, in the order the model began them. Every call has an id and a name.
    /// Its arguments are JSON text as the model wrote them (a call sent with no arguments at
    /// all gets `{}`); arguments that do not parse are kept, so that running the call tells
    /// the model what was wrong with them.
    pub tool_calls: Vec<ToolCall>,
    /// Calls the model began but did not finish (cut by `length`, no name, a `<tool_use>`
    /// block the answer ended inside): never run. Each says why, in a sentence that can be
    /// handed back to the model.
    pub dropped_calls: Vec<DroppedCall>,
    pub finish_reason: Option<FinishReason>,
    pub usage: Option<Usage>,
    /// How the tools were offered for this answer: [`ToolMode::Native`] or
    /// [`ToolMode::Prompt`], never `Auto`. In auto mode, `Prompt` means the server refused
    /// native tools and the request was sent again in prompt mode; a caller can remember that
    /// for the provider and model.
    pub tool_mode_used: ToolMode,
}

impl Default for ChatResponse {
    fn default() -> Self {
        Self {
            content: String::new(),
            tool_calls: Vec::new(),
            dropped_calls: Vec::new(),
            finish_reason: None,
            usage: None,
            tool_mode_used: ToolMode::Native,
        }
    }
}

impl ChatResponse {
    /// Whether the model asked for tools. Decided from the calls collected, not from
    /// `finish_reason`: servers say `stop` after calls, or `tool_calls` with none complete.
    pub fn wants_tools(&self) -> bool {
        !self.tool_calls.is_empty()
    }
}

/// A call the model began but that cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedCall {
    /// The call as far as it came: its id (generated where the model gave none), its name
    /// (possibly empty) and its arguments as received.
    pub call: ToolCall,
    /// Why it cannot run, one sentence without a final period, e.g. "the answer ended inside
    /// the `<tool_use>` block of `read_file` before `</tool_use>`".
    pub reason: String,
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
    /// How far the server has read the prompt, before the answer's first token.
    PromptProgress {
        processed: u32,
        total: u32,
        cached: u32,
        elapsed_ms: u64,
    },
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
