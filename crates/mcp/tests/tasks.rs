//! MCP Tasks: a tool the server runs as a task, followed to its end. Against the reference
//! server from npm (`simulate-research-query`, the 2025-11-25 form: `tools/call` with a `task`
//! parameter, `tasks/get`, `tasks/result`) and against `tests/mcp/fixtures/task-server.mjs`
//! (the Tasks extension's form: `resultType: "task"`, the result inline, questions answered by
//! `tasks/update`), which logs every request so the tests see what the server was sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use support::{everything, fixture, manager, registry_with};
use tokio::sync::mpsc::UnboundedReceiver;
use tooltrail_mcp::{
    ElicitationAsk, ElicitationReply, McpAnswerer, SamplingAsk, SamplingReply, ServerConfig,
};
use tooltrail_protocol::{ElicitationAction, TaskStatus, ToolErrorCode, ToolProgress};
use tooltrail_tools::ToolContext;

/// Answers every form with `colour` or `interpretation` set, and keeps what was asked.
#[derive(Default)]
struct Answers {
    asked: Mutex<Vec<String>>,
}

#[async_trait]
impl McpAnswerer for Answers {
    async fn elicit(&self, ask: ElicitationAsk) -> ElicitationReply {
        self.asked.lock().unwrap().push(ask.message);
        let mut content = Map::new();
        content.insert("colour".into(), json!("violet"));
        content.insert("interpretation".into(), json!("historical"));
        ElicitationReply {
            action: ElicitationAction::Accept,
            content: Some(content),
        }
    }

    async fn sample(&self, _ask: SamplingAsk) -> SamplingReply {
        SamplingReply::Refused("no model here".into())
    }
}

/// The task states a call reported, in order, and the task's id.
fn drain(rx: &mut UnboundedReceiver<ToolProgress>) -> (Vec<(TaskStatus, Option<String>)>, String) {
    let mut states = Vec::new();
    let mut id = String::new();
    while let Ok(progress) = rx.try_recv() {
        if let Some(task) = progress.task {
            id = task.task_id.clone();
            states.push((task.status, task.message));
        }
    }
    (states, id)
}

fn context(root: &Path) -> (ToolContext, UnboundedReceiver<ToolProgress>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let mut ctx = ToolContext::open(root).unwrap();
    ctx.progress = Some(tx);
    (ctx, rx)
}

#[tokio::test]
async fn a_task_only_tool_of_the_reference_server_runs_as_a_task_to_its_report() {
    require_node!();
    let (_dir, root) = support::workspace();
    let manager = manager(vec![everything()], &root);
    let registry = registry_with(&manager).await;
    let (ctx, mut rx) = context(&root);
    let out = registry
        .call(
            "everything__simulate-research-query",
            r#"{"topic":"tides"}"#,
            &ctx,
        )
        .await
        .unwrap();
    assert!(
        out.text.contains("# Research Report: tides"),
        "{}",
        out.text
    );
    let (states, id) = drain(&mut rx);
    assert!(!id.is_empty());
    // Each stage the server named reached the call's progress, and the end.
    let messages: Vec<String> = states.iter().filter_map(|(_, m)| m.clone()).collect();
    for stage in ["Gathering sources...", "Generating report..."] {
        assert!(messages.iter().any(|m| m == stage), "{states:?}");
    }
    assert_eq!(states.first().unwrap().0, TaskStatus::Working, "{states:?}");
    assert_eq!(
        states.last().unwrap().0,
        TaskStatus::Completed,
        "{states:?}"
    );
    // The tool stays offered: the next call goes straight to a task.
    assert!(
        registry
            .offered_specs()
            .iter()
            .any(|spec| spec.name == "everything__simulate-research-query")
    );
    let out = registry
        .call(
            "everything__simulate-research-query",
            r#"{"topic":"reefs"}"#,
            &ctx,
        )
        .await
        .unwrap();
    assert!(
        out.text.contains("# Research Report: reefs"),
        "{}",
        out.text
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn a_reference_task_that_needs_input_asks_through_elicitation_and_goes_on() {
    require_node!();
    let (_dir, root) = support::workspace();
    let answers = Arc::new(Answers::default());
    let manager = manager(vec![everything()], &root).answer_with(answers.clone());
    let registry = registry_with(&manager).await;
    let (ctx, mut rx) = context(&root);
    let out = registry
        .call(
            "everything__simulate-research-query",
            r#"{"topic":"python","ambiguous":true}"#,
            &ctx,
        )
        .await
        .unwrap();
    assert!(
        out.text.contains("# Research Report: python (historical)"),
        "{}",
        out.text
    );
    let asked = answers.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("could have multiple interpretations"));
    let (states, _) = drain(&mut rx);
    assert!(
        states.iter().any(|(s, _)| *s == TaskStatus::InputRequired),
        "{states:?}"
    );
    manager.shutdown().await;
}

/// The fixture server on a free port, its log, and the guard that stops it.
struct TaskServer {
    child: std::process::Child,
    url: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for TaskServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl TaskServer {
    fn start() -> Self {
        Self::suggesting("300")
    }

    /// The server, suggesting a poll every `poll_ms`.
    fn suggesting(poll_ms: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("port");
        let log = dir.path().join("log.jsonl");
        let child = std::process::Command::new("node")
            .arg(fixture("task-server.mjs"))
            .arg(&port_file)
            .arg(&log)
            .arg(poll_ms)
            .spawn()
            .unwrap();
        let mut port = String::new();
        for _ in 0..200 {
            port = std::fs::read_to_string(&port_file).unwrap_or_default();
            if !port.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(!port.is_empty(), "the task server did not start");
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            log,
            _dir: dir,
        }
    }

    fn config(&self) -> ServerConfig {
        ServerConfig::http("tasks", &self.url)
    }

    /// The requests it got of `method`.
    fn requests(&self, method: &str) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|message| message["method"] == method)
            .collect()
    }
}

#[tokio::test]
async fn an_extension_task_is_polled_at_the_servers_interval_and_its_result_comes_inline() {
    require_node!();
    let (_dir, root) = support::workspace();
    let server = TaskServer::start();
    let manager = manager(vec![server.config()], &root);
    let registry = registry_with(&manager).await;
    let (ctx, mut rx) = context(&root);
    let started = std::time::Instant::now();
    let out = registry
        .call("tasks__long-report", r#"{"seconds":2}"#, &ctx)
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(out.text, "Report after 2 s.");
    let (states, _) = drain(&mut rx);
    let messages: Vec<String> = states.iter().filter_map(|(_, m)| m.clone()).collect();
    assert!(messages.contains(&"Step 1 of 2".to_string()), "{states:?}");
    assert_eq!(states.last().unwrap().0, TaskStatus::Completed);
    // The server suggests 300 ms: never more polls than that allows in the time it took.
    let polls = server.requests("tasks/get").len();
    let most = (took.as_millis() / 300) as usize + 1;
    assert!(polls >= 2 && polls <= most, "{polls} polls in {took:?}");
    manager.shutdown().await;
}

#[tokio::test]
async fn an_extension_task_asks_its_question_through_elicitation_and_gets_the_answer() {
    require_node!();
    let (_dir, root) = support::workspace();
    let server = TaskServer::start();
    let answers = Arc::new(Answers::default());
    let manager = manager(vec![server.config()], &root).answer_with(answers.clone());
    let registry = registry_with(&manager).await;
    let (ctx, mut rx) = context(&root);
    let out = registry
        .call("tasks__long-report", r#"{"seconds":1,"ask":true}"#, &ctx)
        .await
        .unwrap();
    assert_eq!(out.text, "Report after 1 s in violet.");
    assert_eq!(
        answers.asked.lock().unwrap().clone(),
        vec!["Which colour should the report use?".to_string()]
    );
    let updates = server.requests("tasks/update");
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert_eq!(
        updates[0]["params"]["inputResponses"]["colour"]["content"]["colour"],
        "violet"
    );
    let (states, _) = drain(&mut rx);
    assert!(states.iter().any(|(s, _)| *s == TaskStatus::InputRequired));
    manager.shutdown().await;
}

#[tokio::test]
async fn stop_cancels_the_task_at_the_server() {
    require_node!();
    let (_dir, root) = support::workspace();
    let server = TaskServer::start();
    let manager = manager(vec![server.config()], &root);
    let registry = registry_with(&manager).await;
    let (ctx, mut rx) = context(&root);
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        cancel.cancel();
    });
    let error = registry
        .call("tasks__long-report", r#"{"seconds":60}"#, &ctx)
        .await
        .unwrap_err();
    assert_eq!(error.code, ToolErrorCode::Cancelled, "{error:?}");
    let (states, id) = drain(&mut rx);
    assert_eq!(states.last().unwrap().0, TaskStatus::Cancelled);
    let cancels = server.requests("tasks/cancel");
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    assert_eq!(cancels[0]["params"]["taskId"], id.as_str());
    manager.shutdown().await;
}

#[tokio::test]
async fn attack_tasks_a_task_that_never_ends_is_cancelled_at_its_tools_time_limit() {
    require_node!();
    let (_dir, root) = support::workspace();
    let server = TaskServer::start();
    let mut config = server.config();
    config
        .tool_timeouts
        .insert("long-report".into(), Duration::from_secs(2));
    let manager = manager(vec![config], &root);
    let registry = registry_with(&manager).await;
    let (ctx, _rx) = context(&root);
    let error = registry
        .call("tasks__long-report", r#"{"seconds":60}"#, &ctx)
        .await
        .unwrap_err();
    assert_eq!(error.code, ToolErrorCode::Timeout, "{error:?}");
    assert_eq!(
        error.message,
        "the MCP server \"tasks\" did not finish the task within 2 s (the tool's time limit); \
         the task was cancelled"
    );
    assert_eq!(server.requests("tasks/cancel").len(), 1);
    manager.shutdown().await;
}

#[tokio::test]
async fn attack_tasks_a_server_cannot_have_itself_polled_faster_than_every_quarter_second() {
    require_node!();
    let (_dir, root) = support::workspace();
    // A server that says to ask again at once, every time.
    let server = TaskServer::suggesting("0");
    let manager = manager(vec![server.config()], &root);
    let registry = registry_with(&manager).await;
    let (ctx, _rx) = context(&root);
    let started = std::time::Instant::now();
    let out = registry
        .call("tasks__long-report", r#"{"seconds":2}"#, &ctx)
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(out.text, "Report after 2 s.");
    let polls = server.requests("tasks/get").len();
    let most = (took.as_millis() / tooltrail_mcp::MIN_POLL_INTERVAL.as_millis()) as usize + 1;
    assert!(polls <= most, "{polls} polls in {took:?}");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_tool_found_to_run_only_as_a_task_is_called_as_one_from_then_on() {
    require_node!();
    let (_dir, root) = support::workspace();
    let server = TaskServer::start();
    let manager = manager(vec![server.config()], &root);
    let (ctx, _rx) = context(&root);
    // Two questions' registries of the same servers: the second knows already.
    for _ in 0..2 {
        let registry = registry_with(&manager).await;
        let out = registry
            .call("tasks__strict-report", r#"{"seconds":1}"#, &ctx)
            .await
            .unwrap();
        assert_eq!(out.text, "Report after 1 s.");
    }
    let calls = server.requests("tools/call");
    let plain = calls
        .iter()
        .filter(|call| call["params"].get("task").is_none())
        .count();
    assert_eq!((calls.len(), plain), (3, 1), "{calls:?}");
    manager.shutdown().await;
}
