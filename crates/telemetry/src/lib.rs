//! OpenTelemetry traces of every question and tool call, by the GenAI semantic conventions,
//! exported over OTLP to any collector (Jaeger, Tempo, Honeycomb, Langfuse, Arize Phoenix, ...).
//!
//! Nothing else in Tooltrail knows about it: the host feeds [`Telemetry::observe`] the same
//! events the store records, and [`TraceBuilder`] turns them into one trace per question
//! (`invoke_agent`, with a `chat` span per model request and an `execute_tool` span per call,
//! an approval's wait as a child of its call). Ids come from the record's ids ([`ids`]), so
//! `tooltrail export --otlp` can send past questions later as the same traces, and a front end
//! can show a call's trace id without asking.
//!
//! Spans are exported in batches from a thread of their own; exit waits at most
//! [`FLUSH_BOUND`] for the last of them; a collector that is down costs a warning once.
//! Content (the question, answers, arguments, results) is left out unless turned on.
//!
//! ```no_run
//! use tooltrail_protocol::TelemetrySection;
//! use tooltrail_telemetry::{FrontEnd, Telemetry, TelemetryConfig};
//! # fn demo(events: Vec<tooltrail_protocol::Event>) -> Result<(), tooltrail_telemetry::TelemetryError> {
//! // OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318, or [telemetry] in config.toml.
//! if let Some(config) = TelemetryConfig::resolve(&TelemetrySection::default())? {
//!     let telemetry = Telemetry::start(config, FrontEnd::Cli)?;
//!     for event in &events {
//!         telemetry.observe(event, None);
//!     }
//!     telemetry.shutdown()?;
//! }
//! # Ok(()) }
//! ```

mod config;
mod error;
pub mod ids;
mod spans;
mod telemetry;

pub use config::{DEFAULT_GRPC_ENDPOINT, DEFAULT_HTTP_ENDPOINT, Protocol, TelemetryConfig, pairs};
pub use error::TelemetryError;
pub use ids::{TraceParent, trace_id_of_turn};
pub use spans::{ModelEndpoint, TraceBuilder};
pub use telemetry::{FLUSH_BOUND, FrontEnd, Telemetry};
