//! One turn of Tooltrail: the agent loop.
//!
//! A user message starts a turn. The agent streams the model's answer; when the model asks for
//! tools it validates each call, gates it (read-only calls run freely, others wait for an
//! [`Approver`]), runs independent read-only calls in parallel, appends the results in call
//! order, and calls the model again — until the model answers without tools, the round limit is
//! hit (then the model is asked once more, without tools, to answer from what it has), or the
//! turn is cancelled. Every step is an [`Event`](tooltrail_protocol::Event) sent to an
//! [`EventSink`]; the agent knows nothing of terminals, windows or databases.
//!
//! [`Agent::run_turn`] is a question from a person. [`Agent::run`] is the general form the
//! HTTP API uses: the turn's input may be a whole history or the results of tools the caller
//! ran itself, and [`TurnOptions`] choose which tools are offered, declare the caller's own
//! tools (offered, never run: the turn ends with them in [`TurnOutcome::pending_calls`]) and
//! force the first call.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use tokio_util::sync::CancellationToken;
//! use tooltrail_agent::{Agent, AgentConfig, Conversation, DenyAll, NullSink};
//! use tooltrail_llm::{LlmClient, LlmConfig};
//! use tooltrail_tools::{ToolContext, ToolRegistry};
//!
//! let llm = LlmClient::new(LlmConfig::new("http://localhost:11434/v1", "qwen3"))?;
//! let agent = Agent::new(
//!     llm,
//!     Arc::new(ToolRegistry::with_builtins()),
//!     ToolContext::open(".")?,
//!     AgentConfig::default(),
//! );
//! let mut conversation = Conversation::new();
//! let outcome = agent
//!     .run_turn(&mut conversation, "How many Go files are there?", &NullSink, &DenyAll, &CancellationToken::new())
//!     .await;
//! println!("{}", outcome.text);
//! # Ok(()) }
//! ```

mod announce;
mod approval;
mod budget;
mod config;
mod conversation;
mod dispatch;
mod many_tools;
mod prompt;
mod repeat;
mod replay;
mod result_cap;
mod sink;
mod turn;
mod view_turn;

pub use announce::{LiveTools, TurnLine};
pub use approval::{
    AllowAll, ApprovalRequest, Approver, Decision, DenyAll, RuleBook, RuleDecision,
};
pub use config::AgentConfig;
pub use conversation::Conversation;
pub use prompt::{folder_context, prompt_share_bytes, system_prompt};
pub use replay::{Replay, ReplayBook};
pub use result_cap::cap_for_model;
pub use sink::{CollectingSink, EventSink, NullSink};
pub use turn::{Agent, TurnOptions, TurnOutcome, chat_with_tool_execution, first_request};
pub use view_turn::{ViewCallOutcome, ViewCallScope, ViewTurn};
