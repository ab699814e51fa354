//! `tooltrail ask` with a server that refuses tools: auto mode falls back to prompt mode once,
//! says so, remembers it for the endpoint and model, and starts the next question there.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use pretty_assertions::assert_eq;
use run::{text, tooltrail};
use tooltrail_test_support::{Reply, ScriptedServer};

const CALL: &str =
    "<tool_use><name>search_files</name><arguments>{\"pattern\":\"*.go\"}</arguments></tool_use>";

#[tokio::test]
async fn auto_mode_falls_back_once_remembers_and_starts_there_next_time() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("main.go"), "package main\n").unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::error(
            400,
            "registry.ollama.ai/library/gemma3:270m does not support tools",
        ),
        Reply::text(CALL),
        Reply::text("There is one Go file."),
        Reply::text(CALL),
        Reply::text("Still one."),
    ])
    .await;
    let url = server.base_url();
    let ask = |question: &'static str| {
        let url = url.clone();
        let root = folder.path().to_str().unwrap().to_string();
        let config = config.path().to_path_buf();
        async move {
            tooltrail(
                &[
                    "ask",
                    "--base-url",
                    &url,
                    "--model",
                    "gemma3:270m",
                    "-w",
                    &root,
                    question,
                ],
                &config,
                &[],
            )
            .await
        }
    };

    let first = ask("How many Go files?").await;
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let shown = text(&first.stdout) + &text(&first.stderr);
    assert!(shown.contains("There is one Go file."), "{shown}");
    assert!(
        shown.contains("the server refused native tools; offering them in prompt mode"),
        "{shown}"
    );
    assert!(shown.contains("search_files"), "{shown}");
    let learned = std::fs::read_to_string(config.path().join("tool-modes.json")).unwrap();
    assert!(
        learned.contains("gemma3:270m") && learned.contains("prompt"),
        "{learned}"
    );

    let second = ask("And now?").await;
    assert_eq!(second.status.code(), Some(0), "{}", text(&second.stderr));
    let shown = text(&second.stdout) + &text(&second.stderr);
    assert!(shown.contains("tools offered in prompt mode"), "{shown}");

    let requests = server.chat_requests();
    let sent_tools: Vec<bool> = requests
        .iter()
        .map(|request| request.body.get("tools").is_some())
        .collect();
    // Native once (refused), then prompt mode for the rest of both questions.
    assert_eq!(sent_tools, vec![true, false, false, false, false]);
}

#[tokio::test]
async fn a_tool_mode_that_does_not_exist_is_refused_with_the_choices() {
    let config = tempfile::tempdir().unwrap();
    let out = tooltrail(&["ask", "--tool-mode", "xml", "hi"], config.path(), &[]).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("`xml` is not a tool mode; use native, prompt or auto"),
        "{stderr}"
    );
}
