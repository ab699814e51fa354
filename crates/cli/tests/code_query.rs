//! `tooltrail tool code_query` as a person runs it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use pretty_assertions::assert_eq;
use run::{text, tooltrail};
use serde_json::{Value, json};

#[tokio::test]
async fn tool_code_query_finds_a_definition_not_its_mentions() {
    let ws = tooltrail_test_support::demo_workspace().unwrap();
    // A mention in a comment, a string and a call, none of them a definition.
    std::fs::write(
        ws.path().join("cmd/app/run.go"),
        "package main\n\n// main starts here\nfunc run() { main(); println(\"func main\") }\n",
    )
    .unwrap();
    let config = tempfile::tempdir().unwrap();
    let out = tooltrail(
        &[
            "tool",
            "code_query",
            "-w",
            ws.path().to_str().unwrap(),
            "--args",
            r#"{"name":"main"}"#,
        ],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["ok"], true);
    assert_eq!(
        result["text"],
        "1 definition of `main`:\ncmd/app/main.go:3: func main() {}  [function]\n"
    );
    assert_eq!(
        result["data"],
        json!({
            "definitions": [{
                "path": "cmd/app/main.go",
                "line": 3,
                "name": "main",
                "kind": "function",
                "language": "go",
                "signature": "func main() {}"
            }],
            "total": 1,
            "truncated": false,
            "too_large_skipped": 0
        })
    );
}
