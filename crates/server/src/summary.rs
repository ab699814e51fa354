//! What the client is told about a turn besides its answer, gathered from the turn's events:
//! the model that answered, the tools that ran (`tool_execution`), the usage summed
//! over every model call, and the error that ended it.

use serde::Serialize;
use serde_json::{Value, json};
use tooltrail_host::TurnOutcome;
use tooltrail_protocol::{Event, EventBody, ToolCall, ToolError, ToolStatus, TurnEnd, Usage};

use crate::error::ApiError;

/// `tool_execution`, what clients of a server that runs tools read (docs/requirements.md),
/// plus the conversation the turn was recorded in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolExecution {
    /// Whether any tool ran on the server.
    pub executed: bool,
    /// The tools the server ran, one entry per call, in the order they finished.
    pub tools_called: Vec<String>,
    pub session_id: Option<String>,
    pub workspace_path: String,
    /// The conversation in Tooltrail's history (`tooltrail export -c ID`).
    pub conversation_id: String,
}

/// A turn as its events told it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub model: String,
    pub workspace: String,
    pub tools_called: Vec<String>,
    pub usage: Usage,
    /// The error that ended the turn: its code and sentence.
    pub fatal: Option<(String, String)>,
    /// The last round whose answer was cut by the token limit or the context window.
    pub truncated_round: Option<u32>,
}

impl Summary {
    pub fn observe(&mut self, event: &Event) {
        match &event.body {
            EventBody::TurnStarted {
                workspace, model, ..
            } => {
                self.model.clone_from(model);
                self.workspace.clone_from(workspace);
            }
            EventBody::ToolCallFinished { tool, .. } => self.tools_called.push(tool.clone()),
            EventBody::Usage(usage) => {
                self.usage.prompt_tokens += usage.prompt_tokens;
                self.usage.completion_tokens += usage.completion_tokens;
                self.usage.total_tokens += usage.total_tokens;
            }
            EventBody::Error {
                code,
                message,
                fatal: true,
            } => {
                let code = serde_json::to_value(code)
                    .ok()
                    .and_then(|code| code.as_str().map(str::to_string))
                    .unwrap_or_else(|| "model_error".to_string());
                self.fatal = Some((code, message.clone()));
            }
            EventBody::Error { fatal: false, .. }
            | EventBody::MessageAdded { .. }
            | EventBody::TextDelta { .. }
            | EventBody::ToolCallDelta { .. }
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
            | EventBody::ContextUsage { .. }
            | EventBody::RepetitionStopped { .. }
            | EventBody::ViewOpened { .. }
            | EventBody::ViewClosed { .. }
            | EventBody::TurnFinished { .. } => {}
            EventBody::AnswerTruncated { round } => self.truncated_round = Some(*round),
        }
    }

    pub fn execution(&self, session_id: Option<String>, conversation_id: String) -> ToolExecution {
        ToolExecution {
            executed: !self.tools_called.is_empty(),
            tools_called: self.tools_called.clone(),
            session_id,
            workspace_path: self.workspace.clone(),
            conversation_id,
        }
    }
}

/// Calls for the client to run, in OpenAI's shape, numbered from 0.
pub fn client_calls(calls: &[ToolCall]) -> Vec<Value> {
    calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            json!({
                "index": index,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            })
        })
        .collect()
}

/// A finished call's result as the stream's `tool_result` carries it; a call that did not
/// succeed has the `tool_failed` error with the tool's name (and Tooltrail's finer code).
pub fn tool_result(
    tool: &str,
    status: ToolStatus,
    duration_ms: u64,
    result: &str,
    error: Option<&ToolError>,
) -> Value {
    let mut value = json!({
        "success": status == ToolStatus::Success,
        "status": status.as_str(),
        "duration_ms": duration_ms,
        "content": result,
    });
    if status != ToolStatus::Success {
        let message = error.map_or_else(|| result.to_string(), |error| error.message.clone());
        value["error"] = json!({
            "message": format!("Tool execution failed: {message}"),
            "type": "tool_execution_error",
            "code": "tool_failed",
            "tool_name": tool,
            "tool_code": error.map(|error| error.code.as_str()),
        });
    }
    value
}

/// The error a turn that did not answer ends the request with.
pub fn end_error(outcome: &TurnOutcome, summary: &Summary) -> Option<ApiError> {
    match outcome.end {
        TurnEnd::Completed | TurnEnd::RoundLimit => None,
        TurnEnd::Cancelled => Some(ApiError::shutting_down()),
        TurnEnd::Error => {
            let (code, message) = summary.fatal.clone().unwrap_or_else(|| {
                (
                    "model_error".to_string(),
                    outcome
                        .error
                        .clone()
                        .unwrap_or_else(|| "The model endpoint failed.".to_string()),
                )
            });
            Some(ApiError::model(&code, message))
        }
    }
}

/// `length` when the final answer was cut by the token limit or the context window, as the
/// model server said it.
pub fn finish_reason(outcome: &TurnOutcome, summary: &Summary) -> &'static str {
    if !outcome.pending_calls.is_empty() {
        "tool_calls"
    } else if summary.truncated_round == Some(outcome.rounds) {
        "length"
    } else {
        "stop"
    }
}
