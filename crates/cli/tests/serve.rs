//! `tooltrail serve` as a person starts it: the line that says where it listens (with
//! `--port 0`, the real port), a question answered with a tool run on the server, the token
//! required, the conversation in the record, and a clean exit on SIGTERM.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use std::time::Duration;

use pretty_assertions::assert_eq;
use run::{text, tooltrail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tooltrail_test_support::{Reply, ScriptedServer, demo_workspace};

#[tokio::test]
async fn serve_listens_answers_with_server_side_tools_and_stops_on_sigterm() {
    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[("search_files", r#"{"pattern":"*.go"}"#)]),
        Reply::text("There are 2 Go files."),
    ])
    .await;
    let folder = demo_workspace().unwrap();
    let config = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_tooltrail"))
        .args([
            "serve",
            "--port",
            "0",
            "--token",
            "let-me-in",
            "--base-url",
            &model.base_url(),
            "--model",
            "scripted",
            "-w",
            folder.path().to_str().unwrap(),
        ])
        .env_remove("TOOLTRAIL_BASE_URL")
        .env_remove("TOOLTRAIL_MODEL")
        .env_remove("TOOLTRAIL_SERVE_TOKEN")
        .env("TOOLTRAIL_CONFIG_DIR", config.path())
        .env("TOOLTRAIL_DATA_DIR", config.path().join("data"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("serve said where it listens within 30 s")
        .unwrap()
        .unwrap();
    let url = first
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("not the listening line: {first}"))
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert!(!url.ends_with(":0"), "the real port is printed: {url}");
    let how = lines.next_line().await.unwrap().unwrap();
    assert!(how.contains("Authorization: Bearer"), "{how}");

    let client = reqwest::Client::new();
    let question = json!({
        "model": "scripted",
        "messages": [{"role": "user", "content": "How many Go files are there?"}],
        "tools": [{"type": "function", "function": {"name": "search_files", "parameters": {"type": "object"}}}],
    });
    let refused = client
        .post(format!("{url}/v1/chat/completions"))
        .json(&question)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 401);

    let answer: Value = client
        .post(format!("{url}/v1/chat/completions"))
        .bearer_auth("let-me-in")
        .json(&question)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        answer["choices"][0]["message"]["content"], "There are 2 Go files.",
        "{answer}"
    );
    assert_eq!(
        answer["tool_execution"]["tools_called"],
        json!(["search_files"]),
        "{answer}"
    );
    // The model saw the tool's result.
    let second = model.chat_requests()[1].body["messages"].to_string();
    assert!(second.contains("main.go"), "{second}");

    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("serve stopped within 20 s of SIGTERM")
        .unwrap();
    assert!(status.success(), "{status:?}");

    // The API's conversation is in the record, marked as coming from the API.
    let out = tooltrail(&["conversations"], config.path(), &[]).await;
    let listed = text(&out.stdout);
    assert!(
        listed.contains("API · How many Go files are there?"),
        "{listed}"
    );
}
