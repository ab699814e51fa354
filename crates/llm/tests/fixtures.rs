//! The captured streams of real servers, replayed byte for byte in small network writes,
//! parse as `crates/test-support/fixtures/sse/README.md` says.

// Helpers outside `#[test]` functions unwrap too: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;
use tooltrail_llm::{
    ChatRequest, ChatResponse, DroppedCall, FinishReason, LlmClient, LlmConfig, LlmError,
    StreamDelta, ToolMode,
};
use tooltrail_protocol::{Message, ToolCall, Usage};
use tooltrail_test_support::{Reply, ScriptedServer};

async fn replay(name: &str) -> (Result<ChatResponse, LlmError>, Vec<StreamDelta>) {
    let server = ScriptedServer::start(vec![Reply::fixture(name).unwrap()]).await;
    let mut config = LlmConfig::new(server.base_url(), "gemma");
    config.idle_timeout = Duration::from_secs(5);
    let client = LlmClient::new(config).unwrap();
    let mut deltas = Vec::new();
    let result = client
        .stream(
            &ChatRequest::new(vec![Message::user("Read README.md")]),
            &CancellationToken::new(),
            &mut |delta| deltas.push(delta),
        )
        .await;
    (result, deltas)
}

fn read_file(id: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "read_file".into(),
        arguments: arguments.into(),
    }
}

#[tokio::test]
async fn llama_server_single_call() {
    let (response, deltas) = replay("llama-server-gemma3-270m-single-call").await;
    assert_eq!(
        response.unwrap(),
        ChatResponse {
            content: String::new(),
            tool_calls: vec![read_file(
                "5Zqx4V7AGdUwC45Q8LRcAr5p1cmgywey",
                r#"{"path": "README.md"}"#
            )],
            dropped_calls: Vec::new(),
            finish_reason: Some(FinishReason::ToolCalls),
            tool_mode_used: ToolMode::Native,
            usage: Some(Usage {
                prompt_tokens: 305,
                completion_tokens: 32,
                total_tokens: 337
            }),
        }
    );
    // The name comes once, with the first fragment; the id is the same on every delta.
    let calls: Vec<(u32, String, Option<String>)> = deltas
        .iter()
        .filter_map(|delta| match delta {
            StreamDelta::ToolCall {
                index, id, name, ..
            } => Some((*index, id.clone(), name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls[0],
        (
            0,
            "5Zqx4V7AGdUwC45Q8LRcAr5p1cmgywey".to_string(),
            Some("read_file".to_string())
        )
    );
    assert!(calls[1..].iter().all(|(index, id, name)| *index == 0
        && id == "5Zqx4V7AGdUwC45Q8LRcAr5p1cmgywey"
        && name.is_none()));
}

#[tokio::test]
async fn llama_server_multi_call_truncated_by_length() {
    let (response, _) = replay("llama-server-gemma3-270m-multi-call-truncated").await;
    let path = r#"{"path": "README.md"}"#;
    assert_eq!(
        response.unwrap(),
        ChatResponse {
            content:
                "You are provided with a function signature within <tool_call></tool_call> XML tags:\n"
                    .into(),
            tool_calls: vec![
                read_file("wbtFDw2BjffN6PVuYE4Bc3WI0LkMkbP0", path),
                read_file("sH0CJIpAS4chW5CQy4Ji2yhnQ0qqbINY", path),
                read_file("nkDXkCx6cCDcQbNXlNNx4pLcHN65gPSs", path),
                read_file("sSWgBUQMe6TrEtqyn69xUGZRTccGyKdx", path),
            ],
            dropped_calls: vec![DroppedCall {
                call: read_file("UkXTRnDKo1ezFJybVPTxJyqSIrT6yVMm", r#"{"path": "README."#),
                reason: "the answer reached its length limit in the middle of the call to \
                         `read_file`, so its arguments are incomplete"
                    .into(),
            }],
            finish_reason: Some(FinishReason::Length),
            tool_mode_used: ToolMode::Native,
            usage: None,
        }
    );
}

#[tokio::test]
async fn llama_server_auto_answers_with_text() {
    let (response, deltas) = replay("llama-server-gemma3-270m-auto-nocall").await;
    let text = format!(
        "If there is more than one line, do not read the file.\n{}\\",
        "\\\n".repeat(56)
    );
    assert_eq!(
        response.unwrap(),
        ChatResponse {
            content: text.clone(),
            tool_calls: Vec::new(),
            dropped_calls: Vec::new(),
            finish_reason: Some(FinishReason::Length),
            tool_mode_used: ToolMode::Native,
            usage: None,
        }
    );
    let streamed: String = deltas
        .iter()
        .map(|delta| match delta {
            StreamDelta::Text(text) => text.as_str(),
            _ => "",
        })
        .collect();
    assert_eq!(streamed, text);
}

#[tokio::test]
async fn llama_cpp_python_forced_function_repeats_its_name() {
    let (response, deltas) = replay("llama-cpp-python-gemma3-270m-forced-function").await;
    assert_eq!(
        response.unwrap(),
        ChatResponse {
            content: String::new(),
            tool_calls: vec![read_file(
                "call__0_read_file_cmpl-430bafc6-58bd-4dea-9295-6a7b1e4d5404",
                r#"{ "path" : "home/toddle_user/data/data_1.json" }"#
            )],
            dropped_calls: Vec::new(),
            finish_reason: Some(FinishReason::ToolCalls),
            tool_mode_used: ToolMode::Native,
            usage: None,
        }
    );
    let names: Vec<&str> = deltas
        .iter()
        .filter_map(|delta| match delta {
            StreamDelta::ToolCall {
                name: Some(name), ..
            } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(names, vec!["read_file"]);
}

#[tokio::test]
async fn llama_cpp_python_empty_answer() {
    let (response, deltas) = replay("llama-cpp-python-gemma3-270m-auto-empty").await;
    assert_eq!(
        response.unwrap(),
        ChatResponse {
            finish_reason: Some(FinishReason::Stop),
            ..ChatResponse::default()
        }
    );
    assert_eq!(deltas, Vec::new());
}

#[tokio::test]
async fn llama_cpp_python_failing_after_its_head_is_an_incomplete_answer() {
    let (response, deltas) = replay("llama-cpp-python-gemma3-270m-required-http500").await;
    let error = response.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model's answer broke off before it was finished (the stream ended without a finish reason), so none of it was run; the server's log may say why"
    );
    assert_eq!(
        error.code(),
        tooltrail_protocol::ErrorCode::IncompleteResponse
    );
    assert_eq!(deltas, Vec::new());
}

/// A fixture recorded by `scripts/real-llm record` and not embedded in test-support.
fn recorded(name: &str) -> Reply {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../test-support/fixtures/sse")
        .join(format!("{name}.txt"));
    Reply::from(tooltrail_test_support::Fixture::from_path(&path).unwrap())
}

async fn replay_in(
    mode: ToolMode,
    replies: Vec<Reply>,
) -> (Result<ChatResponse, LlmError>, Vec<StreamDelta>, usize) {
    let server = ScriptedServer::start(replies).await;
    let mut config = LlmConfig::new(server.base_url(), "gemma").with_tool_mode(mode);
    config.idle_timeout = Duration::from_secs(5);
    let client = LlmClient::new(config).unwrap();
    let mut deltas = Vec::new();
    let request = ChatRequest {
        messages: vec![Message::user("Read the file README.md")],
        tools: vec![tooltrail_protocol::ToolSpec {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: serde_json::json!({ "type": "object" }),
            read_only: true,
        }],
        ..ChatRequest::default()
    };
    let result = client
        .stream(&request, &CancellationToken::new(), &mut |delta| {
            deltas.push(delta)
        })
        .await;
    (result, deltas, server.chat_requests().len())
}

/// Names and arguments of calls, without their (generated) ids.
fn named(calls: &[ToolCall]) -> Vec<(&str, &str)> {
    calls
        .iter()
        .map(|call| (call.name.as_str(), call.arguments.as_str()))
        .collect()
}

fn joined_text(deltas: &[StreamDelta]) -> String {
    deltas
        .iter()
        .filter_map(|delta| match delta {
            StreamDelta::Text(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn llama_server_prompt_mode_answer_through_the_parser() {
    // Recorded without the stop sequence: the 270M model writes `<tool_use_result>` blocks of
    // its own, stray `</tool_use>` tags, blocks without `<name>`, and is cut by its length.
    let (response, deltas, _) = replay_in(
        ToolMode::Prompt,
        vec![recorded("llama-server-gemma3-270m-prompt-mode-no-stop")],
    )
    .await;
    let response = response.unwrap();
    assert_eq!(response.tool_mode_used, ToolMode::Prompt);
    assert_eq!(response.finish_reason, Some(FinishReason::Length));
    assert_eq!(
        named(&response.tool_calls),
        vec![
            ("read_file", r#"{"path": "notes.txt"}"#),
            ("read_file", r#"{"path": "README_MD.md"}"#),
            ("read_file", r#"{"path": "README_MD.md"}"#),
        ]
    );
    assert_eq!(response.dropped_calls, Vec::new());
    assert_eq!(joined_text(&deltas), response.content);
    assert!(
        !response.content.contains("<tool_use>"),
        "{}",
        response.content
    );
    assert!(
        response
            .content
            .starts_with("<tool_use_result><name>read_file</name>")
    );
}

#[tokio::test]
async fn llama_server_prompt_mode_answer_ended_by_the_stop_sequence() {
    // What prompt mode sends: the model's first words are `<tool_use_result>`, the stop
    // sequence, so the answer is empty (the agent reports an empty answer).
    let (response, _, _) = replay_in(
        ToolMode::Prompt,
        vec![recorded("llama-server-gemma3-270m-prompt-mode-empty")],
    )
    .await;
    let response = response.unwrap();
    assert_eq!(response.content, "");
    assert_eq!(response.tool_calls, Vec::new());
    assert_eq!(response.finish_reason, Some(FinishReason::Stop));
}

#[tokio::test]
async fn llama_server_native_text_then_calls_cut_by_length() {
    let (response, _, _) = replay_in(
        ToolMode::Native,
        vec![recorded("llama-server-gemma3-270m-native-text-and-calls")],
    )
    .await;
    let response = response.unwrap();
    let path = r#"{"path": "README.md"}"#;
    assert_eq!(
        named(&response.tool_calls),
        vec![
            ("read_file", path),
            ("count_lines", path),
            ("read_file", path),
            ("read_file", path),
            ("count_lines", path),
            ("read_file", path),
            ("count_lines", path),
        ]
    );
    assert!(response.content.starts_with("<tool_response>\n1: "));
    assert_eq!(response.finish_reason, Some(FinishReason::Length));
}

#[tokio::test]
async fn auto_mode_falls_back_when_llama_server_runs_without_jinja() {
    let (response, _, requests) = replay_in(
        ToolMode::Auto,
        vec![
            recorded("llama-server-no-jinja-tools-http500"),
            recorded("llama-server-gemma3-270m-prompt-mode-no-stop"),
        ],
    )
    .await;
    let response = response.unwrap();
    assert_eq!(response.tool_mode_used, ToolMode::Prompt);
    assert_eq!(response.tool_calls.len(), 3);
    // The 500 is not tried again: one native request, one in prompt mode.
    assert_eq!(requests, 2);
}
