//! `tooltrail ask` against a real model server: llama.cpp's `llama-server` serving a 270M base
//! model (`scripts/real-llm test` builds, serves and runs these). A model this small answers
//! badly, so the tests assert what Tooltrail controls, never the answer's words: the server
//! accepts every request, every call the model streams is run or turned into a tool error the
//! model can read, the turn ends, the record holds every call, and nothing panics.
//!
//! ```text
//! scripts/real-llm test
//! TOOLTRAIL_REAL_LLM=http://127.0.0.1:PORT/v1 cargo test -p tooltrail-cli --test cli -- real_llm:: --ignored
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use run::{text, tooltrail};
use serde_json::Value;
use tooltrail_protocol::{Event, EventBody, ToolMode, ToolStatus, TurnEnd};
use tooltrail_test_support::demo_workspace;

fn base_url() -> String {
    std::env::var("TOOLTRAIL_REAL_LLM")
        .expect("TOOLTRAIL_REAL_LLM names the server's base URL (scripts/real-llm test sets it)")
}

/// `tooltrail ask --json` on `root` in `mode`, with `extra` flags: its output, its stderr and
/// its events.
async fn ask(
    url: &str,
    mode: ToolMode,
    root: &str,
    config: &std::path::Path,
    extra: &[&str],
    question: &str,
) -> (std::process::Output, String, Vec<Event>) {
    let mut args = vec![
        "ask",
        "--json",
        "--approve",
        "deny",
        "--base-url",
        url,
        "--model",
        "gemma",
        "--tool-mode",
        mode.as_str(),
        "-w",
        root,
    ];
    args.extend_from_slice(extra);
    args.push(question);
    let out = tooltrail(&args, config, &[]).await;
    let stderr = text(&out.stderr);
    let events = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    (out, stderr, events)
}

const QUESTIONS: &[&str] = &[
    "How many Go files are in this project? Use the tools.",
    "Read README.md and tell me what the project is.",
    "Find the file that defines func main.",
];

/// Asks every question in `mode` and checks what Tooltrail controls.
async fn ask_in(mode: ToolMode) {
    let url = base_url();
    let folder = demo_workspace().unwrap();
    let config = tempfile::tempdir().unwrap();
    // The five tools the questions need and answers of at most 256 tokens, as a user of a 270M
    // model with a small window would set it: every schema costs the model tokens and attention
    // on every request, and left alone it writes until the answer's room (a quarter of the
    // window) is full. The server's own limit (-n 256) does not hold here: a request's
    // max_tokens overrides it.
    std::fs::write(
        config.path().join("config.toml"),
        "max_tokens = 256\ndisabled_tools = [\"execute_bash\", \"code_query\", \"snippets\", \"ask_user\"]\n",
    )
    .unwrap();
    let root = folder.path().to_str().unwrap();
    let mut calls_seen = 0;
    for question in QUESTIONS {
        let (out, stderr, events) = ask(
            &url,
            mode,
            root,
            config.path(),
            &["--max-rounds", "3"],
            question,
        )
        .await;
        assert!(!stderr.contains("panicked"), "{stderr}");
        // The turn ends, and says how.
        let Some(EventBody::TurnFinished { reason, .. }) = events.last().map(|e| &e.body) else {
            panic!("the turn did not finish: {events:?}\n{stderr}");
        };
        // An error from the model server is a sentence with exit status 1; otherwise 0.
        match reason {
            TurnEnd::Error => {
                assert_eq!(out.status.code(), Some(1), "{stderr}");
                assert!(stderr.starts_with("error: "), "{stderr}");
            }
            // An answer the model's token limit cut short ends with status 3 and says so.
            TurnEnd::Completed | TurnEnd::RoundLimit => {
                let cut = events
                    .iter()
                    .any(|event| matches!(event.body, EventBody::AnswerTruncated { .. }));
                assert_eq!(out.status.code(), Some(if cut { 3 } else { 0 }), "{stderr}");
                assert_eq!(stderr.contains("the answer was cut short"), cut, "{stderr}");
            }
            TurnEnd::Cancelled => panic!("nothing cancelled the turn: {stderr}"),
        }
        // The mode asked for is the mode used (the server takes native tools through its
        // chat template).
        let used: Vec<ToolMode> = events
            .iter()
            .filter_map(|event| match &event.body {
                EventBody::ToolModeUsed { mode, .. } => Some(*mode),
                _ => None,
            })
            .collect();
        assert!(used.iter().all(|used| *used == mode), "{used:?}");
        // Every call the model streamed ended with a status; a failed one carries a message
        // the model reads.
        for event in &events {
            if let EventBody::ToolCallFinished {
                status,
                error,
                tool,
                ..
            } = &event.body
            {
                calls_seen += 1;
                if *status != ToolStatus::Success {
                    let error = error.as_ref().unwrap_or_else(|| panic!("{tool}: no error"));
                    assert!(!error.message.trim().is_empty(), "{tool}: {error:?}");
                }
            }
        }
        println!(
            "{mode} · {question} · {} event(s), ended {reason:?}",
            events.len()
        );
    }
    // The record holds exactly the calls that were shown.
    let out = tooltrail(
        &["history", "--json", "--limit", "1000"],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let page: Value = serde_json::from_slice(&out.stdout).unwrap();
    let recorded = page["items"].as_array().unwrap();
    assert_eq!(recorded.len(), calls_seen, "{page}");
    assert!(
        recorded.iter().all(|row| row["status"] != "running"),
        "{page}"
    );
    let out = tooltrail(&["conversations", "--json"], config.path(), &[]).await;
    let conversations: Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = conversations
        .get("items")
        .unwrap_or(&conversations)
        .as_array()
        .unwrap()
        .len();
    assert_eq!(listed, QUESTIONS.len(), "{conversations}");
    println!("{mode}: {calls_seen} call(s) shown and recorded");
}

#[tokio::test]
#[ignore = "needs a real model server: TOOLTRAIL_REAL_LLM=URL (scripts/real-llm test)"]
async fn ask_in_native_mode_against_llama_server() {
    ask_in(ToolMode::Native).await;
}

#[tokio::test]
#[ignore = "needs a real model server: TOOLTRAIL_REAL_LLM=URL (scripts/real-llm test)"]
async fn ask_in_prompt_mode_against_llama_server() {
    ask_in(ToolMode::Prompt).await;
}

/// Questions a new user asks first, with every tool on as a fresh install has them.
const FIRST_QUESTIONS: &[&str] = &[
    "Say hello in one word.",
    "Read README.md and tell me what it says.",
    "How many Go files are in this project?",
    "Which function does main.go define?",
    "What does go.mod declare?",
    "List the files of this folder.",
];

/// Every question ends in an answer (or an answer the token limit cut short), never in an
/// error: the loop controls hold a small model that repeats itself, copies its instructions
/// and runs on to its token limit. Every tool stays on; answers are held to 256 tokens, as in
/// `ask_in`: left at the default (a quarter of the window, 1,024 tokens here) an answer that
/// runs on takes two minutes of this one-thread server and is cut short just the same (whether a
/// request fits the window is `real_llm_context`'s to check).
async fn every_question_answers_in(mode: ToolMode) {
    let url = base_url();
    let folder = demo_workspace().unwrap();
    let config = tempfile::tempdir().unwrap();
    std::fs::write(config.path().join("config.toml"), "max_tokens = 256\n").unwrap();
    let root = folder.path().to_str().unwrap();
    for question in FIRST_QUESTIONS {
        let (out, stderr, events) = ask(&url, mode, root, config.path(), &[], question).await;
        let Some(EventBody::TurnFinished { reason, .. }) = events.last().map(|e| &e.body) else {
            panic!("the turn did not finish: {stderr}");
        };
        assert!(
            matches!(reason, TurnEnd::Completed | TurnEnd::RoundLimit),
            "{mode} · {question}: ended {reason:?}\n{stderr}"
        );
        assert!(
            !events
                .iter()
                .any(|event| matches!(event.body, EventBody::Error { fatal: true, .. })),
            "{stderr}"
        );
        let cut = events
            .iter()
            .any(|event| matches!(event.body, EventBody::AnswerTruncated { .. }));
        assert_eq!(out.status.code(), Some(if cut { 3 } else { 0 }), "{stderr}");
        let requests = events
            .iter()
            .filter(|event| matches!(event.body, EventBody::ContextUsage { .. }))
            .count();
        let stopped = events
            .iter()
            .filter(|event| matches!(event.body, EventBody::RepetitionStopped { .. }))
            .count();
        println!(
            "{mode} · {question} · {requests} request(s), {stopped} stopped for repeating, ended {reason:?}{}",
            if cut { " (cut short)" } else { "" }
        );
    }
}

#[tokio::test]
#[ignore = "needs a real model server: TOOLTRAIL_REAL_LLM=URL (scripts/real-llm test)"]
async fn every_first_question_answers_in_native_mode() {
    every_question_answers_in(ToolMode::Native).await;
}

#[tokio::test]
#[ignore = "needs a real model server: TOOLTRAIL_REAL_LLM=URL (scripts/real-llm test)"]
async fn every_first_question_answers_in_prompt_mode() {
    every_question_answers_in(ToolMode::Prompt).await;
}

/// The fixed prefix of every request, counted by the server's own tokenizer: the built-in
/// tools with the system prompt stay within 900 tokens, and so does a whole request with an
/// empty question as the server's chat template renders it, in both modes: native (this
/// template writes the tools as spaced JSON, as Hermes-style templates do, with its own
/// instructions around them) and prompt (how Tooltrail's runtime serves a GGUF whose template
/// renders no tools).
#[tokio::test]
#[ignore = "needs a real model server: TOOLTRAIL_REAL_LLM=URL (scripts/real-llm test)"]
async fn the_tools_and_system_prompt_take_at_most_900_tokens() {
    let config = tempfile::tempdir().unwrap();
    let out = tooltrail(
        &["tools", "--tokens", "--json"],
        config.path(),
        &[("TOOLTRAIL_BASE_URL", &base_url())],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let counted: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(counted["counted_by_server"], true, "{counted}");
    let total = counted["total"].as_u64().unwrap();
    println!("tools and system prompt: {total} tokens");
    assert!(total <= 900, "{counted}");
    for mode in ["native", "prompt"] {
        let out = tooltrail(
            &["tools", "--tokens", "--json"],
            config.path(),
            &[
                ("TOOLTRAIL_BASE_URL", &base_url()),
                ("TOOLTRAIL_TOOL_MODE", mode),
            ],
        )
        .await;
        let counted: Value = serde_json::from_slice(&out.stdout).unwrap();
        let rendered = counted["rendered_by_server"].as_u64().unwrap();
        println!("a request with an empty question, {mode} mode: {rendered} tokens");
        assert!(rendered <= 900, "{mode}: {counted}");
    }
}
