//! Against a real model server: llama.cpp's `llama-server` with the Gemma 3 270M model, as
//! `scripts/real-llm serve PORT` starts it. Ignored unless asked for, since it needs the
//! server (`scripts/real-llm test` builds it, serves it and runs these):
//!
//! ```text
//! TOOLTRAIL_REAL_LLM=http://127.0.0.1:PORT/v1 \
//! TOOLTRAIL_REAL_LLM_NO_JINJA=http://127.0.0.1:PORT2/v1 \
//!     cargo test -p tooltrail-llm --test llm -- real_llm:: --ignored
//! ```
//!
//! The second server runs with `--no-jinja`, so it refuses tools (HTTP 500, "tools param
//! requires --jinja flag"): auto mode must switch to prompt mode there.
//!
//! A 270M base model answers badly, so these assert only what Tooltrail controls: the
//! requests are accepted, the stream completes, every call has an id and a name or is a
//! dropped call with its reason, the text has no tag left of a call that was parsed, and
//! nothing panics. Never the answer's words.

// Helpers outside `#[test]` functions unwrap too: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tooltrail_llm::{ChatRequest, ChatResponse, LlmClient, LlmConfig, StreamDelta, ToolMode};
use tooltrail_protocol::{Message, ToolChoice, ToolSpec};

fn base_url(variable: &str) -> String {
    std::env::var(variable).unwrap_or_else(|_| {
        panic!("set {variable} to a real server's base URL (scripts/real-llm test does)")
    })
}

fn client(mode: ToolMode) -> LlmClient {
    client_of("TOOLTRAIL_REAL_LLM", mode)
}

fn client_of(variable: &str, mode: ToolMode) -> LlmClient {
    let mut config = LlmConfig::new(base_url(variable), "gemma").with_tool_mode(mode);
    config.idle_timeout = Duration::from_secs(120);
    LlmClient::new(config).unwrap()
}

fn tools() -> Vec<ToolSpec> {
    let path = json!({ "type": "object",
        "properties": { "path": { "type": "string" } }, "required": ["path"] });
    vec![
        ToolSpec {
            name: "read_file".into(),
            description: "Read a text file of the workspace, with line numbers.".into(),
            parameters: path.clone(),
            read_only: true,
        },
        ToolSpec {
            name: "count_lines".into(),
            description: "Count the lines of a file or of every file in a folder.".into(),
            parameters: path,
            read_only: true,
        },
    ]
}

fn questions() -> Vec<Vec<Message>> {
    let system = Message::system(
        "You are a coding agent working in a project folder. Use the tools to look at files \
         before you answer.",
    );
    vec![
        vec![
            system.clone(),
            Message::user("Read the file README.md and tell me its first line."),
        ],
        vec![
            system.clone(),
            Message::user("How many lines are there in src/main.rs and in Cargo.toml?"),
        ],
        vec![
            system,
            Message::user("Read README.md"),
            Message::assistant(
                "",
                vec![tooltrail_protocol::ToolCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path": "README.md"}"#.into(),
                }],
            ),
            Message::tool("call_1", "read_file", "1: # Demo\n2: A small demo project."),
        ],
    ]
}

/// Asks every question, checking each answer; returns the answers.
async fn ask_all(client: &LlmClient) -> Vec<ChatResponse> {
    ask(client, questions()).await
}

/// What auto mode is asked: the first question, where it decides, and the one whose history
/// holds a call, asked in the mode it kept. The question between asks nothing of auto mode that
/// the native and prompt tests do not already ask (and costs the server a whole answer).
fn auto_mode_questions() -> Vec<Vec<Message>> {
    let mut questions = questions();
    questions.remove(1);
    questions
}

/// Asks `questions`, checking each answer; returns the answers.
async fn ask(client: &LlmClient, questions: Vec<Vec<Message>>) -> Vec<ChatResponse> {
    let mut answers = Vec::new();
    for messages in questions {
        let request = ChatRequest {
            messages,
            tools: tools(),
            tool_choice: Some(ToolChoice::Auto),
            max_tokens: Some(200),
            ..ChatRequest::default()
        };
        let mut text = String::new();
        let mut deltas = 0;
        let response = client
            .stream(&request, &CancellationToken::new(), &mut |delta| {
                deltas += 1;
                if let StreamDelta::Text(piece) = delta {
                    text.push_str(&piece);
                }
            })
            .await
            .unwrap_or_else(|error| panic!("the real server's answer failed: {error}"));
        assert!(deltas > 0, "no delta at all");
        assert!(response.finish_reason.is_some(), "{response:?}");
        assert_eq!(
            text, response.content,
            "the text deltas add up to the content"
        );
        for call in &response.tool_calls {
            assert!(!call.id.is_empty(), "{call:?}");
            assert!(!call.name.is_empty(), "{call:?}");
        }
        for dropped in &response.dropped_calls {
            assert!(!dropped.reason.is_empty(), "{dropped:?}");
        }
        eprintln!(
            "{} mode: {} call(s), {} dropped, finish {:?}, {} chars of text",
            response.tool_mode_used,
            response.tool_calls.len(),
            response.dropped_calls.len(),
            response.finish_reason,
            response.content.chars().count()
        );
        answers.push(response);
    }
    answers
}

#[tokio::test]
#[ignore = "needs a real model server: TOOLTRAIL_REAL_LLM=URL (scripts/real-llm test)"]
async fn native_mode_against_llama_server() {
    for answer in ask_all(&client(ToolMode::Native)).await {
        assert_eq!(answer.tool_mode_used, ToolMode::Native);
    }
}

#[tokio::test]
#[ignore = "needs a real model server: TOOLTRAIL_REAL_LLM=URL (scripts/real-llm test)"]
async fn prompt_mode_against_llama_server() {
    for answer in ask_all(&client(ToolMode::Prompt)).await {
        assert_eq!(answer.tool_mode_used, ToolMode::Prompt);
        // Every `<tool_use>` outside code and thinking became a call (or a dropped one).
        if !answer.content.contains("```")
            && !answer.content.contains("~~~")
            && !answer.content.contains("<think>")
        {
            assert!(!answer.content.contains("<tool_use>"), "{answer:?}");
        }
    }
}

#[tokio::test]
#[ignore = "needs a real model server: TOOLTRAIL_REAL_LLM=URL (scripts/real-llm test)"]
async fn auto_mode_against_llama_server() {
    let client = client(ToolMode::Auto);
    let answers = ask(&client, auto_mode_questions()).await;
    // This server takes tools (its template renders them), so auto stays native.
    assert!(
        answers
            .iter()
            .all(|answer| answer.tool_mode_used == ToolMode::Native)
    );
    assert_eq!(client.detected_tool_mode(), Some(ToolMode::Native));
}

#[tokio::test]
#[ignore = "needs a real model server: TOOLTRAIL_REAL_LLM_NO_JINJA=URL (scripts/real-llm test)"]
async fn auto_mode_switches_to_prompt_mode_on_llama_server_without_jinja() {
    let client = client_of("TOOLTRAIL_REAL_LLM_NO_JINJA", ToolMode::Auto);
    for answer in ask(&client, auto_mode_questions()).await {
        assert_eq!(answer.tool_mode_used, ToolMode::Prompt);
    }
    assert_eq!(client.detected_tool_mode(), Some(ToolMode::Prompt));
}
