//! OpenAI-compatible chat completions with tools.
//!
//! CONTRACT (types and signatures the agent relies on; keep them, implement the bodies).

mod error;

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tooltrail_protocol::{Message, ToolCall, ToolChoice, ToolSpec, Usage};

pub use error::LlmError;

/// Where and how to reach the model.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// Base URL including the version path, e.g. `http://localhost:11434/v1`.
    pub base_url: String,
    pub model: String,
    /// Sent as a bearer token when set. Never logged or shown.
    pub api_key: Option<String>,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Longest wait for the first byte of a response, and between two chunks of a stream.
    pub idle_timeout: Duration,
    /// Tries per request, counting the first (408, 429, 5xx and connection failures retry).
    pub max_attempts: u32,
}

impl LlmConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            max_attempts: 3,
        }
    }
}

/// One chat completion request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    /// Sent as the `tools` field when not empty.
    pub tools: Vec<ToolSpec>,
    pub tool_choice: Option<ToolChoice>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
}

/// Why the model stopped, as the server said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    Other(String),
}

/// A whole answer: assembled from a stream, or read from a non-streaming response.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatResponse {
    pub content: String,
    /// Complete calls only, in index order. Every call has an id and valid JSON arguments text.
    pub tool_calls: Vec<ToolCall>,
    /// Calls the model began but did not finish (cut by `length`, invalid JSON): never run.
    pub dropped_calls: Vec<ToolCall>,
    pub finish_reason: Option<FinishReason>,
    pub usage: Option<Usage>,
}

/// A piece of a streaming answer, passed to the caller as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamDelta {
    Text(String),
    /// A tool call as it streams: `name` once known, then argument fragments. `id` is stable
    /// for the call (generated when the server sends none).
    ToolCall {
        index: u32,
        id: String,
        name: Option<String>,
        arguments: String,
    },
    Usage(Usage),
}

/// The client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct LlmClient {
    config: LlmConfig,
}

impl LlmClient {
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        Ok(Self { config })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// The plain chat: messages in, answer text out, no tools.
    pub async fn chat(&self, _messages: &[Message]) -> Result<String, LlmError> {
        todo!()
    }

    /// Non-streaming chat with tools (seed 000's `ChatWithTools`).
    pub async fn chat_with_tools(
        &self,
        _messages: &[Message],
        _tools: &[ToolSpec],
    ) -> Result<ChatResponse, LlmError> {
        todo!()
    }

    /// Non-streaming completion of any request.
    pub async fn complete(
        &self,
        _request: &ChatRequest,
        _cancel: &CancellationToken,
    ) -> Result<ChatResponse, LlmError> {
        todo!()
    }

    /// Streaming completion. `on_delta` sees every piece as it arrives; the assembled response
    /// is returned when the stream finishes. A stream that ends without a finish reason or
    /// `[DONE]` is `LlmError::Incomplete`. Cancelling `cancel` aborts the HTTP stream at once
    /// and returns `LlmError::Cancelled`.
    pub async fn stream(
        &self,
        _request: &ChatRequest,
        _cancel: &CancellationToken,
        _on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, LlmError> {
        todo!()
    }

    /// The model ids the endpoint offers (`GET /models`).
    pub async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        todo!()
    }
}
