//! MCP tools that run as tasks, from the command line: `tooltrail ask` prints each change of the
//! task of the reference server's `simulate-research-query` and gets its report; and a `tooltrail
//! ask` killed while a server works on a task leaves it for `tooltrail tasks`, which picks it up
//! at the server (`tests/mcp/fixtures/task-server.mjs` over HTTP, which keeps its tasks) and
//! writes the result under the original call. Without node the tests say so and pass.

#![allow(clippy::unwrap_used)]

use crate::support::mcp as support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::{Setup, ask, reference_server, text, tooltrail};
use tokio::io::{AsyncBufReadExt, BufReader};
use tooltrail_test_support::{Reply, ScriptedServer};

#[tokio::test]
async fn ask_prints_each_change_of_a_servers_task_and_gets_its_report() {
    let Some(entry) = reference_server("server-everything") else {
        return;
    };
    let setup = Setup::new(
        &[],
        |_| json!({"mcpServers": {"everything": {"command": "node", "args": [entry, "stdio"], "approval": "allow"}}}),
        "",
    );
    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "everything__simulate-research-query",
            r#"{"topic": "tides"}"#,
        )]),
        Reply::text("The tides report is ready."),
    ])
    .await;
    let out = ask(&model, &["Research tides"], &setup).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    for line in [
        "✓ everything__simulate-research-query topic=tides · success",
        "The tides report is ready.",
    ] {
        assert!(printed.contains(line), "{line:?} not in:\n{printed}");
    }
    // The server goes through four stages of a second each and Tooltrail asks every second, as
    // the task's pollInterval says: it prints the stages it saw, each once and in the server's
    // order, and a busy machine may see fewer than four.
    const STAGES: [&str; 4] = [
        "Gathering sources...",
        "Analyzing content...",
        "Synthesizing findings...",
        "Generating report...",
    ];
    let seen: Vec<usize> = printed
        .lines()
        .filter_map(|line| {
            line.strip_prefix("· everything__simulate-research-query task working: ")
        })
        .map(|stage| {
            STAGES
                .iter()
                .position(|known| *known == stage)
                .unwrap_or_else(|| panic!("{stage:?} is not a stage of the server's:\n{printed}"))
        })
        .collect();
    assert!(!seen.is_empty(), "no stage printed:\n{printed}");
    assert!(
        seen.windows(2).all(|pair| pair[0] < pair[1]),
        "stages printed twice or out of order:\n{printed}"
    );
    assert!(
        printed.contains("· everything__simulate-research-query task done"),
        "{printed}"
    );
    // The model read the report.
    let sent = model.chat_requests()[1].body.to_string();
    assert!(sent.contains("# Research Report: tides"), "{sent}");
}

/// The fixture server on a free port; killed with the guard.
struct TaskServer(std::process::Child, String);

impl Drop for TaskServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn task_server(dir: &Path) -> TaskServer {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/fixtures/task-server.mjs");
    let port_file = dir.join("port");
    let child = std::process::Command::new("node")
        .arg(fixture)
        .arg(&port_file)
        .spawn()
        .unwrap();
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

#[tokio::test]
async fn a_task_a_killed_ask_left_open_is_picked_up_by_tooltrail_tasks_under_its_call() {
    if !support::node_installed() {
        return;
    }
    let side = tempfile::tempdir().unwrap();
    let server = task_server(side.path());
    let url = server.1.clone();
    let setup = Setup::new(
        &[],
        |_| json!({"mcpServers": {"tasks": {"url": url, "approval": "allow"}}}),
        "",
    );
    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[("tasks__long-report", r#"{"seconds": 4}"#)]),
        Reply::text("Written."),
    ])
    .await;
    // `tooltrail ask`, killed as soon as it says the task works.
    let base_url = model.base_url();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_tooltrail"))
        .args([
            "ask",
            "--base-url",
            &base_url,
            "--model",
            "m",
            "Write the report",
        ])
        .env_remove("TOOLTRAIL_BASE_URL")
        .env_remove("TOOLTRAIL_MODEL")
        .env_remove("TOOLTRAIL_API_KEY")
        .env("TOOLTRAIL_CONFIG_DIR", &setup.config)
        .env("TOOLTRAIL_DATA_DIR", &setup.data)
        .env("NO_COLOR", "1")
        .current_dir(&setup.workspace)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let working = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("task working") {
                return line;
            }
        }
        panic!("tooltrail ask ended without the task working");
    })
    .await
    .unwrap();
    assert!(
        working.starts_with("· tasks__long-report task working"),
        "{working}"
    );
    child.kill().await.unwrap();

    // The next run picks the task up at the server, waits for it, and says how it ended.
    let out = tooltrail(&["tasks"], &setup).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(
        printed.contains("tasks__long-report (task task-1-"),
        "{printed}"
    );
    assert!(
        printed.contains(" of tasks): done\nReport after 4 s.\n"),
        "{printed}"
    );
    // The result is the original call's, in the history.
    let out = tooltrail(&["history", "--json"], &setup).await;
    let page: Value = serde_json::from_slice(&out.stdout).unwrap();
    let calls = page["items"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{page}");
    assert_eq!(calls[0]["tool"], "tasks__long-report");
    assert_eq!(calls[0]["status"], "success");
    assert_eq!(calls[0]["result_preview"], "Report after 4 s.");
    // Nothing is left to pick up.
    let out = tooltrail(&["tasks"], &setup).await;
    assert!(text(&out.stdout).starts_with("no MCP task of an earlier run is open in "));
}
