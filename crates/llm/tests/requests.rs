//! What the client sends: the body's `tools`, `tool_choice`, sampling fields and history in
//! OpenAI's wire shape, the bearer key, and the non-streaming entry points.

// Helpers outside `#[test]` functions unwrap too: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tooltrail_llm::{ChatRequest, ChatResponse, FinishReason, LlmClient, LlmConfig, ToolMode};
use tooltrail_protocol::{Message, ToolCall, ToolChoice, ToolSpec, Usage};
use tooltrail_test_support::{Reply, SCRIPTED_MODEL, ScriptedServer};

fn client(server: &ScriptedServer, key: Option<&str>) -> LlmClient {
    let mut config = LlmConfig::new(server.base_url(), "test-model");
    config.api_key = key.map(str::to_string);
    config.idle_timeout = Duration::from_secs(5);
    LlmClient::new(config).unwrap()
}

fn read_file_spec() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: "Read a file of the workspace".into(),
        parameters: json!({
            "type": "object",
            "properties": { "path": { "type": "string" } },
            "required": ["path"],
        }),
        read_only: true,
    }
}

fn scripted_usage() -> Usage {
    Usage {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
    }
}

#[tokio::test]
async fn a_streaming_request_carries_tools_choice_and_history() {
    let server = ScriptedServer::start(vec![Reply::text("ok")]).await;
    let request = ChatRequest {
        messages: vec![
            Message::system("You answer questions about a folder."),
            Message::user("What is in README.md?"),
            Message::assistant(
                "",
                vec![ToolCall {
                    id: "call_a".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"README.md"}"#.into(),
                }],
            ),
            Message::tool("call_a", "read_file", "# Demo"),
        ],
        tools: vec![read_file_spec()],
        tool_choice: Some(ToolChoice::Function("read_file".into())),
        temperature: Some(0.5),
        max_tokens: Some(256),
    };
    client(&server, Some("sk-test"))
        .stream(&request, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();

    let sent = server.chat_requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].body,
        json!({
            "model": "test-model",
            "messages": [
                { "role": "system", "content": "You answer questions about a folder." },
                { "role": "user", "content": "What is in README.md?" },
                { "role": "assistant", "content": "", "tool_calls": [{
                    "id": "call_a", "type": "function",
                    "function": { "name": "read_file", "arguments": "{\"path\":\"README.md\"}" },
                }] },
                { "role": "tool", "tool_call_id": "call_a", "content": "# Demo" },
            ],
            "tools": [{ "type": "function", "function": {
                "name": "read_file",
                "description": "Read a file of the workspace",
                "parameters": {
                    "type": "object",
                    "properties": { "path": { "type": "string" } },
                    "required": ["path"],
                },
            } }],
            "tool_choice": { "type": "function", "function": { "name": "read_file" } },
            "temperature": 0.5,
            "max_tokens": 256,
            "stream": true,
            "stream_options": { "include_usage": true },
        })
    );
    assert_eq!(sent[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent[0].header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn every_tool_choice_is_sent_as_openai_spells_it() {
    let choices = [
        (ToolChoice::Auto, json!("auto")),
        (ToolChoice::None, json!("none")),
        (ToolChoice::Required, json!("required")),
    ];
    let server = ScriptedServer::start(vec![Reply::text("ok"); choices.len()]).await;
    let client = client(&server, None);
    for (choice, _) in &choices {
        let request = ChatRequest {
            messages: vec![Message::user("hi")],
            tools: vec![read_file_spec()],
            tool_choice: Some(choice.clone()),
            ..ChatRequest::default()
        };
        client
            .complete(&request, &CancellationToken::new())
            .await
            .unwrap();
    }
    let sent: Vec<serde_json::Value> = server
        .chat_requests()
        .into_iter()
        .map(|request| request.body["tool_choice"].clone())
        .collect();
    let expected: Vec<serde_json::Value> = choices.into_iter().map(|(_, wire)| wire).collect();
    assert_eq!(sent, expected);
}

#[tokio::test]
async fn no_key_no_authorization_and_no_tools_no_tools_field() {
    let server = ScriptedServer::start(vec![Reply::text("Hello there")]).await;
    let answer = client(&server, None)
        .chat(&[Message::user("hi")])
        .await
        .unwrap();
    assert_eq!(answer, "Hello there");
    let sent = &server.chat_requests()[0];
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.body,
        json!({
            "model": "test-model",
            "messages": [{ "role": "user", "content": "hi" }],
            "stream": false,
        })
    );
}

#[tokio::test]
async fn chat_with_tools_sends_the_tools_and_parses_the_calls() {
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("read_file", r#"{"path":"README.md"}"#),
            ("read_file", r#"{"path":"Cargo.toml"}"#),
        ])
        .with_text("Reading both."),
    ])
    .await;
    let response = client(&server, None)
        .chat_with_tools(&[Message::user("Compare them")], &[read_file_spec()])
        .await
        .unwrap();
    assert_eq!(
        response,
        ChatResponse {
            content: "Reading both.".into(),
            tool_calls: vec![
                ToolCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"README.md"}"#.into(),
                },
                ToolCall {
                    id: "call_2".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"Cargo.toml"}"#.into(),
                },
            ],
            dropped_calls: Vec::new(),
            finish_reason: Some(FinishReason::ToolCalls),
            tool_mode_used: ToolMode::Native,
            usage: Some(scripted_usage()),
        }
    );
    let body = &server.chat_requests()[0].body;
    assert_eq!(body["stream"], json!(false));
    assert_eq!(body.get("stream_options"), None);
    assert_eq!(body.get("tool_choice"), None);
    assert_eq!(
        body["tools"],
        json!([{ "type": "function", "function": {
            "name": "read_file",
            "description": "Read a file of the workspace",
            "parameters": {
                "type": "object",
                "properties": { "path": { "type": "string" } },
                "required": ["path"],
            },
        } }])
    );
}

#[tokio::test]
async fn a_whole_answer_with_object_arguments_and_null_content() {
    let server = ScriptedServer::start(vec![Reply::json(
        200,
        json!({
            "id": "x", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [{ "type": "function",
                    "function": { "name": "count_lines", "arguments": { "path": "." } } }],
            } }],
        }),
    )])
    .await;
    let response = client(&server, None)
        .chat_with_tools(&[Message::user("count")], &[])
        .await
        .unwrap();
    assert_eq!(response.content, "");
    assert_eq!(response.tool_calls.len(), 1);
    assert!(response.tool_calls[0].id.starts_with("call_"));
    assert_eq!(
        (
            response.tool_calls[0].name.as_str(),
            response.tool_calls[0].arguments.as_str()
        ),
        ("count_lines", r#"{"path":"."}"#)
    );
}

#[tokio::test]
async fn a_server_that_ignores_stream_true_still_streams_its_answer() {
    let server = ScriptedServer::start(vec![Reply::json(
        200,
        json!({ "choices": [{ "index": 0, "finish_reason": "stop",
            "message": { "role": "assistant", "content": "whole" } }] }),
    )])
    .await;
    let mut deltas = Vec::new();
    let response = client(&server, None)
        .stream(
            &ChatRequest::new(vec![Message::user("hi")]),
            &CancellationToken::new(),
            &mut |delta| deltas.push(delta),
        )
        .await
        .unwrap();
    assert_eq!(response.content, "whole");
    assert_eq!(
        deltas,
        vec![tooltrail_llm::StreamDelta::Text("whole".into())]
    );
}

#[tokio::test]
async fn models_are_listed() {
    let server = ScriptedServer::start(Vec::new()).await;
    let models = client(&server, Some("sk-test"))
        .list_models()
        .await
        .unwrap();
    assert_eq!(models, vec![SCRIPTED_MODEL.to_string()]);
    assert_eq!(server.requests()[0].path, "/v1/models");
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer sk-test")
    );
}

#[tokio::test]
async fn the_answer_limit_goes_in_the_field_the_provider_wants() {
    let server = ScriptedServer::start(vec![Reply::text("a"), Reply::text("b")]).await;
    let request = ChatRequest {
        max_tokens: Some(321),
        ..ChatRequest::new(vec![Message::user("hi")])
    };
    let cancel = CancellationToken::new();
    client(&server, None)
        .complete(&request, &cancel)
        .await
        .unwrap();
    let mut config = LlmConfig::new(server.base_url(), "test-model");
    config.max_tokens_field = Some(tooltrail_llm::MaxTokensField::MaxCompletionTokens);
    LlmClient::new(config)
        .unwrap()
        .complete(&request, &cancel)
        .await
        .unwrap();
    let sent = server.chat_requests();
    assert_eq!(sent[0].body["max_tokens"], 321);
    assert_eq!(sent[0].body.get("max_completion_tokens"), None);
    assert_eq!(sent[1].body["max_completion_tokens"], 321);
    assert_eq!(sent[1].body.get("max_tokens"), None);
}
