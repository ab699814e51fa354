//! A call whose MCP server runs it as a task stays open in the record while the task does; a
//! process that ended mid-task leaves it for the next start, which writes the task's result
//! over the call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::fixture;

use fixture::{Script, T0};
use pretty_assertions::assert_eq;
use serde_json::json;
use tooltrail_protocol::{
    EventBody, Message, TaskProgress, TaskStatus, ToolError, ToolErrorCode, ToolOutput,
};
use tooltrail_store::{CallStatus, HistoryFilter, Store};

const WS: &str = "/home/dev/src/app";
const TOOL: &str = "research__simulate-research-query";

fn report(call_id: &str, status: TaskStatus, message: &str) -> EventBody {
    EventBody::ToolCallProgress {
        call_id: call_id.into(),
        tool: TOOL.into(),
        progress: 1.0,
        total: None,
        message: Some(message.into()),
        task: Some(TaskProgress {
            server: "research".into(),
            tool: "simulate-research-query".into(),
            task_id: format!("task-of-{call_id}"),
            status,
            message: Some(message.into()),
        }),
    }
}

/// A turn of a process that died while `call_a`'s task worked; `call_b`'s task had ended.
fn died_mid_task() -> Vec<tooltrail_protocol::Event> {
    let mut turn = Script::new("conv_t", "turn_t", T0);
    let args = json!({"topic": "tides"});
    turn.start(WS, "Research tides")
        .message(Message::user("Research tides"))
        .message(Message::assistant(
            "",
            vec![
                fixture::call("call_a", TOOL, &args),
                fixture::call("call_b", TOOL, &args),
            ],
        ))
        .started(1, "call_a", TOOL, args.clone())
        .push(report(
            "call_a",
            TaskStatus::Working,
            "Gathering sources...",
        ))
        .started(1, "call_b", TOOL, args)
        .push(report(
            "call_b",
            TaskStatus::Working,
            "Gathering sources...",
        ))
        .push(report("call_b", TaskStatus::Completed, "Done"));
    turn.events
}

fn call(store: &Store, call_id: &str) -> tooltrail_store::HistoryRow {
    store
        .history(&HistoryFilter::default())
        .unwrap()
        .items
        .into_iter()
        .find(|row| row.call_id == call_id)
        .unwrap()
}

#[test]
fn a_task_left_open_by_a_dead_process_is_found_and_its_result_lands_under_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    Store::open(&db).unwrap().import(died_mid_task()).unwrap();

    // The next start: the call is closed as interrupted, and its task is there to pick up.
    let store = Store::open(&db).unwrap();
    assert_eq!(call(&store, "call_a").status, CallStatus::Cancelled);
    let open = store.open_tasks(WS).unwrap();
    assert_eq!(open.len(), 1, "{open:?}");
    let task = &open[0];
    assert_eq!(
        (
            task.call_id.as_str(),
            task.server.as_str(),
            task.remote_tool.as_str()
        ),
        ("call_a", "research", "simulate-research-query")
    );
    assert_eq!(task.task_id, "task-of-call_a");
    assert_eq!(task.conversation_id, "conv_t");
    assert!(store.open_tasks("/elsewhere").unwrap().is_empty());

    let output = ToolOutput::new("# Research Report: tides", json!({"content": []}));
    store
        .finish_open_task(task, T0 + 90_000, &Ok(output))
        .unwrap();
    let row = call(&store, "call_a");
    assert_eq!(row.status, CallStatus::Success);
    assert_eq!(row.error, None);
    assert_eq!(row.result_preview, "# Research Report: tides");
    assert_eq!(row.duration_ms, Some(90_000 - 7 * 3));
    assert!(store.open_tasks(WS).unwrap().is_empty());
    // The whole result and its data are kept as for any call.
    let record = store.tool_call(&row.id).unwrap();
    assert_eq!(record.result, "# Research Report: tides");
    assert_eq!(record.data, Some(json!({"content": []})));
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn a_task_its_server_no_longer_holds_is_forgotten_with_a_note_on_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    Store::open(&db).unwrap().import(died_mid_task()).unwrap();
    let store = Store::open(&db).unwrap();
    let task = store.open_tasks(WS).unwrap().remove(0);
    store
        .drop_open_task(&task, "Its MCP server no longer holds the task.")
        .unwrap();
    assert!(store.open_tasks(WS).unwrap().is_empty());
    let row = call(&store, "call_a");
    assert_eq!(row.status, CallStatus::Cancelled);
    assert!(
        row.error
            .unwrap()
            .message
            .ends_with("Its MCP server no longer holds the task.")
    );
}

#[test]
fn a_task_that_failed_after_the_restart_is_recorded_as_the_calls_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    Store::open(&db).unwrap().import(died_mid_task()).unwrap();
    let store = Store::open(&db).unwrap();
    let task = store.open_tasks(WS).unwrap().remove(0);
    let error = ToolError::new(ToolErrorCode::Timeout, "the MCP server did not finish");
    store
        .finish_open_task(&task, T0 + 1_000, &Err(error))
        .unwrap();
    let row = call(&store, "call_a");
    assert_eq!(row.status, CallStatus::Timeout);
    assert_eq!(row.error.unwrap().message, "the MCP server did not finish");
}
