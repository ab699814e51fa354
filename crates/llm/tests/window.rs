//! Where the context window's size comes from, against servers that answer as Ollama, vLLM,
//! LM Studio and llama.cpp do (each a few canned answers over real HTTP).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tooltrail_llm::{ContextWindow, LlmClient, LlmConfig, WindowSource};

/// A server that answers `METHOD /path` with the JSON given for it and 404 otherwise; returns
/// its base URL (`…/v1`) and the requests it saw, with their bodies.
async fn server(routes: Vec<(&'static str, Value)>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            // The head, then as much body as it announces.
            let (head, mut body) = loop {
                let read = stream.read(&mut buffer).await.unwrap_or(0);
                if read == 0 {
                    break (String::from_utf8_lossy(&request).into_owned(), Vec::new());
                }
                request.extend_from_slice(&buffer[..read]);
                if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&request[..end]).into_owned();
                    break (head, request[end + 4..].to_vec());
                }
            };
            let length = head
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            while body.len() < length {
                let read = stream.read(&mut buffer).await.unwrap_or(0);
                if read == 0 {
                    break;
                }
                body.extend_from_slice(&buffer[..read]);
            }
            let line = head.lines().next().unwrap_or("").to_string();
            let key = line
                .rsplit_once(' ')
                .map_or(line.as_str(), |(key, _)| key)
                .to_string();
            log.lock().unwrap().push(
                format!("{key} {}", String::from_utf8_lossy(&body))
                    .trim()
                    .to_string(),
            );
            let (status, answer) = match routes.iter().find(|(route, _)| *route == key) {
                Some((_, answer)) => ("200 OK", answer.to_string()),
                None => ("404 Not Found", json!({"error": "not found"}).to_string()),
            };
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
        }
    });
    (format!("http://{addr}/v1"), seen)
}

async fn window(base_url: &str, model: &str) -> ContextWindow {
    let client = LlmClient::new(LlmConfig::new(base_url, model)).unwrap();
    client.context_window(&CancellationToken::new()).await
}

#[tokio::test]
async fn ollama_gives_a_modelfile_window_else_a_loaded_model_s_else_its_default() {
    let show = |parameters: &str| {
        json!({
            "parameters": parameters,
            "model_info": {"qwen2.context_length": 32768},
            "details": {"family": "qwen2"}
        })
    };
    let (url, seen) = server(vec![(
        "POST /api/show",
        show("stop \"<|im_end|>\"\nnum_ctx 16384"),
    )])
    .await;
    assert_eq!(
        window(&url, "qwen2.5:7b").await,
        ContextWindow {
            tokens: 16384,
            source: WindowSource::Ollama
        }
    );
    assert!(
        seen.lock()
            .unwrap()
            .contains(&r#"POST /api/show {"model":"qwen2.5:7b"}"#.to_string()),
        "{:?}",
        seen.lock().unwrap()
    );

    let (url, _) = server(vec![
        ("POST /api/show", show("")),
        (
            "GET /api/ps",
            json!({"models": [{"name": "qwen2.5:7b", "model": "qwen2.5:7b", "context_length": 8192}]}),
        ),
    ])
    .await;
    assert_eq!(window(&url, "qwen2.5:7b").await.tokens, 8192);

    let (url, _) = server(vec![
        ("POST /api/show", show("")),
        ("GET /api/ps", json!({"models": []})),
    ])
    .await;
    assert_eq!(
        window(&url, "qwen2.5:7b").await,
        ContextWindow {
            tokens: 4096,
            source: WindowSource::Ollama
        }
    );
}

#[tokio::test]
async fn model_lists_props_and_lm_studio_say_their_windows() {
    let (vllm, _) = server(vec![(
        "GET /v1/models",
        json!({"data": [{"id": "Qwen/Qwen2.5-7B", "max_model_len": 32768}]}),
    )])
    .await;
    assert_eq!(
        window(&vllm, "Qwen/Qwen2.5-7B").await,
        ContextWindow {
            tokens: 32768,
            source: WindowSource::ModelList
        }
    );

    let (llama, _) = server(vec![(
        "GET /props",
        json!({"default_generation_settings": {"n_ctx": 2048}, "total_slots": 1}),
    )])
    .await;
    assert_eq!(
        window(&llama, "gemma").await,
        ContextWindow {
            tokens: 2048,
            source: WindowSource::LlamaCpp
        }
    );

    let (lm_studio, _) = server(vec![(
        "GET /api/v0/models/qwen2.5-7b-instruct",
        json!({"id": "qwen2.5-7b-instruct", "max_context_length": 32768, "loaded_context_length": 12000}),
    )])
    .await;
    assert_eq!(
        window(&lm_studio, "qwen2.5-7b-instruct").await,
        ContextWindow {
            tokens: 12000,
            source: WindowSource::LmStudio
        }
    );

    // A server that answers /api/show with something that is not a model is not Ollama.
    let (other, _) = server(vec![("POST /api/show", json!({"ok": true}))]).await;
    assert_eq!(window(&other, "m").await.source, WindowSource::Default);
}

#[tokio::test]
async fn a_configured_window_asks_nothing() {
    let (url, seen) = server(vec![]).await;
    let mut config = LlmConfig::new(url, "m");
    config.context_window = Some(6000);
    let client = LlmClient::new(config).unwrap();
    assert_eq!(
        client.context_window(&CancellationToken::new()).await,
        ContextWindow {
            tokens: 6000,
            source: WindowSource::Configured
        }
    );
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn ollama_is_asked_for_the_window_in_each_request_and_other_servers_are_not() {
    let completion = json!({
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]
    });
    let chat_body = |seen: &Arc<Mutex<Vec<String>>>| -> Value {
        let seen = seen.lock().unwrap();
        let line = seen
            .iter()
            .find(|line| line.starts_with("POST /v1/chat/completions "))
            .unwrap();
        serde_json::from_str(line.trim_start_matches("POST /v1/chat/completions ")).unwrap()
    };
    let ask = |url: String, window: Option<u32>| async move {
        let mut config = LlmConfig::new(url, "qwen2.5:7b");
        config.context_window = window;
        let client = LlmClient::new(config).unwrap();
        let cancel = CancellationToken::new();
        client.context_window(&cancel).await;
        let request =
            tooltrail_llm::ChatRequest::new(vec![tooltrail_protocol::Message::user("hi")]);
        client.complete(&request, &cancel).await.unwrap();
    };

    // Ollama (it answered /api/show): the window it reported.
    let show = json!({
        "parameters": "num_ctx 16384",
        "model_info": {"qwen2.context_length": 32768},
        "details": {"family": "qwen2"}
    });
    let (url, seen) = server(vec![
        ("POST /api/show", show),
        ("POST /v1/chat/completions", completion.clone()),
    ])
    .await;
    ask(url, None).await;
    assert_eq!(chat_body(&seen)["options"], json!({"num_ctx": 16384}));

    // llama.cpp gets no such field.
    let (url, seen) = server(vec![
        (
            "GET /props",
            json!({"default_generation_settings": {"n_ctx": 4096}}),
        ),
        ("POST /v1/chat/completions", completion.clone()),
    ])
    .await;
    ask(url, None).await;
    assert_eq!(chat_body(&seen).get("options"), None);
}
