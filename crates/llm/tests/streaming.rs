//! Streamed answers: text and tool-call deltas assembled whatever shape the server sends
//! them in, and SSE framing over real HTTP.

// Helpers outside `#[test]` functions unwrap too: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tooltrail_llm::{
    ChatRequest, ChatResponse, FinishReason, LlmClient, LlmConfig, LlmError, StreamDelta, ToolMode,
};
use tooltrail_protocol::{Message, ToolCall, Usage};
use tooltrail_test_support::{Reply, ScriptedServer};

async fn stream(reply: Reply) -> (Result<ChatResponse, LlmError>, Vec<StreamDelta>) {
    let server = ScriptedServer::start(vec![reply]).await;
    let mut config = LlmConfig::new(server.base_url(), "test-model");
    config.idle_timeout = Duration::from_secs(5);
    let client = LlmClient::new(config).unwrap();
    let mut deltas = Vec::new();
    let result = client
        .stream(
            &ChatRequest::new(vec![Message::user("go")]),
            &CancellationToken::new(),
            &mut |delta| deltas.push(delta),
        )
        .await;
    (result, deltas)
}

/// A chunk whose only choice has this delta.
fn delta(delta: Value) -> Value {
    json!({ "object": "chat.completion.chunk", "choices": [{ "index": 0, "delta": delta, "finish_reason": null }] })
}

fn finish(reason: &str) -> Value {
    json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": reason }] })
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// Generated ids are random: replaced by `call_<generated>` after checking their form.
fn blank_generated_ids(calls: &mut [ToolCall]) {
    for call in calls {
        let random = call.id.strip_prefix("call_").unwrap();
        assert_eq!(random.len(), 32, "{}", call.id);
        call.id = "call_<generated>".into();
    }
}

#[tokio::test]
async fn parallel_calls_with_fragmented_arguments() {
    let (response, deltas) = stream(Reply::tool_calls(&[
        ("read_file", r#"{"path":"README.md"}"#),
        ("search_text", r#"{"pattern":"fn main","glob":"*.rs"}"#),
        ("count_lines", r#"{"path":"."}"#),
    ]))
    .await;
    assert_eq!(
        response.unwrap(),
        ChatResponse {
            content: String::new(),
            tool_calls: vec![
                call("call_1", "read_file", r#"{"path":"README.md"}"#),
                call(
                    "call_2",
                    "search_text",
                    r#"{"pattern":"fn main","glob":"*.rs"}"#
                ),
                call("call_3", "count_lines", r#"{"path":"."}"#),
            ],
            dropped_calls: Vec::new(),
            finish_reason: Some(FinishReason::ToolCalls),
            tool_mode_used: ToolMode::Native,
            usage: Some(Usage {
                prompt_tokens: 10,
                completion_tokens: 5,
                total_tokens: 15
            }),
        }
    );
    // The first call as it streamed: its name once, then its arguments in fragments.
    let first: Vec<StreamDelta> = deltas
        .into_iter()
        .filter(|delta| matches!(delta, StreamDelta::ToolCall { index: 0, .. }))
        .collect();
    let fragment = |name: Option<&str>, arguments: &str| StreamDelta::ToolCall {
        index: 0,
        id: "call_1".into(),
        name: name.map(str::to_string),
        arguments: arguments.into(),
    };
    assert_eq!(
        first,
        vec![
            fragment(Some("read_file"), ""),
            fragment(None, r#"{"path""#),
            fragment(None, r#":"READM"#),
            fragment(None, r#"E.md"}"#),
        ]
    );
}

#[tokio::test]
async fn text_streams_in_pieces() {
    let (response, deltas) = stream(Reply::text("Hello, world")).await;
    assert_eq!(
        deltas,
        vec![
            StreamDelta::Text("Hell".into()),
            StreamDelta::Text("o, w".into()),
            StreamDelta::Text("orld".into()),
            StreamDelta::Usage(Usage {
                prompt_tokens: 10,
                completion_tokens: 5,
                total_tokens: 15
            }),
        ]
    );
    let response = response.unwrap();
    assert_eq!(response.content, "Hello, world");
    assert!(!response.wants_tools());
}

#[tokio::test]
async fn arguments_sent_as_an_object_and_missing_ids() {
    let (response, deltas) = stream(Reply::sse([
        delta(json!({ "role": "assistant", "content": null })),
        delta(json!({ "tool_calls": [{ "index": 0, "type": "function",
            "function": { "name": "read_file", "arguments": { "path": "a.txt" } } }] })),
        delta(json!({ "tool_calls": [{ "index": 1, "type": "function",
            "function": { "name": "count_lines", "arguments": "{\"path\":" } }] })),
        delta(json!({ "tool_calls": [{ "index": 1, "function": { "arguments": " \"src\"}" } }] })),
        finish("tool_calls"),
    ]))
    .await;
    let mut response = response.unwrap();
    // The id generated for a call is the one its deltas carried.
    let streamed_ids: Vec<String> = deltas
        .iter()
        .filter_map(|delta| match delta {
            StreamDelta::ToolCall { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        streamed_ids,
        vec![
            response.tool_calls[0].id.clone(),
            response.tool_calls[1].id.clone(),
            response.tool_calls[1].id.clone(),
        ]
    );
    assert_ne!(response.tool_calls[0].id, response.tool_calls[1].id);
    blank_generated_ids(&mut response.tool_calls);
    assert_eq!(
        response.tool_calls,
        vec![
            call("call_<generated>", "read_file", r#"{"path":"a.txt"}"#),
            call("call_<generated>", "count_lines", r#"{"path": "src"}"#),
        ]
    );
}

#[tokio::test]
async fn a_server_reusing_index_zero_for_every_call() {
    let (response, deltas) = stream(Reply::sse([
        delta(
            json!({ "tool_calls": [{ "index": 0, "id": "a", "type": "function",
            "function": { "name": "read_file", "arguments": "{\"path\":" } }] }),
        ),
        delta(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "\"x\"}" } }] })),
        delta(
            json!({ "tool_calls": [{ "index": 0, "id": "b", "type": "function",
            "function": { "name": "read_file", "arguments": "{\"path\":\"y\"}" } }] }),
        ),
        finish("tool_calls"),
    ]))
    .await;
    assert_eq!(
        response.unwrap().tool_calls,
        vec![
            call("a", "read_file", r#"{"path":"x"}"#),
            call("b", "read_file", r#"{"path":"y"}"#),
        ]
    );
    let indexes: Vec<(u32, String)> = deltas
        .into_iter()
        .filter_map(|delta| match delta {
            StreamDelta::ToolCall { index, id, .. } => Some((index, id)),
            _ => None,
        })
        .collect();
    assert_eq!(
        indexes,
        vec![(0, "a".into()), (0, "a".into()), (1, "b".into())]
    );
}

#[tokio::test]
async fn repeated_names_and_the_legacy_field_are_not_appended() {
    let repeated = |arguments: &str| {
        delta(json!({
            "content": null,
            "function_call": { "name": "read_file", "arguments": arguments },
            "tool_calls": [{ "index": 0, "id": "call_x", "type": "function",
                "function": { "name": "read_file", "arguments": arguments } }],
        }))
    };
    let (response, _) = stream(Reply::sse([
        repeated("{\"path\""),
        repeated(": \"a\"}"),
        finish("tool_calls"),
    ]))
    .await;
    assert_eq!(
        response.unwrap().tool_calls,
        vec![call("call_x", "read_file", r#"{"path": "a"}"#)]
    );
}

#[tokio::test]
async fn finished_calls_with_bad_json_are_kept_and_cut_ones_dropped() {
    let (response, _) = stream(Reply::sse([
        delta(
            json!({ "tool_calls": [{ "index": 0, "id": "good", "type": "function",
            "function": { "name": "read_file", "arguments": "{}" } }] }),
        ),
        delta(
            json!({ "tool_calls": [{ "index": 1, "id": "bad", "type": "function",
            "function": { "name": "read_file", "arguments": "{path: README" } }] }),
        ),
        finish("stop"),
    ]))
    .await;
    let response = response.unwrap();
    // The model hears back about its broken call (the agent answers it with the parse error).
    assert_eq!(
        response.tool_calls,
        vec![
            call("good", "read_file", "{}"),
            call("bad", "read_file", "{path: README")
        ]
    );
    assert!(response.dropped_calls.is_empty());
    // `stop` after calls is still a tool turn: the calls decide.
    assert!(response.wants_tools());

    let (response, _) = stream(Reply::sse([
        delta(
            json!({ "tool_calls": [{ "index": 0, "id": "good", "type": "function",
            "function": { "name": "read_file", "arguments": "{}" } }] }),
        ),
        delta(
            json!({ "tool_calls": [{ "index": 1, "id": "cut", "type": "function",
            "function": { "name": "read_file", "arguments": "{\"path\": \"REA" } }] }),
        ),
        finish("length"),
    ]))
    .await;
    let response = response.unwrap();
    assert_eq!(response.tool_calls, vec![call("good", "read_file", "{}")]);
    let dropped: Vec<ToolCall> = response
        .dropped_calls
        .into_iter()
        .map(|dropped| dropped.call)
        .collect();
    assert_eq!(dropped, vec![call("cut", "read_file", "{\"path\": \"REA")]);
}

#[tokio::test]
async fn sse_comments_crlf_and_multi_line_data() {
    let body = concat!(
        ": this server sends keep-alive comments\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\r\n",
        "data: \"delta\":{\"content\":\"Hel\"}}]}\r\n\r\n",
        ":\r\n",
        "event: message\r\n",
        "id: 2\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}],\"unknown\":{\"x\":1}}\r\n\r\n",
        "data: [DONE]\r\n\r\n",
    );
    let (response, _) =
        stream(Reply::raw(200, "text/event-stream", body.as_bytes()).write_size(3)).await;
    assert_eq!(
        response.unwrap(),
        ChatResponse {
            content: "Hello".into(),
            finish_reason: Some(FinishReason::Stop),
            ..ChatResponse::default()
        }
    );
}

#[tokio::test]
async fn a_finish_without_done_or_done_without_finish_is_complete() {
    let (finished, _) =
        stream(Reply::sse([delta(json!({ "content": "a" })), finish("stop")]).without_done()).await;
    assert_eq!(finished.unwrap().content, "a");
    let (done, _) = stream(Reply::sse([delta(json!({ "content": "b" }))])).await;
    let done = done.unwrap();
    assert_eq!((done.content.as_str(), done.finish_reason), ("b", None));
}

#[tokio::test]
async fn an_error_object_in_the_stream_fails_the_turn() {
    let (response, deltas) = stream(Reply::sse([
        delta(json!({ "content": "Let me" })),
        json!({ "error": { "message": "the context length was exceeded", "type": "invalid_request_error" } }),
    ]))
    .await;
    let error = response.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model reported an error: the context length was exceeded"
    );
    assert_eq!(error.code(), tooltrail_protocol::ErrorCode::ModelError);
    assert_eq!(deltas, vec![StreamDelta::Text("Let me".into())]);
}

#[tokio::test]
async fn an_error_event_fails_the_turn() {
    let body = "event: error\ndata: {\"message\":\"model is loading\"}\n\n";
    let (response, _) = stream(Reply::raw(200, "text/event-stream", body.as_bytes())).await;
    assert_eq!(
        response.unwrap_err().to_string(),
        "the model reported an error: model is loading"
    );
}

#[tokio::test]
async fn a_cut_stream_is_incomplete() {
    let (response, deltas) =
        stream(Reply::tool_calls(&[("read_file", r#"{"path":"README.md"}"#)]).cut_after(3)).await;
    assert!(
        matches!(response, Err(LlmError::Incomplete)),
        "{response:?}"
    );
    assert_eq!(deltas.len(), 2);
    let (clean_end, _) =
        stream(Reply::sse([delta(json!({ "content": "a" }))]).without_done()).await;
    assert!(
        matches!(clean_end, Err(LlmError::Incomplete)),
        "{clean_end:?}"
    );
}
