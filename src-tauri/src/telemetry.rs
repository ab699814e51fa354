//! Settings → Telemetry: where the OpenTelemetry traces of every question go (`[telemetry]` in
//! `config.toml`, the headers in the keychain), whether content goes with them, and "Send a
//! test trace". The `OTEL_*` variables the app was started with win over the page, which says
//! so.

use serde::{Deserialize, Serialize};
use tauri::State;
use tooltrail_host::Host;
use tooltrail_settings::ConfigEditor;
use tooltrail_settings::telemetry;
use ts_rs::TS;

use crate::commands::off_main;
use crate::error::{CommandError, CommandResult};

/// The page as it loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct TelemetryView {
    /// Traces are sent: an endpoint is set (here or in the environment) and nothing turns
    /// them off.
    pub active: bool,
    /// `[telemetry] enabled = false` is set.
    pub turned_off: bool,
    /// `[telemetry] endpoint`, as written.
    pub endpoint: String,
    /// `http/protobuf`, `http/json` or `grpc`.
    pub protocol: String,
    /// Prompts, answers, arguments and results go into spans.
    pub capture_content: bool,
    /// Headers are kept in the keychain (their values are never sent back to the window).
    pub headers_stored: bool,
    /// Where traces go now, when they do: the environment's endpoint if it names one.
    pub sending_to: Option<String>,
    /// The `OTEL_*` variables set in the app's environment, which win over this page.
    pub environment: Vec<String>,
    /// Why the settings cannot be used, when they cannot.
    pub problem: Option<String>,
}

/// What Save sends.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, TS)]
pub struct TelemetryForm {
    pub turned_off: bool,
    pub endpoint: String,
    pub protocol: String,
    pub capture_content: bool,
    /// `key=value,key=value` to keep in the keychain; `None` keeps the stored ones, an empty
    /// text removes them.
    #[ts(optional)]
    pub headers: Option<String>,
}

const VARIABLES: &[&str] = &[
    "OTEL_SDK_DISABLED",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
];

fn view() -> CommandResult<TelemetryView> {
    let section = telemetry::read()?;
    let resolved = tooltrail_telemetry::TelemetryConfig::resolve(&section);
    let (active, sending_to, problem) = match resolved {
        Ok(Some(config)) => (true, Some(config.endpoint), None),
        Ok(None) => (false, None, None),
        Err(error) => (false, None, Some(error.to_string())),
    };
    Ok(TelemetryView {
        active,
        turned_off: section.enabled == Some(false),
        endpoint: section.endpoint.clone().unwrap_or_default(),
        protocol: section
            .protocol
            .clone()
            .unwrap_or_else(|| "http/protobuf".to_string()),
        capture_content: section.capture_content.unwrap_or(false),
        headers_stored: telemetry::has_stored_headers(),
        sending_to,
        environment: VARIABLES
            .iter()
            .filter(|name| tooltrail_settings::env(name).is_some())
            .map(|name| (*name).to_string())
            .collect(),
        problem,
    })
}

fn save(form: TelemetryForm) -> CommandResult<()> {
    let endpoint = form.endpoint.trim().to_string();
    if !endpoint.is_empty() && !endpoint.starts_with("http://") && !endpoint.starts_with("https://")
    {
        return Err(CommandError::new(
            "settings",
            "The collector's address must start with http:// or https://.",
        ));
    }
    tooltrail_telemetry::Protocol::parse(&form.protocol)
        .map_err(|error| CommandError::new("settings", sentence(&error.to_string())))?;
    if let Some(headers) = &form.headers {
        telemetry::store_headers(headers)?;
    }
    let path = tooltrail_settings::config_path()?;
    let mut editor = ConfigEditor::open(&path)?;
    let mut section = telemetry::read()?;
    section.enabled = form.turned_off.then_some(false);
    section.endpoint = (!endpoint.is_empty()).then_some(endpoint);
    section.protocol = (form.protocol != "http/protobuf").then_some(form.protocol);
    section.capture_content = form.capture_content.then_some(true);
    editor.set_telemetry(&section)?;
    Ok(editor.save()?)
}

/// A message from below as a sentence: capital first, full stop last.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    };
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

#[tauri::command]
pub async fn telemetry_settings() -> CommandResult<TelemetryView> {
    off_main(
        view,
        "settings",
        "The telemetry settings could not be read.",
    )
    .await
}

#[tauri::command]
pub async fn save_telemetry(form: TelemetryForm) -> CommandResult<TelemetryView> {
    off_main(
        move || {
            save(form)?;
            view()
        },
        "settings",
        "The telemetry settings could not be saved.",
    )
    .await
}

/// Sends one span to the collector and waits for its answer (at most two seconds); returns the
/// test trace's id.
#[tauri::command]
pub async fn send_test_trace(host: State<'_, Host>) -> CommandResult<String> {
    let Some(telemetry) = host.telemetry() else {
        return Err(CommandError::new(
            "telemetry_off",
            "Telemetry is off: give the collector's address first.",
        ));
    };
    off_main(
        move || {
            telemetry
                .send_test_trace()
                .map_err(|error| CommandError::new("telemetry", sentence(&error.to_string())))
        },
        "telemetry",
        "The test trace could not be sent.",
    )
    .await
}
