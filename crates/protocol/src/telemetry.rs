//! The `[telemetry]` table of `config.toml`, in one type: the settings read and write it, and
//! the telemetry crate resolves it with the `OTEL_*` variables, without either knowing the
//! other.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The `[telemetry]` table: where OpenTelemetry traces of every question go. Each field means
/// what the `OTEL_*` variable named beside it means, and the variables win over the table.
#[derive(Debug, Default, Clone, Deserialize, Serialize, PartialEq, Eq, TS)]
#[serde(default)]
pub struct TelemetrySection {
    /// `false` turns telemetry off whatever else says; `true` turns it on (to
    /// `http://localhost:4318` when no endpoint is named). Unset: on when an endpoint is.
    pub enabled: Option<bool>,
    /// The collector's base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`); `/v1/traces` is added for
    /// HTTP.
    pub endpoint: Option<String>,
    /// The full URL spans are posted to, used as it is (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`).
    pub traces_endpoint: Option<String>,
    /// `key=value,key=value` (`OTEL_EXPORTER_OTLP_HEADERS`); better kept in the keychain (the
    /// app does).
    pub headers: Option<String>,
    /// `http/protobuf` (the default), `http/json` or `grpc` (`OTEL_EXPORTER_OTLP_PROTOCOL`).
    pub protocol: Option<String>,
    /// `tooltrail` unless set (`OTEL_SERVICE_NAME`).
    pub service_name: Option<String>,
    /// `key=value,key=value`, added to every span's resource (`OTEL_RESOURCE_ATTRIBUTES`).
    pub resource_attributes: Option<String>,
    /// Whether prompts, answers, arguments and results go into spans; off unless set
    /// (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`).
    pub capture_content: Option<bool>,
}
