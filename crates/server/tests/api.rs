//! The HTTP API end to end: the server on loopback in front of the scripted model server,
//! with reqwest as the client.
//!
//! Each test runs in a child process of its own with empty config and data folders
//! (`TOOLTRAIL_CONFIG_DIR`, `TOOLTRAIL_DATA_DIR`), so that no setting, `mcp.json` or token of
//! the machine running the tests can change what they see.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tooltrail_host::{Host, Record};
use tooltrail_protocol::{EventBody, ToolStatus};
use tooltrail_server::{Approve, ServeConfig, Server};
use tooltrail_store::ConversationFilter;
use tooltrail_test_support::{Reply, ScriptedServer};

const TOKEN: &str = "test-token";

/// Runs `body` in a child process with folders of its own; returns in the parent once the
/// child passed.
fn isolated<F: Future<Output = ()>>(name: &str, body: impl FnOnce() -> F) {
    if std::env::var_os("TOOLTRAIL_SERVER_TEST_CHILD").is_none() {
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([name, "--exact", "--nocapture", "--test-threads=1"])
            .env("TOOLTRAIL_SERVER_TEST_CHILD", "1")
            .env("TOOLTRAIL_CONFIG_DIR", dir.path().join("config"))
            .env("TOOLTRAIL_DATA_DIR", dir.path().join("data"))
            .env_remove("TOOLTRAIL_BASE_URL")
            .env_remove("TOOLTRAIL_MODEL")
            .env_remove("TOOLTRAIL_API_KEY")
            .env_remove("TOOLTRAIL_SERVE_TOKEN")
            .status()
            .unwrap();
        assert!(
            status.success(),
            "{name} failed in its child process (see above)"
        );
        return;
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(body());
}

/// A workspace with a README and two Go files.
fn workspace() -> tempfile::TempDir {
    tooltrail_test_support::demo_workspace().unwrap()
}

struct Api {
    url: String,
    client: reqwest::Client,
    model: ScriptedServer,
    host: Arc<Host>,
    ws: tempfile::TempDir,
    _scratch: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<()>>,
}

async fn start(replies: Vec<Reply>, configure: impl FnOnce(&mut ServeConfig, &Path)) -> Api {
    let model = ScriptedServer::start(replies).await;
    let ws = workspace();
    let scratch = tempfile::tempdir().unwrap();
    let host = Arc::new(Host::new(
        Record::open(&scratch.path().join("history.sqlite3")).unwrap(),
    ));
    let mut config = ServeConfig::new(ws.path());
    config.addr = "127.0.0.1:0".parse().unwrap();
    config.token = Some(TOKEN.into());
    config.overrides.base_url = Some(model.base_url());
    config.overrides.model = Some("scripted".into());
    configure(&mut config, scratch.path());
    let server = Server::bind(config, Arc::clone(&host)).await.unwrap();
    let url = format!("http://{}", server.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let served = tokio::spawn(async move {
        server
            .run(async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    Api {
        url,
        client: reqwest::Client::new(),
        model,
        host,
        ws,
        _scratch: scratch,
        stop: Some(stop),
        served: Some(served),
    }
}

impl Api {
    async fn post(&self, body: &Value) -> reqwest::Response {
        self.client
            .post(format!("{}/v1/chat/completions", self.url))
            .bearer_auth(TOKEN)
            .json(body)
            .send()
            .await
            .unwrap()
    }

    async fn chat(&self, body: &Value) -> (u16, Value) {
        let response = self.post(body).await;
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    fn root(&self) -> String {
        self.ws.path().canonicalize().unwrap().display().to_string()
    }

    /// The tool results the model got in its `n`th chat request, as (call id, content).
    fn tool_results(&self, n: usize) -> Vec<(String, String)> {
        self.model.chat_requests()[n].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                (
                    m["tool_call_id"].as_str().unwrap().to_string(),
                    m["content"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(served) = self.served.take() {
            tokio::time::timeout(Duration::from_secs(30), served)
                .await
                .unwrap()
                .unwrap();
        }
    }
}

/// A response with its id and time blanked.
fn blank(mut body: Value) -> Value {
    assert!(body["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert!(body["created"].as_u64().unwrap() > 1_700_000_000);
    body["id"] = json!("chatcmpl-X");
    body["created"] = json!(0);
    body["tool_execution"]["conversation_id"] = json!("conv_X");
    body
}

fn read_file_tool() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "读取文件内容",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
        }
    })
}

fn weather_tool() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather of a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        }
    })
}

#[test]
fn tools_tooltrail_knows_run_on_the_server_and_the_model_sees_their_results() {
    isolated(
        "tools_tooltrail_knows_run_on_the_server_and_the_model_sees_their_results",
        || async {
            let api = start(
                vec![
                    Reply::tool_calls(&[("read_file", r#"{"path":"README.md"}"#)]),
                    Reply::text("It is a demo project."),
                ],
                |_, _| {},
            )
            .await;
            let (status, body) = api
                .chat(&json!({
                    "model": "llama3.2",
                    "messages": [{"role": "user", "content": "What is this project?"}],
                    "tools": [read_file_tool()],
                    "tool_choice": "auto"
                }))
                .await;
            assert_eq!(status, 200, "{body}");
            let conversation = body["tool_execution"]["conversation_id"]
                .as_str()
                .unwrap()
                .to_string();
            assert_eq!(
                blank(body),
                json!({
                    "id": "chatcmpl-X",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "scripted",
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant", "content": "It is a demo project."},
                        "finish_reason": "stop"
                    }],
                    "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
                    "tool_execution": {
                        "executed": true,
                        "tools_called": ["read_file"],
                        "session_id": null,
                        "workspace_path": api.root(),
                        "conversation_id": "conv_X"
                    }
                })
            );
            // The model saw Tooltrail's own read_file, and then the file.
            let first = &api.model.chat_requests()[0].body;
            assert_eq!(first["tools"][0]["function"]["name"], "read_file");
            assert_ne!(first["tools"][0]["function"]["description"], "读取文件内容");
            let results = api.tool_results(1);
            assert_eq!(results.len(), 1);
            assert!(results[0].1.contains("A demo project."), "{results:?}");
            // Recorded, and marked as coming from the API.
            let summary = api.host.store().conversation(&conversation).unwrap();
            assert_eq!(
                (summary.title.as_str(), summary.tool_calls, summary.provider),
                ("API · What is this project?", 1, Some(api.model.base_url()))
            );
            api.shutdown().await;
        },
    );
}

#[test]
fn an_answer_cut_by_the_model_s_length_limit_finishes_with_length() {
    isolated(
        "an_answer_cut_by_the_model_s_length_limit_finishes_with_length",
        || async {
            let api = start(
                vec![Reply::text("It is a demo").finish_reason("length")],
                |_, _| {},
            )
            .await;
            let (status, body) = api
                .chat(&json!({
                    "model": "llama3.2",
                    "messages": [{"role": "user", "content": "What is this project?"}]
                }))
                .await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["choices"][0]["message"]["content"], "It is a demo");
            assert_eq!(body["choices"][0]["finish_reason"], "length");
            api.shutdown().await;
        },
    );
}

#[test]
fn a_path_outside_the_workspace_is_refused_and_the_model_is_told() {
    isolated(
        "a_path_outside_the_workspace_is_refused_and_the_model_is_told",
        || async {
            let api = start(
                vec![
                    Reply::tool_calls(&[("read_file", r#"{"path":"/etc/passwd"}"#)]),
                    Reply::text("I may not read that file."),
                ],
                |_, _| {},
            )
            .await;
            let (status, body) = api
                .chat(&json!({
                    "messages": [{"role": "user", "content": "Show /etc/passwd"}],
                    "tools": [read_file_tool()]
                }))
                .await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(
                body["choices"][0]["message"]["content"],
                "I may not read that file."
            );
            let results = api.tool_results(1);
            assert!(
                results[0].1.starts_with("error [outside_workspace]"),
                "{results:?}"
            );
            assert!(!results[0].1.contains("root:"), "{results:?}");
            api.shutdown().await;
        },
    );
}

#[test]
fn calls_of_the_clients_own_tools_go_back_to_it_and_its_results_continue_the_session() {
    isolated(
        "calls_of_the_clients_own_tools_go_back_to_it_and_its_results_continue_the_session",
        || async {
            let api = start(
                vec![
                    Reply::tool_calls(&[("get_weather", r#"{"city":"Beijing"}"#)]),
                    Reply::text("It is sunny in Beijing."),
                ],
                |_, _| {},
            )
            .await;
            let question = json!({"role": "user", "content": "Weather in Beijing?"});
            let (status, body) = api
                .chat(&json!({
                    "messages": [question],
                    "tools": [weather_tool()],
                    "session_id": "sess_manual"
                }))
                .await;
            assert_eq!(status, 200, "{body}");
            let conversation = body["tool_execution"]["conversation_id"].clone();
            assert_eq!(
                blank(body),
                json!({
                    "id": "chatcmpl-X",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "scripted",
                    "choices": [{
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": null,
                            "tool_calls": [{
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": "{\"city\":\"Beijing\"}"}
                            }]
                        },
                        "finish_reason": "tool_calls"
                    }],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    "tool_execution": {
                        "executed": false,
                        "tools_called": [],
                        "session_id": "sess_manual",
                        "workspace_path": api.root(),
                        "conversation_id": "conv_X"
                    }
                })
            );
            // The client ran it and sends the whole history back, as OpenAI clients do.
            let (status, body) = api
                .chat(&json!({
                    "messages": [
                        question,
                        {"role": "assistant", "content": null, "tool_calls": [{
                            "id": "call_1", "type": "function",
                            "function": {"name": "get_weather", "arguments": "{\"city\":\"Beijing\"}"}
                        }]},
                        {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 25°C"}
                    ],
                    "tools": [weather_tool()],
                    "session_id": "sess_manual"
                }))
                .await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(
                body["choices"][0]["message"]["content"],
                "It is sunny in Beijing."
            );
            assert_eq!(body["tool_execution"]["conversation_id"], conversation);
            // No tools of ours were offered, so no prompt of ours either; the history is the
            // session's, each message once.
            let second = &api.model.chat_requests()[1].body;
            let roles: Vec<&str> = second["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["role"].as_str().unwrap())
                .collect();
            assert_eq!(roles, vec!["user", "assistant", "tool"]);
            assert_eq!(
                api.tool_results(1),
                vec![("call_1".to_string(), "sunny, 25°C".to_string())]
            );
            api.shutdown().await;
        },
    );
}

#[test]
fn errors_come_in_openais_shape_with_seed_001s_codes() {
    isolated(
        "errors_come_in_openais_shape_with_seed_001s_codes",
        || async {
            let api = start(vec![], |config, _| config.body_limit = 1024).await;
            // tool_choice names a tool nobody declared and Tooltrail does not know.
            let (status, body) = api
                .chat(&json!({
                    "messages": [{"role": "user", "content": "hi"}],
                    "tools": [read_file_tool()],
                    "tool_choice": {"type": "function", "function": {"name": "unknown_tool"}}
                }))
                .await;
            assert_eq!(
                (status, body),
                (
                    400,
                    json!({"error": {
                        "message": "Tool 'unknown_tool' not found",
                        "type": "invalid_request_error",
                        "code": "tool_not_found",
                        "tool_name": "unknown_tool"
                    }})
                )
            );
            // No token, or the wrong one.
            for token in [None, Some("wrong")] {
                let mut request = api
                    .client
                    .post(format!("{}/api/chat/completions", api.url))
                    .json(&json!({"messages": []}));
                if let Some(token) = token {
                    request = request.bearer_auth(token);
                }
                let response = request.send().await.unwrap();
                assert_eq!(response.status().as_u16(), 401);
                assert_eq!(
                    response.json::<Value>().await.unwrap(),
                    json!({"error": {
                        "message": "A valid token is needed: send it as `Authorization: Bearer <token>`.",
                        "type": "authentication_error",
                        "code": "invalid_api_key"
                    }})
                );
            }
            // A body over the limit.
            let big = "x".repeat(4096);
            let (status, body) = api
                .chat(&json!({"messages": [{"role": "user", "content": big}]}))
                .await;
            assert_eq!(
                (status, body),
                (
                    413,
                    json!({"error": {
                        "message": "The request body is larger than the limit of 1024 bytes.",
                        "type": "invalid_request_error",
                        "code": "request_too_large"
                    }})
                )
            );
            // Nothing reached the model, and the metrics counted each error.
            assert_eq!(api.model.chat_requests().len(), 0);
            let metrics: Value = api
                .client
                .get(format!("{}/api/metrics", api.url))
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(
                (
                    metrics["requests_total"].clone(),
                    metrics["errors_by_code"].clone()
                ),
                (
                    json!(4),
                    json!({"invalid_api_key": 2, "request_too_large": 1, "tool_not_found": 1})
                )
            );
            api.shutdown().await;
        },
    );
}

#[test]
fn requests_beyond_max_concurrent_get_429_with_retry_after() {
    isolated(
        "requests_beyond_max_concurrent_get_429_with_retry_after",
        || async {
            let api = start(
                vec![Reply::text("slow answer").delay(Duration::from_millis(300))],
                |config, _| config.max_concurrent = 1,
            )
            .await;
            let question = json!({"messages": [{"role": "user", "content": "hi"}]});
            let first = {
                let client = api.client.clone();
                let url = format!("{}/v1/chat/completions", api.url);
                let question = question.clone();
                tokio::spawn(async move {
                    client
                        .post(url)
                        .bearer_auth(TOKEN)
                        .json(&question)
                        .send()
                        .await
                        .unwrap()
                        .status()
                        .as_u16()
                })
            };
            // Wait until the first is with the model.
            let waited = Instant::now();
            while api.model.chat_requests().is_empty() {
                assert!(waited.elapsed() < Duration::from_secs(10));
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let response = api.post(&question).await;
            assert_eq!(response.status().as_u16(), 429);
            assert_eq!(response.headers()["retry-after"].to_str().unwrap(), "1");
            assert_eq!(
                response.json::<Value>().await.unwrap()["error"]["code"],
                "rate_limit_exceeded"
            );
            assert_eq!(first.await.unwrap(), 200);
            api.shutdown().await;
        },
    );
}

/// The `data:` payloads of an SSE body, read as raw text.
fn sse_data(text: &str) -> Vec<String> {
    text.split("\n\n")
        .flat_map(|event| event.lines())
        .filter_map(|line| {
            line.strip_prefix("data: ")
                .or_else(|| line.strip_prefix("data:"))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn a_stream_carries_seed_001s_event_types_in_order() {
    isolated(
        "a_stream_carries_seed_001s_event_types_in_order",
        || async {
            let api = start(
                vec![
                    Reply::tool_calls(&[("read_file", r#"{"path":"README.md"}"#)]),
                    Reply::text("It is a demo project."),
                ],
                |_, _| {},
            )
            .await;
            let response = api
                .post(&json!({
                    "messages": [{"role": "user", "content": "What is this?"}],
                    "tools": [read_file_tool()],
                    "stream": true,
                    "session_id": "sess_stream"
                }))
                .await;
            assert_eq!(response.status().as_u16(), 200);
            assert_eq!(
                response.headers()["content-type"].to_str().unwrap(),
                "text/event-stream"
            );
            let data = sse_data(&response.text().await.unwrap());
            assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
            let chunks: Vec<Value> = data[..data.len() - 1]
                .iter()
                .map(|d| serde_json::from_str(d).unwrap())
                .collect();
            for chunk in &chunks {
                assert_eq!(chunk["object"], "chat.completion.chunk", "{chunk}");
                assert!(chunk.get("error").is_none(), "{chunk}");
            }
            // The stream's types (docs/requirements.md), each run of one type once.
            let mut kinds: Vec<&str> = chunks.iter().map(|c| c["type"].as_str().unwrap()).collect();
            kinds.dedup();
            assert_eq!(
                kinds,
                vec!["content", "tool_call", "tool_result", "content", "done"]
            );
            // The server's call is not offered to the client as one of its own.
            let call = chunks.iter().find(|c| c["type"] == "tool_call").unwrap();
            assert_eq!(call["choices"], json!([]));
            assert_eq!(
                call["delta"]["tool_calls"][0]["function"]["name"],
                "read_file"
            );
            let result = chunks.iter().find(|c| c["type"] == "tool_result").unwrap();
            assert_eq!(
                (
                    result["choices"].clone(),
                    result["tool_call_id"].clone(),
                    result["tool_name"].clone(),
                    result["result"]["success"].clone()
                ),
                (json!([]), json!("call_1"), json!("read_file"), json!(true))
            );
            assert!(
                result["result"]["content"]
                    .as_str()
                    .unwrap()
                    .contains("A demo project.")
            );
            let text: String = chunks
                .iter()
                .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
                .collect();
            assert_eq!(text, "It is a demo project.");
            let done = chunks.last().unwrap();
            assert_eq!(
                (
                    done["finish_reason"].clone(),
                    done["choices"][0]["finish_reason"].clone(),
                    done["usage"]["total_tokens"].clone(),
                    done["tool_execution"]["tools_called"].clone(),
                    done["tool_execution"]["session_id"].clone(),
                ),
                (
                    json!("stop"),
                    json!("stop"),
                    json!(30),
                    json!(["read_file"]),
                    json!("sess_stream")
                )
            );
            api.shutdown().await;
        },
    );
}

#[test]
fn sessions_get_folders_of_their_own_that_expire() {
    isolated("sessions_get_folders_of_their_own_that_expire", || async {
        let sessions_dir: std::sync::Arc<std::sync::Mutex<PathBuf>> = Default::default();
        let keep = Arc::clone(&sessions_dir);
        let api = start(
            vec![Reply::text("Hello."), Reply::text("Hello again.")],
            move |config, scratch| {
                let dir = scratch.join("sessions");
                *keep.lock().unwrap() = dir.clone();
                config.session_workspaces = Some(dir);
                config.session_ttl = Duration::from_millis(400);
            },
        )
        .await;
        let dir = sessions_dir.lock().unwrap().clone();
        let (status, body) = api
            .chat(&json!({
                "messages": [{"role": "user", "content": "hi"}],
                "session_id": "sess_a"
            }))
            .await;
        assert_eq!(status, 200, "{body}");
        let folder = dir.join("sess_a");
        assert!(folder.is_dir());
        assert_eq!(
            body["tool_execution"]["workspace_path"],
            json!(folder.canonicalize().unwrap().display().to_string())
        );
        let first = body["tool_execution"]["conversation_id"].clone();
        // Idle past its time to live: the folder goes, and the id starts afresh.
        let waited = Instant::now();
        while folder.exists() {
            assert!(
                waited.elapsed() < Duration::from_secs(10),
                "the folder stayed"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let (_, body) = api
            .chat(&json!({
                "messages": [{"role": "user", "content": "hi"}],
                "session_id": "sess_a"
            }))
            .await;
        assert_ne!(body["tool_execution"]["conversation_id"], first);
        assert!(folder.is_dir());
        api.shutdown().await;
    });
}

/// Starts a turn whose command sleeps for 30 s, lets the client go away once it runs, and
/// returns how the call was recorded and how long after the client left.
async fn leave_during_a_command(stream: bool) -> (ToolStatus, Duration) {
    let api = start(
        vec![
            Reply::tool_calls(&[("execute_bash", r#"{"command":"sleep 30"}"#)]),
            Reply::text("unused"),
        ],
        |config, _| config.approve = Approve::All,
    )
    .await;
    let request = json!({
        "messages": [{"role": "user", "content": "wait"}],
        "tools": [{"type": "function", "function": {"name": "execute_bash"}}],
        "stream": stream
    });
    let left = if stream {
        let mut response = api.post(&request).await;
        // Read until the command is running, then go away.
        let mut seen = String::new();
        while !seen.contains("\"tool_call\"") {
            let chunk = response.chunk().await.unwrap().unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        drop(response);
        Instant::now()
    } else {
        // The client gives up waiting for the whole answer.
        let sent = api
            .client
            .post(format!("{}/v1/chat/completions", api.url))
            .bearer_auth(TOKEN)
            .timeout(Duration::from_millis(1000))
            .json(&request)
            .send()
            .await;
        assert!(sent.is_err());
        Instant::now()
    };
    let store = Arc::clone(api.host.store());
    let status = loop {
        assert!(
            left.elapsed() < Duration::from_secs(15),
            "the turn was not cancelled"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let conversations = store
            .conversations(&ConversationFilter {
                limit: 10,
                ..ConversationFilter::default()
            })
            .unwrap();
        let Some(conversation) = conversations.items.first() else {
            continue;
        };
        let finished = store
            .conversation_events(&conversation.id)
            .unwrap()
            .into_iter()
            .find_map(|event| match event.body {
                EventBody::ToolCallFinished { status, .. } => Some(status),
                _ => None,
            });
        if let Some(status) = finished {
            break status;
        }
    };
    let took = left.elapsed();
    assert_eq!(api.model.chat_requests().len(), 1);
    api.shutdown().await;
    (status, took)
}

#[test]
fn a_client_that_disconnects_cancels_its_turn_and_the_command_is_recorded_cancelled() {
    isolated(
        "a_client_that_disconnects_cancels_its_turn_and_the_command_is_recorded_cancelled",
        || async {
            for stream in [true, false] {
                let (status, took) = leave_during_a_command(stream).await;
                assert_eq!(status, ToolStatus::Cancelled, "stream: {stream}");
                // Well before the command's 30 seconds.
                assert!(took < Duration::from_secs(10), "stream: {stream}, {took:?}");
            }
        },
    );
}

#[test]
fn a_non_loopback_address_needs_a_token_of_ones_own() {
    isolated(
        "a_non_loopback_address_needs_a_token_of_ones_own",
        || async {
            let ws = workspace();
            let host = Arc::new(Host::new(Record::in_memory().unwrap()));
            let mut config = ServeConfig::new(ws.path());
            config.addr = "0.0.0.0:0".parse().unwrap();
            let refused = Server::bind(config.clone(), Arc::clone(&host)).await;
            assert_eq!(
                refused.err().map(|error| error.to_string()),
                Some("refusing to listen on 0.0.0.0:0, which other machines can reach, without a token of your own; pass --token or set TOOLTRAIL_SERVE_TOKEN".to_string())
            );
            // On loopback a token is made and kept, owner-only, in the config folder.
            config.addr = "127.0.0.1:0".parse().unwrap();
            let server = Server::bind(config, host).await.unwrap();
            let kept = PathBuf::from(std::env::var_os("TOOLTRAIL_CONFIG_DIR").unwrap())
                .join("serve-token");
            assert_eq!(
                server.token().origin(),
                &tooltrail_server::TokenOrigin::File(kept.clone())
            );
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&kept).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o600);
            }
        },
    );
}

#[test]
fn a_tool_call_in_a_plain_chat_is_said_in_the_answer_not_dropped() {
    isolated(
        "a_tool_call_in_a_plain_chat_is_said_in_the_answer_not_dropped",
        || async {
            let api = start(
                vec![Reply::tool_calls(&[(
                    "read_file",
                    r#"{"path":"README.md"}"#,
                )])],
                |_, _| {},
            )
            .await;
            let (status, body) = api
                .chat(&json!({"messages": [{"role": "user", "content": "What is this project?"}]}))
                .await;
            assert_eq!(status, 200, "{body}");
            let choice = &body["choices"][0];
            assert_eq!(choice["finish_reason"], "stop");
            assert_eq!(
                choice["message"]["content"],
                "[Tooltrail] The model answered with a tool call instead of words (`read_file` with {\"path\":\"README.md\"}), but no tools were offered with this question, so nothing was run. Offer tools with the question to have them run, or ask again for an answer in words."
            );
            assert_eq!(body["tool_execution"]["executed"], false);
            // Asked once: the same request again could only bring the same call.
            assert_eq!(api.model.chat_requests().len(), 1);
            assert!(api.model.chat_requests()[0].body.get("tools").is_none());
            api.shutdown().await;
        },
    );
}

#[test]
fn default_tools_give_a_client_that_declares_none_tooltrails_tools() {
    isolated(
        "default_tools_give_a_client_that_declares_none_tooltrails_tools",
        || async {
            let api = start(
                vec![
                    Reply::tool_calls(&[("read_file", r#"{"path":"README.md"}"#)]),
                    Reply::text("It is a demo project."),
                    Reply::text("Hello."),
                ],
                |config, _| config.default_tools = tooltrail_server::DefaultTools::ReadOnly,
            )
            .await;
            let (status, body) = api
                .chat(&json!({"messages": [{"role": "user", "content": "What is this project?"}]}))
                .await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(
                body["choices"][0]["message"]["content"],
                "It is a demo project."
            );
            assert_eq!(body["tool_execution"]["tools_called"], json!(["read_file"]));
            let offered: Vec<String> = api.model.chat_requests()[0].body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tool| tool["function"]["name"].as_str().unwrap().to_string())
                .collect();
            assert!(offered.contains(&"read_file".to_string()), "{offered:?}");
            // Only the tools that read.
            assert!(
                !offered.contains(&"execute_bash".to_string()),
                "{offered:?}"
            );
            assert!(!offered.contains(&"snippets".to_string()), "{offered:?}");
            // A request that asks for no tools still gets none.
            let (_, plain) = api
                .chat(&json!({
                    "messages": [{"role": "user", "content": "Hello"}],
                    "tool_choice": "none"
                }))
                .await;
            assert_eq!(
                plain["choices"][0]["message"]["content"], "Hello.",
                "{plain}"
            );
            assert_eq!(plain["tool_execution"]["executed"], false);
            assert!(api.model.chat_requests()[2].body.get("tools").is_none());
            api.shutdown().await;
        },
    );
}

#[test]
fn requests_for_another_host_or_from_a_page_not_allowed_are_refused() {
    isolated(
        "requests_for_another_host_or_from_a_page_not_allowed_are_refused",
        || async {
            let api = start(vec![], |config, _| {
                config.allowed_origins = vec!["http://localhost:3000".into()];
            })
            .await;
            let port = api.url.rsplit(':').next().unwrap().to_string();
            let models = |host: &str, origin: Option<&str>| {
                let mut request = api
                    .client
                    .get(format!("{}/v1/models", api.url))
                    .bearer_auth(TOKEN)
                    .header("host", host);
                if let Some(origin) = origin {
                    request = request.header("origin", origin);
                }
                request.send()
            };
            // DNS rebinding: a name of the attacker's, pointed at 127.0.0.1.
            let rebound = models(&format!("rebind.example:{port}"), None)
                .await
                .unwrap();
            assert_eq!(rebound.status().as_u16(), 403);
            let body: Value = rebound.json().await.unwrap();
            assert_eq!(body["error"]["code"], "host_not_allowed");
            assert!(
                body["error"]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("The request was sent to \"rebind.example:"),
                "{body}"
            );
            // A page of another origin, even with the token.
            let page = models(&format!("127.0.0.1:{port}"), Some("https://evil.example"))
                .await
                .unwrap();
            assert_eq!(page.status().as_u16(), 403);
            let body: Value = page.json().await.unwrap();
            assert_eq!(
                body["error"],
                json!({
                    "message": "Requests from the web page at \"https://evil.example\" are refused. To let a page of yours use this server, start it with --allow-origin https://evil.example.",
                    "type": "permission_error",
                    "code": "origin_not_allowed"
                })
            );
            // The address served, as localhost, and the page allowed, which may read the answer.
            let allowed = models(&format!("localhost:{port}"), Some("http://localhost:3000"))
                .await
                .unwrap();
            assert_eq!(allowed.status().as_u16(), 200);
            assert_eq!(
                allowed.headers()["access-control-allow-origin"],
                "http://localhost:3000"
            );
            // Its browser's preflight is answered without the token, which it never carries.
            let preflight = api
                .client
                .request(
                    reqwest::Method::OPTIONS,
                    format!("{}/v1/chat/completions", api.url),
                )
                .header("origin", "http://localhost:3000")
                .header("access-control-request-method", "POST")
                .header(
                    "access-control-request-headers",
                    "authorization, content-type",
                )
                .send()
                .await
                .unwrap();
            assert_eq!(preflight.status().as_u16(), 204);
            assert_eq!(
                preflight.headers()["access-control-allow-headers"],
                "authorization, content-type, traceparent"
            );
            // Clients that are not browsers send no Origin and go on to the token, as before.
            let client = models(&format!("127.0.0.1:{port}"), None).await.unwrap();
            assert_eq!(client.status().as_u16(), 200);
            api.shutdown().await;
        },
    );
}
