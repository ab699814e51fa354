//! The context window against a real model server (llama.cpp's `llama-server`, served by
//! `scripts/real-llm test` with a 4,096-token window and answers of at most 256 tokens): the
//! window is read from its `/props`, every request fits it as the server counts tokens, and an
//! answer the server cut is reported.
//!
//! ```text
//! scripts/real-llm test
//! TOOLTRAIL_REAL_LLM=http://127.0.0.1:PORT/v1 cargo test -p tooltrail-cli --test cli -- real_llm_context:: --ignored
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use run::{text, tooltrail};
use tooltrail_protocol::{Event, EventBody};
use tooltrail_test_support::demo_workspace;

fn base_url() -> String {
    std::env::var("TOOLTRAIL_REAL_LLM")
        .expect("TOOLTRAIL_REAL_LLM names the server's base URL (scripts/real-llm test sets it)")
}

/// The window the server runs with, as its `/props` says.
async fn served_window(url: &str) -> u32 {
    let root = url.trim_end_matches('/').trim_end_matches("/v1");
    let props: serde_json::Value = reqwest::get(format!("{root}/props"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    u32::try_from(
        props["default_generation_settings"]["n_ctx"]
            .as_u64()
            .unwrap(),
    )
    .unwrap()
}

#[tokio::test]
#[ignore = "needs a real model server: scripts/real-llm test"]
async fn every_request_fits_the_window_the_server_names() {
    let url = base_url();
    let window = served_window(&url).await;
    let folder = demo_workspace().unwrap();
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("config.toml"),
        "disabled_tools = [\"execute_bash\", \"code_query\", \"snippets\", \"ask_user\"]\n",
    )
    .unwrap();
    let out = tooltrail(
        &[
            "ask",
            "--json",
            "--approve",
            "deny",
            "--max-rounds",
            "3",
            "--base-url",
            &url,
            "--model",
            "gemma",
            "-w",
            folder.path().to_str().unwrap(),
            "Read README.md and main.go, then say what the project is.",
        ],
        config.path(),
        &[],
    )
    .await;
    let stderr = text(&out.stderr);
    let events: Vec<Event> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut requests = 0;
    let mut estimate = 0;
    for event in &events {
        if let EventBody::ContextUsage {
            used_tokens,
            window_tokens,
            ..
        } = &event.body
        {
            requests += 1;
            assert_eq!(*window_tokens, window, "the window is read from /props");
            estimate = *used_tokens;
        }
        // What the server counted: the prompt and the answer together inside the window, and
        // the prompt no larger than estimated.
        if let EventBody::Usage(usage) = &event.body {
            assert!(
                usage.total_tokens <= window,
                "{usage:?} in a window of {window}"
            );
            assert!(
                usage.prompt_tokens <= estimate,
                "the server counted {} prompt tokens, {estimate} were estimated",
                usage.prompt_tokens
            );
            println!(
                "request {requests}: estimated {estimate} tokens, the server counted {} (+{} answered) of {window}",
                usage.prompt_tokens, usage.completion_tokens
            );
        }
    }
    assert!(requests >= 1, "{stderr}");
    // A cut answer is said so, and the exit status tells a script.
    let cut = events
        .iter()
        .any(|event| matches!(event.body, EventBody::AnswerTruncated { .. }));
    assert_eq!(out.status.code(), Some(if cut { 3 } else { 0 }), "{stderr}");
    assert_eq!(
        stderr.contains("notice: the answer was cut short"),
        cut,
        "{stderr}"
    );
}
