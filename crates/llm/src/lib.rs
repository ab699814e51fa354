//! OpenAI-compatible chat completions with tools.
//!
//! [`LlmClient`] speaks `POST {base_url}/chat/completions` and `GET {base_url}/models` to any
//! OpenAI-compatible server (OpenAI, Ollama, LM Studio, llama.cpp's `llama-server`, vLLM,
//! OpenRouter, ...), streaming ([`LlmClient::stream`]) or not ([`LlmClient::complete`],
//! [`LlmClient::chat_with_tools`], [`LlmClient::chat`]). Both paths end in the same
//! [`ChatResponse`].
//!
//! The design follows the layers a response passes through:
//!
//! - **transport** sends one request with its retries: 408, 429, 5xx and failed connections
//!   are tried again (at most [`LlmConfig::max_attempts`] tries in all), waiting as
//!   `Retry-After` asks or with jittered exponential back-off; other statuses fail at once.
//!   Every wait — for the response head, for each chunk, between tries — races the caller's
//!   [`CancellationToken`](tokio_util::sync::CancellationToken) and the idle timeout, so a cancel drops the connection at once.
//! - **sse** frames the body into events exactly as the HTML standard says (lines split across
//!   network chunks, `\r\n`, multi-line `data:`, comments), and **answer** reads each event:
//!   `[DONE]`, a JSON chunk, or an error.
//! - **assemble** turns chunks into an answer: text is appended; tool-call deltas are matched
//!   by `index` (and by `id` where a server reuses index 0), names set once, argument
//!   fragments appended, missing ids generated. A call cut by `finish_reason: length` in the
//!   middle of its arguments, or one without a name, is put in
//!   [`ChatResponse::dropped_calls`] with the reason, never among the calls to run. Whether
//!   the model asked for tools is decided from the calls collected
//!   ([`ChatResponse::wants_tools`]), since servers disagree about `finish_reason`.
//! - **tool modes** ([`ToolMode`], set in [`LlmConfig::tool_mode`]): tools are offered
//!   natively (`tools`, `tool_choice`), or, for models without function calling, in **prompt
//!   mode**: described in the system prompt, with the model answering in
//!   `<tool_use><name>…</name><arguments>{…}</arguments></tool_use>` blocks that a streaming
//!   parser turns back into the same [`StreamDelta::ToolCall`]s and
//!   [`ChatResponse::tool_calls`] native calls give (the history's calls and results are
//!   rewritten as such blocks). Auto mode, the default, sends natively and, when the server
//!   refuses tools as unsupported (Ollama's "… does not support tools", llama.cpp's "tools
//!   param requires --jinja flag", vLLM's "--enable-auto-tool-choice"), sends the same
//!   request again at once in prompt mode and keeps to it; [`ChatResponse::tool_mode_used`]
//!   and [`LlmClient::detected_tool_mode`] tell the caller, to remember per provider and
//!   model.
//!
//! - **the context window** ([`LlmClient::context_window`]): as configured, else asked of the
//!   server once (llama.cpp's `/props`, Ollama's `/api/show` and `/api/ps`, the model list of
//!   vLLM, LM Studio and OpenRouter), else a default for where the server is.
//!   [`LlmClient::estimate_request`] estimates the tokens a request takes in the mode it goes
//!   in, corrected by the counts the server reported for earlier ones, so that a caller can
//!   keep every request inside the window.
//!
//! A stream that ends with neither a finish reason nor `[DONE]` is [`LlmError::Incomplete`]:
//! nothing from it should run. Every [`LlmError`] displays as one sentence a user can act on.
//!
//! ```no_run
//! use tokio_util::sync::CancellationToken;
//! use tooltrail_llm::{ChatRequest, LlmClient, LlmConfig, StreamDelta};
//! use tooltrail_protocol::{Message, ToolChoice, ToolSpec};
//!
//! # async fn run() -> Result<(), tooltrail_llm::LlmError> {
//! let client = LlmClient::new(LlmConfig::new("http://localhost:11434/v1", "qwen3"))?;
//! let request = ChatRequest {
//!     messages: vec![Message::user("How many Rust files are there?")],
//!     tools: vec![ToolSpec {
//!         name: "search_files".into(),
//!         description: "Find files by glob".into(),
//!         parameters: serde_json::json!({"type": "object",
//!             "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}),
//!         read_only: true,
//!     }],
//!     tool_choice: Some(ToolChoice::Auto),
//!     ..ChatRequest::default()
//! };
//! let cancel = CancellationToken::new();
//! let response = client
//!     .stream(&request, &cancel, &mut |delta| {
//!         if let StreamDelta::Text(text) = delta {
//!             print!("{text}");
//!         }
//!     })
//!     .await?;
//! for call in &response.tool_calls {
//!     println!("the model asks for {}({})", call.name, call.arguments);
//! }
//! # Ok(())
//! # }
//! ```

mod answer;
mod assemble;
mod client;
mod config;
mod error;
mod prompt_mode;
mod request;
mod response;
mod retry;
mod sse;
mod tokens;
mod tools_refused;
pub mod trace;
mod transport;
mod window;
mod wire;

pub use client::LlmClient;
pub use config::{LlmConfig, MaxTokensField};
pub use error::LlmError;
pub use request::{ChatRequest, tool_json};
pub use response::{ChatResponse, DroppedCall, FinishReason, StreamDelta};
pub use tokens::{estimate_message, estimate_tokens, estimate_tools};
pub use tooltrail_protocol::{ToolMode, UnknownToolMode};
pub use window::{
    ContextWindow, LOCAL_DEFAULT_WINDOW, REMOTE_DEFAULT_WINDOW, WindowSource, default_window,
    modelfile_num_ctx, positive as positive_tokens,
};
