//! Scripted turns: the events the engine would emit, built by hand.

#![allow(dead_code)]

use serde_json::{Value, json};
use tooltrail_protocol::{
    ApprovalBy, ApprovalRecord, Event, EventBody, Message, ToolCall, ToolError, ToolErrorCode,
    ToolSource, ToolStatus, TurnEnd, Usage,
};

pub const T0: i64 = 1_714_555_800_000;

/// Builds the events of one turn, numbering and timing them.
pub struct Script {
    pub conversation: String,
    pub turn: String,
    pub seq: u64,
    pub time_ms: i64,
    pub events: Vec<Event>,
}

impl Script {
    pub fn new(conversation: &str, turn: &str, time_ms: i64) -> Self {
        Self {
            conversation: conversation.into(),
            turn: turn.into(),
            seq: 0,
            time_ms,
            events: Vec::new(),
        }
    }

    pub fn push(&mut self, body: EventBody) -> &mut Self {
        self.events.push(Event {
            conversation_id: self.conversation.clone(),
            turn_id: self.turn.clone(),
            seq: self.seq,
            time_ms: self.time_ms,
            body,
        });
        self.seq += 1;
        self.time_ms += 7;
        self
    }

    pub fn start(&mut self, workspace: &str, question: &str) -> &mut Self {
        self.push(EventBody::TurnStarted {
            replay_of: None,
            workspace: workspace.into(),
            model: "qwen3-coder".into(),
            user_message: question.into(),
        })
    }

    pub fn message(&mut self, message: Message) -> &mut Self {
        self.push(EventBody::MessageAdded { message })
    }

    pub fn text(&mut self, round: u32, text: &str) -> &mut Self {
        self.push(EventBody::TextDelta {
            round,
            text: text.into(),
        })
    }

    pub fn call_delta(&mut self, round: u32, call_id: &str, tool: &str, args: &str) -> &mut Self {
        self.push(EventBody::ToolCallDelta {
            round,
            index: 0,
            call_id: call_id.into(),
            tool: Some(tool.into()),
            arguments_delta: args.into(),
            view: None,
        })
    }

    pub fn started(
        &mut self,
        round: u32,
        call_id: &str,
        tool: &str,
        arguments: Value,
    ) -> &mut Self {
        self.push(EventBody::ToolCallStarted {
            view: None,
            round,
            call_id: call_id.into(),
            tool: tool.into(),
            source: ToolSource::Builtin,
            description: format!("The {tool} tool."),
            arguments,
            approval: ApprovalRecord::not_needed(),
        })
    }

    pub fn finished(
        &mut self,
        round: u32,
        call_id: &str,
        tool: &str,
        arguments: Value,
        end: CallEnd,
    ) -> &mut Self {
        let CallEnd {
            status,
            result,
            error,
            approval,
        } = end;
        self.push(EventBody::ToolCallFinished {
            view: None,
            round,
            call_id: call_id.into(),
            tool: tool.into(),
            source: ToolSource::Builtin,
            description: format!("The {tool} tool."),
            arguments,
            status,
            duration_ms: 12,
            result,
            data: None,
            error,
            approval,
            truncated_for_model: false,
        })
    }

    pub fn usage(&mut self) -> &mut Self {
        self.push(EventBody::Usage(Usage {
            prompt_tokens: 1200,
            completion_tokens: 80,
            total_tokens: 1280,
        }))
    }

    pub fn end(&mut self, text: &str) -> &mut Self {
        self.push(EventBody::TurnFinished {
            reason: TurnEnd::Completed,
            rounds: 2,
            text: text.into(),
        })
    }
}

/// How a recorded call ended.
pub struct CallEnd {
    pub status: ToolStatus,
    pub result: String,
    pub error: Option<ToolError>,
    pub approval: ApprovalRecord,
}

pub fn call(id: &str, name: &str, arguments: &Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

/// A whole turn as the engine runs it: a read that succeeds (its result longer than a
/// preview), a command the user denies, then the answer.
pub fn sample_turn(
    conversation: &str,
    turn: &str,
    workspace: &str,
    time_ms: i64,
    first: bool,
) -> Script {
    let read = json!({"path": "src/parser.rs"});
    let bash = json!({"command": "rm -rf target"});
    let long: String = (1..=60)
        .map(|line| format!("{line}: fn parse_header_{line}(input: &str) -> Header {{ todo }}\n"))
        .collect();
    let denied = ToolError::new(ToolErrorCode::Denied, "the user denied this call: not now");
    let question = if first {
        "Where is the header parser?"
    } else {
        "And who calls it?"
    };
    let mut script = Script::new(conversation, turn, time_ms);
    script.start(workspace, question);
    if first {
        script.message(Message::system("You answer questions about a folder."));
    }
    script
        .message(Message::user(question))
        .text(1, "Let me ")
        .text(1, "look.")
        .call_delta(1, "call_a", "read_file", "{\"path\":")
        .call_delta(1, "call_a", "read_file", "\"src/parser.rs\"}")
        .usage()
        .push(EventBody::ToolModeUsed {
            mode: tooltrail_protocol::ToolMode::Prompt,
            fell_back: true,
        })
        .message(Message::assistant(
            "Let me look.",
            vec![
                call("call_a", "read_file", &read),
                call("call_b", "execute_bash", &bash),
            ],
        ))
        .started(1, "call_a", "read_file", read.clone())
        .push(EventBody::ToolCallProgress {
            call_id: "call_a".into(),
            tool: "read_file".into(),
            progress: 512.0,
            total: Some(4096.0),
            message: Some("reading".into()),
            task: None,
        })
        .finished(
            1,
            "call_a",
            "read_file",
            read,
            CallEnd {
                status: ToolStatus::Success,
                result: long.clone(),
                error: None,
                approval: ApprovalRecord::not_needed(),
            },
        )
        .push(EventBody::ApprovalRequested {
            call_id: "call_b".into(),
            tool: "execute_bash".into(),
            arguments: bash.clone(),
            summary: "rm -rf target".into(),
            cwd: Some(".".into()),
            reason: "The command may change files.".into(),
            rule: None,
            change: None,
            once_only: false,
        })
        .finished(
            1,
            "call_b",
            "execute_bash",
            bash,
            CallEnd {
                status: ToolStatus::Denied,
                result: denied.to_model_text(),
                error: Some(denied.clone()),
                approval: ApprovalRecord {
                    allowed: false,
                    by: ApprovalBy::User,
                    reason: Some("not now".into()),
                },
            },
        )
        .message(Message::tool("call_a", "read_file", &long))
        .message(Message::tool(
            "call_b",
            "execute_bash",
            denied.to_model_text(),
        ))
        .text(2, "It is in ")
        .text(2, "src/parser.rs.")
        .usage()
        .message(Message::assistant("It is in src/parser.rs.", vec![]))
        .end("It is in src/parser.rs.");
    script
}

/// The events a store gives back for `recorded`: streaming deltas are folded into the
/// assistant message recorded after them, progress reports into their call's result.
pub fn folded(recorded: &[Event]) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::new();
    for event in recorded {
        if let EventBody::MessageAdded {
            message: Message::Assistant { .. },
        } = &event.body
        {
            out.retain(|kept| {
                kept.turn_id != event.turn_id
                    || !matches!(
                        kept.body,
                        EventBody::TextDelta { .. } | EventBody::ToolCallDelta { .. }
                    )
            });
        }
        if let EventBody::ToolCallFinished { call_id, .. } = &event.body {
            out.retain(|kept| {
                !matches!(&kept.body, EventBody::ToolCallProgress { call_id: id, .. }
                    if kept.turn_id == event.turn_id && id == call_id)
            });
        }
        out.push(event.clone());
    }
    out
}
