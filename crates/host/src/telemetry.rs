//! OpenTelemetry for every front end: the `[telemetry]` settings and `OTEL_*` variables read
//! with the rest of the settings for each question, one exporter per process kept while they
//! stay the same, and a sink that hands each event to it after the record has it.
//!
//! A setting that cannot be used, like a collector that is down, costs a warning once and
//! never a question.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tooltrail_agent::EventSink;
use tooltrail_llm::trace::TraceSlot;
use tooltrail_protocol::{Event, EventBody, TelemetrySection};
use tooltrail_telemetry::{
    FrontEnd, ModelEndpoint, Telemetry, TelemetryConfig, TelemetryError, TraceParent,
};

/// The process's telemetry, rebuilt when its settings change.
pub(crate) struct ProcessTelemetry {
    front_end: FrontEnd,
    current: Mutex<Option<Arc<Telemetry>>>,
    /// The table last read and the headers' change count then, with what they resolved to:
    /// the keychain is asked again only when either changes.
    resolved: Mutex<Option<Resolved>>,
    warned: AtomicBool,
}

struct Resolved {
    section: TelemetrySection,
    header_changes: u64,
    config: Result<Option<TelemetryConfig>, String>,
}

impl ProcessTelemetry {
    pub(crate) fn new(front_end: FrontEnd) -> Self {
        Self {
            front_end,
            current: Mutex::new(None),
            resolved: Mutex::new(None),
            warned: AtomicBool::new(false),
        }
    }

    pub(crate) fn set_front_end(&mut self, front_end: FrontEnd) {
        self.front_end = front_end;
    }

    /// The telemetry for the settings as they are now, started or restarted as needed; `None`
    /// when it is off or its settings cannot be used (said once on stderr).
    pub(crate) fn refresh(&self) -> Option<Arc<Telemetry>> {
        let resolved = tooltrail_settings::telemetry::read()
            .map_err(|error| error.to_string())
            .and_then(|section| self.resolve(section));
        let mut current = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let config = match resolved {
            Ok(Some(config)) => config,
            Ok(None) => {
                *current = None;
                return None;
            }
            Err(message) => {
                self.warn(&message);
                return current.clone();
            }
        };
        if let Some(telemetry) = current.as_ref()
            && *telemetry.config() == config
        {
            return Some(Arc::clone(telemetry));
        }
        match Telemetry::start(config, self.front_end) {
            Ok(telemetry) => {
                let telemetry = Arc::new(telemetry);
                *current = Some(Arc::clone(&telemetry));
                Some(telemetry)
            }
            Err(error) => {
                self.warn(&error.to_string());
                None
            }
        }
    }

    /// The configuration `section` (with the environment) gives, reusing the last one while
    /// neither the table nor the stored headers changed.
    fn resolve(&self, section: TelemetrySection) -> Result<Option<TelemetryConfig>, String> {
        let header_changes = tooltrail_settings::telemetry::headers_changes();
        let mut last = self.resolved.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(last) = last.as_ref()
            && last.section == section
            && last.header_changes == header_changes
        {
            return last.config.clone();
        }
        // The keychain is asked only once the rest says telemetry is on.
        let config = match TelemetryConfig::resolve(&section) {
            Ok(Some(_)) => TelemetryConfig::resolve(
                &tooltrail_settings::telemetry::with_stored_headers(section.clone()),
            ),
            other => other,
        }
        .map_err(|error| error.to_string());
        *last = Some(Resolved {
            section,
            header_changes,
            config: config.clone(),
        });
        config
    }

    fn warn(&self, message: &str) {
        if !self.warned.swap(true, Ordering::SeqCst) {
            crate::warning::warn(&format!("traces are not sent, because {message}"));
        }
    }

    /// The telemetry in use, without reading the settings again.
    pub(crate) fn current(&self) -> Option<Arc<Telemetry>> {
        self.current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Notes where `model` is asked, for its spans.
    pub(crate) fn note_model(&self, model: &str, endpoint: ModelEndpoint) {
        if let Some(telemetry) = self.current() {
            telemetry.note_model(model, endpoint);
        }
    }

    /// Sends what is left (at most [`tooltrail_telemetry::FLUSH_BOUND`]) and stops.
    pub(crate) fn shutdown(&self) {
        let telemetry = self
            .current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        match telemetry.map(|telemetry| telemetry.shutdown()) {
            // The exporting thread has said so already, once.
            None | Some(Ok(()) | Err(TelemetryError::Export { .. })) => {}
            Some(Err(error)) => self.warn(&error.to_string()),
        }
    }
}

/// Hands each event to the telemetry, then on to the screen.
pub(crate) struct TelemetrySink {
    pub(crate) telemetry: Arc<Telemetry>,
    /// The caller's trace (serve's `traceparent`), which the question's spans join.
    pub(crate) parent: Option<TraceParent>,
    /// The `traceparent` the turn's next requests carry: set as each model request begins.
    pub(crate) slot: TraceSlot,
    pub(crate) screen: Box<dyn EventSink>,
}

impl EventSink for TelemetrySink {
    fn emit(&self, event: Event) {
        self.telemetry.observe(&event, self.parent.as_ref());
        // A request to the model follows these at once: it belongs to the span just begun.
        // A tool call runs right after it starts: an MCP server it calls gets its span.
        match &event.body {
            EventBody::TurnStarted { .. } | EventBody::ContextUsage { .. } => {
                self.slot.set(self.telemetry.traceparent(&event.turn_id));
            }
            EventBody::ToolCallStarted { call_id, .. } => {
                let traceparent = self.telemetry.call_traceparent(&event.turn_id, call_id);
                self.slot.set_call(call_id, traceparent);
            }
            EventBody::ToolCallFinished { call_id, .. } => self.slot.set_call(call_id, None),
            EventBody::TurnFinished { .. } => {
                self.slot.set(None);
                self.slot.clear_calls();
            }
            _ => {}
        }
        self.screen.emit(event);
    }
}
