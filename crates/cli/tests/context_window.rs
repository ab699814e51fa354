//! The context window through the binary: where its size comes from, what `tooltrail ask`
//! says about it, and an answer cut short by it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use pretty_assertions::assert_eq;
use run::{text, tooltrail};
use tooltrail_protocol::{Event, EventBody};
use tooltrail_test_support::{Reply, ScriptedServer, ServerOptions};

fn workspace() -> tempfile::TempDir {
    tooltrail_test_support::demo_workspace().unwrap()
}

/// A llama.cpp-like server: `/props` says its window.
async fn llama(replies: Vec<Reply>, n_ctx: u32) -> ScriptedServer {
    ScriptedServer::start_with(
        replies,
        ServerOptions {
            n_ctx: Some(n_ctx),
            ..ServerOptions::default()
        },
    )
    .await
    .unwrap()
}

/// `tooltrail ask` in `ws` against `server` with `args` (flags, then the question).
async fn ask(
    server: &ScriptedServer,
    ws: &std::path::Path,
    config: &std::path::Path,
    args: &[&str],
) -> std::process::Output {
    let base_url = server.base_url();
    let mut command = vec![
        "ask",
        "-w",
        ws.to_str().unwrap(),
        "--base-url",
        &base_url,
        "--model",
        "scripted",
    ];
    command.extend_from_slice(args);
    tooltrail(&command, config, &[]).await
}

#[tokio::test]
async fn ask_says_how_much_of_the_learned_window_the_question_took() {
    let server = llama(vec![Reply::text("Two Go files.")], 8192).await;
    let ws = workspace();
    let config = tempfile::tempdir().unwrap();
    let out = ask(&server, ws.path(), config.path(), &["How many Go files?"]).await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let line = stderr
        .lines()
        .find(|line| line.starts_with("· context: about "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        line.contains(" of 8192 tokens (")
            && line.ends_with("the window was read from llama.cpp's /props"),
        "{line}"
    );
}

#[tokio::test]
async fn an_answer_cut_by_the_window_is_reported_and_the_exit_status_says_so() {
    let server = llama(
        vec![Reply::text("There are two Go files, main.go and").finish_reason("length")],
        8192,
    )
    .await;
    let ws = workspace();
    let config = tempfile::tempdir().unwrap();
    let out = ask(
        &server,
        ws.path(),
        config.path(),
        &["--context-window", "4096", "How many Go files?"],
    )
    .await;
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    // The answer as far as it came, and a line on the timeline where it stopped.
    assert!(
        stdout.starts_with("There are two Go files, main.go and"),
        "{stdout}"
    );
    assert!(
        stdout.contains("· the answer was cut short: the model reached its token limit or the end of its context window"),
        "{stdout}"
    );
    assert!(
        stderr.contains("notice: the answer was cut short: the model reached its token limit or the end of its 4096-token context window."),
        "{stderr}"
    );
    // The flag wins over what the server says.
    assert!(
        stderr.contains(" of 4096 tokens (") && stderr.contains("set in the settings"),
        "{stderr}"
    );
}

#[tokio::test]
async fn json_lines_carry_context_usage_and_answer_truncated() {
    let server = llama(vec![Reply::text("Cut").finish_reason("length")], 2048).await;
    let ws = workspace();
    let config = tempfile::tempdir().unwrap();
    // Two tools, as a user of a 2,048-token window would keep.
    std::fs::write(
        config.path().join("config.toml"),
        "disabled_tools = [\"ask_user\", \"code_query\", \"count_lines\", \"execute_bash\", \"list_dir\", \"search_text\", \"snippets\"]\n",
    )
    .unwrap();
    let out = ask(&server, ws.path(), config.path(), &["--json", "hi"]).await;
    let stderr = text(&out.stderr);
    let events: Vec<Event> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let context: Vec<&EventBody> = events
        .iter()
        .map(|event| &event.body)
        .filter(|body| {
            matches!(
                body,
                EventBody::ContextUsage { .. } | EventBody::AnswerTruncated { .. }
            )
        })
        .collect();
    assert_eq!(context.len(), 2, "{context:?}\n{stderr}");
    match context[0] {
        EventBody::ContextUsage {
            round: 1,
            used_tokens,
            window_tokens: 2048,
        } => assert!(*used_tokens <= 2048 - 512, "{used_tokens}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(context[1], &EventBody::AnswerTruncated { round: 1 });
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("notice: the answer was cut short"),
        "{stderr}"
    );
}
