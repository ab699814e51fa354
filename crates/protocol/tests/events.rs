//! How events look on the wire: the UI's generated types (see the app's `bindings` module)
//! describe this shape.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[test]
fn events_serialise_with_a_snake_case_type_tag() {
    use tooltrail_protocol::{ApprovalRecord, Event, EventBody, ToolSource, ToolStatus, TurnEnd};
    let event = Event {
        conversation_id: "c".into(),
        turn_id: "t".into(),
        seq: 7,
        time_ms: 1_700_000_000_000,
        body: EventBody::ToolCallFinished {
            view: None,
            round: 1,
            call_id: "call_1".into(),
            tool: "read_file".into(),
            source: ToolSource::Builtin,
            description: "Read a file".into(),
            arguments: serde_json::json!({"path": "README.md"}),
            status: ToolStatus::Success,
            duration_ms: 3,
            result: "1\t# Hi".into(),
            data: None,
            error: None,
            approval: ApprovalRecord::not_needed(),
            truncated_for_model: false,
        },
    };
    let json = serde_json::to_value(&event).unwrap();
    pretty_assertions::assert_eq!(
        json,
        serde_json::json!({
            "conversation_id": "c", "turn_id": "t", "seq": 7, "time_ms": 1_700_000_000_000i64,
            "type": "tool_call_finished", "round": 1, "call_id": "call_1", "tool": "read_file",
            "source": {"kind": "builtin"}, "description": "Read a file",
            "arguments": {"path": "README.md"}, "status": "success", "duration_ms": 3,
            "result": "1\t# Hi", "approval": {"allowed": true, "by": {"kind": "policy"}},
            "truncated_for_model": false
        })
    );
    let back: Event = serde_json::from_value(json).unwrap();
    assert_eq!(back, event);
    let finished = EventBody::TurnFinished {
        reason: TurnEnd::RoundLimit,
        rounds: 11,
        text: String::new(),
    };
    assert_eq!(
        serde_json::to_value(&finished).unwrap()["type"],
        "turn_finished"
    );
    assert_eq!(finished.kind(), "turn_finished");
}
