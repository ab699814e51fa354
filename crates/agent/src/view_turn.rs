//! A view turn: the calls an MCP App view makes, outside any round of the model's.
//!
//! A view (see `tooltrail_protocol::view`) may call its own server's tools. Each of those calls
//! goes through the same steps as a call the model makes — the tool's gate, the folder's
//! standing rules, "allow for this conversation", the user's approval — because it runs through
//! the same [`Dispatcher`], one call at a time, and is recorded in the view's own turn, whose
//! first event names the call that opened the view.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tooltrail_protocol::{
    Event, EventBody, ToolCall, ToolError, ToolErrorCode, ToolOutput, ToolSource, ToolSpec,
    ToolStatus, ViewEnd,
};
use tooltrail_tools::{Gate, Tool, ToolContext, ToolRegistry};

use crate::approval::{Approver, DenyAll, RuleBook};
use crate::config::AgentConfig;
use crate::conversation::Conversation;
use crate::dispatch::Dispatcher;
use crate::sink::{Emitter, EventSink};

/// How one call of a view ended, as the view is told.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewCallOutcome {
    pub status: ToolStatus,
    /// The result's text, or why there is none.
    pub text: String,
    /// The tool's structured result (an MCP tool's whole result), when it ran.
    pub data: Option<Value>,
}

/// The record of one open view: its events go to `sink` under the view's own turn.
pub struct ViewTurn {
    conversation_id: String,
    view_id: String,
    sink: Arc<dyn EventSink>,
    /// The next event's sequence number; held across a whole call so a view's calls are
    /// recorded one after the other.
    seq: tokio::sync::Mutex<u64>,
    /// Numbers the view's calls (`vc_<view>_<n>`).
    calls: AtomicU64,
    closed: AtomicBool,
}

/// What the view needs to run one call: the folder's context, the rules and who approves.
pub struct ViewCallScope<'a> {
    pub ctx: &'a ToolContext,
    pub config: &'a AgentConfig,
    pub rules: Option<&'a dyn RuleBook>,
    pub approver: &'a dyn Approver,
    /// The conversation's "allow for this conversation" answers given to views.
    pub allowances: &'a mut Conversation,
}

impl ViewTurn {
    /// Opens the view's turn with `opened` (a `view_opened` body) as its first event.
    pub fn open(
        conversation_id: impl Into<String>,
        view_id: impl Into<String>,
        sink: Arc<dyn EventSink>,
        opened: EventBody,
    ) -> Self {
        let turn = Self {
            conversation_id: conversation_id.into(),
            view_id: view_id.into(),
            sink,
            seq: tokio::sync::Mutex::new(1),
            calls: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        };
        turn.emitter(turn.sink.as_ref(), 0).emit(opened);
        turn
    }

    /// What stamps the view turn's events from `seq` on.
    fn emitter<'a>(&self, sink: &'a dyn EventSink, seq: u64) -> Emitter<'a> {
        Emitter::continuing(
            self.conversation_id.clone(),
            self.view_id.clone(),
            sink,
            seq,
        )
    }

    fn next_call_id(&self) -> String {
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        format!("vc_{}_{number}", self.view_id)
    }

    /// Runs one call the view asked for, of `tool` (already found among the tools its server
    /// lets views call), through approval, onto the record.
    pub async fn call(
        &self,
        tool: Arc<dyn Tool>,
        arguments: Value,
        scope: ViewCallScope<'_>,
    ) -> ViewCallOutcome {
        let name = tool.spec().name.clone();
        let mut registry = ToolRegistry::new();
        // A registry of one: a name clash cannot happen.
        let _ = registry.register(tool);
        let call = ToolCall {
            id: self.next_call_id(),
            name,
            arguments: arguments.to_string(),
        };
        let mut seq = self.seq.lock().await;
        if self.is_closed() {
            return closed_outcome();
        }
        let capture = Capture::new(self.sink.as_ref(), &call.id);
        let emitter = self.emitter(&capture, *seq);
        let mut dispatcher = Dispatcher::new(
            &registry,
            scope.ctx,
            scope.config,
            &emitter,
            scope.rules,
            None,
        );
        // Each call of a view counts on its own: a view that polls makes the same call again
        // and again, which is no sign of a model going round in circles.
        let mut seen = HashMap::new();
        dispatcher
            .run_round(
                0,
                std::slice::from_ref(&call),
                scope.allowances,
                &mut seen,
                scope.approver,
            )
            .await;
        *seq = emitter.next_seq();
        capture.outcome()
    }

    /// Records a call the view may not make (a tool not meant for views, another server's),
    /// refused with `reason` before anything of it ran. It goes the same way as any call,
    /// through a stand-in tool the policy refuses, so it is recorded as a refusal by policy.
    pub async fn refuse(
        &self,
        name: &str,
        arguments: Value,
        reason: &str,
        source: ToolSource,
        ctx: &ToolContext,
    ) -> ViewCallOutcome {
        let tool = Arc::new(Refused {
            spec: ToolSpec {
                name: name.to_string(),
                description: String::new(),
                parameters: serde_json::json!({ "type": "object" }),
                read_only: false,
            },
            source,
            error: ToolError::new(ToolErrorCode::Denied, reason),
        });
        let mut nobody = Conversation::new();
        let scope = ViewCallScope {
            ctx,
            config: &AgentConfig::default(),
            rules: None,
            approver: &DenyAll,
            allowances: &mut nobody,
        };
        self.call(tool, arguments, scope).await
    }

    /// Ends the view's turn; later calls are not made. Closing twice records it once.
    pub async fn close(&self, reason: ViewEnd) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut seq = self.seq.lock().await;
        let emitter = self.emitter(self.sink.as_ref(), *seq);
        emitter.emit(EventBody::ViewClosed { reason });
        *seq = emitter.next_seq();
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

/// A tool a view asked for and may not call: the policy refuses every call of it.
struct Refused {
    spec: ToolSpec,
    source: ToolSource,
    error: ToolError,
}

#[async_trait::async_trait]
impl Tool for Refused {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn source(&self) -> ToolSource {
        self.source.clone()
    }

    fn gate(&self, _args: &Value, _ctx: &ToolContext) -> Gate {
        Gate::Refuse(self.error.clone())
    }

    async fn call(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(self.error.clone())
    }
}

/// What a call the view asked for just before it was closed gets: nothing of it ran.
fn closed_outcome() -> ViewCallOutcome {
    ViewCallOutcome {
        status: ToolStatus::Cancelled,
        text: "the view was closed before this call ran".to_string(),
        data: None,
    }
}

/// Passes every event on, keeping the end of one call.
struct Capture<'a> {
    inner: &'a dyn EventSink,
    call_id: &'a str,
    finished: Mutex<Option<ViewCallOutcome>>,
}

impl<'a> Capture<'a> {
    fn new(inner: &'a dyn EventSink, call_id: &'a str) -> Self {
        Self {
            inner,
            call_id,
            finished: Mutex::new(None),
        }
    }

    fn outcome(&self) -> ViewCallOutcome {
        self.finished
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_else(|| ViewCallOutcome {
                status: ToolStatus::Cancelled,
                text: "the call was stopped before it ran".to_string(),
                data: None,
            })
    }
}

impl EventSink for Capture<'_> {
    fn emit(&self, event: Event) {
        if let EventBody::ToolCallFinished {
            call_id,
            status,
            result,
            data,
            ..
        } = &event.body
            && call_id == self.call_id
        {
            *self.finished.lock().unwrap_or_else(|e| e.into_inner()) = Some(ViewCallOutcome {
                status: *status,
                text: result.clone(),
                data: data.clone(),
            });
        }
        self.inner.emit(event);
    }
}
