//! A call an MCP server runs as a task outlives the process that asked for it: a host stopped
//! while the task works leaves it open in the record, and a new host on the same record picks
//! it up at the server and writes the result under the original call. The server is
//! `tests/mcp/fixtures/task-server.mjs` over Streamable HTTP, which keeps its tasks across
//! sessions as a server that stores them would; the model is the scripted server.
//!
//! Without `node` the test says why and passes (fails under `CI=true`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tooltrail_agent::{Agent, AgentConfig, AllowAll, CollectingSink, Conversation, EventSink};
use tooltrail_host::open_tasks::{PickUp, pick_up_tasks};
use tooltrail_host::{Record, RecordingSink, Toolbox};
use tooltrail_llm::{LlmClient, LlmConfig};
use tooltrail_protocol::{EventBody, TaskStatus};
use tooltrail_store::{CallStatus, HistoryFilter, INTERRUPTED};
use tooltrail_test_support::{Reply, ScriptedServer};
use tooltrail_tools::ToolContext;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/fixtures")
        .join(name)
}

fn node_ready() -> bool {
    let has_node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !has_node {
        tooltrail_test_support::dependency_missing(
            "node is not installed, so MCP servers cannot run (scripts/setup --app installs it)",
        );
    }
    has_node
}

/// The task server on a free port, stopped with the guard.
struct TaskServer(std::process::Child, String);

impl Drop for TaskServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn task_server(dir: &Path) -> TaskServer {
    let port_file = dir.join("port");
    let child = std::process::Command::new("node")
        .arg(fixture("task-server.mjs"))
        .arg(&port_file)
        .spawn()
        .unwrap();
    // The guard stops the server however the test ends.
    let mut server = TaskServer(child, String::new());
    for _ in 0..200 {
        let port = std::fs::read_to_string(&port_file).unwrap_or_default();
        if !port.is_empty() {
            server.1 = format!("http://127.0.0.1:{port}/mcp");
            return server;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the task server did not start");
}

/// A sink that says when the call's task was first reported.
struct Watching {
    inner: RecordingSink,
    open: tokio::sync::mpsc::UnboundedSender<String>,
}

impl EventSink for Watching {
    fn emit(&self, event: tooltrail_protocol::Event) {
        if let EventBody::ToolCallProgress {
            task: Some(task), ..
        } = &event.body
            && task.status == TaskStatus::Working
        {
            let _ = self.open.send(task.task_id.clone());
        }
        self.inner.emit(event);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_left_open_by_a_stopped_host_is_picked_up_by_the_next_and_lands_under_its_call() {
    if !node_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let server = task_server(&root);
    let mcp_json = root.join("mcp.json");
    std::fs::write(
        &mcp_json,
        json!({"mcpServers": {"tasks": {"url": server.1, "approval": "allow"}}}).to_string(),
    )
    .unwrap();
    let db = root.join("history.db");
    let workspace = root.join("folder");
    std::fs::create_dir(&workspace).unwrap();

    // The first host: the model calls the task's tool, and the host is stopped mid-task.
    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[("tasks__long-report", r#"{"seconds": 3}"#)]),
        Reply::text("It is being written."),
    ])
    .await;
    let task_id = {
        let record = Arc::new(Record::open(&db).unwrap());
        let toolbox = Toolbox::new(Some(mcp_json.clone()));
        let tools = toolbox.tools(&workspace, &[]).await;
        assert!(tools.failures.is_empty(), "{:?}", tools.failures);
        let llm = LlmClient::new(LlmConfig::new(model.base_url(), "scripted")).unwrap();
        let agent = Agent::new(
            llm,
            tools.registry,
            ToolContext::open(&workspace).unwrap(),
            AgentConfig::default(),
        );
        let (open_tx, mut open_rx) = tokio::sync::mpsc::unbounded_channel();
        let sink = Watching {
            inner: RecordingSink::new(Arc::clone(&record), Box::new(CollectingSink::new())),
            open: open_tx,
        };
        let turn = tokio::spawn(async move {
            agent
                .run_turn(
                    &mut Conversation::new(),
                    "Write the report",
                    &sink,
                    &AllowAll,
                    &CancellationToken::new(),
                )
                .await;
        });
        let task_id = tokio::time::timeout(Duration::from_secs(30), open_rx.recv())
            .await
            .unwrap()
            .unwrap();
        // The app closes: its turn goes with it, without Stop, and so does its record.
        turn.abort();
        let _ = turn.await;
        toolbox.shutdown().await;
        drop(record);
        task_id
    };

    // The next host on the same record: the call was closed as interrupted, its task is open.
    let record = Record::open(&db).unwrap();
    let store = record.store();
    let calls = store.history(&HistoryFilter::default()).unwrap().items;
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].status, CallStatus::Cancelled);
    assert_eq!(calls[0].error.as_ref().unwrap().message, INTERRUPTED);
    let toolbox = Toolbox::new(Some(mcp_json));
    let picked = pick_up_tasks(
        store,
        &toolbox,
        &workspace,
        &CancellationToken::new(),
        &|_| {},
    )
    .await;
    assert_eq!(picked.len(), 1);
    assert_eq!(picked[0].task.task_id, task_id);
    assert!(
        matches!(&picked[0].outcome, PickUp::Ended(Ok(output)) if output.text == "Report after 3 s."),
        "{:?}",
        picked[0].outcome
    );
    let call = &store.history(&HistoryFilter::default()).unwrap().items[0];
    assert_eq!(call.call_id, calls[0].call_id);
    assert_eq!(call.status, CallStatus::Success);
    assert_eq!(call.result_preview, "Report after 3 s.");
    assert_eq!(call.error, None);
    assert!(
        store
            .open_tasks(&workspace.display().to_string())
            .unwrap()
            .is_empty()
    );
    // Nothing left to pick up on the start after.
    assert!(
        pick_up_tasks(
            store,
            &toolbox,
            &workspace,
            &CancellationToken::new(),
            &|_| {}
        )
        .await
        .is_empty()
    );
    toolbox.shutdown().await;
}

#[tokio::test]
async fn a_task_its_server_no_longer_holds_is_forgotten_with_a_note() {
    if !node_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let workspace = root.join("folder");
    std::fs::create_dir(&workspace).unwrap();
    let db = root.join("history.db");
    // A record of a process that died while the task ran, at a server since restarted.
    let server = task_server(&root);
    let mcp_json = root.join("mcp.json");
    std::fs::write(
        &mcp_json,
        json!({"mcpServers": {"tasks": {"url": server.1}}}).to_string(),
    )
    .unwrap();
    let events = tooltrail_store_events(&workspace);
    tooltrail_store::Store::open(&db)
        .unwrap()
        .import(events)
        .unwrap();
    let record = Record::open(&db).unwrap();
    let toolbox = Toolbox::new(Some(mcp_json));
    let picked = pick_up_tasks(
        record.store(),
        &toolbox,
        &workspace,
        &CancellationToken::new(),
        &|_| {},
    )
    .await;
    assert!(
        matches!(&picked[0].outcome, PickUp::Gone(why) if why.contains("no task")),
        "{:?}",
        picked[0].outcome
    );
    let call = &record
        .store()
        .history(&HistoryFilter::default())
        .unwrap()
        .items[0];
    assert_eq!(call.status, CallStatus::Cancelled);
    assert!(
        call.error
            .as_ref()
            .unwrap()
            .message
            .contains("could not be picked up again"),
        "{:?}",
        call.error
    );
    assert!(
        record
            .store()
            .open_tasks(&workspace.display().to_string())
            .unwrap()
            .is_empty()
    );
    toolbox.shutdown().await;
}

/// A turn whose call's task was working when its process died.
fn tooltrail_store_events(workspace: &Path) -> Vec<tooltrail_protocol::Event> {
    use tooltrail_protocol::{ApprovalRecord, Event, TaskProgress, ToolSource};
    let bodies = vec![
        EventBody::TurnStarted {
            replay_of: None,
            workspace: workspace.display().to_string(),
            model: "scripted".into(),
            user_message: "Write the report".into(),
        },
        EventBody::ToolCallStarted {
            view: None,
            round: 1,
            call_id: "call_1".into(),
            tool: "tasks__long-report".into(),
            source: ToolSource::Mcp {
                server: "tasks".into(),
            },
            description: String::new(),
            arguments: json!({"seconds": 3}),
            approval: ApprovalRecord::not_needed(),
        },
        EventBody::ToolCallProgress {
            call_id: "call_1".into(),
            tool: "tasks__long-report".into(),
            progress: 1.0,
            total: None,
            message: None,
            task: Some(TaskProgress {
                server: "tasks".into(),
                tool: "long-report".into(),
                task_id: "task-that-was".into(),
                status: TaskStatus::Working,
                message: None,
            }),
        },
    ];
    bodies
        .into_iter()
        .enumerate()
        .map(|(seq, body)| Event {
            conversation_id: "conv_1".into(),
            turn_id: "turn_1".into(),
            seq: seq as u64,
            time_ms: 1_714_555_800_000 + seq as i64,
            body,
        })
        .collect()
}
