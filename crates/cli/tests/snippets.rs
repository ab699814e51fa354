//! Snippets end to end through the binary: saved with `tooltrail tool snippets`, found by
//! its `list` action and `tooltrail snippets`, kept per folder; and saved by the model in
//! `tooltrail ask`, without approval, in the record.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use pretty_assertions::assert_eq;
use run::{text, tooltrail};
use serde_json::{Value, json};
use tooltrail_test_support::{Reply, ScriptedServer};

fn json_of(out: &std::process::Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn a_snippet_saved_by_the_tool_is_listed_shown_searched_and_deleted_per_folder() {
    let config = tempfile::tempdir().unwrap();
    let first = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let dir = first.path().to_str().unwrap();
    let other_dir = other.path().to_str().unwrap();

    let args = json!({"action": "save", "name": "retry", "content": "loop { backoff() }\n", "language": "rust",
                      "description": "retry with backoff"})
    .to_string();
    let saved = tooltrail(
        &["tool", "snippets", "-w", dir, "--args", &args],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(
        json_of(&saved),
        json!({"ok": true, "text": "Saved snippet `retry` (19 bytes).",
               "data": {"name": "retry", "bytes": 19, "replaced": false}})
    );

    let listed = tooltrail(
        &[
            "tool",
            "snippets",
            "-w",
            dir,
            "--args",
            r#"{"action":"list","query":"backoff"}"#,
        ],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(
        json_of(&listed),
        json!({"ok": true, "text": "retry [rust]: retry with backoff",
               "data": {"snippets": [{"name": "retry", "language": "rust",
                                      "description": "retry with backoff", "bytes": 19}],
                        "truncated": false}})
    );

    let cli_list = tooltrail(
        &["snippets", "list", "-w", dir, "--json"],
        config.path(),
        &[],
    )
    .await;
    let rows = json_of(&cli_list);
    let updated_ms = rows[0]["updated_ms"].clone();
    assert!(updated_ms.as_i64().unwrap() > 0);
    assert_eq!(
        rows,
        json!([{"name": "retry", "language": "rust", "description": "retry with backoff",
                "bytes": 19, "updated_ms": updated_ms}])
    );

    // Another folder has none of them.
    let elsewhere = tooltrail(
        &[
            "tool",
            "snippets",
            "-w",
            other_dir,
            "--args",
            r#"{"action":"load","name":"retry"}"#,
        ],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(elsewhere.status.code(), Some(1));
    assert_eq!(
        serde_json::from_slice::<Value>(&elsewhere.stdout).unwrap()["error"]["code"],
        "not_found"
    );
    let other_list = tooltrail(&["snippets", "-w", other_dir], config.path(), &[]).await;
    assert_eq!(text(&other_list.stdout), "No snippets.\n");

    let shown = tooltrail(
        &["snippets", "show", "retry", "-w", dir],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(text(&shown.stdout), "loop { backoff() }\n");

    let deleted = tooltrail(
        &["snippets", "delete", "retry", "-w", dir],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(text(&deleted.stdout), "Deleted snippet retry.\n");
    let again = tooltrail(
        &["snippets", "delete", "retry", "-w", dir],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        text(&again.stderr),
        "error: No snippet named \"retry\" is saved for this folder.\n"
    );
}

#[tokio::test]
async fn the_model_saves_a_snippet_without_approval_and_the_call_is_recorded() {
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path().to_str().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "snippets",
            r#"{"action":"save","name":"build","content":"cargo build --release","language":"sh"}"#,
        )]),
        Reply::text("Saved."),
    ])
    .await;
    let out = tooltrail(
        &[
            "ask",
            "--base-url",
            &server.base_url(),
            "-m",
            "scripted",
            "-w",
            dir,
            "--approve",
            "deny",
            "Keep the release build command.",
        ],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Saved."),
        "{}",
        text(&out.stdout)
    );

    // The model got the tool's answer.
    let requests = server.requests();
    let last = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["content"], "Saved snippet `build` (21 bytes).");

    let history = json_of(&tooltrail(&["history", "--json"], config.path(), &[]).await);
    let call = &history["items"][0];
    assert_eq!(
        (
            &call["tool"],
            &call["status"],
            &call["arguments"],
            &call["result_preview"],
            &call["approval"],
        ),
        (
            &json!("snippets"),
            &json!("success"),
            &json!({"action": "save", "name": "build", "content": "cargo build --release", "language": "sh"}),
            &json!("Saved snippet `build` (21 bytes)."),
            &json!({"allowed": true, "by": {"kind": "policy"}}),
        )
    );

    let listed = json_of(&tooltrail(&["snippets", "--json", "-w", dir], config.path(), &[]).await);
    assert_eq!(listed[0]["name"], "build");
    assert_eq!(listed.as_array().unwrap().len(), 1);
}
