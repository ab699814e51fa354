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
