//! The spans of a question, built from its events: one trace, the parent links, the GenAI
//! attributes, and no content unless it is turned on.

use std::collections::BTreeMap;

use opentelemetry::Value;
use opentelemetry::trace::{SpanId, Status};
use opentelemetry_sdk::trace::SpanData;
use pretty_assertions::assert_eq;
use serde_json::json;
use tooltrail_protocol::{
    ApprovalBy, ApprovalRecord, ErrorCode, Event, EventBody, Message, ToolCall, ToolError,
    ToolErrorCode, ToolMode, ToolSource, ToolStatus, TurnEnd, Usage,
};
use tooltrail_telemetry::{ModelEndpoint, TraceBuilder, TraceParent};

const TURN: &str = "turn_4bf92f3577b34da6a3ce929d0e0e4736";

fn event(seq: u64, time_ms: i64, body: EventBody) -> Event {
    Event {
        conversation_id: "conv_1".into(),
        turn_id: TURN.into(),
        seq,
        time_ms,
        body,
    }
}

fn finished(call_id: &str, tool: &str, source: ToolSource, status: ToolStatus) -> EventBody {
    let allowed = status != ToolStatus::Denied;
    EventBody::ToolCallFinished {
        view: None,
        round: 1,
        call_id: call_id.into(),
        tool: tool.into(),
        source,
        description: format!("what {tool} does"),
        arguments: json!({"path": "secret/plans.txt"}),
        status,
        duration_ms: if allowed { 20 } else { 0 },
        result: "the secret result".into(),
        data: None,
        error: (!allowed).then(|| ToolError::new(ToolErrorCode::Denied, "the user said no")),
        approval: ApprovalRecord {
            allowed,
            by: if allowed {
                ApprovalBy::Policy
            } else {
                ApprovalBy::User
            },
            reason: (!allowed).then(|| "not that file".to_string()),
        },
        truncated_for_model: false,
    }
}

/// A question with two built-in calls, a denied command and an MCP call.
fn question() -> Vec<Event> {
    let started = |call_id: &str, tool: &str, source: ToolSource| EventBody::ToolCallStarted {
        round: 1,
        call_id: call_id.into(),
        tool: tool.into(),
        source,
        description: String::new(),
        arguments: json!({}),
        approval: ApprovalRecord::not_needed(),
        view: None,
    };
    let mcp = ToolSource::Mcp {
        server: "everything".into(),
    };
    let bodies = vec![
        (
            1_000,
            EventBody::TurnStarted {
                replay_of: None,
                workspace: "/ws".into(),
                model: "qwen3".into(),
                user_message: "What is in the secret folder?".into(),
            },
        ),
        (
            1_001,
            EventBody::ContextUsage {
                round: 1,
                used_tokens: 900,
                window_tokens: 8192,
            },
        ),
        (
            1_010,
            EventBody::ToolModeUsed {
                mode: ToolMode::Native,
                fell_back: false,
            },
        ),
        (
            1_050,
            EventBody::Usage(Usage {
                prompt_tokens: 900,
                completion_tokens: 40,
                total_tokens: 940,
            }),
        ),
        (
            1_051,
            EventBody::MessageAdded {
                message: Message::assistant(
                    "",
                    vec![ToolCall {
                        id: "call_a".into(),
                        name: "read_file".into(),
                        arguments: "{}".into(),
                    }],
                ),
            },
        ),
        (1_052, started("call_a", "read_file", ToolSource::Builtin)),
        (1_053, started("call_b", "search_text", ToolSource::Builtin)),
        (
            1_060,
            EventBody::ApprovalRequested {
                call_id: "call_c".into(),
                tool: "execute_bash".into(),
                arguments: json!({"command": "rm secret"}),
                summary: "rm secret".into(),
                cwd: None,
                reason: "it changes files".into(),
                rule: None,
                change: None,
                once_only: false,
            },
        ),
        (1_061, started("call_d", "echo", mcp.clone())),
        (
            1_072,
            finished(
                "call_a",
                "read_file",
                ToolSource::Builtin,
                ToolStatus::Success,
            ),
        ),
        (
            1_073,
            finished(
                "call_b",
                "search_text",
                ToolSource::Builtin,
                ToolStatus::Success,
            ),
        ),
        (1_081, finished("call_d", "echo", mcp, ToolStatus::Success)),
        (
            1_560,
            finished(
                "call_c",
                "execute_bash",
                ToolSource::Builtin,
                ToolStatus::Denied,
            ),
        ),
        (
            1_600,
            EventBody::ContextUsage {
                round: 2,
                used_tokens: 1200,
                window_tokens: 8192,
            },
        ),
        (
            1_700,
            EventBody::Usage(Usage {
                prompt_tokens: 1200,
                completion_tokens: 10,
                total_tokens: 1210,
            }),
        ),
        (
            1_701,
            EventBody::MessageAdded {
                message: Message::assistant("Plans.", Vec::new()),
            },
        ),
        (
            1_702,
            EventBody::TurnFinished {
                reason: TurnEnd::Completed,
                rounds: 2,
                text: "Plans.".into(),
            },
        ),
    ];
    bodies
        .into_iter()
        .enumerate()
        .map(|(seq, (time, body))| event(seq as u64, time, body))
        .collect()
}

fn build(capture: bool, parent: Option<&TraceParent>) -> Vec<SpanData> {
    let mut builder = TraceBuilder::new(capture);
    builder.note_model(
        "qwen3",
        ModelEndpoint {
            provider: Some("ollama".into()),
            base_url: Some("http://127.0.0.1:11434/v1".into()),
            sandbox: Some("Landlock ABI 7 and seccomp".into()),
        },
    );
    question()
        .iter()
        .flat_map(|event| builder.observe(event, parent))
        .collect()
}

fn attrs(span: &SpanData) -> BTreeMap<String, String> {
    span.attributes
        .iter()
        .map(|kv| {
            let value = match &kv.value {
                Value::String(s) => s.to_string(),
                other => other.to_string(),
            };
            (kv.key.to_string(), value)
        })
        .collect()
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans
        .iter()
        .find(|span| span.name == name)
        .unwrap_or_else(|| panic!("no span {name}"))
}

#[test]
fn a_question_is_one_trace_with_its_calls_under_it() {
    let spans = build(false, None);
    let mut names: Vec<&str> = spans.iter().map(|span| span.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        vec![
            "approval execute_bash",
            "chat qwen3",
            "chat qwen3",
            "execute_tool echo",
            "execute_tool execute_bash",
            "execute_tool read_file",
            "execute_tool search_text",
            "invoke_agent tooltrail",
        ]
    );
    let root = named(&spans, "invoke_agent tooltrail");
    assert_eq!(
        root.span_context.trace_id().to_string(),
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert_eq!(root.parent_span_id, SpanId::INVALID);
    for span in &spans {
        assert_eq!(span.span_context.trace_id(), root.span_context.trace_id());
    }
    let bash = named(&spans, "execute_tool execute_bash");
    for span in &spans {
        let parent = match span.name.as_ref() {
            "invoke_agent tooltrail" => SpanId::INVALID,
            "approval execute_bash" => bash.span_context.span_id(),
            _ => root.span_context.span_id(),
        };
        assert_eq!(span.parent_span_id, parent, "{}", span.name);
    }
    let root_attrs = attrs(root);
    assert_eq!(root_attrs["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(root_attrs["gen_ai.usage.input_tokens"], "2100");
    assert_eq!(root_attrs["gen_ai.usage.output_tokens"], "50");
    assert_eq!(root_attrs["tooltrail.tool_calls"], "4");
    assert_eq!(root_attrs["gen_ai.conversation.id"], "conv_1");
}

#[test]
fn model_requests_carry_the_genai_attributes() {
    let spans = build(false, None);
    let first = spans
        .iter()
        .find(|span| span.name == "chat qwen3" && attrs(span)["tooltrail.round"] == "1")
        .unwrap();
    let expected: BTreeMap<String, String> = [
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.provider.name", "ollama"),
        ("gen_ai.request.model", "qwen3"),
        ("gen_ai.response.model", "qwen3"),
        ("gen_ai.usage.input_tokens", "900"),
        ("gen_ai.usage.output_tokens", "40"),
        ("gen_ai.response.finish_reasons", r#"["tool_calls"]"#),
        ("gen_ai.conversation.id", "conv_1"),
        ("server.address", "127.0.0.1"),
        ("server.port", "11434"),
        ("tooltrail.round", "1"),
        ("tooltrail.context.used_tokens", "900"),
        ("tooltrail.context.window_tokens", "8192"),
        ("tooltrail.tool_mode", "native"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(attrs(first), expected);
    assert_eq!(
        first
            .end_time
            .duration_since(first.start_time)
            .unwrap()
            .as_millis(),
        50
    );
}

#[test]
fn calls_say_how_they_were_decided_and_where_they_ran() {
    let spans = build(false, None);
    let denied = attrs(named(&spans, "execute_tool execute_bash"));
    assert_eq!(denied["gen_ai.tool.type"], "function");
    assert_eq!(denied["gen_ai.tool.call.id"], "call_c");
    assert_eq!(denied["tooltrail.decision"], "denied");
    assert_eq!(denied["tooltrail.decision.by"], "user");
    assert_eq!(denied["tooltrail.approval.wait_ms"], "500");
    assert_eq!(denied["error.type"], "denied");
    assert_eq!(denied["tooltrail.sandbox"], "Landlock ABI 7 and seccomp");
    assert_eq!(
        named(&spans, "execute_tool execute_bash").status,
        Status::error("denied")
    );
    let wait = named(&spans, "approval execute_bash");
    assert_eq!(
        wait.end_time
            .duration_since(wait.start_time)
            .unwrap()
            .as_millis(),
        500
    );
    let mcp = attrs(named(&spans, "execute_tool echo"));
    assert_eq!(mcp["gen_ai.tool.type"], "extension");
    assert_eq!(mcp["tooltrail.mcp.server"], "everything");
    assert_eq!(mcp["tooltrail.decision"], "allowed");
    assert!(!mcp.contains_key("error.type"));
}

#[test]
fn content_stays_out_unless_turned_on() {
    let secret = ["secret", "Plans."];
    for span in build(false, None) {
        for (key, value) in attrs(&span) {
            assert!(
                !secret.iter().any(|word| value.contains(word)),
                "{} carries content in {key}: {value}",
                span.name
            );
        }
    }
    let spans = build(true, None);
    let read = attrs(named(&spans, "execute_tool read_file"));
    assert_eq!(
        read["gen_ai.tool.call.arguments"],
        r#"{"path":"secret/plans.txt"}"#
    );
    assert_eq!(read["gen_ai.tool.call.result"], "the secret result");
    let root = attrs(named(&spans, "invoke_agent tooltrail"));
    assert!(root["gen_ai.input.messages"].contains("What is in the secret folder?"));
    assert!(root["gen_ai.output.messages"].contains("Plans."));
}

#[test]
fn a_callers_traceparent_is_the_parent() {
    let parent =
        TraceParent::parse("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01").unwrap();
    let spans = build(false, Some(&parent));
    let root = named(&spans, "invoke_agent tooltrail");
    assert_eq!(root.parent_span_id, parent.span_id);
    assert!(root.parent_span_is_remote);
    for span in &spans {
        assert_eq!(span.span_context.trace_id(), parent.trace_id);
    }
}

#[test]
fn a_failed_request_marks_its_span_and_the_turn() {
    let mut builder = TraceBuilder::new(false);
    let events = [
        event(
            0,
            1,
            EventBody::TurnStarted {
                replay_of: None,
                workspace: "/ws".into(),
                model: "m".into(),
                user_message: "q".into(),
            },
        ),
        event(
            1,
            2,
            EventBody::ContextUsage {
                round: 1,
                used_tokens: 1,
                window_tokens: 2,
            },
        ),
        event(
            2,
            3,
            EventBody::Error {
                code: ErrorCode::Unreachable,
                message: "The model endpoint could not be reached.".into(),
                fatal: true,
            },
        ),
        event(
            3,
            4,
            EventBody::TurnFinished {
                reason: TurnEnd::Error,
                rounds: 0,
                text: String::new(),
            },
        ),
    ];
    let spans: Vec<SpanData> = events
        .iter()
        .flat_map(|event| builder.observe(event, None))
        .collect();
    assert_eq!(named(&spans, "chat m").status, Status::error("unreachable"));
    let root = named(&spans, "invoke_agent tooltrail");
    assert_eq!(root.status, Status::error("unreachable"));
    assert_eq!(root.events.len(), 1);
}
