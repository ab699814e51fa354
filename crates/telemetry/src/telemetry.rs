//! The live pipeline: events become spans on the question's task (a lock and a few
//! allocations), and a thread of its own batches and exports them, so a slow or dead collector
//! never holds a question up.
//!
//! The exporting thread runs its own small tokio runtime rather than the front end's: it
//! outlives the front end's runtime at exit, when the last spans are flushed within a bound
//! ([`FLUSH_BOUND`]), and it works the same under the app, the command line and `serve`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, mpsc as std_mpsc};
use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SpanData, SpanExporter as _};
use tokio::sync::mpsc;
use tooltrail_protocol::Event;

use crate::config::{Protocol, TelemetryConfig};
use crate::error::TelemetryError;
use crate::ids::TraceParent;
use crate::spans::{ModelEndpoint, TraceBuilder};

/// How long exit waits for the last spans to reach the collector.
pub const FLUSH_BOUND: Duration = Duration::from_secs(2);
/// How long one export may take before it is given up.
const EXPORT_TIMEOUT: Duration = Duration::from_millis(1500);
/// Spans are sent at least this often while questions run.
const BATCH_INTERVAL: Duration = Duration::from_millis(500);
/// A batch is sent at once when it reaches this many spans.
const BATCH_SIZE: usize = 512;
/// Batches waiting for the exporting thread; past this, spans are dropped (and counted) rather
/// than making a question wait.
const QUEUE: usize = 1024;

/// Which front end a process is, for the `tooltrail.front_end` resource attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontEnd {
    App,
    Cli,
    Serve,
}

impl FrontEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::App => "app",
            Self::Cli => "cli",
            Self::Serve => "serve",
        }
    }
}

enum Command {
    Spans(Vec<SpanData>),
    Flush(std_mpsc::Sender<Result<(), String>>),
}

/// One process's telemetry: the spans of the turns under way and the exporting thread.
pub struct Telemetry {
    config: TelemetryConfig,
    builder: Mutex<TraceBuilder>,
    queue: Mutex<Option<mpsc::Sender<Command>>>,
    dropped: AtomicU64,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Starts the exporting thread for `config`. Fails only when the exporter cannot be built
    /// (a header that is not a valid header, say); a collector that is down is found out
    /// later, and costs a warning once.
    pub fn start(config: TelemetryConfig, front_end: FrontEnd) -> Result<Self, TelemetryError> {
        let resource = resource(&config, front_end);
        let (sender, receiver) = mpsc::channel(QUEUE);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| TelemetryError::Exporter(error.to_string()))?;
        // The exporter is built on the thread's own runtime: gRPC's channel starts a task of
        // its own there, not on the front end's runtime.
        let (built, build_result) = std_mpsc::channel();
        let thread_config = config.clone();
        std::thread::Builder::new()
            .name("tooltrail-otlp".into())
            .spawn(move || {
                runtime.block_on(async move {
                    match build_exporter(&thread_config) {
                        Ok(exporter) => {
                            let _ = built.send(Ok(()));
                            export_loop(exporter, resource, receiver, thread_config.endpoint).await;
                        }
                        Err(error) => {
                            let _ = built.send(Err(error));
                        }
                    }
                });
            })
            .map_err(|error| TelemetryError::Exporter(error.to_string()))?;
        build_result.recv().map_err(|_| {
            TelemetryError::Exporter("the exporting thread stopped at once".to_string())
        })??;
        Ok(Self {
            builder: Mutex::new(TraceBuilder::new(config.capture_content)),
            config,
            queue: Mutex::new(Some(sender)),
            dropped: AtomicU64::new(0),
        })
    }

    pub fn config(&self) -> &TelemetryConfig {
        &self.config
    }

    fn builder(&self) -> MutexGuard<'_, TraceBuilder> {
        self.builder
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Notes where `model` is asked (provider, endpoint, sandbox), for the spans of its turns.
    pub fn note_model(&self, model: &str, endpoint: ModelEndpoint) {
        self.builder().note_model(model, endpoint);
    }

    /// Takes one event of a question. `parent` is the caller's trace (serve's `traceparent`),
    /// used when the event starts a turn. Never blocks on the network.
    pub fn observe(&self, event: &Event, parent: Option<&TraceParent>) {
        let spans = self.builder().observe(event, parent);
        if !spans.is_empty() {
            self.send(spans);
        }
    }

    /// The `traceparent` a request made now for `turn_id` carries: the open model request's
    /// span, else the question's.
    pub fn traceparent(&self, turn_id: &str) -> Option<String> {
        self.builder()
            .current_parent(turn_id)
            .map(|parent| parent.to_string())
    }

    /// The `traceparent` tool call `call_id` of `turn_id` carries to an MCP server: its
    /// `execute_tool` span.
    pub fn call_traceparent(&self, turn_id: &str, call_id: &str) -> Option<String> {
        self.builder()
            .call_parent(turn_id, call_id)
            .map(|parent| parent.to_string())
    }

    /// Queues finished spans for export (those of `tooltrail export --otlp` too).
    pub fn send(&self, spans: Vec<SpanData>) {
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let sent = queue
            .as_ref()
            .is_some_and(|queue| queue.try_send(Command::Spans(spans)).is_ok());
        if !sent {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Sends everything queued and waits at most `bound` for the collector to take it.
    pub fn flush(&self, bound: Duration) -> Result<(), TelemetryError> {
        let (reply, answer) = std_mpsc::channel();
        // One deadline for both waits (a place in the queue, then the collector's answer), so
        // that the whole flush keeps within `bound`.
        let deadline = std::time::Instant::now() + bound;
        {
            let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            let Some(queue) = queue.as_ref() else {
                return Ok(());
            };
            // A full queue is a collector far behind: the flush waits in line like the rest.
            let mut command = Command::Flush(reply);
            loop {
                match queue.try_send(command) {
                    Ok(()) => break,
                    Err(mpsc::error::TrySendError::Full(back)) => {
                        if std::time::Instant::now() >= deadline {
                            return Err(TelemetryError::Timeout(millis(bound)));
                        }
                        command = back;
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => return Ok(()),
                }
            }
        }
        match answer.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(message)) => Err(TelemetryError::Export {
                endpoint: self.config.endpoint.clone(),
                message,
            }),
            Err(std_mpsc::RecvTimeoutError::Timeout) => Err(TelemetryError::Timeout(millis(bound))),
            Err(std_mpsc::RecvTimeoutError::Disconnected) => Ok(()),
        }
    }

    /// Ends the turns still open, sends what is left within [`FLUSH_BOUND`], and stops the
    /// exporting thread. For the end of a process.
    pub fn shutdown(&self) -> Result<(), TelemetryError> {
        let open = self.builder().finish_open(SystemTime::now());
        if !open.is_empty() {
            self.send(open);
        }
        let flushed = self.flush(FLUSH_BOUND);
        // Dropping the sender ends the loop, which shuts the exporter down.
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).take();
        flushed
    }

    /// Sends one span on its own and waits for the collector's answer: "Send a test trace".
    /// Returns the trace id.
    pub fn send_test_trace(&self) -> Result<String, TelemetryError> {
        // A random turn id, so that each test trace is a trace of its own at the collector.
        let turn_id = format!("turn_{:032x}", rand::random::<u128>());
        let span = crate::spans::test_span(&turn_id);
        let trace_id = span.span_context.trace_id().to_string();
        self.send(vec![span]);
        self.flush(FLUSH_BOUND)?;
        Ok(trace_id)
    }

    /// How many batches were dropped because the exporting thread was too far behind.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if self
            .queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
        {
            let _ = self.shutdown();
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn resource(config: &TelemetryConfig, front_end: FrontEnd) -> Resource {
    let mut attributes: Vec<KeyValue> = config
        .resource
        .iter()
        .filter(|(name, _)| name != "service.name")
        .map(|(name, value)| KeyValue::new(name.clone(), value.clone()))
        .collect();
    attributes.push(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    attributes.push(KeyValue::new("tooltrail.front_end", front_end.as_str()));
    Resource::builder_empty()
        .with_service_name(config.service_name.clone())
        .with_attributes(attributes)
        .build()
}

fn build_exporter(
    config: &TelemetryConfig,
) -> Result<opentelemetry_otlp::SpanExporter, TelemetryError> {
    let failed =
        |error: opentelemetry_otlp::ExporterBuildError| TelemetryError::Exporter(error.to_string());
    let retry = opentelemetry_otlp::RetryPolicy::default()
        .with_max_retries(1)
        .with_initial_delay(Duration::from_millis(100))
        .with_max_delay(Duration::from_millis(300));
    match config.protocol {
        Protocol::HttpProtobuf | Protocol::HttpJson => {
            let client = reqwest::Client::builder()
                .timeout(EXPORT_TIMEOUT)
                .build()
                .map_err(|error| TelemetryError::Exporter(error.to_string()))?;
            let headers: HashMap<String, String> = config.headers.iter().cloned().collect();
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_http_client(client)
                .with_endpoint(config.endpoint.clone())
                .with_protocol(match config.protocol {
                    Protocol::HttpJson => opentelemetry_otlp::Protocol::HttpJson,
                    Protocol::HttpProtobuf | Protocol::Grpc => {
                        opentelemetry_otlp::Protocol::HttpBinary
                    }
                })
                .with_headers(headers)
                .with_timeout(EXPORT_TIMEOUT)
                .with_retry_policy(retry)
                .build()
                .map_err(failed)
        }
        Protocol::Grpc => {
            let mut headers = http::HeaderMap::new();
            for (name, value) in &config.headers {
                let name = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                    TelemetryError::Config(format!("{name:?} is not a valid OTLP header name."))
                })?;
                let value = http::HeaderValue::from_str(value).map_err(|_| {
                    TelemetryError::Config(format!(
                        "the value of OTLP header {name:?} is not a valid header value."
                    ))
                })?;
                headers.insert(name, value);
            }
            let metadata =
                opentelemetry_otlp::tonic_types::metadata::MetadataMap::from_headers(headers);
            opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(config.endpoint.clone())
                .with_metadata(metadata)
                .with_timeout(EXPORT_TIMEOUT)
                .with_retry_policy(retry)
                .build()
                .map_err(failed)
        }
    }
}

async fn export_loop(
    mut exporter: opentelemetry_otlp::SpanExporter,
    resource: Resource,
    mut receiver: mpsc::Receiver<Command>,
    endpoint: String,
) {
    exporter.set_resource(&resource);
    let warned = AtomicBool::new(false);
    let mut batch: Vec<SpanData> = Vec::new();
    let export = |batch: Vec<SpanData>| {
        let exporter = &exporter;
        let warned = &warned;
        let endpoint = &endpoint;
        async move {
            if batch.is_empty() {
                return Ok(());
            }
            let result = match tokio::time::timeout(EXPORT_TIMEOUT, exporter.export(batch)).await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(error)) => Err(error.to_string()),
                Err(_elapsed) => Err(format!(
                    "the collector did not answer within {} ms",
                    millis(EXPORT_TIMEOUT)
                )),
            };
            if let Err(message) = &result
                && !warned.swap(true, Ordering::SeqCst)
            {
                eprintln!(
                    "warning: traces could not be sent to {endpoint} ({message}); questions go on, and this is said only once."
                );
            }
            result
        }
    };
    // When the oldest span waiting in the batch must be sent by.
    let mut due = tokio::time::Instant::now();
    loop {
        let command = tokio::select! {
            command = receiver.recv() => command,
            () = tokio::time::sleep_until(due), if !batch.is_empty() => {
                let _ = export(std::mem::take(&mut batch)).await;
                continue;
            }
        };
        match command {
            Some(Command::Spans(spans)) => {
                if batch.is_empty() {
                    due = tokio::time::Instant::now() + BATCH_INTERVAL;
                }
                batch.extend(spans);
                if batch.len() >= BATCH_SIZE {
                    let _ = export(std::mem::take(&mut batch)).await;
                }
            }
            Some(Command::Flush(reply)) => {
                let result = export(std::mem::take(&mut batch)).await;
                let _ = reply.send(result);
            }
            None => {
                let _ = export(std::mem::take(&mut batch)).await;
                break;
            }
        }
    }
    let _ = exporter.shutdown_with_timeout(EXPORT_TIMEOUT);
}
