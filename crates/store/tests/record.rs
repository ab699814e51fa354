//! Recording turns and reading them back through the public API.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::fixture;

use fixture::{CallEnd, Script, T0, folded, sample_turn};
use pretty_assertions::assert_eq;
use serde_json::json;
use tooltrail_protocol::{
    ApprovalBy, ApprovalRecord, EventBody, Message, ToolError, ToolErrorCode, ToolSource,
    ToolStatus,
};
use tooltrail_store::{
    CallStatus, ConversationFilter, Format, HistoryFilter, HistoryRow, MessageSearch,
    NewConversation, StatsFilter, Store, StoreError,
};

const WS: &str = "/home/dev/src/app";

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("tooltrail.sqlite3")).unwrap();
    (dir, store)
}

fn record(store: &Store, script: &Script) {
    let recorder = store.recorder().unwrap();
    for event in &script.events {
        recorder.record(event.clone());
    }
    recorder.shutdown().unwrap();
}

fn all(store: &Store, filter: HistoryFilter) -> Vec<HistoryRow> {
    let mut filter = HistoryFilter { limit: 2, ..filter };
    let mut rows = Vec::new();
    loop {
        let page = store.history(&filter).unwrap();
        rows.extend(page.items);
        match page.next {
            Some(next) => filter.before = Some(next),
            None => return rows,
        }
    }
}

#[test]
fn a_recorded_turn_reads_back_as_its_events() {
    let (_dir, store) = open();
    let script = sample_turn("conv_1", "turn_1", WS, T0, true);
    record(&store, &script);
    assert_eq!(store.turn_events("turn_1").unwrap(), folded(&script.events));
    assert_eq!(
        store.conversation_events("conv_1").unwrap(),
        folded(&script.events)
    );
}

#[test]
fn the_history_row_of_a_call_holds_everything_but_the_full_result() {
    let (_dir, store) = open();
    record(&store, &sample_turn("conv_1", "turn_1", WS, T0, true));
    let rows = store.history(&HistoryFilter::default()).unwrap().items;
    assert_eq!(rows.len(), 2);
    // Newest first: the denied call finished (and so started) after the read.
    let denied = &rows[0];
    assert_eq!(
        denied,
        &HistoryRow {
            view: None,
            view_of: None,
            id: denied.id.clone(),
            conversation_id: "conv_1".into(),
            turn_id: "turn_1".into(),
            workspace: Some(WS.into()),
            call_id: "call_b".into(),
            round: 1,
            tool: "execute_bash".into(),
            source: ToolSource::Builtin,
            description: "The execute_bash tool.".into(),
            arguments: json!({"command": "rm -rf target"}),
            started_ms: denied.started_ms,
            duration_ms: Some(12),
            status: CallStatus::Denied,
            error: Some(ToolError::new(
                ToolErrorCode::Denied,
                "the user denied this call: not now"
            )),
            result_preview: "error [denied]: the user denied this call: not now".into(),
            result_size: 50,
            truncated_for_model: false,
            approval: ApprovalRecord {
                allowed: false,
                by: ApprovalBy::User,
                reason: Some("not now".into()),
            },
        }
    );
    let read = &rows[1];
    assert_eq!(read.status, CallStatus::Success);
    assert_eq!(read.result_preview.len(), tooltrail_store::PREVIEW_BYTES);
    assert!(!read.preview_is_complete());
    let full = store.tool_call(&read.id).unwrap();
    assert!(full.result.starts_with(&read.result_preview));
    assert_eq!(full.result.len() as u64, read.result_size);
    assert!(
        full.result
            .ends_with("fn parse_header_60(input: &str) -> Header { todo }\n")
    );

    let json = serde_json::to_value(denied).unwrap();
    assert_eq!(json["status"], "denied");
    assert_eq!(json["approval"]["by"]["kind"], "user");
    assert_eq!(json["error"]["code"], "denied");
    assert!(matches!(
        store.tool_call("tc_999999"),
        Err(StoreError::CallNotFound(_))
    ));
    assert!(matches!(
        store.tool_call("bogus"),
        Err(StoreError::CallNotFound(_))
    ));
}

#[test]
fn a_call_that_never_started_is_dated_its_duration_before_its_end() {
    let (_dir, store) = open();
    let script = sample_turn("conv_1", "turn_1", WS, T0, true);
    record(&store, &script);
    let started = script
        .events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::ToolCallFinished {
                call_id,
                duration_ms,
                ..
            } if call_id == "call_b" => Some(event.time_ms - *duration_ms as i64),
            _ => None,
        })
        .unwrap();
    let rows = store.history(&HistoryFilter::default()).unwrap().items;
    let denied = rows.iter().find(|row| row.call_id == "call_b").unwrap();
    assert_eq!(denied.started_ms, started);
    let stats = store.stats(&StatsFilter::default()).unwrap();
    assert_eq!(stats.statuses.running, 0);
}

/// Three conversations in two workspaces, recorded one after another.
fn three_conversations(store: &Store) {
    record(store, &sample_turn("conv_a", "turn_a1", WS, T0, true));
    record(
        store,
        &sample_turn("conv_a", "turn_a2", WS, T0 + 60_000, false),
    );
    record(
        store,
        &sample_turn(
            "conv_b",
            "turn_b1",
            "/home/dev/src/other",
            T0 + 120_000,
            true,
        ),
    );
    let mut grep = Script::new("conv_c", "turn_c1", T0 + 180_000);
    let args = json!({"pattern": "unsafe_block", "path": "src"});
    grep.start(WS, "Is there unsafe code?")
        .message(Message::user("Is there unsafe code?"))
        .started(1, "call_g", "search_text", args.clone())
        .finished(
            1,
            "call_g",
            "search_text",
            args,
            CallEnd {
                status: ToolStatus::Error,
                result: "error [invalid_pattern]: the pattern unsafe_block( is not valid".into(),
                error: Some(ToolError::new(
                    ToolErrorCode::InvalidPattern,
                    "the pattern unsafe_block( is not valid",
                )),
                approval: ApprovalRecord::not_needed(),
            },
        )
        .end("No.");
    record(store, &grep);
}

#[test]
fn history_pages_cover_every_call_once_newest_first() {
    let (_dir, store) = open();
    three_conversations(&store);
    let rows = all(&store, HistoryFilter::default());
    assert_eq!(rows.len(), 7);
    let ids: std::collections::HashSet<_> = rows.iter().map(|row| row.id.clone()).collect();
    assert_eq!(ids.len(), 7);
    for pair in rows.windows(2) {
        assert!(pair[0].started_ms >= pair[1].started_ms);
    }
    assert_eq!(rows[0].call_id, "call_g");
}

#[test]
fn history_filters_narrow() {
    let (_dir, store) = open();
    three_conversations(&store);
    let count = |filter: HistoryFilter| all(&store, filter).len();
    assert_eq!(
        count(HistoryFilter {
            conversation: Some("conv_a".into()),
            ..Default::default()
        }),
        4
    );
    assert_eq!(
        count(HistoryFilter {
            workspace: Some(WS.into()),
            ..Default::default()
        }),
        5
    );
    assert_eq!(
        count(HistoryFilter {
            tool: Some("read_file".into()),
            ..Default::default()
        }),
        3
    );
    assert_eq!(
        count(HistoryFilter {
            status: Some(CallStatus::Denied),
            ..Default::default()
        }),
        3
    );
    assert_eq!(
        count(HistoryFilter {
            status: Some(CallStatus::Success),
            ..Default::default()
        }),
        3
    );
    assert_eq!(
        count(HistoryFilter {
            status: Some(CallStatus::Error),
            workspace: Some(WS.into()),
            ..Default::default()
        }),
        1
    );
    assert_eq!(
        count(HistoryFilter {
            since: Some(T0 + 60_000),
            until: Some(T0 + 180_000),
            ..Default::default()
        }),
        4
    );
    assert_eq!(
        count(HistoryFilter {
            conversation: Some("conv_missing".into()),
            ..Default::default()
        }),
        0
    );
    assert_eq!(
        count(HistoryFilter {
            workspace: Some("/nowhere".into()),
            ..Default::default()
        }),
        0
    );
}

#[test]
fn search_finds_arguments_results_and_errors() {
    let (_dir, store) = open();
    three_conversations(&store);
    let search = |text: &str, ranked: bool, conversation: Option<&str>| {
        all(
            &store,
            HistoryFilter {
                search: Some(text.into()),
                ranked,
                conversation: conversation.map(str::to_string),
                ..Default::default()
            },
        )
        .into_iter()
        .map(|row| row.call_id)
        .collect::<Vec<_>>()
    };
    // In the arguments, newest first.
    assert_eq!(
        search("parser.rs", false, None),
        ["call_a", "call_a", "call_a"]
    );
    assert_eq!(search("rm target", false, None).len(), 3);
    // In the result preview, and by prefix.
    assert_eq!(search("parse_header_3", false, None).len(), 3);
    assert_eq!(search("parse_head*", false, None).len(), 3);
    // In the error.
    assert_eq!(search("invalid", false, None), ["call_g"]);
    assert_eq!(search("not valid unsafe_block", true, None), ["call_g"]);
    // Inside one conversation.
    assert_eq!(
        search("target", false, Some("conv_a")),
        ["call_b", "call_b"]
    );
    assert_eq!(search("target", true, Some("conv_b")), ["call_b"]);
    // Query syntax is never interpreted.
    assert!(search("NEAR(rm) OR -x:", false, None).is_empty());
    assert!(matches!(
        store.history(&HistoryFilter {
            search: Some(" -- ".into()),
            ..Default::default()
        }),
        Err(StoreError::EmptySearch)
    ));
}

#[test]
fn a_cursor_from_another_walk_is_refused() {
    let (_dir, store) = open();
    three_conversations(&store);
    let page = store
        .history(&HistoryFilter {
            limit: 1,
            ..Default::default()
        })
        .unwrap();
    let cursor = page.next.unwrap();
    let error = store
        .history(&HistoryFilter {
            search: Some("target".into()),
            before: Some(cursor),
            ..Default::default()
        })
        .unwrap_err();
    assert!(matches!(error, StoreError::BadCursor(_)), "{error}");
}

#[test]
fn messages_are_searchable_and_load_in_order() {
    let (_dir, store) = open();
    three_conversations(&store);
    let hits = store
        .search_messages(&MessageSearch {
            text: "header parser".into(),
            ..Default::default()
        })
        .unwrap();
    let found: Vec<_> = hits
        .items
        .iter()
        .map(|hit| (hit.conversation_id.as_str(), hit.position))
        .collect();
    assert_eq!(found, [("conv_b", 1), ("conv_a", 1)]);
    assert_eq!(
        hits.items[0].conversation_title,
        "Where is the header parser?"
    );
    // The system prompt is not indexed.
    assert!(
        store
            .search_messages(&MessageSearch {
                text: "folder".into(),
                ..Default::default()
            })
            .unwrap()
            .items
            .is_empty()
    );

    let messages = store.load_messages("conv_a").unwrap();
    let roles: Vec<_> = messages.iter().map(Message::role).collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant"
        ]
    );
    assert_eq!(messages[6], Message::user("And who calls it?"));
    assert!(matches!(
        store.load_messages("conv_zzz"),
        Err(StoreError::ConversationNotFound(_))
    ));
}

#[test]
fn conversations_list_most_recent_first() {
    let (_dir, store) = open();
    three_conversations(&store);
    let page = store.conversations(&ConversationFilter::default()).unwrap();
    let ids: Vec<_> = page.items.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["conv_c", "conv_b", "conv_a"]);
    let a = &page.items[2];
    assert_eq!(a.title, "Where is the header parser?");
    assert_eq!((a.turns, a.messages, a.tool_calls), (2, 11, 4));
    assert_eq!(a.workspace.as_deref(), Some(WS));
    assert_eq!(a.model.as_deref(), Some("qwen3-coder"));
    assert!(!a.running);

    let mut filter = ConversationFilter {
        workspace: Some(WS.into()),
        limit: 1,
        before: None,
    };
    let mut seen = Vec::new();
    loop {
        let page = store.conversations(&filter).unwrap();
        seen.extend(page.items.into_iter().map(|c| c.id));
        match page.next {
            Some(next) => filter.before = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ["conv_c", "conv_a"]);
}

#[test]
fn a_conversation_created_first_keeps_its_details_through_its_turns() {
    let (_dir, store) = open();
    let id = store
        .create_conversation(&NewConversation {
            workspace: Some(WS.into()),
            title: String::new(),
            model: None,
            provider: Some("http://localhost:11434/v1".into()),
        })
        .unwrap();
    assert!(id.starts_with("conv_"));
    let empty = store.conversation(&id).unwrap();
    assert_eq!((empty.turns, empty.title.as_str()), (0, ""));
    record(&store, &sample_turn(&id, "turn_1", WS, T0, true));
    let summary = store.conversation(&id).unwrap();
    assert_eq!(summary.title, "Where is the header parser?");
    assert_eq!(
        summary.provider.as_deref(),
        Some("http://localhost:11434/v1")
    );
    assert_eq!(summary.model.as_deref(), Some("qwen3-coder"));
    store.rename_conversation(&id, "Header parser").unwrap();
    assert_eq!(store.conversation(&id).unwrap().title, "Header parser");
    assert!(matches!(
        store.rename_conversation("conv_nope", "x"),
        Err(StoreError::ConversationNotFound(_))
    ));
}

#[test]
fn events_for_an_unseen_turn_create_its_conversation() {
    let (_dir, store) = open();
    let mut script = Script::new("conv_late", "turn_late", T0);
    script.seq = 5;
    script
        .message(Message::user("late"))
        .started(1, "call_1", "list_dir", json!({"path": "."}));
    record(&store, &script);
    let rows = store.history(&HistoryFilter::default()).unwrap().items;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, CallStatus::Running);
    assert_eq!(rows[0].conversation_id, "conv_late");
    assert!(store.conversation("conv_late").unwrap().running);
}

#[test]
fn a_call_still_running_when_its_turn_ends_is_cancelled() {
    let (_dir, store) = open();
    let mut script = Script::new("conv_1", "turn_1", T0);
    script
        .start(WS, "q")
        .started(1, "call_1", "read_file", json!({"path": "a"}));
    let recorder = store.recorder().unwrap();
    for event in &script.events {
        recorder.record(event.clone());
    }
    recorder.flush().unwrap();
    let running = store.history(&HistoryFilter::default()).unwrap().items;
    assert_eq!(running[0].status, CallStatus::Running);
    assert_eq!(running[0].duration_ms, None);
    assert_eq!(running[0].description, "The read_file tool.");
    assert_eq!(running[0].started_ms, T0 + 7);
    assert_eq!(
        store
            .history(&HistoryFilter {
                status: Some(CallStatus::Running),
                ..Default::default()
            })
            .unwrap()
            .items
            .len(),
        1
    );
    script.end("stopped");
    recorder.record(script.events.last().unwrap().clone());
    recorder.shutdown().unwrap();
    let row = &store.history(&HistoryFilter::default()).unwrap().items[0];
    assert_eq!(row.status, CallStatus::Cancelled);
    assert_eq!(row.error.as_ref().unwrap().code, ToolErrorCode::Cancelled);
    // Cut off before it reported back, the call still says what its tool does, and when.
    assert_eq!(row.description, "The read_file tool.");
    assert_eq!(row.started_ms, running[0].started_ms);
    // And a redraw of the conversation gets it from the start event.
    let events = store.conversation_events("conv_1").unwrap();
    assert!(events.iter().any(|event| matches!(
        &event.body,
        EventBody::ToolCallStarted { description, .. } if description == "The read_file tool."
    )));
}

#[test]
fn a_call_stopped_while_it_waited_for_approval_is_recorded_with_its_description() {
    let (_dir, store) = open();
    let mut script = Script::new("conv_1", "turn_1", T0);
    let args = json!({"command": "sleep 10"});
    script
        .start(WS, "q")
        .push(EventBody::ApprovalRequested {
            call_id: "call_1".into(),
            tool: "execute_bash".into(),
            arguments: args.clone(),
            summary: "sleep 10".into(),
            cwd: None,
            reason: "unknown program".into(),
            rule: None,
            change: None,
            once_only: false,
        })
        .finished(
            1,
            "call_1",
            "execute_bash",
            args,
            CallEnd {
                status: ToolStatus::Cancelled,
                result: "error [cancelled]: the user stopped the answer before this call ran"
                    .into(),
                error: Some(ToolError::new(
                    ToolErrorCode::Cancelled,
                    "the user stopped the answer before this call ran",
                )),
                approval: ApprovalRecord {
                    allowed: false,
                    by: ApprovalBy::User,
                    reason: Some("the answer was stopped".into()),
                },
            },
        );
    record(&store, &script);
    let rows = all(&store, HistoryFilter::default());
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, CallStatus::Cancelled);
    assert_eq!(rows[0].description, "The execute_bash tool.");
    // With no start of its own, it started its duration before it ended.
    assert_eq!(rows[0].started_ms, T0 + 14 - 12);
}

#[test]
fn a_refused_event_is_reported_and_does_not_lose_its_neighbours() {
    let (_dir, store) = open();
    let mut script = Script::new("conv_1", "turn_1", T0);
    script.start(WS, "q").message(Message::user("q"));
    let recorder = store.recorder().unwrap();
    recorder.record(script.events[0].clone());
    recorder.record(script.events[0].clone()); // the same seq twice
    recorder.record(script.events[1].clone());
    let error = recorder.flush().unwrap_err();
    assert!(
        matches!(&error, StoreError::RecordFailed { count: 1, first } if first.contains("turn_started")),
        "{error}"
    );
    recorder.flush().unwrap();
    drop(recorder);
    assert_eq!(store.load_messages("conv_1").unwrap(), [Message::user("q")]);
}

#[test]
fn full_results_and_structured_data_round_trip() {
    let (_dir, store) = open();
    let big = "é".repeat(10_000);
    let data = json!({"entries": [{"name": "a.rs", "size": 3}], "total": 1});
    let mut script = Script::new("conv_1", "turn_1", T0);
    script.start(WS, "q").push(EventBody::ToolCallFinished {
        view: None,
        round: 1,
        call_id: "call_1".into(),
        tool: "list_dir".into(),
        source: ToolSource::Mcp {
            server: "files".into(),
        },
        description: "Lists a folder.".into(),
        arguments: json!({"path": "."}),
        status: ToolStatus::Success,
        duration_ms: 3,
        result: big.clone(),
        data: Some(data.clone()),
        error: None,
        approval: ApprovalRecord {
            allowed: true,
            by: ApprovalBy::Rule { id: "r1".into() },
            reason: None,
        },
        truncated_for_model: true,
    });
    record(&store, &script);
    let row = store.history(&HistoryFilter::default()).unwrap().items[0].clone();
    assert_eq!(row.result_size, 20_000);
    assert_eq!(row.result_preview, "é".repeat(256));
    assert!(row.truncated_for_model);
    let full = store.tool_call(&row.id).unwrap();
    assert_eq!(full.result, big);
    assert_eq!(full.data, Some(data));
    assert_eq!(
        full.row.source,
        ToolSource::Mcp {
            server: "files".into()
        }
    );
    assert_eq!(store.turn_events("turn_1").unwrap(), script.events);
}

#[test]
fn stats_count_per_tool_and_status() {
    let (_dir, store) = open();
    three_conversations(&store);
    let stats = store.stats(&StatsFilter::default()).unwrap();
    assert_eq!(stats.total, 7);
    assert_eq!(
        (
            stats.statuses.success,
            stats.statuses.denied,
            stats.statuses.error
        ),
        (3, 3, 1)
    );
    let tools: Vec<_> = stats
        .tools
        .iter()
        .map(|tool| (tool.tool.as_str(), tool.calls))
        .collect();
    assert_eq!(
        tools,
        [("execute_bash", 3), ("read_file", 3), ("search_text", 1)]
    );
    assert_eq!(stats.tools[1].avg_ms, Some(12.0));
    assert_eq!(stats.tools[1].p95_ms, Some(12));

    let one = store
        .stats(&StatsFilter {
            conversation: Some("conv_b".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(one.total, 2);
    assert_eq!(one.tools[0].p95_ms, Some(12));
    let ws = store
        .stats(&StatsFilter {
            workspace: Some(WS.into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(ws.total, 5);
    let nowhere = store
        .stats(&StatsFilter {
            workspace: Some("/nowhere".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(nowhere.total, 0);
    let later = store
        .stats(&StatsFilter {
            since: Some(T0 + 150_000),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(later.total, 1);
}

#[test]
fn a_conversation_exported_as_jsonl_imports_into_another_store_unchanged() {
    let (_dir, store) = open();
    three_conversations(&store);
    let mut exported = Vec::new();
    store
        .export_conversation("conv_a", Format::Jsonl, &mut exported)
        .unwrap();
    let text = String::from_utf8(exported.clone()).unwrap();
    let events: Vec<tooltrail_protocol::Event> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(events, store.conversation_events("conv_a").unwrap());

    let (_other_dir, other) = open();
    assert_eq!(other.import(events).unwrap(), text.lines().count() as u64);
    let mut again = Vec::new();
    other
        .export_conversation("conv_a", Format::Jsonl, &mut again)
        .unwrap();
    assert_eq!(String::from_utf8(again).unwrap(), text);
    assert_eq!(
        other.load_messages("conv_a").unwrap(),
        store.load_messages("conv_a").unwrap()
    );
}

#[test]
fn a_conversation_exports_as_markdown() {
    let (_dir, store) = open();
    record(&store, &sample_turn("conv_1", "turn_1", WS, T0, true));
    let mut out = Vec::new();
    store
        .export_conversation("conv_1", Format::Markdown, &mut out)
        .unwrap();
    let markdown = String::from_utf8(out).unwrap();
    for expected in [
        "# Where is the header parser?\n",
        "- Workspace: `/home/dev/src/app`",
        "## Turn 1 — 2024-05-01 09:30:00 UTC (`qwen3-coder`)",
        "> **You:** Where is the header parser?",
        "### `read_file` — success, 12 ms",
        "Approval: allowed by policy (no approval needed).",
        "\"path\": \"src/parser.rs\"",
        "### `execute_bash` — denied, 12 ms",
        "Approval: denied by the user (not now).",
        "Error `denied`: the user denied this call: not now",
        "_Approval asked for `execute_bash`: `rm -rf target` — The command may change files._",
        "It is in src/parser.rs.",
        "_The turn completed after 2 model call(s)._",
    ] {
        assert!(
            markdown.contains(expected),
            "{expected:?} missing from:\n{markdown}"
        );
    }
}

#[test]
fn a_filtered_history_exports_every_page() {
    let (_dir, store) = open();
    three_conversations(&store);
    let filter = HistoryFilter {
        workspace: Some(WS.into()),
        limit: 1,
        ..Default::default()
    };
    let mut out = Vec::new();
    let written = store
        .export_history(&filter, Format::Jsonl, &mut out)
        .unwrap();
    assert_eq!(written, 5);
    let rows: Vec<HistoryRow> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(rows, all(&store, filter.clone()));

    let mut out = Vec::new();
    store
        .export_history(&filter, Format::Markdown, &mut out)
        .unwrap();
    let markdown = String::from_utf8(out).unwrap();
    assert_eq!(
        markdown.matches("\n## `").count() + usize::from(markdown.starts_with("## ")),
        5
    );
    assert!(markdown.starts_with("# Tool calls\n"));
    assert!(markdown.contains("- Error `invalid_pattern`: the pattern unsafe_block( is not valid"));

    let mut out = Vec::new();
    let none = HistoryFilter {
        tool: Some("nothing".into()),
        ..Default::default()
    };
    assert_eq!(
        store
            .export_history(&none, Format::Markdown, &mut out)
            .unwrap(),
        0
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "# Tool calls\n\nNo calls matched.\n"
    );
}

#[test]
fn deleting_a_conversation_removes_it_everywhere() {
    let (_dir, store) = open();
    three_conversations(&store);
    store.delete_conversation("conv_a").unwrap();
    assert!(matches!(
        store.conversation("conv_a"),
        Err(StoreError::ConversationNotFound(_))
    ));
    assert!(matches!(
        store.delete_conversation("conv_a"),
        Err(StoreError::ConversationNotFound(_))
    ));
    assert!(matches!(
        store.turn_events("turn_a1"),
        Err(StoreError::TurnNotFound(_))
    ));
    let rows = all(&store, HistoryFilter::default());
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|row| row.conversation_id != "conv_a"));
    let found = all(
        &store,
        HistoryFilter {
            search: Some("parser.rs".into()),
            ..Default::default()
        },
    );
    assert_eq!(found.len(), 1);
    let stats = store.stats(&StatsFilter::default()).unwrap();
    assert_eq!(stats.total, 3);
    let hits = store
        .search_messages(&MessageSearch {
            text: "header parser".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits.items.len(), 1);
    let report = store.vacuum().unwrap();
    assert!(report.bytes_after <= report.bytes_before);
    // Still whole after the vacuum.
    assert_eq!(all(&store, HistoryFilter::default()).len(), 3);
}

/// One finished call per `(call id, arguments, result)`, a second apart.
fn calls(store: &Store, conversation: &str, calls: &[(&str, serde_json::Value, &str, u64)]) {
    let mut script = Script::new(conversation, &format!("turn_{conversation}"), T0);
    script.start(WS, "q");
    for (call_id, arguments, result, duration_ms) in calls {
        script.time_ms += 1000;
        script.push(EventBody::ToolCallFinished {
            view: None,
            round: 1,
            call_id: (*call_id).into(),
            tool: "search_text".into(),
            source: ToolSource::Builtin,
            description: String::new(),
            arguments: arguments.clone(),
            status: ToolStatus::Success,
            duration_ms: *duration_ms,
            result: (*result).into(),
            data: None,
            error: None,
            approval: ApprovalRecord::not_needed(),
            truncated_for_model: false,
        });
    }
    record(store, &script);
}

#[test]
fn ranked_search_puts_the_closest_match_first() {
    let (_dir, store) = open();
    let filler = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu";
    calls(
        &store,
        "conv_1",
        &[
            (
                "dense",
                json!({"pattern": "needle"}),
                "needle needle needle",
                1,
            ),
            ("sparse", json!({"path": "needle"}), filler, 1),
            ("both", json!({"pattern": "needle haystack"}), filler, 1),
            ("other", json!({"path": "haystack"}), filler, 1),
        ],
    );
    let search = |text: &str, ranked: bool, conversation: Option<&str>| {
        all(
            &store,
            HistoryFilter {
                search: Some(text.into()),
                ranked,
                conversation: conversation.map(str::to_string),
                ..Default::default()
            },
        )
        .into_iter()
        .map(|row| row.call_id)
        .collect::<Vec<_>>()
    };
    assert_eq!(search("needle", false, None), ["both", "sparse", "dense"]);
    assert_eq!(search("needle", true, None), ["dense", "sparse", "both"]);
    assert_eq!(
        search("needle", true, Some("conv_1")),
        ["dense", "sparse", "both"]
    );
    // Every word must occur.
    assert_eq!(search("needle haystack", true, None), ["both"]);

    // Of two words, the rarer weighs more.
    let mut list = vec![
        ("a", json!({"q": "common common common rare"}), "x", 1),
        ("b", json!({"q": "common rare rare rare"}), "x", 1),
    ];
    for _ in 0..20 {
        list.push(("c", json!({"q": "common"}), "x", 1));
    }
    calls(&store, "conv_2", &list);
    assert_eq!(search("common rare", true, None), ["b", "a"]);
    assert_eq!(search("need*", true, None), ["dense", "sparse", "both"]);
}

#[test]
fn percentiles_come_from_the_histogram_or_from_the_calls() {
    let (_dir, store) = open();
    let list: Vec<(String, serde_json::Value, &str, u64)> = (1..=200)
        .map(|ms| (format!("call_{ms}"), json!({}), "ok", ms))
        .collect();
    let borrowed: Vec<_> = list
        .iter()
        .map(|(id, args, result, ms)| (id.as_str(), args.clone(), *result, *ms))
        .collect();
    calls(&store, "conv_1", &borrowed);
    let fast = store.stats(&StatsFilter::default()).unwrap();
    let exact = store
        .stats(&StatsFilter {
            since: Some(0),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(exact.tools[0].p95_ms, Some(190));
    // 190 ms falls in the 190–199 ms bucket; the histogram gives its upper end.
    assert_eq!(fast.tools[0].p95_ms, Some(199));
    assert_eq!(fast.tools[0].avg_ms, Some(100.5));
    assert_eq!(exact.tools[0].avg_ms, Some(100.5));
    store.delete_conversation("conv_1").unwrap();
    assert_eq!(store.stats(&StatsFilter::default()).unwrap().tools, []);
}

#[test]
fn a_servers_requests_are_recorded_under_their_call_and_exported() {
    use tooltrail_protocol::{ElicitationAction, ElicitationRequest, SamplingMessage, Usage};
    let (_dir, store) = open();
    let mut script = Script::new("conv_r", "turn_r", T0);
    script
        .start(WS, "Ask the server.")
        .started(
            1,
            "call_1",
            "everything__trigger-sampling-request",
            json!({}),
        )
        .push(EventBody::ElicitationRequested {
            call_id: "call_1".into(),
            request_id: "req_1".into(),
            server: "everything".into(),
            message: "Your name?".into(),
            request: ElicitationRequest::Form {
                fields: tooltrail_protocol::form_fields(&json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                })),
            },
        })
        .push(EventBody::ElicitationAnswered {
            call_id: "call_1".into(),
            request_id: "req_1".into(),
            server: "everything".into(),
            action: ElicitationAction::Accept,
            content: Some(json!({"name": "Ada"})),
            reason: None,
        })
        .push(EventBody::SamplingRequested {
            call_id: "call_1".into(),
            request_id: "req_2".into(),
            server: "everything".into(),
            system_prompt: Some("Be brief.".into()),
            messages: vec![SamplingMessage {
                role: "user".into(),
                text: "Name a colour.".into(),
            }],
            max_tokens: 50,
        })
        .push(EventBody::SamplingAnswered {
            call_id: "call_1".into(),
            request_id: "req_2".into(),
            server: "everything".into(),
            approved: true,
            text: Some("Teal.".into()),
            model: Some("qwen3".into()),
            usage: Some(Usage {
                prompt_tokens: 30,
                completion_tokens: 2,
                total_tokens: 32,
            }),
            reason: None,
        })
        .finished(
            1,
            "call_1",
            "everything__trigger-sampling-request",
            json!({}),
            CallEnd {
                status: ToolStatus::Success,
                result: "Teal.".into(),
                error: None,
                approval: ApprovalRecord::not_needed(),
            },
        )
        .end("Teal.");
    record(&store, &script);
    assert_eq!(store.turn_events("turn_r").unwrap(), folded(&script.events));
    let mut out = Vec::new();
    store
        .export_conversation("conv_r", Format::Markdown, &mut out)
        .unwrap();
    let markdown = String::from_utf8(out).unwrap();
    for expected in [
        "_The MCP server `everything` asked the user for a form (`name`): Your name?_",
        "_Answered accept with `{\"name\":\"Ada\"}`._",
        "_The MCP server `everything` asked to use the model (1 message(s), at most 50 tokens)._",
        "_The model answered the server:_ Teal.",
    ] {
        assert!(
            markdown.contains(expected),
            "{expected:?} missing from:\n{markdown}"
        );
    }
}

/// A question whose call has a view, and the view's turn: opened under that call, one call of
/// its own, closed.
fn view_scripts() -> (Script, Script) {
    let mut question = Script::new("conv_v", "turn_q", T0);
    question.start(WS, "chart it");
    let view = Some(tooltrail_protocol::ViewLink {
        resource_uri: "ui://chart/page.html".into(),
    });
    question.push(EventBody::ToolCallFinished {
        view: view.clone(),
        round: 1,
        call_id: "call_chart".into(),
        tool: "charts__show".into(),
        source: ToolSource::Mcp {
            server: "charts".into(),
        },
        description: "Shows a chart.".into(),
        arguments: json!({"n": 3}),
        status: ToolStatus::Success,
        duration_ms: 5,
        result: "1, 2, 3".into(),
        data: None,
        error: None,
        approval: ApprovalRecord::not_needed(),
        truncated_for_model: false,
    });
    question.end("Here.");
    let mut shown = Script::new("conv_v", "view_1", T0 + 1_000);
    shown.push(EventBody::ViewOpened {
        parent_turn_id: "turn_q".into(),
        parent_call_id: "call_chart".into(),
        server: "charts".into(),
        tool: "charts__show".into(),
        resource_uri: "ui://chart/page.html".into(),
        csp: "default-src 'none'".into(),
        refused_domains: vec!["http://10.0.0.1".into()],
        granted: Vec::new(),
    });
    shown.push(EventBody::ToolCallFinished {
        view: None,
        round: 0,
        call_id: "vc_view_1_1".into(),
        tool: "charts__poll".into(),
        source: ToolSource::Mcp {
            server: "charts".into(),
        },
        description: "Polls.".into(),
        arguments: json!({}),
        status: ToolStatus::Success,
        duration_ms: 2,
        result: "4".into(),
        data: None,
        error: None,
        approval: ApprovalRecord::not_needed(),
        truncated_for_model: false,
    });
    shown.push(EventBody::ViewClosed {
        reason: tooltrail_protocol::ViewEnd::Closed,
    });
    (question, shown)
}

#[test]
fn a_views_turn_is_kept_under_its_call_and_comes_back_whole_through_an_export() {
    let (_dir, store) = open();
    let (question, shown) = view_scripts();
    record(&store, &question);
    record(&store, &shown);

    let replayed = store.conversation_events("conv_v").unwrap();
    let mut expected = question.events.clone();
    expected.extend(shown.events.clone());
    assert_eq!(
        replayed.iter().map(|e| &e.body).collect::<Vec<_>>(),
        expected.iter().map(|e| &e.body).collect::<Vec<_>>()
    );
    let rows = all(
        &store,
        HistoryFilter {
            conversation: Some("conv_v".into()),
            ..HistoryFilter::default()
        },
    );
    let parent = rows.iter().find(|row| row.tool == "charts__show").unwrap();
    let child = rows.iter().find(|row| row.tool == "charts__poll").unwrap();
    assert_eq!(
        parent.view.as_ref().map(|view| view.resource_uri.as_str()),
        Some("ui://chart/page.html")
    );
    assert_eq!(child.view_of.as_deref(), Some(parent.id.as_str()));
    // One question, though two turns.
    assert_eq!(store.conversation("conv_v").unwrap().turns, 1);

    let mut jsonl = Vec::new();
    store
        .export_conversation("conv_v", Format::Jsonl, &mut jsonl)
        .unwrap();
    let (_other_dir, other) = open();
    let events: Vec<tooltrail_protocol::Event> = String::from_utf8(jsonl)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    other.import(events).unwrap();
    assert_eq!(other.conversation_events("conv_v").unwrap(), replayed);
    let imported = all(
        &other,
        HistoryFilter {
            conversation: Some("conv_v".into()),
            ..HistoryFilter::default()
        },
    );
    let child = imported
        .iter()
        .find(|row| row.tool == "charts__poll")
        .unwrap();
    assert!(
        child.view_of.is_some(),
        "the import keeps the view's call under its call"
    );

    let mut markdown = Vec::new();
    store
        .export_conversation("conv_v", Format::Markdown, &mut markdown)
        .unwrap();
    let markdown = String::from_utf8(markdown).unwrap();
    assert!(
        markdown.contains("Has a view: `ui://chart/page.html`"),
        "{markdown}"
    );
    assert!(markdown.contains("were made by the view"), "{markdown}");
}
