//! The scripted server over real HTTP, and the `scripted-model` binary.

// Helpers outside `#[test]` functions unwrap too: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tooltrail_test_support::{Reply, SCRIPTED_MODEL, ScriptedServer};

async fn post(server: &ScriptedServer, body: Value) -> (u16, String) {
    let response = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url()))
        .header("Authorization", "Bearer sk-test")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

#[tokio::test]
async fn replies_are_served_in_order_then_the_script_runs_out() {
    let server = ScriptedServer::start(vec![
        Reply::text("Hello"),
        Reply::error(401, "bad key").header("X-Scripted", "yes"),
    ])
    .await;
    let (status, body) = post(&server, json!({ "model": "m", "stream": false })).await;
    assert_eq!(status, 200);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["choices"][0]["message"]["content"], "Hello");

    let (status, body) = post(&server, json!({ "model": "m", "stream": true })).await;
    assert_eq!((status, body.contains("bad key")), (401, true));

    let (status, body) = post(&server, json!({ "model": "m" })).await;
    assert_eq!(status, 500);
    assert!(body.contains("no reply left"), "{body}");

    let sent = server.chat_requests();
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[0].header("Authorization"), Some("Bearer sk-test"));
    assert_eq!(sent[1].body, json!({ "model": "m", "stream": true }));
}

#[tokio::test]
async fn streams_are_sse_with_done() {
    let server = ScriptedServer::start(vec![Reply::text("Hi there")]).await;
    let (status, body) = post(
        &server,
        json!({ "model": "m", "stream": true, "stream_options": { "include_usage": true } }),
    )
    .await;
    assert_eq!(status, 200);
    let events: Vec<&str> = body
        .split("\n\n")
        .filter(|event| !event.is_empty())
        .collect();
    assert!(
        events.iter().all(|event| event.starts_with("data: ")),
        "{body}"
    );
    assert_eq!(events.last(), Some(&"data: [DONE]"));
    assert!(body.contains(r#""usage""#), "{body}");
}

#[tokio::test]
async fn models_and_unknown_paths() {
    let server = ScriptedServer::start(Vec::new()).await;
    let models: Value = reqwest::get(format!("{}/models", server.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], SCRIPTED_MODEL);
    let missing = reqwest::get(format!("{}/nothing", server.base_url()))
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    let paths: Vec<String> = server
        .requests()
        .into_iter()
        .map(|request| format!("{} {}", request.method, request.path))
        .collect();
    assert_eq!(paths, vec!["GET /v1/models", "GET /v1/nothing"]);
}

#[tokio::test]
async fn a_hanging_reply_ends_when_the_server_is_dropped() {
    let server = ScriptedServer::start(vec![Reply::hang()]).await;
    let url = format!("{}/chat/completions", server.base_url());
    let request = tokio::spawn(async move {
        reqwest::Client::new()
            .post(url)
            .json(&json!({}))
            .send()
            .await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!request.is_finished());
    drop(server);
    let outcome = tokio::time::timeout(Duration::from_secs(5), request)
        .await
        .unwrap()
        .unwrap();
    assert!(outcome.is_err());
}

#[test]
fn the_binary_serves_a_script_and_records_requests() {
    let folder = tempfile::tempdir().unwrap();
    let script = folder.path().join("script.json");
    let record = folder.path().join("requests.jsonl");
    std::fs::write(
        &script,
        r#"[{"tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}]},
            {"text": "done", "delay_ms": 1}]"#,
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_scripted-model"))
        .args(["--script".as_ref(), script.as_os_str()])
        .args(["--record".as_ref(), record.as_os_str()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first_line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first_line)
        .unwrap();
    let base_url = first_line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_string();
    assert!(base_url.starts_with("http://127.0.0.1:") && base_url.ends_with("/v1"));

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let answer: Value = runtime.block_on(async {
        reqwest::Client::new()
            .post(format!("{base_url}/chat/completions"))
            .json(&json!({ "model": "m", "messages": [] }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    child.kill().unwrap();
    child.wait().unwrap();

    assert_eq!(
        answer["choices"][0]["message"]["tool_calls"][0],
        json!({ "id": "call_1", "type": "function",
            "function": { "name": "read_file", "arguments": r#"{"path":"README.md"}"# } })
    );
    let recorded = std::fs::read_to_string(&record).unwrap();
    let lines: Vec<Value> = recorded
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["path"], "/v1/chat/completions");
    assert_eq!(lines[0]["body"], json!({ "model": "m", "messages": [] }));
}
