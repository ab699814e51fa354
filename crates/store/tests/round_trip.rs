//! Every field of every event the store keeps reads back as it was recorded: through the
//! recorder, then as the events a reopened conversation is shown from
//! ([`Store::conversation_events`], [`Store::turn_events`]), as a call's record and History's
//! rows, and through a JSON Lines export imported into another store.
//!
//! The events are exhaustive struct literals (no `..`), with every optional field set, every
//! list filled and every number other than zero, so a field added to a protocol type fails to
//! compile here until the test sets it, and then fails the test until the store keeps it. What
//! the store drops by design is said event by event in [`expected`].

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;

use pretty_assertions::assert_eq;
use serde_json::json;
use tooltrail_protocol::{
    ApprovalBy, ApprovalRecord, DiffHunk, DiffLine, DiffLineKind, ElicitationAction,
    ElicitationRequest, ErrorCode, Event, EventBody, FieldKind, FieldOption, FileChange, FormField,
    Media, MediaKind, Message, SamplingMessage, TaskProgress, TaskStatus, ToolCall, ToolError,
    ToolErrorCode, ToolMode, ToolSource, ToolStatus, TurnEnd, Usage, ViewEnd, ViewLink, WriteMode,
};
use tooltrail_store::{
    CallStatus, Format, HistoryFilter, HistoryRow, PREVIEW_BYTES, Store, ToolCallRecord,
};

const CONVERSATION: &str = "conv_every";
const TURN: &str = "turn_every";
const VIEW_TURN: &str = "view_every";
const WS: &str = "/home/dev/src/every";
const T0: i64 = 1_714_555_800_000;
const SERVER: &str = "charts";
const VIEW_URI: &str = "ui://charts/plot.html";

/// How many variants `EventBody` has. A new variant fails to compile in [`variant`]; give it
/// the next number, raise this, and record one in [`question_turn`] or [`view_turn`].
const VARIANTS: usize = 24;

/// Each variant's number, by an exhaustive match.
fn variant(body: &EventBody) -> usize {
    match body {
        EventBody::TurnStarted { .. } => 0,
        EventBody::MessageAdded { .. } => 1,
        EventBody::TextDelta { .. } => 2,
        EventBody::ToolCallDelta { .. } => 3,
        EventBody::ApprovalRequested { .. } => 4,
        EventBody::UserQuestion { .. } => 5,
        EventBody::PromptProgress { .. } => 6,
        EventBody::ToolCallStarted { .. } => 7,
        EventBody::ToolCallProgress { .. } => 8,
        EventBody::ElicitationRequested { .. } => 9,
        EventBody::ElicitationAnswered { .. } => 10,
        EventBody::SamplingRequested { .. } => 11,
        EventBody::SamplingAnswered { .. } => 12,
        EventBody::ToolCallFinished { .. } => 13,
        EventBody::ToolModeUsed { .. } => 14,
        EventBody::RoundLimitReached { .. } => 15,
        EventBody::Usage(_) => 16,
        EventBody::ContextUsage { .. } => 17,
        EventBody::AnswerTruncated { .. } => 18,
        EventBody::RepetitionStopped { .. } => 19,
        EventBody::Error { .. } => 20,
        EventBody::ViewOpened { .. } => 21,
        EventBody::ViewClosed { .. } => 22,
        EventBody::TurnFinished { .. } => 23,
    }
}

fn events(turn: &str, start_ms: i64, bodies: Vec<EventBody>) -> Vec<Event> {
    bodies
        .into_iter()
        .enumerate()
        .map(|(seq, body)| Event {
            conversation_id: CONVERSATION.into(),
            turn_id: turn.into(),
            seq: seq as u64,
            time_ms: start_ms + 7 * seq as i64,
            body,
        })
        .collect()
}

fn usage(prompt_tokens: u32) -> Usage {
    Usage {
        prompt_tokens,
        completion_tokens: 80,
        total_tokens: prompt_tokens + 80,
    }
}

/// The arguments of the call that runs, as its started and finished events both give them.
fn chart_arguments() -> serde_json::Value {
    json!({"series": "latency", "buckets": [1, 2, 4], "log": true})
}

/// Allowed by a standing rule, with a reason.
fn chart_approval() -> ApprovalRecord {
    ApprovalRecord {
        allowed: true,
        by: ApprovalBy::Rule {
            id: "rule_7".into(),
        },
        reason: Some("charts may always draw".into()),
    }
}

/// A result longer than a preview, so the row keeps a preview and the store the whole.
fn chart_result() -> String {
    (1..=40)
        .map(|n| format!("bucket {n}: {} calls, ünïcödé\n", n * 3))
        .collect()
}

fn chart_error() -> ToolError {
    ToolError::new(
        ToolErrorCode::Timeout,
        "the chart took too long; partial plot kept",
    )
}

/// `plot` as it starts: a call of an MCP server's tool with a view.
fn chart_started() -> EventBody {
    EventBody::ToolCallStarted {
        round: 1,
        call_id: "call_plot".into(),
        tool: "charts__plot".into(),
        source: ToolSource::Mcp {
            server: SERVER.into(),
        },
        description: "Plots a series.".into(),
        arguments: chart_arguments(),
        approval: chart_approval(),
        view: Some(ViewLink {
            resource_uri: VIEW_URI.into(),
        }),
    }
}

/// `plot` as it ends, every optional field set.
fn chart_finished() -> EventBody {
    EventBody::ToolCallFinished {
        round: 1,
        call_id: "call_plot".into(),
        tool: "charts__plot".into(),
        source: ToolSource::Mcp {
            server: SERVER.into(),
        },
        description: "Plots a series.".into(),
        arguments: chart_arguments(),
        status: ToolStatus::Timeout,
        duration_ms: 4_321,
        result: chart_result(),
        data: Some(json!({"points": [[1, 3], [2, 6]], "unit": "ms"})),
        error: Some(chart_error()),
        approval: chart_approval(),
        truncated_for_model: true,
        view: Some(ViewLink {
            resource_uri: VIEW_URI.into(),
        }),
    }
}

/// A form with a field of each kind, every optional part set.
fn form() -> ElicitationRequest {
    let field = |name: &str, kind: FieldKind, default: serde_json::Value| FormField {
        name: name.into(),
        title: format!("The {name}"),
        description: Some(format!("What {name} to use.")),
        required: true,
        kind,
        default: Some(default),
    };
    ElicitationRequest::Form {
        fields: vec![
            field(
                "email",
                FieldKind::Text {
                    format: Some("email".into()),
                },
                json!("dev@example.com"),
            ),
            field(
                "count",
                FieldKind::Number {
                    integer: true,
                    minimum: Some(1.0),
                    maximum: Some(12.5),
                },
                json!(3),
            ),
            field("log", FieldKind::Boolean, json!(true)),
            field(
                "colour",
                FieldKind::Choice {
                    options: vec![FieldOption {
                        value: "red".into(),
                        label: "Red".into(),
                    }],
                    multiple: true,
                },
                json!(["red"]),
            ),
        ],
    }
}

fn file_change() -> FileChange {
    FileChange {
        path: "notes/plot.md".into(),
        mode: WriteMode::Append,
        existed: true,
        added: 2,
        removed: 1,
        hunks: vec![DiffHunk {
            old_start: 3,
            new_start: 3,
            old_lines: 1,
            new_lines: 2,
            lines: vec![DiffLine {
                kind: DiffLineKind::Removed,
                old_line: Some(3),
                new_line: Some(4),
                text: "old line".into(),
            }],
        }],
        truncated: true,
    }
}

/// A question's turn: every event a question's turn has, in the order the engine emits them.
fn question_turn() -> Vec<Event> {
    let streamed = |round: u32, text: &str| EventBody::TextDelta {
        round,
        text: text.into(),
    };
    let call_streamed = |round: u32, arguments_delta: &str| EventBody::ToolCallDelta {
        round,
        index: 2,
        call_id: "call_plot".into(),
        tool: Some("charts__plot".into()),
        arguments_delta: arguments_delta.into(),
        view: Some(ViewLink {
            resource_uri: "ui://charts/plot.html".into(),
        }),
    };
    let bodies = vec![
        EventBody::TurnStarted {
            replay_of: Some("turn_asked_first".into()),
            workspace: WS.into(),
            model: "qwen3-coder".into(),
            user_message: "Plot the latency".into(),
        },
        EventBody::MessageAdded {
            message: Message::System {
                content: "You answer questions about a folder.".into(),
            },
        },
        EventBody::MessageAdded {
            message: Message::User {
                content: "Plot the latency".into(),
            },
        },
        EventBody::PromptProgress {
            round: 1,
            processed: 900,
            total: 1_200,
            cached: 300,
            elapsed_ms: 250,
        },
        EventBody::ContextUsage {
            round: 1,
            used_tokens: 1_200,
            window_tokens: 32_768,
        },
        EventBody::ToolModeUsed {
            mode: ToolMode::Prompt,
            fell_back: true,
        },
        streamed(1, "Let me plot it."),
        call_streamed(1, "{\"series\":"),
        EventBody::Usage(usage(1_200)),
        EventBody::MessageAdded {
            message: Message::Assistant {
                content: "Let me plot it.".into(),
                tool_calls: vec![ToolCall {
                    id: "call_plot".into(),
                    name: "charts__plot".into(),
                    arguments: chart_arguments().to_string(),
                }],
            },
        },
        EventBody::ApprovalRequested {
            call_id: "call_plot".into(),
            tool: "charts__plot".into(),
            arguments: chart_arguments(),
            summary: "plot latency".into(),
            cwd: Some("notes".into()),
            reason: "The tool may write a file.".into(),
            rule: Some("charts__plot".into()),
            change: Some(file_change()),
            once_only: true,
        },
        chart_started(),
        EventBody::ToolCallProgress {
            call_id: "call_plot".into(),
            tool: "charts__plot".into(),
            progress: 2.5,
            total: Some(10.0),
            message: Some("bucketing".into()),
            task: Some(TaskProgress {
                server: "charts".into(),
                tool: "plot".into(),
                task_id: "task-7".into(),
                status: TaskStatus::InputRequired,
                message: Some("Which scale?".into()),
            }),
        },
        EventBody::UserQuestion {
            call_id: "call_plot".into(),
            question: "Which scale?".into(),
            choices: vec!["linear".into(), "log".into()],
        },
        EventBody::ElicitationRequested {
            call_id: "call_plot".into(),
            request_id: "req_1".into(),
            server: SERVER.into(),
            message: "A few details, please.".into(),
            request: form(),
        },
        EventBody::ElicitationAnswered {
            call_id: "call_plot".into(),
            request_id: "req_1".into(),
            server: SERVER.into(),
            action: ElicitationAction::Accept,
            content: Some(json!({"email": "dev@example.com", "count": 3})),
            reason: Some("answered in the window".into()),
        },
        EventBody::ElicitationRequested {
            call_id: "call_plot".into(),
            request_id: "req_2".into(),
            server: SERVER.into(),
            message: "Sign in to the chart service.".into(),
            request: ElicitationRequest::Url {
                url: "https://charts.example.com/sign-in".into(),
            },
        },
        EventBody::SamplingRequested {
            call_id: "call_plot".into(),
            request_id: "req_3".into(),
            server: SERVER.into(),
            system_prompt: Some("Name charts.".into()),
            messages: vec![SamplingMessage {
                role: "user".into(),
                text: "Name this chart.".into(),
            }],
            max_tokens: 64,
        },
        EventBody::SamplingAnswered {
            call_id: "call_plot".into(),
            request_id: "req_3".into(),
            server: SERVER.into(),
            approved: true,
            text: Some("Latency by bucket".into()),
            model: Some("qwen3-coder".into()),
            usage: Some(usage(40)),
            reason: Some("the user said yes".into()),
        },
        chart_finished(),
        // A second call that never reports back: the turn's end cancels it.
        EventBody::ToolCallStarted {
            round: 2,
            call_id: "call_slow".into(),
            tool: "read_file".into(),
            source: ToolSource::Builtin,
            description: "Reads a file.".into(),
            arguments: json!({"path": "big.log"}),
            approval: ApprovalRecord {
                allowed: true,
                by: ApprovalBy::Conversation,
                reason: Some("allowed for this conversation".into()),
            },
            view: Some(ViewLink {
                resource_uri: "ui://files/view.html".into(),
            }),
        },
        EventBody::ToolCallProgress {
            call_id: "call_slow".into(),
            tool: "read_file".into(),
            progress: 7.0,
            total: Some(9.0),
            message: Some("reading".into()),
            task: None,
        },
        EventBody::MessageAdded {
            message: Message::Tool {
                tool_call_id: "call_plot".into(),
                name: "charts__plot".into(),
                content: "the plot".into(),
                media: vec![Media {
                    kind: MediaKind::Image,
                    mime_type: "image/png".into(),
                    data: "iVBORw0KGgo=".into(),
                }],
            },
        },
        EventBody::RoundLimitReached { limit: 2 },
        EventBody::AnswerTruncated { round: 2 },
        EventBody::RepetitionStopped {
            round: 2,
            tool: Some("read_file".into()),
            repeats: 3,
            tokens: 420,
            dropped: vec!["call_again".into()],
        },
        streamed(2, "The latency is"),
        call_streamed(2, "{\"path\":"),
        EventBody::Error {
            code: ErrorCode::RateLimited,
            message: "The model's server asked to slow down.".into(),
            fatal: true,
        },
        EventBody::TurnFinished {
            reason: TurnEnd::Error,
            rounds: 2,
            text: "The latency is".into(),
        },
    ];
    events(TURN, T0, bodies)
}

/// The view of `plot`'s turn: opened, one call of its own, closed.
fn view_turn() -> Vec<Event> {
    let bodies = vec![
        EventBody::ViewOpened {
            parent_turn_id: TURN.into(),
            parent_call_id: "call_plot".into(),
            server: SERVER.into(),
            tool: "charts__plot".into(),
            resource_uri: VIEW_URI.into(),
            csp: "default-src 'none'".into(),
            refused_domains: vec!["evil.example".into()],
            granted: vec!["clipboard-write".into()],
        },
        EventBody::ToolCallFinished {
            round: 3,
            call_id: "call_zoom".into(),
            tool: "charts__zoom".into(),
            source: ToolSource::Mcp {
                server: SERVER.into(),
            },
            description: "Zooms a plot.".into(),
            arguments: json!({"factor": 2}),
            status: ToolStatus::Denied,
            duration_ms: 15,
            result: "not now".into(),
            data: Some(json!({"zoom": 1})),
            error: Some(ToolError::new(ToolErrorCode::Denied, "not now")),
            approval: ApprovalRecord {
                allowed: false,
                by: ApprovalBy::User,
                reason: Some("not now".into()),
            },
            truncated_for_model: true,
            view: Some(ViewLink {
                resource_uri: VIEW_URI.into(),
            }),
        },
        EventBody::ViewClosed {
            reason: ViewEnd::Flooded,
        },
    ];
    events(VIEW_TURN, T0 + 10_000, bodies)
}

/// What the store gives back of `recorded`: everything, but for what it drops by design.
fn expected(recorded: &[Event]) -> Vec<Event> {
    recorded
        .iter()
        .filter(|event| match &event.body {
            // Streamed text and call fragments are dropped once the assistant message they
            // built is recorded (the message holds them whole); those streamed after the
            // turn's last assistant message (an answer cut off) are kept, every field.
            EventBody::TextDelta { round, .. } | EventBody::ToolCallDelta { round, .. } => {
                *round != 1
            }
            // A call's progress reports are dropped once it finished (its result says how it
            // ended); those of a call that never reported back are kept, every field.
            EventBody::ToolCallProgress { call_id, .. } => call_id != "call_plot",
            _ => true,
        })
        .cloned()
        .collect()
}

fn record(store: &Store, events: &[Event]) {
    let recorder = store.recorder().unwrap();
    for event in events {
        recorder.record(event.clone());
    }
    recorder.shutdown().unwrap();
}

/// `got` equals `want`, event by event, each failure naming the event.
fn assert_events(got: &[Event], want: &[Event]) {
    let names = |events: &[Event]| -> Vec<String> {
        events
            .iter()
            .map(|event| format!("{} {}", event.turn_id, event.body.kind()))
            .collect()
    };
    assert_eq!(names(got), names(want), "the events read back");
    for (got, want) in got.iter().zip(want) {
        assert_eq!(
            got,
            want,
            "{} event {} ({}) reads back with a field changed",
            want.turn_id,
            want.seq,
            want.body.kind()
        );
    }
}

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("tooltrail.sqlite3")).unwrap();
    (dir, store)
}

#[test]
fn every_field_of_every_kept_event_reads_back_as_recorded() {
    let (_dir, store) = open();
    let question = question_turn();
    let view = view_turn();
    let recorded: Vec<Event> = question.iter().chain(&view).cloned().collect();
    let variants: BTreeSet<usize> = recorded.iter().map(|event| variant(&event.body)).collect();
    assert_eq!(
        variants,
        (0..VARIANTS).collect::<BTreeSet<_>>(),
        "one event of every variant is recorded"
    );
    record(&store, &recorded);

    assert_events(&store.turn_events(TURN).unwrap(), &expected(&question));
    assert_events(&store.turn_events(VIEW_TURN).unwrap(), &expected(&view));
    let kept = expected(&recorded);
    assert_events(&store.conversation_events(CONVERSATION).unwrap(), &kept);

    // Exported as JSON Lines and imported into another store, the same events come back.
    let mut exported = Vec::new();
    store
        .export_conversation(CONVERSATION, Format::Jsonl, &mut exported)
        .unwrap();
    let lines: Vec<Event> = String::from_utf8(exported)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_events(&lines, &kept);
    let (_other_dir, other) = open();
    other.import(lines).unwrap();
    assert_events(&other.conversation_events(CONVERSATION).unwrap(), &kept);
}

/// The row History lists a call with, as `plot` ends.
fn plot_row(id: String) -> HistoryRow {
    let result = chart_result();
    // The result's first bytes, cut where a character ends.
    let mut preview = PREVIEW_BYTES;
    while !result.is_char_boundary(preview) {
        preview -= 1;
    }
    HistoryRow {
        id,
        conversation_id: CONVERSATION.into(),
        turn_id: TURN.into(),
        workspace: Some(WS.into()),
        call_id: "call_plot".into(),
        round: 1,
        tool: "charts__plot".into(),
        source: ToolSource::Mcp {
            server: SERVER.into(),
        },
        description: "Plots a series.".into(),
        arguments: chart_arguments(),
        // `plot` started with its `tool_call_started`, the 12th event of the turn.
        started_ms: T0 + 7 * 11,
        duration_ms: Some(4_321),
        status: CallStatus::Timeout,
        error: Some(chart_error()),
        result_preview: result[..preview].to_string(),
        result_size: result.len() as u64,
        truncated_for_model: true,
        approval: chart_approval(),
        view: Some(ViewLink {
            resource_uri: VIEW_URI.into(),
        }),
        view_of: None,
    }
}

#[test]
fn every_field_of_a_call_reads_back_in_its_record_and_in_history() {
    let (_dir, store) = open();
    record(&store, &question_turn());
    record(&store, &view_turn());

    let plot = store.call_in_turn(TURN, "call_plot").unwrap().unwrap();
    assert!(
        plot.row.result_preview.len() < chart_result().len(),
        "the result is longer than a preview"
    );
    let want = ToolCallRecord {
        row: plot_row(plot.row.id.clone()),
        result: chart_result(),
        data: Some(json!({"points": [[1, 3], [2, 6]], "unit": "ms"})),
    };
    assert_eq!(plot, want);
    assert_eq!(store.tool_call(&plot.row.id).unwrap(), want);

    let slow = store.call_in_turn(TURN, "call_slow").unwrap().unwrap();
    let want_slow = ToolCallRecord {
        row: HistoryRow {
            id: slow.row.id.clone(),
            conversation_id: CONVERSATION.into(),
            turn_id: TURN.into(),
            workspace: Some(WS.into()),
            call_id: "call_slow".into(),
            round: 2,
            tool: "read_file".into(),
            source: ToolSource::Builtin,
            description: "Reads a file.".into(),
            arguments: json!({"path": "big.log"}),
            // Its `tool_call_started` is the turn's 21st event.
            started_ms: T0 + 7 * 20,
            // It never reported back: the turn's end cancelled it, and no duration is known.
            duration_ms: None,
            status: CallStatus::Cancelled,
            error: Some(ToolError::new(
                ToolErrorCode::Cancelled,
                "The turn ended before this call reported back.",
            )),
            result_preview: String::new(),
            result_size: 0,
            truncated_for_model: false,
            approval: ApprovalRecord {
                allowed: true,
                by: ApprovalBy::Conversation,
                reason: Some("allowed for this conversation".into()),
            },
            view: Some(ViewLink {
                resource_uri: "ui://files/view.html".into(),
            }),
            view_of: None,
        },
        result: String::new(),
        data: None,
    };
    assert_eq!(slow, want_slow);
    let zoom = store.call_in_turn(VIEW_TURN, "call_zoom").unwrap().unwrap();
    let want_zoom = ToolCallRecord {
        row: HistoryRow {
            id: zoom.row.id.clone(),
            conversation_id: CONVERSATION.into(),
            turn_id: VIEW_TURN.into(),
            // The view's turn works in the folder of the call whose view it is.
            workspace: Some(WS.into()),
            call_id: "call_zoom".into(),
            round: 3,
            tool: "charts__zoom".into(),
            source: ToolSource::Mcp {
                server: SERVER.into(),
            },
            description: "Zooms a plot.".into(),
            arguments: json!({"factor": 2}),
            // It never started: it is dated its duration before its end, the turn's 2nd event.
            started_ms: T0 + 10_000 + 7 - 15,
            duration_ms: Some(15),
            status: CallStatus::Denied,
            error: Some(ToolError::new(ToolErrorCode::Denied, "not now")),
            result_preview: "not now".into(),
            result_size: 7,
            truncated_for_model: true,
            approval: ApprovalRecord {
                allowed: false,
                by: ApprovalBy::User,
                reason: Some("not now".into()),
            },
            view: Some(ViewLink {
                resource_uri: VIEW_URI.into(),
            }),
            view_of: Some(plot.row.id.clone()),
        },
        result: "not now".into(),
        data: Some(json!({"zoom": 1})),
    };
    assert_eq!(zoom, want_zoom);

    let filter = HistoryFilter {
        conversation: Some(CONVERSATION.into()),
        ..HistoryFilter::default()
    };
    let rows = store.history(&filter).unwrap().items;
    assert_eq!(rows, vec![zoom.row, slow.row, plot.row]);
}
