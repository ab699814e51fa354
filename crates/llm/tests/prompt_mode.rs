//! Prompt mode and auto mode over real HTTP: what is sent, how `<tool_use>` answers come
//! back as calls, and auto mode switching to prompt mode when a server refuses tools.

// Helpers outside `#[test]` functions unwrap too: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tooltrail_llm::{
    ChatRequest, ChatResponse, DroppedCall, FinishReason, LlmClient, LlmConfig, LlmError,
    StreamDelta, ToolMode,
};
use tooltrail_protocol::{Message, ToolCall, ToolChoice, ToolSpec};
use tooltrail_test_support::{Reply, ScriptedServer};

fn client(server: &ScriptedServer, mode: ToolMode) -> LlmClient {
    let mut config = LlmConfig::new(server.base_url(), "m").with_tool_mode(mode);
    config.idle_timeout = Duration::from_secs(5);
    config.retry_base_delay = Duration::from_millis(10);
    LlmClient::new(config).unwrap()
}

fn read_file_tool() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: "Read a file.".into(),
        parameters: json!({ "type": "object",
            "properties": { "path": { "type": "string" } }, "required": ["path"] }),
        read_only: true,
    }
}

fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        messages,
        tools: vec![read_file_tool()],
        tool_choice: Some(ToolChoice::Auto),
        ..ChatRequest::default()
    }
}

async fn stream(
    client: &LlmClient,
    request: &ChatRequest,
) -> (Result<ChatResponse, LlmError>, Vec<StreamDelta>) {
    let mut deltas = Vec::new();
    let result = client
        .stream(request, &CancellationToken::new(), &mut |delta| {
            deltas.push(delta)
        })
        .await;
    (result, deltas)
}

/// A streamed answer whose text comes in these pieces.
fn text_pieces(pieces: &[&str]) -> Reply {
    let mut chunks: Vec<Value> = pieces
        .iter()
        .map(|piece| json!({ "choices": [{ "index": 0, "delta": { "content": piece } }] }))
        .collect();
    chunks.push(json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }] }));
    Reply::sse(chunks)
}

/// Generated ids are random: checked for their form, then blanked.
fn blank(mut response: ChatResponse) -> ChatResponse {
    for call in response.tool_calls.iter_mut().chain(
        response
            .dropped_calls
            .iter_mut()
            .map(|dropped| &mut dropped.call),
    ) {
        assert!(call.id.starts_with("call_"), "{}", call.id);
        call.id = "call_<generated>".into();
    }
    response
}

fn call(name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: "call_<generated>".into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn system_text(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap().to_string()
}

const REFUSAL: &str = "registry.ollama.ai/library/gemma3:4b does not support tools";

#[tokio::test]
async fn prompt_mode_sends_the_tools_in_the_system_prompt_and_reads_a_mixed_answer() {
    let server = ScriptedServer::start(vec![text_pieces(&[
        "I will read both.\n<",
        "tool_use><name>read_",
        "file</name><arguments>{\"path\": \"a.md\"}</arguments></tool_use><tool_use>",
        "<name>read_file</name><arguments>{\"path\": ",
        "\"b.md\"}</arguments></",
        "tool_use>\nThen I compare them.",
    ])])
    .await;
    let client = client(&server, ToolMode::Prompt);
    let request = request(vec![
        Message::system("You answer questions about a folder."),
        Message::user("Compare a.md and b.md"),
    ]);
    let (response, deltas) = stream(&client, &request).await;

    assert_eq!(
        blank(response.unwrap()),
        ChatResponse {
            content: "I will read both.\n\nThen I compare them.".into(),
            tool_calls: vec![
                call("read_file", "{\"path\": \"a.md\"}"),
                call("read_file", "{\"path\": \"b.md\"}"),
            ],
            dropped_calls: Vec::new(),
            finish_reason: Some(FinishReason::Stop),
            usage: None,
            tool_mode_used: ToolMode::Prompt,
        }
    );
    // The same kinds of deltas as native calls: text, then each call's name and arguments.
    let shown: Vec<String> = deltas
        .iter()
        .map(|delta| match delta {
            StreamDelta::Text(text) => format!("text {text:?}"),
            StreamDelta::ToolCall {
                index,
                name,
                arguments,
                ..
            } => format!("call {index} {name:?} {arguments:?}"),
            StreamDelta::Usage(_) => "usage".into(),
            StreamDelta::PromptProgress { .. } => "progress".into(),
        })
        .collect();
    assert_eq!(
        shown,
        vec![
            r#"text "I will read both.\n""#,
            r#"call 0 Some("read_file") "{\"path\": \"a.md\"}""#,
            r#"call 1 Some("read_file") "{\"path\": ""#,
            r#"call 1 None "\"b.md\"}""#,
            r#"text "\nThen I compare them.""#,
        ]
    );

    let sent = &server.chat_requests()[0].body;
    assert_eq!(sent.get("tools"), None);
    assert_eq!(sent.get("tool_choice"), None);
    assert_eq!(sent["stop"], json!(["<tool_use_result>"]));
    let system = system_text(sent);
    assert!(
        system.starts_with("You answer questions about a folder.\n\n# Tools\n"),
        "{system}"
    );
    assert!(system.contains("<tool_use><name>TOOL_NAME</name><arguments>"));
    assert!(
        system.contains("<tools>\nread_file(path: string)\n  Read a file.\n"),
        "{system}"
    );
    assert_eq!(
        sent["messages"][1],
        json!({ "role": "user", "content": "Compare a.md and b.md" })
    );
}

#[tokio::test]
async fn prompt_mode_sends_earlier_calls_and_results_as_text() {
    let server = ScriptedServer::start(vec![Reply::text("a.md says hi.")]).await;
    let client = client(&server, ToolMode::Prompt);
    let request = request(vec![
        Message::user("What does a.md say?"),
        Message::assistant(
            "",
            vec![ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"a.md"}"#.into(),
            }],
        ),
        Message::tool("call_1", "read_file", "1: hi"),
    ]);
    let (response, _) = stream(&client, &request).await;
    assert_eq!(response.unwrap().content, "a.md says hi.");
    let sent = &server.chat_requests()[0].body;
    assert_eq!(
        sent["messages"].as_array().unwrap()[1..].to_vec(),
        vec![
            json!({ "role": "user", "content": "What does a.md say?" }),
            json!({ "role": "assistant", "content":
                "<tool_use><name>read_file</name><arguments>{\"path\":\"a.md\"}</arguments></tool_use>" }),
            json!({ "role": "user", "content":
                "<tool_use_result><name>read_file</name><result>1: hi</result></tool_use_result>" }),
        ]
    );
}

#[tokio::test]
async fn prompt_mode_reads_whole_answers_too() {
    let server = ScriptedServer::start(vec![Reply::text(
        "<tool_use><name>read_file</name><arguments>{\"path\": \"a\"",
    )])
    .await;
    let client = client(&server, ToolMode::Prompt);
    let response = client
        .complete(
            &request(vec![Message::user("read a")]),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        blank(response).dropped_calls,
        vec![DroppedCall {
            call: call("read_file", "{\"path\": \"a\""),
            reason: "the answer ended inside the `<tool_use>` block of `read_file` before \
                     `</tool_use>`, so the call is incomplete"
                .into(),
        }]
    );
}

#[tokio::test]
async fn auto_mode_switches_to_prompt_mode_once_when_tools_are_refused() {
    let server = ScriptedServer::start(vec![
        Reply::error(400, REFUSAL),
        text_pieces(&[
            "<tool_use><name>read_file</name><arguments>{\"path\": \"a\"}</arguments></tool_use>",
        ]),
        Reply::text("Done."),
    ])
    .await;
    let client = client(&server, ToolMode::Auto);
    assert_eq!(client.detected_tool_mode(), None);
    let (response, _) = stream(&client, &request(vec![Message::user("read a")])).await;
    let response = blank(response.unwrap());
    assert_eq!(response.tool_mode_used, ToolMode::Prompt);
    assert_eq!(
        response.tool_calls,
        vec![call("read_file", "{\"path\": \"a\"}")]
    );
    assert_eq!(client.detected_tool_mode(), Some(ToolMode::Prompt));

    // The next request goes in prompt mode at once, from this client and its clones.
    let (response, _) = stream(&client.clone(), &request(vec![Message::user("again")])).await;
    assert_eq!(response.unwrap().tool_mode_used, ToolMode::Prompt);

    let sent: Vec<Value> = server
        .chat_requests()
        .into_iter()
        .map(|request| request.body)
        .collect();
    assert_eq!(sent.len(), 3);
    assert!(sent[0].get("tools").is_some());
    for prompt in &sent[1..] {
        assert_eq!(prompt.get("tools"), None);
        assert!(system_text(prompt).starts_with("# Tools\n"));
    }
    // The retry is the same request: same history.
    assert_eq!(sent[1]["messages"][1], sent[0]["messages"][0]);
}

#[tokio::test]
async fn auto_mode_takes_llama_cpp_refusals_without_retrying_the_500() {
    let server = ScriptedServer::start(vec![
        Reply::error(500, "tools param requires --jinja flag"),
        Reply::text("No tools needed."),
    ])
    .await;
    let client = client(&server, ToolMode::Auto);
    let (response, _) = stream(&client, &request(vec![Message::user("hi")])).await;
    let response = response.unwrap();
    assert_eq!(response.content, "No tools needed.");
    assert_eq!(response.tool_mode_used, ToolMode::Prompt);
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn auto_mode_falls_back_once_only() {
    let server = ScriptedServer::start(vec![
        Reply::error(400, REFUSAL),
        Reply::error(400, REFUSAL),
        Reply::text("not reached"),
    ])
    .await;
    let client = client(&server, ToolMode::Auto);
    let (response, _) = stream(&client, &request(vec![Message::user("hi")])).await;
    assert_eq!(
        response.unwrap_err().to_string(),
        format!("the model endpoint rejected the request (HTTP 400): {REFUSAL}")
    );
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn auto_mode_keeps_native_calls_and_other_errors() {
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_file", r#"{"path":"a"}"#)]),
        Reply::error(400, "messages: field required"),
    ])
    .await;
    let client = client(&server, ToolMode::Auto);
    let (response, _) = stream(&client, &request(vec![Message::user("read a")])).await;
    let response = response.unwrap();
    assert_eq!(response.tool_mode_used, ToolMode::Native);
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(client.detected_tool_mode(), Some(ToolMode::Native));
    let (response, _) = stream(&client, &request(vec![Message::user("again")])).await;
    assert!(matches!(response, Err(LlmError::Http { status: 400, .. })));
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn native_and_prompt_modes_never_switch() {
    let server = ScriptedServer::start(vec![Reply::error(400, REFUSAL)]).await;
    let native = client(&server, ToolMode::Native);
    let (response, _) = stream(&native, &request(vec![Message::user("hi")])).await;
    assert!(matches!(response, Err(LlmError::Http { status: 400, .. })));
    assert_eq!(server.chat_requests().len(), 1);
    assert_eq!(native.detected_tool_mode(), None);

    let server = ScriptedServer::start(vec![Reply::error(400, REFUSAL)]).await;
    let prompt = client(&server, ToolMode::Prompt);
    let (response, _) = stream(&prompt, &request(vec![Message::user("hi")])).await;
    assert!(matches!(response, Err(LlmError::Http { status: 400, .. })));
    assert_eq!(server.chat_requests().len(), 1);
}

#[tokio::test]
async fn auto_mode_without_tools_sends_a_plain_request() {
    let server = ScriptedServer::start(vec![Reply::text("<tool_use> is a tag.")]).await;
    let client = client(&server, ToolMode::Auto);
    let (response, _) = stream(&client, &ChatRequest::new(vec![Message::user("hi")])).await;
    let response = response.unwrap();
    // Natively, text is text.
    assert_eq!(response.content, "<tool_use> is a tag.");
    assert_eq!(response.tool_mode_used, ToolMode::Native);
    assert_eq!(client.detected_tool_mode(), None);
}
