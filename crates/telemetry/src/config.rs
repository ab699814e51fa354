//! Where traces go, configured the standard way: the `OTEL_*` environment variables every
//! OpenTelemetry SDK reads, over the `[telemetry]` table of `config.toml` (which the host
//! reads with the settings and hands over as the protocol's [`TelemetrySection`], since this
//! crate knows nothing of settings).
//!
//! Telemetry is off unless something asks for it: an endpoint (in either place) or
//! `enabled = true`. `OTEL_SDK_DISABLED=true` or `enabled = false` turn it off whatever else
//! is set.

use std::fmt;

use tooltrail_protocol::TelemetrySection;

use crate::error::TelemetryError;

/// The OTLP port for HTTP, where a collector listens unless told otherwise.
pub const DEFAULT_HTTP_ENDPOINT: &str = "http://localhost:4318";
/// The OTLP port for gRPC.
pub const DEFAULT_GRPC_ENDPOINT: &str = "http://localhost:4317";

/// How spans travel (`OTEL_EXPORTER_OTLP_PROTOCOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    #[default]
    HttpProtobuf,
    HttpJson,
    Grpc,
}

impl Protocol {
    pub fn parse(word: &str) -> Result<Self, TelemetryError> {
        match word.trim() {
            "http/protobuf" => Ok(Self::HttpProtobuf),
            "http/json" => Ok(Self::HttpJson),
            "grpc" => Ok(Self::Grpc),
            other => Err(TelemetryError::Config(format!(
                "the OTLP protocol must be \"http/protobuf\", \"http/json\" or \"grpc\" ({other:?} was given)."
            ))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::HttpProtobuf => "http/protobuf",
            Self::HttpJson => "http/json",
            Self::Grpc => "grpc",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything the exporter needs, resolved.
#[derive(Clone, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// Where spans are sent: the full traces URL for HTTP, the collector's address for gRPC.
    pub endpoint: String,
    pub protocol: Protocol,
    pub headers: Vec<(String, String)>,
    pub service_name: String,
    /// Extra resource attributes (`OTEL_RESOURCE_ATTRIBUTES`).
    pub resource: Vec<(String, String)>,
    pub capture_content: bool,
}

impl fmt::Debug for TelemetryConfig {
    // Headers carry API keys; their names are enough to debug with.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TelemetryConfig")
            .field("endpoint", &self.endpoint)
            .field("protocol", &self.protocol)
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(name, _)| name.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("service_name", &self.service_name)
            .field("resource", &self.resource)
            .field("capture_content", &self.capture_content)
            .finish()
    }
}

impl TelemetryConfig {
    /// From the process's environment and `file`. `Ok(None)` when telemetry is off.
    pub fn resolve(file: &TelemetrySection) -> Result<Option<Self>, TelemetryError> {
        Self::resolve_with(file, |name| {
            std::env::var(name)
                .ok()
                .filter(|value| !value.trim().is_empty())
        })
    }

    /// Like [`Self::resolve`], with the environment given (for tests).
    pub fn resolve_with(
        file: &TelemetrySection,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, TelemetryError> {
        if env("OTEL_SDK_DISABLED").is_some_and(|value| is_true(&value))
            || file.enabled == Some(false)
        {
            return Ok(None);
        }
        let protocol = match env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .or_else(|| file.protocol.clone())
        {
            Some(word) => Protocol::parse(&word)?,
            None => Protocol::default(),
        };
        let base = |url: &str| match protocol {
            Protocol::Grpc => url.trim_end_matches('/').to_string(),
            Protocol::HttpProtobuf | Protocol::HttpJson => {
                format!("{}/v1/traces", url.trim_end_matches('/'))
            }
        };
        let endpoint = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT").map(|url| base(&url)))
            .or_else(|| file.traces_endpoint.clone())
            .or_else(|| file.endpoint.as_deref().map(base));
        let endpoint = match (endpoint, file.enabled) {
            (Some(endpoint), _) => endpoint,
            (None, Some(true)) => base(match protocol {
                Protocol::Grpc => DEFAULT_GRPC_ENDPOINT,
                Protocol::HttpProtobuf | Protocol::HttpJson => DEFAULT_HTTP_ENDPOINT,
            }),
            (None, Some(false) | None) => return Ok(None),
        };
        check_endpoint(&endpoint)?;
        let mut headers = pairs(file.headers.as_deref().unwrap_or_default());
        let env_headers = env("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
            .or_else(|| env("OTEL_EXPORTER_OTLP_HEADERS"))
            .unwrap_or_default();
        for (name, value) in pairs(&env_headers) {
            headers.retain(|(kept, _)| !kept.eq_ignore_ascii_case(&name));
            headers.push((name, value));
        }
        let mut resource = pairs(file.resource_attributes.as_deref().unwrap_or_default());
        for (name, value) in pairs(&env("OTEL_RESOURCE_ATTRIBUTES").unwrap_or_default()) {
            resource.retain(|(kept, _)| *kept != name);
            resource.push((name, value));
        }
        let service_name = env("OTEL_SERVICE_NAME")
            .or_else(|| file.service_name.clone())
            .or_else(|| {
                resource
                    .iter()
                    .find(|(name, _)| name == "service.name")
                    .map(|(_, value)| value.clone())
            })
            .unwrap_or_else(|| "tooltrail".to_string());
        let capture_content = match env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT") {
            Some(value) => is_true(&value),
            None => file.capture_content.unwrap_or(false),
        };
        Ok(Some(Self {
            endpoint,
            protocol,
            headers,
            service_name,
            resource,
            capture_content,
        }))
    }
}

fn is_true(value: &str) -> bool {
    value.trim().eq_ignore_ascii_case("true")
}

fn check_endpoint(endpoint: &str) -> Result<(), TelemetryError> {
    let scheme_ok = endpoint.starts_with("http://") || endpoint.starts_with("https://");
    if !scheme_ok || reqwest::Url::parse(endpoint).is_err() {
        return Err(TelemetryError::Config(format!(
            "the OTLP endpoint must be an http:// or https:// URL ({endpoint:?} was given)."
        )));
    }
    Ok(())
}

/// `key=value,key=value` as the OTLP spec writes headers and resource attributes: values
/// percent-decoded, blanks around each trimmed, entries without `=` skipped.
pub fn pairs(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|entry| {
            let (name, value) = entry.split_once('=')?;
            let name = name.trim();
            (!name.is_empty()).then(|| (name.to_string(), percent_decode(value.trim())))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let decoded = (bytes[index] == b'%')
            .then(|| text.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match decoded {
            Some(byte) => {
                out.push(byte);
                index += 3;
            }
            None => {
                out.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::collections::HashMap;

    fn resolve(
        file: &TelemetrySection,
        vars: &[(&str, &str)],
    ) -> Result<Option<TelemetryConfig>, TelemetryError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        TelemetryConfig::resolve_with(file, |name| vars.get(name).cloned())
    }

    #[test]
    fn off_unless_asked_for() {
        assert_eq!(resolve(&TelemetrySection::default(), &[]).unwrap(), None);
        let on = TelemetrySection {
            enabled: Some(true),
            ..TelemetrySection::default()
        };
        assert_eq!(
            resolve(&on, &[]).unwrap().unwrap().endpoint,
            "http://localhost:4318/v1/traces"
        );
        let endpoint = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")];
        assert!(
            resolve(&TelemetrySection::default(), &endpoint)
                .unwrap()
                .is_some()
        );
        let disabled = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
            ("OTEL_SDK_DISABLED", "true"),
        ];
        assert_eq!(resolve(&on, &disabled).unwrap(), None);
    }

    #[test]
    fn the_environment_wins_over_the_file() {
        let file = TelemetrySection {
            endpoint: Some("http://file:4318".into()),
            headers: Some("x-team=a,authorization=Basic%20abc".into()),
            protocol: Some("http/json".into()),
            service_name: Some("from-file".into()),
            resource_attributes: Some("deployment.environment=dev".into()),
            capture_content: Some(true),
            ..TelemetrySection::default()
        };
        let config = resolve(
            &file,
            &[
                (
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "http://env:9999/traces",
                ),
                ("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20k"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                (
                    "OTEL_RESOURCE_ATTRIBUTES",
                    "deployment.environment=prod, team=x",
                ),
                (
                    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
                    "false",
                ),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(config.endpoint, "http://env:9999/traces");
        assert_eq!(config.protocol, Protocol::Grpc);
        assert_eq!(
            config.headers,
            vec![
                ("x-team".to_string(), "a".to_string()),
                ("Authorization".to_string(), "Bearer k".to_string())
            ]
        );
        assert_eq!(config.service_name, "from-file");
        assert_eq!(
            config.resource,
            vec![
                ("deployment.environment".to_string(), "prod".to_string()),
                ("team".to_string(), "x".to_string())
            ]
        );
        assert!(!config.capture_content);
    }

    #[test]
    fn grpc_keeps_the_base_address() {
        let config = resolve(
            &TelemetrySection::default(),
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(config.endpoint, "http://collector:4317");
    }

    #[test]
    fn bad_values_are_sentences() {
        let error = resolve(
            &TelemetrySection::default(),
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "thrift"),
            ],
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the OTLP protocol must be \"http/protobuf\", \"http/json\" or \"grpc\" (\"thrift\" was given)."
        );
        let error = resolve(
            &TelemetrySection::default(),
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")],
        )
        .unwrap_err();
        assert!(error.to_string().starts_with("the OTLP endpoint must be"));
    }
}
