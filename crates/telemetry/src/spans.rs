//! The event stream of a question turned into spans, by the OpenTelemetry GenAI semantic
//! conventions:
//!
//! ```text
//! invoke_agent tooltrail              the question (turn_started .. turn_finished)
//! ├── chat MODEL                      one per request to the model (context_usage .. its reply)
//! ├── execute_tool TOOL               one per call (approval asked or started .. finished)
//! │   └── approval TOOL               the wait for the user's decision, when there was one
//! └── ...
//! ```
//!
//! [`TraceBuilder`] is pure: events in, finished spans out, with the events' own times. The
//! live sink and `tooltrail export --otlp` both use it, so a question exported later is the
//! trace it would have been. Content (the question, the answer, arguments, results) is left
//! out unless `capture_content` is set.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use serde_json::json;
use tooltrail_protocol::{
    ApprovalBy, ErrorCode, Event, EventBody, Message, ToolSource, ToolStatus, TurnEnd,
};

use crate::ids::{TraceParent, span_id, trace_id_of_turn};

/// What the events of a turn do not say about where its model is: the host notes it for each
/// model it builds a client for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelEndpoint {
    /// The configured provider's id (`openai`, `ollama`, `local`, ...), when one is used.
    pub provider: Option<String>,
    /// The endpoint's base URL.
    pub base_url: Option<String>,
    /// What confines commands on this machine, in a few words (`landlock+seccomp`).
    pub sandbox: Option<String>,
}

/// Builds the spans of every turn under way from their events.
#[derive(Debug)]
pub struct TraceBuilder {
    capture_content: bool,
    turns: HashMap<String, TurnState>,
    models: HashMap<String, ModelEndpoint>,
    scope: InstrumentationScope,
}

#[derive(Debug)]
struct TurnState {
    trace_id: TraceId,
    root: SpanId,
    /// The caller's span (serve's `traceparent`), when the trace was theirs.
    remote_parent: Option<SpanId>,
    conversation_id: String,
    turn_id: String,
    model: String,
    endpoint: ModelEndpoint,
    start: SystemTime,
    user_message: String,
    tool_mode: Option<&'static str>,
    input_tokens: u64,
    output_tokens: u64,
    calls: u64,
    last_fatal: Option<ErrorCode>,
    chat: Option<ChatState>,
    tools: HashMap<String, ToolState>,
    errors: Vec<opentelemetry::trace::Event>,
}

#[derive(Debug)]
struct ChatState {
    round: u32,
    id: SpanId,
    start: SystemTime,
    used_tokens: u32,
    window_tokens: u32,
    input_tokens: Option<u32>,
    output_tokens: Option<u32>,
    truncated: bool,
    error: Option<ErrorCode>,
}

#[derive(Debug, Default)]
struct ToolState {
    requested: Option<SystemTime>,
    started: Option<SystemTime>,
}

fn time_of(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

fn kv(key: &'static str, value: impl Into<Value>) -> KeyValue {
    KeyValue::new(key, value)
}

fn int(value: impl TryInto<i64>) -> Value {
    Value::I64(value.try_into().unwrap_or(i64::MAX))
}

impl TraceBuilder {
    pub fn new(capture_content: bool) -> Self {
        Self {
            capture_content,
            turns: HashMap::new(),
            models: HashMap::new(),
            scope: InstrumentationScope::builder("tooltrail")
                .with_version(env!("CARGO_PKG_VERSION"))
                .build(),
        }
    }

    pub fn capture_content(&self) -> bool {
        self.capture_content
    }

    /// Notes where `model` is asked, for the spans of the turns that ask it.
    pub fn note_model(&mut self, model: &str, endpoint: ModelEndpoint) {
        self.models.insert(model.to_string(), endpoint);
    }

    /// The span a request made now should name as its parent: the open model request of the
    /// turn, else the turn itself.
    pub fn current_parent(&self, turn_id: &str) -> Option<TraceParent> {
        let turn = self.turns.get(turn_id)?;
        let span = turn.chat.as_ref().map_or(turn.root, |chat| chat.id);
        Some(TraceParent::of_span(turn.trace_id, span))
    }

    /// The span of tool call `call_id` of the turn, as a parent for what the tool does (an MCP
    /// server that traces files its work under it).
    pub fn call_parent(&self, turn_id: &str, call_id: &str) -> Option<TraceParent> {
        let turn = self.turns.get(turn_id)?;
        Some(TraceParent::of_span(
            turn.trace_id,
            span_id(&[&turn.turn_id, "call", call_id]),
        ))
    }

    /// Takes one event; returns the spans it finished. `parent` is used when the event starts
    /// a turn.
    pub fn observe(&mut self, event: &Event, parent: Option<&TraceParent>) -> Vec<SpanData> {
        let now = time_of(event.time_ms);
        let mut done = Vec::new();
        if let EventBody::TurnStarted {
            model,
            user_message,
            ..
        } = &event.body
        {
            let (trace_id, remote_parent) = match parent {
                Some(parent) => (parent.trace_id, Some(parent.span_id)),
                None => (trace_id_of_turn(&event.turn_id), None),
            };
            self.turns.insert(
                event.turn_id.clone(),
                TurnState {
                    trace_id,
                    root: span_id(&[&event.turn_id]),
                    remote_parent,
                    conversation_id: event.conversation_id.clone(),
                    turn_id: event.turn_id.clone(),
                    model: model.clone(),
                    endpoint: self.models.get(model).cloned().unwrap_or_default(),
                    start: now,
                    user_message: user_message.clone(),
                    tool_mode: None,
                    input_tokens: 0,
                    output_tokens: 0,
                    calls: 0,
                    last_fatal: None,
                    chat: None,
                    tools: HashMap::new(),
                    errors: Vec::new(),
                },
            );
            return done;
        }
        let capture = self.capture_content;
        let scope = self.scope.clone();
        let Some(turn) = self.turns.get_mut(&event.turn_id) else {
            return done;
        };
        match &event.body {
            EventBody::TurnStarted { .. } => {}
            EventBody::ContextUsage {
                round,
                used_tokens,
                window_tokens,
            } => {
                if let Some(chat) = turn.chat.take() {
                    done.push(turn.chat_span(chat, now, None, capture, &scope));
                }
                turn.chat = Some(ChatState {
                    round: *round,
                    id: span_id(&[&turn.turn_id, "chat", &round.to_string()]),
                    start: now,
                    used_tokens: *used_tokens,
                    window_tokens: *window_tokens,
                    input_tokens: None,
                    output_tokens: None,
                    truncated: false,
                    error: None,
                });
            }
            EventBody::Usage(usage) => {
                turn.input_tokens += u64::from(usage.prompt_tokens);
                turn.output_tokens += u64::from(usage.completion_tokens);
                if let Some(chat) = &mut turn.chat {
                    chat.input_tokens = Some(usage.prompt_tokens);
                    chat.output_tokens = Some(usage.completion_tokens);
                }
            }
            EventBody::AnswerTruncated { .. } => {
                if let Some(chat) = &mut turn.chat {
                    chat.truncated = true;
                }
            }
            EventBody::ToolModeUsed { mode, .. } => turn.tool_mode = Some(mode.as_str()),
            EventBody::MessageAdded { message } => match message {
                Message::Assistant { .. } => {
                    if let Some(chat) = turn.chat.take() {
                        done.push(turn.chat_span(chat, now, Some(message), capture, &scope));
                    }
                }
                Message::System { .. } | Message::User { .. } | Message::Tool { .. } => {}
            },
            EventBody::ApprovalRequested { call_id, .. } => {
                turn.tools.entry(call_id.clone()).or_default().requested = Some(now);
            }
            EventBody::ToolCallStarted { call_id, .. } => {
                turn.tools.entry(call_id.clone()).or_default().started = Some(now);
            }
            EventBody::ToolCallFinished {
                round,
                call_id,
                tool,
                source,
                description,
                arguments,
                status,
                duration_ms,
                result,
                error,
                approval,
                truncated_for_model,
                ..
            } => {
                turn.calls += 1;
                let state = turn.tools.remove(call_id).unwrap_or_default();
                let ran_for = Duration::from_millis(*duration_ms);
                let start = state
                    .requested
                    .or(state.started)
                    .unwrap_or_else(|| now.checked_sub(ran_for).unwrap_or(now));
                let id = span_id(&[&turn.turn_id, "call", call_id]);
                let decided = state.started.unwrap_or(now);
                let wait = state
                    .requested
                    .map(|asked| decided.duration_since(asked).unwrap_or_default());
                let (by, rule) = match &approval.by {
                    ApprovalBy::Policy => ("policy", None),
                    ApprovalBy::User => ("user", None),
                    ApprovalBy::Conversation => ("conversation", None),
                    ApprovalBy::Rule { id } => ("rule", Some(id.clone())),
                    ApprovalBy::Setting => ("setting", None),
                };
                let decision = if approval.allowed {
                    "allowed"
                } else {
                    "denied"
                };
                let mut attributes = vec![
                    kv("gen_ai.operation.name", "execute_tool"),
                    kv("gen_ai.tool.name", tool.clone()),
                    kv("gen_ai.tool.call.id", call_id.clone()),
                    kv(
                        "gen_ai.tool.type",
                        match source {
                            ToolSource::Builtin => "function",
                            ToolSource::Mcp { .. } => "extension",
                        },
                    ),
                    kv("gen_ai.tool.description", description.clone()),
                    kv("gen_ai.conversation.id", turn.conversation_id.clone()),
                    kv("tooltrail.conversation.id", turn.conversation_id.clone()),
                    kv("tooltrail.round", int(*round)),
                    kv("tooltrail.tool.status", status.as_str()),
                    kv("tooltrail.decision", decision),
                    kv("tooltrail.decision.by", by),
                    kv("tooltrail.duration_ms", int(*duration_ms)),
                    kv("tooltrail.truncated_for_model", *truncated_for_model),
                ];
                if let Some(rule) = rule {
                    attributes.push(kv("tooltrail.rule", rule));
                }
                if let Some(mode) = turn.tool_mode {
                    attributes.push(kv("tooltrail.tool_mode", mode));
                }
                if let Some(wait) = wait {
                    attributes.push(kv("tooltrail.approval.wait_ms", int(wait.as_millis())));
                }
                match source {
                    ToolSource::Builtin => {
                        if tool == "execute_bash"
                            && let Some(sandbox) = &turn.endpoint.sandbox
                        {
                            attributes.push(kv("tooltrail.sandbox", sandbox.clone()));
                        }
                    }
                    ToolSource::Mcp { server } => {
                        attributes.push(kv("mcp.method.name", "tools/call"));
                        attributes.push(kv("tooltrail.mcp.server", server.clone()));
                    }
                }
                let error_type = match status {
                    ToolStatus::Success => None,
                    ToolStatus::Error
                    | ToolStatus::Denied
                    | ToolStatus::Cancelled
                    | ToolStatus::Timeout => Some(
                        error
                            .as_ref()
                            .map_or(status.as_str(), |error| error.code.as_str()),
                    ),
                };
                if let Some(error_type) = error_type {
                    attributes.push(kv("error.type", error_type));
                }
                if capture {
                    attributes.push(kv("gen_ai.tool.call.arguments", arguments.to_string()));
                    attributes.push(kv("gen_ai.tool.call.result", result.clone()));
                    if let Some(reason) = &approval.reason {
                        attributes.push(kv("tooltrail.decision.reason", reason.clone()));
                    }
                }
                let status = match (error_type, error) {
                    (None, _) => Status::Unset,
                    (Some(_), Some(error)) if capture => Status::error(error.message.clone()),
                    (Some(kind), _) => Status::error(kind.to_string()),
                };
                if let Some(asked) = state.requested {
                    done.push(SpanData {
                        span_context: context(
                            turn.trace_id,
                            span_id(&[&turn.turn_id, "approval", call_id]),
                        ),
                        parent_span_id: id,
                        parent_span_is_remote: false,
                        span_kind: SpanKind::Internal,
                        name: Cow::Owned(format!("approval {tool}")),
                        start_time: asked,
                        end_time: decided,
                        attributes: vec![
                            kv("gen_ai.tool.name", tool.clone()),
                            kv("gen_ai.tool.call.id", call_id.clone()),
                            kv("tooltrail.decision", decision),
                            kv("tooltrail.decision.by", by),
                            kv(
                                "tooltrail.approval.wait_ms",
                                int(wait.unwrap_or_default().as_millis()),
                            ),
                        ],
                        dropped_attributes_count: 0,
                        events: SpanEvents::default(),
                        links: SpanLinks::default(),
                        status: Status::Unset,
                        instrumentation_scope: scope.clone(),
                    });
                }
                done.push(SpanData {
                    span_context: context(turn.trace_id, id),
                    parent_span_id: turn.root,
                    parent_span_is_remote: false,
                    span_kind: SpanKind::Internal,
                    name: Cow::Owned(format!("execute_tool {tool}")),
                    start_time: start,
                    end_time: now.max(start),
                    attributes,
                    dropped_attributes_count: 0,
                    events: SpanEvents::default(),
                    links: SpanLinks::default(),
                    status,
                    instrumentation_scope: scope,
                });
            }
            EventBody::Error {
                code,
                message,
                fatal,
            } => {
                if *fatal {
                    turn.last_fatal = Some(*code);
                    if let Some(chat) = &mut turn.chat {
                        chat.error = Some(*code);
                    }
                }
                turn.errors.push(opentelemetry::trace::Event::new(
                    "tooltrail.error",
                    now,
                    vec![
                        kv("error.type", error_code(*code)),
                        kv("tooltrail.error.fatal", *fatal),
                        kv("tooltrail.error.message", message.clone()),
                    ],
                    0,
                ));
            }
            EventBody::TurnFinished {
                reason,
                rounds,
                text,
            } => {
                if let Some(turn) = self.turns.remove(&event.turn_id) {
                    done.extend(turn.finish(now, *reason, *rounds, text, capture, &scope));
                }
            }
            EventBody::TextDelta { .. }
            | EventBody::ToolCallDelta { .. }
            | EventBody::UserQuestion { .. }
            | EventBody::ToolCallProgress { .. }
            | EventBody::ElicitationRequested { .. }
            | EventBody::ElicitationAnswered { .. }
            | EventBody::SamplingRequested { .. }
            | EventBody::SamplingAnswered { .. }
            | EventBody::RoundLimitReached { .. }
            | EventBody::RepetitionStopped { .. } => {}
        }
        done
    }

    /// Ends every turn still open at `now` (the process is exiting, or the record stops in
    /// the middle of a turn), as cancelled.
    pub fn finish_open(&mut self, now: SystemTime) -> Vec<SpanData> {
        let capture = self.capture_content;
        let scope = self.scope.clone();
        self.turns
            .drain()
            .flat_map(|(_, turn)| turn.finish(now, TurnEnd::Cancelled, 0, "", capture, &scope))
            .collect()
    }
}

impl TurnState {
    fn common(&self) -> Vec<KeyValue> {
        let mut attributes = vec![
            kv("gen_ai.provider.name", provider_name(&self.endpoint)),
            kv("gen_ai.request.model", self.model.clone()),
            kv("gen_ai.conversation.id", self.conversation_id.clone()),
        ];
        if let Some((host, port)) = self.endpoint.base_url.as_deref().and_then(server_of) {
            attributes.push(kv("server.address", host));
            if let Some(port) = port {
                attributes.push(kv("server.port", int(port)));
            }
        }
        attributes
    }

    fn chat_span(
        &self,
        chat: ChatState,
        end: SystemTime,
        reply: Option<&Message>,
        capture: bool,
        scope: &InstrumentationScope,
    ) -> SpanData {
        let mut attributes = self.common();
        attributes.push(kv("gen_ai.operation.name", "chat"));
        // The events carry the model asked for, which is the one that answers on every
        // OpenAI-compatible server Tooltrail talks to.
        attributes.push(kv("gen_ai.response.model", self.model.clone()));
        attributes.push(kv("tooltrail.round", int(chat.round)));
        attributes.push(kv("tooltrail.context.used_tokens", int(chat.used_tokens)));
        attributes.push(kv(
            "tooltrail.context.window_tokens",
            int(chat.window_tokens),
        ));
        if let Some(tokens) = chat.input_tokens {
            attributes.push(kv("gen_ai.usage.input_tokens", int(tokens)));
        }
        if let Some(tokens) = chat.output_tokens {
            attributes.push(kv("gen_ai.usage.output_tokens", int(tokens)));
        }
        if let Some(mode) = self.tool_mode {
            attributes.push(kv("tooltrail.tool_mode", mode));
        }
        let finish = match (chat.truncated, reply) {
            (true, _) => Some("length"),
            (false, Some(Message::Assistant { tool_calls, .. })) if !tool_calls.is_empty() => {
                Some("tool_calls")
            }
            (false, Some(_)) => Some("stop"),
            (false, None) => None,
        };
        if let Some(finish) = finish {
            attributes.push(kv(
                "gen_ai.response.finish_reasons",
                Value::Array(Array::String(vec![StringValue::from(finish)])),
            ));
        }
        if capture
            && let Some(Message::Assistant {
                content,
                tool_calls,
            }) = reply
        {
            let mut parts = Vec::new();
            if !content.is_empty() {
                parts.push(json!({"type": "text", "content": content}));
            }
            for call in tool_calls {
                parts.push(json!({
                    "type": "tool_call", "id": call.id, "name": call.name,
                    "arguments": call.arguments,
                }));
            }
            let output = json!([{"role": "assistant", "parts": parts, "finish_reason": finish}]);
            attributes.push(kv("gen_ai.output.messages", output.to_string()));
        }
        let status = match chat.error {
            Some(code) => {
                attributes.push(kv("error.type", error_code(code)));
                Status::error(error_code(code))
            }
            None => Status::Unset,
        };
        SpanData {
            span_context: context(self.trace_id, chat.id),
            parent_span_id: self.root,
            parent_span_is_remote: false,
            span_kind: SpanKind::Client,
            name: Cow::Owned(format!("chat {}", self.model)),
            start_time: chat.start,
            end_time: end.max(chat.start),
            attributes,
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status,
            instrumentation_scope: scope.clone(),
        }
    }

    fn finish(
        mut self,
        end: SystemTime,
        reason: TurnEnd,
        rounds: u32,
        text: &str,
        capture: bool,
        scope: &InstrumentationScope,
    ) -> Vec<SpanData> {
        let mut done = Vec::new();
        if let Some(chat) = self.chat.take() {
            done.push(self.chat_span(chat, end, None, capture, scope));
        }
        let mut attributes = self.common();
        attributes.extend([
            kv("gen_ai.operation.name", "invoke_agent"),
            kv("gen_ai.agent.name", "tooltrail"),
            kv("tooltrail.conversation.id", self.conversation_id.clone()),
            kv("tooltrail.turn.id", self.turn_id.clone()),
            kv(
                "tooltrail.turn.end",
                match reason {
                    TurnEnd::Completed => "completed",
                    TurnEnd::RoundLimit => "round_limit",
                    TurnEnd::Cancelled => "cancelled",
                    TurnEnd::Error => "error",
                },
            ),
            kv("tooltrail.rounds", int(rounds)),
            kv("tooltrail.tool_calls", int(self.calls)),
            kv("gen_ai.usage.input_tokens", int(self.input_tokens)),
            kv("gen_ai.usage.output_tokens", int(self.output_tokens)),
        ]);
        if let Some(mode) = self.tool_mode {
            attributes.push(kv("tooltrail.tool_mode", mode));
        }
        if capture {
            let input = json!([{"role": "user", "parts": [{"type": "text", "content": self.user_message}]}]);
            let output =
                json!([{"role": "assistant", "parts": [{"type": "text", "content": text}]}]);
            attributes.push(kv("gen_ai.input.messages", input.to_string()));
            attributes.push(kv("gen_ai.output.messages", output.to_string()));
        }
        let status = match (reason, self.last_fatal) {
            (TurnEnd::Error, code) => {
                let kind = code.map_or("error", error_code);
                attributes.push(kv("error.type", kind));
                Status::error(kind)
            }
            (TurnEnd::Completed | TurnEnd::RoundLimit | TurnEnd::Cancelled, _) => Status::Unset,
        };
        // Calls that started but never finished (the turn was stopped) end with it.
        let open: Vec<(String, ToolState)> = self.tools.drain().collect();
        for (call_id, state) in open {
            let Some(start) = state.started.or(state.requested) else {
                continue;
            };
            done.push(SpanData {
                span_context: context(self.trace_id, span_id(&[&self.turn_id, "call", &call_id])),
                parent_span_id: self.root,
                parent_span_is_remote: false,
                span_kind: SpanKind::Internal,
                name: Cow::Borrowed("execute_tool"),
                start_time: start,
                end_time: end.max(start),
                attributes: vec![
                    kv("gen_ai.operation.name", "execute_tool"),
                    kv("gen_ai.tool.call.id", call_id.clone()),
                    kv("error.type", "cancelled"),
                ],
                dropped_attributes_count: 0,
                events: SpanEvents::default(),
                links: SpanLinks::default(),
                status: Status::error("cancelled"),
                instrumentation_scope: scope.clone(),
            });
        }
        done.push(SpanData {
            span_context: context(self.trace_id, self.root),
            parent_span_id: self.remote_parent.unwrap_or(SpanId::INVALID),
            parent_span_is_remote: self.remote_parent.is_some(),
            span_kind: SpanKind::Internal,
            name: Cow::Borrowed("invoke_agent tooltrail"),
            start_time: self.start,
            end_time: end.max(self.start),
            attributes,
            dropped_attributes_count: 0,
            events: span_events(std::mem::take(&mut self.errors)),
            links: SpanLinks::default(),
            status,
            instrumentation_scope: scope.clone(),
        });
        done
    }
}

fn span_events(events: Vec<opentelemetry::trace::Event>) -> SpanEvents {
    let mut all = SpanEvents::default();
    all.events = events;
    all
}

fn context(trace_id: TraceId, span_id: SpanId) -> SpanContext {
    SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::SAMPLED,
        false,
        TraceState::default(),
    )
}

/// `gen_ai.provider.name`: the well-known name when the endpoint is a known service, else the
/// configured provider's id, else the protocol every endpoint here speaks.
fn provider_name(endpoint: &ModelEndpoint) -> String {
    let host = endpoint
        .base_url
        .as_deref()
        .and_then(server_of)
        .map(|(host, _)| host)
        .unwrap_or_default();
    let known = [
        ("api.openai.com", "openai"),
        ("api.deepseek.com", "deepseek"),
        ("api.anthropic.com", "anthropic"),
        ("api.mistral.ai", "mistral_ai"),
        ("api.groq.com", "groq"),
        ("api.x.ai", "x_ai"),
        ("openrouter.ai", "openrouter"),
    ];
    known
        .iter()
        .find(|(name, _)| host == *name)
        .map(|(_, provider)| (*provider).to_string())
        .or_else(|| endpoint.provider.clone())
        .unwrap_or_else(|| "openai_compatible".to_string())
}

/// The host and port of a base URL.
fn server_of(url: &str) -> Option<(String, Option<u16>)> {
    let url = reqwest::Url::parse(url).ok()?;
    Some((url.host_str()?.to_string(), url.port_or_known_default()))
}

fn error_code(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::Unreachable => "unreachable",
        ErrorCode::Unauthorized => "unauthorized",
        ErrorCode::NotFound => "not_found",
        ErrorCode::BadRequest => "bad_request",
        ErrorCode::RateLimited => "rate_limited",
        ErrorCode::ServerError => "server_error",
        ErrorCode::Timeout => "timeout",
        ErrorCode::InvalidResponse => "invalid_response",
        ErrorCode::IncompleteResponse => "incomplete_response",
        ErrorCode::ModelError => "model_error",
        ErrorCode::Internal => "internal",
    }
}

/// The one span of "Send a test trace": an `invoke_agent` span that says what it is.
pub(crate) fn test_span(turn_id: &str) -> SpanData {
    let now = SystemTime::now();
    SpanData {
        span_context: context(trace_id_of_turn(turn_id), span_id(&[turn_id])),
        parent_span_id: SpanId::INVALID,
        parent_span_is_remote: false,
        span_kind: SpanKind::Internal,
        name: Cow::Borrowed("invoke_agent tooltrail"),
        start_time: now.checked_sub(Duration::from_millis(1)).unwrap_or(now),
        end_time: now,
        attributes: vec![
            kv("gen_ai.operation.name", "invoke_agent"),
            kv("gen_ai.agent.name", "tooltrail"),
            kv("tooltrail.test", true),
        ],
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links: SpanLinks::default(),
        status: Status::Unset,
        instrumentation_scope: InstrumentationScope::builder("tooltrail")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build(),
    }
}
