//! The streamed answer: one SSE stream that OpenAI clients and clients of a server that runs
//! tools (docs/requirements.md) both read.
//!
//! Every `data:` line is an OpenAI `chat.completion.chunk` that also carries a `type`
//! and `delta`:
//!
//! - `content`: a piece of the answer, in `choices[0].delta.content` and `delta.content`;
//! - `tool_call`: a tool call as the model streams it, in `delta.tool_calls` only, with empty
//!   `choices`: calls the server runs are not the client's to run;
//! - `tool_result`: a call the server ran (or refused) ended: `tool_call_id`, `tool_name`
//!   and `result {success, status, duration_ms, content, error?}`, with empty `choices`;
//! - `done`: the end, with `finish_reason`, `usage` summed over the turn's model calls and
//!   `tool_execution`; when the model called the client's own tools, they are in
//!   `choices[0].delta.tool_calls` (complete, numbered from 0) with `finish_reason`
//!   `tool_calls`, which is where OpenAI clients collect them;
//!
//! then `data: [DONE]`. A turn that fails after the stream began sends `{"error": {...}}`
//! (which OpenAI clients raise) before `[DONE]`. No chunk has a top-level `error` otherwise,
//! and no SSE `event:` names are used, as OpenAI clients treat both specially.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde_json::{Value, json};
use tooltrail_protocol::{Event, EventBody};

use crate::error::ApiError;
use crate::running::{Running, Update};
use crate::summary::{Summary, client_calls, end_error, finish_reason, tool_result};

/// How often a comment line is sent while nothing else is: it keeps proxies from closing an
/// idle stream, and a write to a client that left is how its leaving is noticed (the turn is
/// then cancelled).
const KEEP_ALIVE: Duration = Duration::from_secs(1);

struct State {
    running: Running,
    summary: Summary,
    queue: VecDeque<String>,
    finished: bool,
    with_tools: bool,
}

pub fn respond(running: Running) -> Response {
    let state = State {
        running,
        summary: Summary::default(),
        queue: VecDeque::new(),
        finished: false,
        with_tools: false,
    };
    Sse::new(chunks(state))
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}

fn chunks(state: State) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(data) = state.queue.pop_front() {
                return Some((Ok(SseEvent::default().data(data)), state));
            }
            if state.finished {
                return None;
            }
            match state.running.updates.recv().await {
                Some(Update::Event(event)) => {
                    state.summary.observe(&event);
                    if let Some(chunk) = state.chunk(&event) {
                        state.queue.push_back(chunk.to_string());
                    }
                }
                Some(Update::Done(outcome)) => {
                    state.finished = true;
                    state.with_tools |= !outcome.pending_calls.is_empty();
                    let error = end_error(&outcome, &state.summary);
                    match &error {
                        Some(error) => state.queue.push_back(error.body().to_string()),
                        None => {
                            let done = state.done(&outcome);
                            state.queue.push_back(done.to_string());
                        }
                    }
                    state.queue.push_back("[DONE]".to_string());
                    state.record(error.as_ref());
                }
                None => {
                    state.finished = true;
                    let error = ApiError::internal("The answer stopped unexpectedly.");
                    state.queue.push_back(error.body().to_string());
                    state.queue.push_back("[DONE]".to_string());
                    state.record(Some(&error));
                }
            }
        }
    })
}

impl State {
    fn record(&mut self, error: Option<&ApiError>) {
        if let Some(timer) = self.running.timer.take() {
            timer.finish(self.with_tools, error.map(|error| error.code.as_str()));
        }
    }

    fn base(&self, kind: &str, choices: Value) -> Value {
        json!({
            "id": self.running.id,
            "object": "chat.completion.chunk",
            "created": self.running.created,
            "model": self.summary.model,
            "type": kind,
            "choices": choices,
        })
    }

    fn chunk(&mut self, event: &Event) -> Option<Value> {
        match &event.body {
            EventBody::TurnStarted { .. } => {
                let mut chunk = self.base(
                    "content",
                    json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]),
                );
                chunk["delta"] = json!({"role": "assistant", "content": ""});
                Some(chunk)
            }
            EventBody::TextDelta { text, .. } => {
                let mut chunk = self.base(
                    "content",
                    json!([{"index": 0, "delta": {"content": text}, "finish_reason": null}]),
                );
                chunk["delta"] = json!({"content": text});
                Some(chunk)
            }
            EventBody::ToolCallDelta {
                index,
                call_id,
                tool,
                arguments_delta,
                ..
            } => {
                let mut call = json!({"index": index, "function": {"arguments": arguments_delta}});
                if !call_id.is_empty() {
                    call["id"] = json!(call_id);
                    call["type"] = json!("function");
                }
                if let Some(tool) = tool {
                    call["function"]["name"] = json!(tool);
                }
                let mut chunk = self.base("tool_call", json!([]));
                chunk["delta"] = json!({"tool_calls": [call]});
                Some(chunk)
            }
            EventBody::ToolCallFinished {
                call_id,
                tool,
                status,
                duration_ms,
                result,
                error,
                ..
            } => {
                self.with_tools = true;
                let mut chunk = self.base("tool_result", json!([]));
                chunk["tool_call_id"] = json!(call_id);
                chunk["tool_name"] = json!(tool);
                chunk["result"] = tool_result(tool, *status, *duration_ms, result, error.as_ref());
                Some(chunk)
            }
            EventBody::MessageAdded { .. }
            | EventBody::ApprovalRequested { .. }
            | EventBody::UserQuestion { .. }
            | EventBody::ElicitationRequested { .. }
            | EventBody::ElicitationAnswered { .. }
            | EventBody::SamplingRequested { .. }
            | EventBody::SamplingAnswered { .. }
            | EventBody::ToolCallStarted { .. }
            | EventBody::ToolCallProgress { .. }
            | EventBody::PromptProgress { .. }
            | EventBody::ToolModeUsed { .. }
            | EventBody::RoundLimitReached { .. }
            | EventBody::Usage(_)
            | EventBody::ContextUsage { .. }
            | EventBody::AnswerTruncated { .. }
            | EventBody::RepetitionStopped { .. }
            | EventBody::Error { .. }
            | EventBody::ViewOpened { .. }
            | EventBody::ViewClosed { .. }
            | EventBody::TurnFinished { .. } => None,
        }
    }

    fn done(&self, outcome: &tooltrail_host::TurnOutcome) -> Value {
        let reason = finish_reason(outcome, &self.summary);
        let delta = if outcome.pending_calls.is_empty() {
            json!({})
        } else {
            json!({"tool_calls": client_calls(&outcome.pending_calls)})
        };
        let mut chunk = self.base(
            "done",
            json!([{"index": 0, "delta": delta, "finish_reason": reason}]),
        );
        chunk["delta"] = delta;
        chunk["finish_reason"] = json!(reason);
        chunk["usage"] = json!(self.summary.usage);
        chunk["tool_execution"] = json!(self.summary.execution(
            self.running.session_id.clone(),
            self.running.conversation_id.clone()
        ));
        chunk
    }
}
