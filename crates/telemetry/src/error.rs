//! What can go wrong in telemetry, as sentences a user reads.

/// A telemetry failure. None of them fails a question: the front end shows the sentence once
/// and the question goes on untraced.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// A setting or `OTEL_*` variable that cannot be used; the message says which.
    #[error("{0}")]
    Config(String),
    /// The exporter could not be built (a bad header, an endpoint the transport refuses).
    #[error("the OTLP exporter could not be set up: {0}")]
    Exporter(String),
    /// Spans could not be delivered to the collector.
    #[error("traces could not be sent to {endpoint}: {message}")]
    Export { endpoint: String, message: String },
    /// The exporting thread is gone or did not answer in time.
    #[error("the trace exporter did not finish within {0} ms")]
    Timeout(u64),
}
