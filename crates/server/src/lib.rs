//! `tooltrail serve`: Tooltrail as an OpenAI-compatible HTTP API, so that any OpenAI client,
//! script or chat app gets answers in which Tooltrail's tools run on the server — gated,
//! sandboxed and recorded exactly as in the app, with the additions clients of a server that
//! runs tools expect (docs/requirements.md, "The HTTP API's additions to OpenAI's").
//!
//! The server is a thin front end on [`tooltrail_host::Host`], like `tooltrail ask`: a request
//! asks the host for an engine, takes a conversation, runs one turn of the agent through the
//! host's recording sink (each event committed before the client sees it), and gives the
//! conversation back. What is particular to HTTP lives here:
//!
//! - **Routes**: `POST /v1/chat/completions` and `/api/chat/completions`, `GET /v1/models`
//!   and `/api/models`, `GET /api/metrics` (JSON) and `/metrics` (Prometheus text). Every
//!   request needs `Authorization: Bearer <token>` ([`token`]).
//! - **Which messages are new, and which tools run where**: see [`plan`]. In short: with a
//!   `session_id` the session's stored conversation continues and only the client's messages
//!   after its last assistant message are taken; without one each request is a conversation
//!   of its own, started from the client's messages. Declared tools Tooltrail knows run here;
//!   others go back to the client as `tool_calls` (`finish_reason: "tool_calls"`), and its
//!   `tool` messages continue the chat.
//! - **The answer**: whole, as a `chat.completion` with `usage` summed over the turn's model
//!   calls and `tool_execution` (what ran on the server); or streamed ([`stream`]).
//! - **Approvals**: no person is at the server. Calls that need approval are denied with the
//!   reason sent to the model, unless a standing rule of the folder allows them or the server
//!   runs with `--approve all`; the decision is recorded with the call.
//! - **Sessions** ([`sessions`]): a conversation, and with `--session-workspaces` a folder of
//!   their own, removed after `--session-ttl` idle.
//! - **The record**: API conversations are titled `API · <question>` ([`chat::TITLE_PREFIX`])
//!   and keep the model endpoint as their provider, so `tooltrail conversations` and the
//!   app's history show where they came from.
//! - **Limits**: the body size (413), `--max-concurrent` requests at once (429 with
//!   `Retry-After`), a client that disconnects cancels its turn, and Ctrl+C or SIGTERM stop
//!   taking requests and let running turns finish within a bound.
//! - **Errors** in OpenAI's shape `{"error": {"message", "type", "code"}}` with the tool codes
//!   ([`error::ApiError`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use tooltrail_host::Host;
//! use tooltrail_server::{ServeConfig, Server};
//!
//! let host = Arc::new(Host::open_default()?);
//! let mut config = ServeConfig::new("/path/to/project");
//! config.overrides.base_url = Some("http://localhost:11434/v1".into());
//! let server = Server::bind(config, host).await?;
//! println!("listening on http://{}", server.local_addr()?);
//! server
//!     .run(async {
//!         let _ = tokio::signal::ctrl_c().await;
//!     })
//!     .await?;
//! # Ok(()) }
//! ```

pub mod chat;
pub mod error;
pub mod metrics;
pub mod origin;
pub mod plan;
mod running;
mod server;
pub mod sessions;
mod state;
pub mod stream;
mod summary;
pub mod token;
mod wire;

pub use error::{ApiError, ServerError};
pub use metrics::{Metrics, MetricsReport};
pub use plan::DefaultTools;
pub use server::{Approve, ServeConfig, Server};
pub use summary::ToolExecution;
pub use token::{Token, TokenOrigin};
