//! Test support: a scripted OpenAI-compatible server on loopback, and the captured streams
//! of real servers.
//!
//! Tests in every crate mock the model, not the code under test: [`ScriptedServer`] speaks
//! real HTTP on `127.0.0.1`, so the client's transport, SSE framing, retries, timeouts and
//! cancellation are all exercised. Each chat request takes the next [`Reply`] of a script:
//! an answer with text and tool calls ([`Reply::text`], [`Reply::tool_calls`]; streamed or
//! whole, as the request asked), raw SSE chunks ([`Reply::sse`]), a status with a JSON body
//! ([`Reply::error`], [`Reply::json`]), any bytes ([`Reply::raw`]), a captured real-server
//! response replayed byte for byte ([`Reply::fixture`], see [`Fixture`]), or no answer at all
//! ([`Reply::hang`]). Streams can be slowed ([`Reply::delay`]) or broken off
//! ([`Reply::cut_after`]). The server records every request ([`ScriptedServer::requests`]) so
//! tests can assert what was sent.
//!
//! The `scripted-model` binary serves a script file (see [`script`]) for end-to-end tests of
//! the `tooltrail` command and the desktop app.
//!
//! For the models folder: [`hub::HubServer`] is a model hub on loopback laid out like Hugging
//! Face's (the `hub-server` binary serves files from disk the same way), and
//! [`gguf::GgufBuilder`] writes small GGUF model files.
//!
//! For the local runtime: the `llama-server-stand-in` binary ([`stand_in`]) takes
//! llama-server's command line and answers its `/health`, `/props` and chat requests, key
//! required, so the runtime's supervisor is tested without a real model server.
//!
//! ```
//! use tooltrail_test_support::{Reply, ScriptedServer};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let server = ScriptedServer::start(vec![
//!     Reply::tool_calls(&[("read_file", r#"{"path":"README.md"}"#)]),
//!     Reply::text("It says hello."),
//! ])
//! .await;
//! let base_url = server.base_url(); // http://127.0.0.1:PORT/v1
//! # assert!(base_url.ends_with("/v1"));
//! // ... point the client under test at base_url, then:
//! assert_eq!(server.chat_requests().len(), 0);
//! # }
//! ```

mod error;
mod fixture;
pub mod gguf;
pub mod hub;
mod missing;
mod recorded;
mod reply;
pub mod script;
mod server;
pub mod stand_in;
mod workspace;

pub use error::SupportError;
pub use fixture::Fixture;
pub use missing::{dependency_missing, in_ci};
pub use recorded::RecordedRequest;
pub use reply::{
    Answer, DEFAULT_WRITE_SIZE, JsonReply, RawReply, Reply, SCRIPTED_USAGE, ScriptedCall, SseReply,
};
pub use script::{load_script, parse_script};
pub use server::{SCRIPTED_MODEL, ScriptedServer, ServerOptions};
pub use workspace::demo_workspace;
