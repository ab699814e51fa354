//! The same turn in native and in prompt mode: the same events (the middleware's chunk types, in
//! the same order), the same tool results, and auto mode falling back once a server refuses
//! tools, then staying in prompt mode.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;
use tooltrail_agent::{CollectingSink, Conversation, DenyAll};
use tooltrail_llm::{LlmConfig, ToolMode};
use tooltrail_protocol::{Event, EventBody, TurnEnd};
use tooltrail_test_support::{Reply, ScriptedServer};

fn workspace() -> tempfile::TempDir {
    tooltrail_test_support::demo_workspace().unwrap()
}

async fn turn(server: &ScriptedServer, mode: ToolMode, dir: &tempfile::TempDir) -> Vec<Event> {
    let agent = support::builtins_agent(
        LlmConfig::new(server.base_url(), "scripted").with_tool_mode(mode),
        dir.path(),
    );
    let sink = CollectingSink::new();
    let outcome = agent
        .run_turn(
            &mut Conversation::new(),
            "What is this project?",
            &sink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.end, TurnEnd::Completed, "{:?}", outcome.error);
    sink.events()
}

/// The middleware's chunk types of a turn (docs/requirements.md), with repeats of one type in a
/// row folded.
fn chunks(events: &[Event]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for chunk in events
        .iter()
        .filter_map(|event| event.body.seed_chunk_type())
    {
        if out.last() != Some(&chunk) {
            out.push(chunk);
        }
    }
    out
}

fn results(events: &[Event]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolCallFinished { tool, result, .. } => {
                Some((tool.clone(), result.clone()))
            }
            _ => None,
        })
        .collect()
}

fn modes(events: &[Event]) -> Vec<(ToolMode, bool)> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolModeUsed { mode, fell_back } => Some((*mode, *fell_back)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn native_and_prompt_mode_give_the_same_events_and_results() {
    let dir = workspace();
    let native = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_file", r#"{"path":"README.md"}"#)]).with_text("Let me look. "),
        Reply::text("A demo project."),
    ])
    .await;
    let prompt = ScriptedServer::start(vec![
        Reply::text(
            "Let me look. <tool_use><name>read_file</name><arguments>{\"path\":\"README.md\"}</arguments></tool_use>",
        ),
        Reply::text("A demo project."),
    ])
    .await;
    let native_events = turn(&native, ToolMode::Native, &dir).await;
    let prompt_events = turn(&prompt, ToolMode::Prompt, &dir).await;

    let expected = vec![
        "text_delta",
        "mcp_tool_in_progress",
        "mcp_tool_call_begin",
        "mcp_tool_call_response",
        "mcp_tool_complete",
        "text_delta",
    ];
    assert_eq!(chunks(&native_events), expected);
    assert_eq!(chunks(&prompt_events), expected);
    assert_eq!(results(&native_events), results(&prompt_events));
    assert_eq!(modes(&native_events), vec![(ToolMode::Native, false)]);
    assert_eq!(modes(&prompt_events), vec![(ToolMode::Prompt, false)]);

    // Prompt mode sends no tools; the result goes back as a <tool_use_result> block.
    let requests = prompt.chat_requests();
    assert!(
        requests[0].body.get("tools").is_none(),
        "{}",
        requests[0].body
    );
    let history = requests[1].body["messages"].to_string();
    assert!(history.contains("<tool_use_result>"), "{history}");
}

#[tokio::test]
async fn auto_mode_falls_back_once_and_says_so() {
    let dir = workspace();
    let server = ScriptedServer::start(vec![
        Reply::error(400, "registry.ollama.ai/library/gemma3:270m does not support tools"),
        Reply::text(
            "<tool_use><name>search_files</name><arguments>{\"pattern\":\"*.go\"}</arguments></tool_use>",
        ),
        Reply::text("One Go file."),
    ])
    .await;
    let events = turn(&server, ToolMode::Auto, &dir).await;
    assert_eq!(modes(&events), vec![(ToolMode::Prompt, true)]);
    assert_eq!(results(&events).len(), 1);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[0].body.get("tools").is_some());
    assert!(requests[1].body.get("tools").is_none());
    assert!(
        requests[2].body.get("tools").is_none(),
        "stays in prompt mode"
    );
}

#[tokio::test]
async fn an_unfinished_call_is_told_back_to_the_model_which_can_try_again() {
    let dir = workspace();
    let server = ScriptedServer::start(vec![
        Reply::text("<tool_use><name>read_file</name><arguments>{\"path\":"),
        Reply::text(
            "<tool_use><name>read_file</name><arguments>{\"path\":\"README.md\"}</arguments></tool_use>",
        ),
        Reply::text("A demo project."),
    ])
    .await;
    let events = turn(&server, ToolMode::Prompt, &dir).await;
    assert_eq!(results(&events).len(), 1);
    let second = server.chat_requests()[1].body["messages"].to_string();
    assert!(
        second.contains("could not run"),
        "the model hears why: {second}"
    );
}
