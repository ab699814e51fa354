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
    ApprovalBy, ApprovalRecord, ErrorCode, Event, EventBody, Message, ToolCall, ToolError,
    ToolSource, ToolStatus, TurnEnd, Usage,
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
    /// The turn this one replays, when it is a replay.
    replay_of: Option<String>,
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
            replay_of,
            ..
        } = &event.body
        {
            self.turn_started(event, model, user_message, replay_of.clone(), parent);
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
                let unanswered =
                    turn.model_round_started(*round, *used_tokens, *window_tokens, now);
                done.extend(
                    unanswered.map(|chat| turn.chat_span(chat, now, None, capture, &scope)),
                );
            }
            EventBody::Usage(usage) => turn.add_usage(usage),
            EventBody::AnswerTruncated { .. } => turn.answer_truncated(),
            EventBody::ToolModeUsed { mode, .. } => turn.tool_mode = Some(mode.as_str()),
            EventBody::MessageAdded { message } => {
                done.extend(turn.message_added(message, now, capture, &scope));
            }
            EventBody::ApprovalRequested { call_id, .. } => {
                turn.tools.entry(call_id.clone()).or_default().requested = Some(now);
            }
            EventBody::ToolCallStarted { call_id, .. } => {
                turn.tools.entry(call_id.clone()).or_default().started = Some(now);
            }
            EventBody::ToolCallFinished { .. } => {
                if let Some(call) = FinishedCall::of(&event.body) {
                    done.extend(turn.tool_call_finished(&call, now, capture, &scope));
                }
            }
            EventBody::Error {
                code,
                message,
                fatal,
            } => turn.error(*code, message, *fatal, now),
            EventBody::TurnFinished {
                reason,
                rounds,
                text,
            } => done.extend(self.turn_finished(&event.turn_id, now, *reason, *rounds, text)),
            EventBody::TextDelta { .. }
            | EventBody::ToolCallDelta { .. }
            | EventBody::UserQuestion { .. }
            | EventBody::ToolCallProgress { .. }
            | EventBody::PromptProgress { .. }
            | EventBody::ElicitationRequested { .. }
            | EventBody::ElicitationAnswered { .. }
            | EventBody::SamplingRequested { .. }
            | EventBody::SamplingAnswered { .. }
            | EventBody::RoundLimitReached { .. }
            | EventBody::RepetitionStopped { .. } => {}
            // A view turn has no `turn_started`, so none of its events reach here: the calls a
            // view makes are on the record, not in the traces.
            EventBody::ViewOpened { .. } | EventBody::ViewClosed { .. } => {}
        }
        done
    }

    /// Ends the turn's spans: its root and whatever is still open under it.
    fn turn_finished(
        &mut self,
        turn_id: &str,
        now: SystemTime,
        reason: TurnEnd,
        rounds: u32,
        text: &str,
    ) -> Vec<SpanData> {
        let Some(turn) = self.turns.remove(turn_id) else {
            return Vec::new();
        };
        turn.finish(now, reason, rounds, text, self.capture_content, &self.scope)
    }

    /// Opens the turn's root span: under the caller's span when there is one, else in a trace
    /// of its own.
    fn turn_started(
        &mut self,
        event: &Event,
        model: &str,
        user_message: &str,
        replay_of: Option<String>,
        parent: Option<&TraceParent>,
    ) {
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
                replay_of,
                model: model.to_string(),
                endpoint: self.models.get(model).cloned().unwrap_or_default(),
                start: time_of(event.time_ms),
                user_message: user_message.to_string(),
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

/// What a `tool_call_finished` event says, borrowed from it.
struct FinishedCall<'a> {
    round: u32,
    call_id: &'a str,
    tool: &'a str,
    source: &'a ToolSource,
    description: &'a str,
    arguments: &'a serde_json::Value,
    status: ToolStatus,
    duration_ms: u64,
    result: &'a str,
    error: Option<&'a ToolError>,
    approval: &'a ApprovalRecord,
    truncated_for_model: bool,
}

impl<'a> FinishedCall<'a> {
    /// The call `body` finished, if it is a `tool_call_finished` event.
    fn of(body: &'a EventBody) -> Option<Self> {
        let EventBody::ToolCallFinished {
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
        } = body
        else {
            return None;
        };
        Some(Self {
            round: *round,
            call_id,
            tool,
            source,
            description,
            arguments,
            status: *status,
            duration_ms: *duration_ms,
            result,
            error: error.as_ref(),
            approval,
            truncated_for_model: *truncated_for_model,
        })
    }

    /// Allowed or denied, by whom, and the rule's id when a rule decided.
    fn decision(&self) -> (&'static str, &'static str, Option<String>) {
        let (by, rule) = match &self.approval.by {
            ApprovalBy::Policy => ("policy", None),
            ApprovalBy::User => ("user", None),
            ApprovalBy::Conversation => ("conversation", None),
            ApprovalBy::Rule { id } => ("rule", Some(id.clone())),
            ApprovalBy::Setting => ("setting", None),
            ApprovalBy::Replay => ("replay", None),
        };
        let decision = if self.approval.allowed {
            "allowed"
        } else {
            "denied"
        };
        (decision, by, rule)
    }

    fn tool_type(&self) -> &'static str {
        match self.source {
            ToolSource::Builtin => "function",
            ToolSource::Mcp { .. } => "extension",
        }
    }

    /// The error's code, else the status, for a call that did not succeed.
    fn error_type(&self) -> Option<&'static str> {
        match self.status {
            ToolStatus::Success => None,
            ToolStatus::Error
            | ToolStatus::Denied
            | ToolStatus::Cancelled
            | ToolStatus::Timeout => Some(
                self.error
                    .map_or(self.status.as_str(), |error| error.code.as_str()),
            ),
        }
    }

    /// The span's status: the error's message only when content is captured (it may quote
    /// the arguments), else its kind.
    fn status(&self, capture: bool) -> Status {
        match (self.error_type(), self.error) {
            (None, _) => Status::Unset,
            (Some(_), Some(error)) if capture => Status::error(error.message.clone()),
            (Some(kind), _) => Status::error(kind.to_string()),
        }
    }
}

/// When a call's span starts, when its approval was decided, and how long that took.
struct CallTiming {
    start: SystemTime,
    decided: SystemTime,
    wait: Option<Duration>,
}

impl CallTiming {
    /// From when approval was asked, else when the call started, else its duration before
    /// `now`.
    fn of(state: &ToolState, now: SystemTime, duration_ms: u64) -> Self {
        let ran_for = Duration::from_millis(duration_ms);
        let start = state
            .requested
            .or(state.started)
            .unwrap_or_else(|| now.checked_sub(ran_for).unwrap_or(now));
        let decided = state.started.unwrap_or(now);
        let wait = state
            .requested
            .map(|asked| decided.duration_since(asked).unwrap_or_default());
        Self {
            start,
            decided,
            wait,
        }
    }
}

impl TurnState {
    /// Opens the span of model request `round`; returns the one still open before it (a
    /// request that got no reply), for the caller to end.
    fn model_round_started(
        &mut self,
        round: u32,
        used_tokens: u32,
        window_tokens: u32,
        now: SystemTime,
    ) -> Option<ChatState> {
        let previous = self.chat.take();
        self.chat = Some(ChatState {
            round,
            id: span_id(&[&self.turn_id, "chat", &round.to_string()]),
            start: now,
            used_tokens,
            window_tokens,
            input_tokens: None,
            output_tokens: None,
            truncated: false,
            error: None,
        });
        previous
    }

    fn answer_truncated(&mut self) {
        if let Some(chat) = &mut self.chat {
            chat.truncated = true;
        }
    }

    /// An assistant message is the reply to the open model request: it ends that request's
    /// span.
    fn message_added(
        &mut self,
        message: &Message,
        now: SystemTime,
        capture: bool,
        scope: &InstrumentationScope,
    ) -> Option<SpanData> {
        match message {
            Message::Assistant { .. } => {
                let chat = self.chat.take()?;
                Some(self.chat_span(chat, now, Some(message), capture, scope))
            }
            Message::System { .. } | Message::User { .. } | Message::Tool { .. } => None,
        }
    }

    /// Counts the tokens for the turn and for the open model request.
    fn add_usage(&mut self, usage: &Usage) {
        self.input_tokens += u64::from(usage.prompt_tokens);
        self.output_tokens += u64::from(usage.completion_tokens);
        if let Some(chat) = &mut self.chat {
            chat.input_tokens = Some(usage.prompt_tokens);
            chat.output_tokens = Some(usage.completion_tokens);
        }
    }

    /// Notes an error as an event of the turn's span; a fatal one also marks the open model
    /// request and, if the turn ends in an error, the turn.
    fn error(&mut self, code: ErrorCode, message: &str, fatal: bool, now: SystemTime) {
        if fatal {
            self.last_fatal = Some(code);
            if let Some(chat) = &mut self.chat {
                chat.error = Some(code);
            }
        }
        self.errors.push(opentelemetry::trace::Event::new(
            "tooltrail.error",
            now,
            vec![
                kv("error.type", error_code(code)),
                kv("tooltrail.error.fatal", fatal),
                kv("tooltrail.error.message", message.to_string()),
            ],
            0,
        ));
    }

    /// The spans of a finished call: the wait for approval, when there was one, and the call.
    fn tool_call_finished(
        &mut self,
        call: &FinishedCall<'_>,
        now: SystemTime,
        capture: bool,
        scope: &InstrumentationScope,
    ) -> Vec<SpanData> {
        self.calls += 1;
        let state = self.tools.remove(call.call_id).unwrap_or_default();
        let timing = CallTiming::of(&state, now, call.duration_ms);
        let id = span_id(&[&self.turn_id, "call", call.call_id]);
        let mut done = Vec::new();
        if let Some(asked) = state.requested {
            done.push(self.approval_span(call, id, asked, &timing, scope));
        }
        let attributes = self.tool_attributes(call, &timing, capture);
        done.push(SpanData {
            span_context: context(self.trace_id, id),
            parent_span_id: self.root,
            parent_span_is_remote: false,
            span_kind: SpanKind::Internal,
            name: Cow::Owned(format!("execute_tool {}", call.tool)),
            start_time: timing.start,
            end_time: now.max(timing.start),
            attributes,
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: call.status(capture),
            instrumentation_scope: scope.clone(),
        });
        done
    }

    /// The span of the wait for the user's decision on a call, under the call's span.
    fn approval_span(
        &self,
        call: &FinishedCall<'_>,
        call_span: SpanId,
        asked: SystemTime,
        timing: &CallTiming,
        scope: &InstrumentationScope,
    ) -> SpanData {
        let (decision, by, _) = call.decision();
        SpanData {
            span_context: context(
                self.trace_id,
                span_id(&[&self.turn_id, "approval", call.call_id]),
            ),
            parent_span_id: call_span,
            parent_span_is_remote: false,
            span_kind: SpanKind::Internal,
            name: Cow::Owned(format!("approval {}", call.tool)),
            start_time: asked,
            end_time: timing.decided,
            attributes: vec![
                kv("gen_ai.tool.name", call.tool.to_string()),
                kv("gen_ai.tool.call.id", call.call_id.to_string()),
                kv("tooltrail.decision", decision),
                kv("tooltrail.decision.by", by),
                kv(
                    "tooltrail.approval.wait_ms",
                    int(timing.wait.unwrap_or_default().as_millis()),
                ),
            ],
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: Status::Unset,
            instrumentation_scope: scope.clone(),
        }
    }

    /// A call's attributes: the GenAI ones, how it was decided, where it ran, how it failed,
    /// and its content when that is captured.
    fn tool_attributes(
        &self,
        call: &FinishedCall<'_>,
        timing: &CallTiming,
        capture: bool,
    ) -> Vec<KeyValue> {
        let (decision, by, rule) = call.decision();
        let mut attributes = vec![
            kv("gen_ai.operation.name", "execute_tool"),
            kv("gen_ai.tool.name", call.tool.to_string()),
            kv("gen_ai.tool.call.id", call.call_id.to_string()),
            kv("gen_ai.tool.type", call.tool_type()),
            kv("gen_ai.tool.description", call.description.to_string()),
            kv("gen_ai.conversation.id", self.conversation_id.clone()),
            kv("tooltrail.conversation.id", self.conversation_id.clone()),
            kv("tooltrail.round", int(call.round)),
            kv("tooltrail.tool.status", call.status.as_str()),
            kv("tooltrail.decision", decision),
            kv("tooltrail.decision.by", by),
            kv("tooltrail.duration_ms", int(call.duration_ms)),
            kv("tooltrail.truncated_for_model", call.truncated_for_model),
        ];
        if let Some(rule) = rule {
            attributes.push(kv("tooltrail.rule", rule));
        }
        if let Some(mode) = self.tool_mode {
            attributes.push(kv("tooltrail.tool_mode", mode));
        }
        if let Some(wait) = timing.wait {
            attributes.push(kv("tooltrail.approval.wait_ms", int(wait.as_millis())));
        }
        self.where_it_ran(call, &mut attributes);
        if let Some(error_type) = call.error_type() {
            attributes.push(kv("error.type", error_type));
        }
        if capture {
            attributes.push(kv("gen_ai.tool.call.arguments", call.arguments.to_string()));
            attributes.push(kv("gen_ai.tool.call.result", call.result.to_string()));
            if let Some(reason) = &call.approval.reason {
                attributes.push(kv("tooltrail.decision.reason", reason.clone()));
            }
        }
        attributes
    }

    /// The sandbox of a command, or the MCP server of a server's tool.
    fn where_it_ran(&self, call: &FinishedCall<'_>, attributes: &mut Vec<KeyValue>) {
        match call.source {
            ToolSource::Builtin => {
                if call.tool == "execute_bash"
                    && let Some(sandbox) = &self.endpoint.sandbox
                {
                    attributes.push(kv("tooltrail.sandbox", sandbox.clone()));
                }
            }
            ToolSource::Mcp { server } => {
                attributes.push(kv("mcp.method.name", "tools/call"));
                attributes.push(kv("tooltrail.mcp.server", server.clone()));
            }
        }
    }

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
        let mut attributes = self.chat_attributes(&chat, reply, capture);
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

    /// A model request's attributes: the GenAI ones, its context and tokens, why it stopped,
    /// and the reply when content is captured.
    fn chat_attributes(
        &self,
        chat: &ChatState,
        reply: Option<&Message>,
        capture: bool,
    ) -> Vec<KeyValue> {
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
        let finish = finish_reason(chat.truncated, reply);
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
            let output = reply_messages(content, tool_calls, finish);
            attributes.push(kv("gen_ai.output.messages", output));
        }
        attributes
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
        let mut attributes = self.turn_attributes(reason, rounds, text, capture);
        let status = match (reason, self.last_fatal) {
            (TurnEnd::Error, code) => {
                let kind = code.map_or("error", error_code);
                attributes.push(kv("error.type", kind));
                Status::error(kind)
            }
            (TurnEnd::Completed | TurnEnd::RoundLimit | TurnEnd::Cancelled, _) => Status::Unset,
        };
        done.extend(self.cancelled_calls(end, scope));
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

    /// The turn's attributes: the GenAI ones, how it ended, its counts and tokens, and the
    /// question and answer when content is captured.
    fn turn_attributes(
        &self,
        reason: TurnEnd,
        rounds: u32,
        text: &str,
        capture: bool,
    ) -> Vec<KeyValue> {
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
        if let Some(replay_of) = &self.replay_of {
            attributes.push(kv("tooltrail.replay_of", replay_of.clone()));
        }
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
        attributes
    }

    /// Calls that started but never finished (the turn was stopped) end with it.
    fn cancelled_calls(&mut self, end: SystemTime, scope: &InstrumentationScope) -> Vec<SpanData> {
        let open: Vec<(String, ToolState)> = self.tools.drain().collect();
        let mut done = Vec::new();
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
        done
    }
}

/// Why a model request stopped, as the GenAI conventions name it; none while it had no reply.
fn finish_reason(truncated: bool, reply: Option<&Message>) -> Option<&'static str> {
    match (truncated, reply) {
        (true, _) => Some("length"),
        (false, Some(Message::Assistant { tool_calls, .. })) if !tool_calls.is_empty() => {
            Some("tool_calls")
        }
        (false, Some(_)) => Some("stop"),
        (false, None) => None,
    }
}

/// A reply as the GenAI output messages: its text and its tool calls.
fn reply_messages(content: &str, tool_calls: &[ToolCall], finish: Option<&str>) -> String {
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
    output.to_string()
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
