//! Failures: which statuses are retried and how, what each error says, timeouts and
//! cancellation.

// Helpers outside `#[test]` functions unwrap too: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tooltrail_llm::{ChatRequest, ChatResponse, LlmClient, LlmConfig, LlmError, StreamDelta};
use tooltrail_protocol::{ErrorCode, Message};
use tooltrail_test_support::{Reply, ScriptedServer};

/// Quick retries and a short idle timeout, so that failures are fast to test.
fn config(base_url: String) -> LlmConfig {
    let mut config = LlmConfig::new(base_url, "test-model");
    config.retry_base_delay = Duration::from_millis(5);
    config.idle_timeout = Duration::from_secs(5);
    config
}

fn request() -> ChatRequest {
    ChatRequest::new(vec![Message::user("hi")])
}

async fn stream_with(
    config: LlmConfig,
    cancel: &CancellationToken,
) -> Result<ChatResponse, LlmError> {
    LlmClient::new(config)
        .unwrap()
        .stream(&request(), cancel, &mut |_| {})
        .await
}

async fn stream(server: &ScriptedServer) -> Result<ChatResponse, LlmError> {
    stream_with(config(server.base_url()), &CancellationToken::new()).await
}

/// The error's sentence and code.
fn said(error: &LlmError) -> (String, ErrorCode) {
    (error.to_string(), error.code())
}

#[tokio::test]
async fn rate_limited_then_answered_waits_as_retry_after_says() {
    let server = ScriptedServer::start(vec![
        Reply::error(429, "slow down").header("Retry-After", "1"),
        Reply::text("ok"),
    ])
    .await;
    let started = Instant::now();
    let response = stream(&server).await.unwrap();
    assert_eq!(response.content, "ok");
    assert_eq!(server.chat_requests().len(), 2);
    // The base back-off is 5 ms: only Retry-After explains a wait of a second.
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn server_errors_are_tried_three_times_then_reported() {
    let server = ScriptedServer::start(vec![
        Reply::error(503, "the model is overloaded"),
        Reply::error(503, "the model is overloaded"),
        Reply::error(503, "the model is overloaded"),
        Reply::text("never asked for"),
    ])
    .await;
    let error = stream(&server).await.unwrap_err();
    assert_eq!(
        said(&error),
        (
            "the model server failed (HTTP 503): the model is overloaded".to_string(),
            ErrorCode::ServerError
        )
    );
    assert_eq!(server.chat_requests().len(), 3);
    assert_eq!(server.remaining(), 1);
}

#[tokio::test]
async fn rate_limits_that_last_are_reported_as_such() {
    let server = ScriptedServer::start(vec![
        Reply::error(429, "quota exceeded").header("Retry-After", "0"),
        Reply::error(429, "quota exceeded").header("Retry-After", "0"),
    ])
    .await;
    let mut config = config(server.base_url());
    config.max_attempts = 2;
    let error = stream_with(config, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        said(&error),
        (
            "the model endpoint is refusing requests as too many, even after waiting (HTTP 429): quota exceeded".to_string(),
            ErrorCode::RateLimited
        )
    );
    assert_eq!(server.chat_requests().len(), 2);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_quote_the_server() {
    let cases = [
        (
            Reply::error(400, "'tools' is not supported by this model"),
            "the model endpoint rejected the request (HTTP 400): 'tools' is not supported by this model",
            ErrorCode::BadRequest,
        ),
        (
            Reply::json(401, json!({ "error": "Invalid API key" })),
            "the model endpoint refused the API key (HTTP 401): Invalid API key",
            ErrorCode::Unauthorized,
        ),
        (
            Reply::raw(403, "text/plain", "  Forbidden\n"),
            "the model endpoint refused access (HTTP 403): Forbidden",
            ErrorCode::Unauthorized,
        ),
        (
            Reply::json(
                404,
                json!({ "error": { "message": "model 'qwen9' not found" } }),
            ),
            "the model endpoint has no such model or address (HTTP 404): model 'qwen9' not found",
            ErrorCode::NotFound,
        ),
    ];
    for (reply, sentence, code) in cases {
        let server = ScriptedServer::start(vec![reply, Reply::text("never asked for")]).await;
        let error = stream(&server).await.unwrap_err();
        assert_eq!(said(&error), (sentence.to_string(), code));
        assert_eq!(server.chat_requests().len(), 1, "{sentence}");
    }
}

#[tokio::test]
async fn a_wrong_base_path_is_not_found() {
    let server = ScriptedServer::start(Vec::new()).await;
    let error = stream_with(
        config(format!("{}/nope", server.base_url())),
        &CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code(), ErrorCode::NotFound);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn garbage_is_an_invalid_response() {
    let cases = [
        (
            Reply::raw(200, "text/event-stream", "data: {\"choices\": [oops\n\n"),
            "the model endpoint sent a response that is not a valid chat completion: an event is not a JSON chunk (it begins with `{\"choices\": [oops`)",
        ),
        (
            Reply::raw(
                200,
                "text/html",
                "<html><body>Welcome to nginx!</body></html>\n",
            ),
            "the model endpoint sent a response that is not a valid chat completion: it is not an event stream (it begins with `<html><body>Welcome to nginx!</body></html>`)",
        ),
        (
            Reply::raw(200, "application/json", "{\"choices\": 42}"),
            "the model endpoint sent a response that is not a valid chat completion: it is not JSON (it begins with `{\"choices\": 42}`)",
        ),
    ];
    for (reply, sentence) in cases {
        let server = ScriptedServer::start(vec![reply]).await;
        let error = stream(&server).await.unwrap_err();
        assert_eq!(
            said(&error),
            (sentence.to_string(), ErrorCode::InvalidResponse)
        );
    }
    let server = ScriptedServer::start(vec![Reply::raw(200, "application/json", "not json")]).await;
    let error = LlmClient::new(config(server.base_url()))
        .unwrap()
        .chat(&[Message::user("hi")])
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model endpoint sent a response that is not a valid chat completion: it is not JSON (it begins with `not json`)"
    );
}

#[tokio::test]
async fn an_unreachable_endpoint_names_its_url() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let error = stream_with(config(base_url.clone()), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        said(&error),
        (
            format!("the model endpoint {base_url} could not be reached (connection refused)"),
            ErrorCode::Unreachable
        )
    );
}

#[tokio::test]
async fn a_base_url_that_is_not_http_is_refused_at_once() {
    let error = LlmClient::new(LlmConfig::new("localhost:11434", "m")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the model endpoint localhost:11434 could not be reached (it is not an http:// or https:// URL)"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = ScriptedServer::start(vec![Reply::hang(), Reply::text("never asked for")]).await;
    let mut config = config(server.base_url());
    config.idle_timeout = Duration::from_millis(200);
    let error = stream_with(config, &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        said(&error),
        (
            "the model endpoint sent nothing for 1 second; it may be overloaded, or the timeout too short".to_string(),
            ErrorCode::Timeout
        )
    );
    // A timeout is not retried: the model may still be working on the first request.
    assert_eq!(server.chat_requests().len(), 1);
}

#[tokio::test]
async fn a_stream_that_stalls_times_out() {
    let server = ScriptedServer::start(vec![
        Reply::text("slow answer").delay(Duration::from_secs(30)),
    ])
    .await;
    let mut config = config(server.base_url());
    config.idle_timeout = Duration::from_millis(200);
    let error = stream_with(config, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Timeout { secs: 1 }), "{error:?}");
}

#[tokio::test]
async fn cancelling_mid_stream_returns_at_once() {
    let server = ScriptedServer::start(vec![
        Reply::text("one two three four five six").delay(Duration::from_millis(300)),
    ])
    .await;
    let client = LlmClient::new(config(server.base_url())).unwrap();
    let cancel = CancellationToken::new();
    let mut deltas = Vec::new();
    let started = Instant::now();
    let result = client
        .stream(&request(), &cancel, &mut |delta| {
            // Cancel as soon as the first words arrive, as a user pressing Esc would.
            if matches!(delta, StreamDelta::Text(_)) {
                cancel.cancel();
            }
            deltas.push(delta);
        })
        .await;
    assert!(matches!(result, Err(LlmError::Cancelled)), "{result:?}");
    assert_eq!(deltas, vec![StreamDelta::Text("one two t".into())]);
    // The first words come after two chunks (600 ms); the whole stream would take seven
    // (2.1 s). A cancelled one does not wait for the rest.
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn cancelling_while_waiting_to_retry_returns_at_once() {
    let server =
        ScriptedServer::start(vec![Reply::error(503, "busy").header("Retry-After", "30")]).await;
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        canceller.cancel();
    });
    let error = tokio::time::timeout(
        Duration::from_secs(10),
        stream_with(config(server.base_url()), &cancel),
    )
    .await
    .unwrap()
    .unwrap_err();
    assert!(matches!(error, LlmError::Cancelled), "{error:?}");
    assert_eq!(error.to_string(), "the request was cancelled");
    assert_eq!(server.chat_requests().len(), 1);
}

#[tokio::test]
async fn cancelling_while_waiting_for_an_answer_returns_at_once() {
    let server = ScriptedServer::start(vec![Reply::hang()]).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let error = stream_with(config(server.base_url()), &cancel)
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Cancelled), "{error:?}");
}

#[tokio::test]
async fn a_connection_dropped_before_any_answer_is_tried_again() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // A server that hangs up on its first connection and answers the second.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (first, _) = listener.accept().await.unwrap();
        drop(first);
        let (mut second, _) = listener.accept().await.unwrap();
        // Read the whole request (its JSON body ends in `}`): closing a socket with unread
        // data would reset the connection.
        let mut request = Vec::new();
        let mut buffer = [0; 4096];
        while !(request.windows(4).any(|w| w == b"\r\n\r\n") && request.ends_with(b"}")) {
            let read = second.read(&mut buffer).await.unwrap();
            assert!(read > 0, "the client hung up");
            request.extend_from_slice(&buffer[..read]);
        }
        let body = r#"{"choices":[{"index":0,"message":{"content":"second try"},"finish_reason":"stop"}]}"#;
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        second.write_all(response.as_bytes()).await.unwrap();
        second.shutdown().await.unwrap();
    });
    let answer = LlmClient::new(config(base_url))
        .unwrap()
        .chat(&[Message::user("hi")])
        .await
        .unwrap();
    assert_eq!(answer, "second try");
    server.await.unwrap();
}
