//! Small models that repeat themselves: the loop controls end to end, against the scripted
//! model server over real HTTP. A stream that repeats a call forever is cut while it streams
//! and the turn still answers; copies in one answer run once; a round whose calls overflow the
//! window still ends in an answer; the request that asks for the answer keeps the prefix.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tooltrail_agent::{Agent, AgentConfig, CollectingSink, Conversation, DenyAll, TurnOutcome};
use tooltrail_llm::{LlmConfig, ToolMode};
use tooltrail_protocol::{Event, EventBody, ToolStatus, TurnEnd};
use tooltrail_test_support::{Reply, ScriptedServer};

async fn agent(
    server: &ScriptedServer,
    root: &std::path::Path,
    window: u32,
    mode: ToolMode,
) -> Agent {
    let mut config = LlmConfig::new(server.base_url(), "scripted").with_tool_mode(mode);
    config.context_window = Some(window);
    support::builtins_agent(config, root)
}

async fn ask(agent: &Agent, question: &str) -> (TurnOutcome, Vec<Event>) {
    let sink = CollectingSink::default();
    let mut conversation = Conversation::new();
    let outcome = agent
        .run_turn(
            &mut conversation,
            question,
            &sink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    (outcome, sink.events())
}

/// A stream of `count` chunks, each one whole call to `read_file` of README.md, the way a small
/// model repeats one call until its token limit.
fn repeating_calls(count: usize) -> Reply {
    let chunks = (0..count).map(|index| {
        json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [{
            "index": index, "id": format!("call_{index}"), "type": "function",
            "function": { "name": "read_file", "arguments": "{\"path\": \"README.md\"}" }
        }] } }] })
    });
    let finish = json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "length" }] });
    Reply::sse(chunks.chain(std::iter::once(finish))).delay(Duration::from_millis(2))
}

fn finished_calls(events: &[Event]) -> Vec<(String, ToolStatus)> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolCallFinished { tool, status, .. } => Some((tool.clone(), *status)),
            _ => None,
        })
        .collect()
}

fn messages(request: &Value) -> Vec<Value> {
    request["messages"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_stream_that_repeats_a_call_forever_is_cut_and_the_turn_answers() {
    let ws = tooltrail_test_support::demo_workspace().unwrap();
    let server = ScriptedServer::start(vec![
        repeating_calls(2000),
        Reply::text("The README says hello."),
    ])
    .await;
    let agent = agent(&server, ws.path(), 8192, ToolMode::Native).await;
    let (outcome, events) = ask(&agent, "What does the README say?").await;

    assert_eq!(outcome.end, TurnEnd::Completed);
    assert_eq!(outcome.text, "The README says hello.");
    assert!(
        server.pieces_sent() < 100,
        "the stream was closed early: {} of 2001 chunks written",
        server.pieces_sent()
    );
    let stopped: Vec<&EventBody> = events
        .iter()
        .map(|event| &event.body)
        .filter(|body| matches!(body, EventBody::RepetitionStopped { .. }))
        .collect();
    let [
        EventBody::RepetitionStopped {
            round,
            tool,
            repeats,
            dropped,
            ..
        },
    ] = stopped.as_slice()
    else {
        panic!("one repetition_stopped event: {stopped:?}");
    };
    assert_eq!(
        dropped,
        &vec!["call_1".to_string()],
        "the copy that began to stream is retracted"
    );
    assert_eq!(
        (*round, tool.as_deref(), *repeats),
        (1, Some("read_file"), 2)
    );
    assert_eq!(
        finished_calls(&events),
        vec![("read_file".to_string(), ToolStatus::Success)],
        "the distinct call before the cut ran, once"
    );
    let second = &server.chat_requests()[1].body;
    let history = messages(second);
    let answer = history
        .iter()
        .find(|message| message["role"] == "assistant")
        .unwrap();
    assert_eq!(answer["tool_calls"].as_array().unwrap().len(), 1);
    let result = history.last().unwrap();
    assert_eq!(result["role"], "tool");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("repeated the call to `read_file`, so it was stopped there"),
        "{result}"
    );
}

#[tokio::test]
async fn text_said_over_and_over_is_cut_and_becomes_the_answer_once() {
    let ws = tooltrail_test_support::demo_workspace().unwrap();
    let sentence = "The project prints a greeting. ";
    let chunks =
        std::iter::once(json!({ "choices": [{ "index": 0, "delta": { "content": "Answer: " } }] }))
            .chain(
                (0..3000).map(
                    |_| json!({ "choices": [{ "index": 0, "delta": { "content": sentence } }] }),
                ),
            );
    let server =
        ScriptedServer::start(vec![Reply::sse(chunks).delay(Duration::from_millis(1))]).await;
    let agent = agent(&server, ws.path(), 8192, ToolMode::Native).await;
    let (outcome, events) = ask(&agent, "What is this?").await;

    assert_eq!(outcome.end, TurnEnd::Completed);
    assert_eq!(outcome.text, format!("Answer: {sentence}"));
    assert!(server.pieces_sent() < 200, "{}", server.pieces_sent());
    assert!(
        events
            .iter()
            .any(|event| matches!(&event.body, EventBody::RepetitionStopped { tool: None, .. }))
    );
}

#[tokio::test]
async fn copies_in_one_answer_run_once_and_cost_one_line_each() {
    let ws = tooltrail_test_support::demo_workspace().unwrap();
    let read = ("read_file", r#"{"path":"README.md"}"#);
    // The last call of an answer is finished only when the answer is: a copy there is caught
    // when the calls run.
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[read, ("list_dir", "{}"), read]),
        Reply::text("Done."),
    ])
    .await;
    let mut config = LlmConfig::new(server.base_url(), "scripted");
    config.context_window = Some(8192);
    let agent = support::builtins_agent(config, ws.path());
    let sink = CollectingSink::default();
    let mut conversation = Conversation::new();
    let outcome = agent
        .run_turn(
            &mut conversation,
            "Read the README",
            &sink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.end, TurnEnd::Completed);
    let started = sink
        .events()
        .iter()
        .filter(|event| matches!(&event.body, EventBody::ToolCallStarted { tool, .. } if tool == "read_file"))
        .count();
    assert_eq!(started, 1, "the copies did not run");
    let second = &server.chat_requests()[1].body;
    let results: Vec<String> = messages(second)
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(results.len(), 3, "every call has its result");
    let first_id = messages(second)
        .iter()
        .find(|message| message["role"] == "assistant")
        .unwrap()["tool_calls"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        results[2],
        format!("[same call as {first_id} above, which ran once: use its result]")
    );
    assert!(results[0].contains("A demo project."), "{}", results[0]);
}

/// A workspace of files that each fill much of a small window.
fn wide_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for index in 0..12 {
        let text: String = (1..=400)
            .map(|n| format!("line {n} of file {index}: some words to read here\n"))
            .collect();
        std::fs::write(dir.path().join(format!("f{index}.txt")), text).unwrap();
    }
    dir
}

async fn overflowing_round_answers(mode: ToolMode) {
    let ws = wide_workspace();
    let calls: Vec<(String, String)> = (0..12)
        .map(|index| {
            (
                "read_file".to_string(),
                format!(r#"{{"path":"f{index}.txt","limit":400}}"#),
            )
        })
        .collect();
    let calls: Vec<(&str, &str)> = calls
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let first = match mode {
        ToolMode::Prompt => {
            let text: String = calls
                .iter()
                .map(|(name, args)| {
                    format!("<tool_use><name>{name}</name><arguments>{args}</arguments></tool_use>")
                })
                .collect();
            Reply::text(text)
        }
        ToolMode::Native | ToolMode::Auto => Reply::tool_calls(&calls),
    };
    let server = ScriptedServer::start(vec![
        first,
        Reply::tool_calls(&[("read_file", r#"{"path":"f0.txt","offset":401}"#)]),
        Reply::text("The files hold numbered lines."),
    ])
    .await;
    let agent = agent(&server, ws.path(), 4096, mode).await;
    let (outcome, events) = ask(&agent, "What do the files hold?").await;

    assert_eq!(outcome.end, TurnEnd::Completed, "{:?}", outcome.error);
    assert_eq!(outcome.text, "The files hold numbered lines.");
    assert!(
        !events
            .iter()
            .any(|event| matches!(&event.body, EventBody::Error { fatal: true, .. })),
        "no fatal error"
    );
    let requests = server.chat_requests();
    let last = requests.last().unwrap();
    // Every request fit the window with the answer's share as its limit.
    for request in &requests {
        assert_eq!(request.body["max_tokens"], 1024, "a quarter of the window");
    }
    let question_kept = messages(&last.body).iter().any(|message| {
        message["content"]
            .as_str()
            .is_some_and(|c| c.contains("What do the files hold?"))
    });
    assert!(question_kept, "the question never gives way");
}

#[tokio::test]
async fn a_round_whose_calls_overflow_the_window_still_ends_in_an_answer() {
    overflowing_round_answers(ToolMode::Native).await;
}

#[tokio::test]
async fn in_prompt_mode_too_an_overflowing_round_ends_in_an_answer() {
    overflowing_round_answers(ToolMode::Prompt).await;
}

#[tokio::test]
async fn the_answer_now_request_keeps_the_prefix_in_prompt_mode() {
    let ws = tooltrail_test_support::demo_workspace().unwrap();
    let server = ScriptedServer::start(vec![
        Reply::text(r#"<tool_use><name>read_file</name><arguments>{"path":"README.md"}</arguments></tool_use>"#),
        Reply::text("It says hello."),
    ])
    .await;
    let mut config = LlmConfig::new(server.base_url(), "scripted").with_tool_mode(ToolMode::Prompt);
    config.context_window = Some(8192);
    let agent = support::builtins_agent_with(
        config,
        ws.path(),
        AgentConfig {
            max_rounds: 1,
            ..AgentConfig::default()
        },
    );
    let (outcome, _) = ask(&agent, "What does the README say?").await;
    assert_eq!(outcome.text, "It says hello.");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 2);
    let before = messages(&requests[0].body);
    let last = messages(&requests[1].body);
    assert_eq!(
        last[0], before[0],
        "the same system prompt with the same tools"
    );
    assert_eq!(&last[..before.len()], &before[..]);
    let note = last.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(note.contains("Tools are no longer available"), "{note}");
}
