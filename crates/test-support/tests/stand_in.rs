//! The llama-server stand-in answers as llama-server does to what the runtime's supervisor
//! asks: its flags, `/health`, the key on every other path, and a streamed chat answer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tooltrail_test_support::stand_in::CANNED_ANSWER;

const PROGRAM: &str = env!("CARGO_BIN_EXE_llama-server-stand-in");

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A GET of `url`, with `key` as its bearer token when there is one.
async fn get(client: &reqwest::Client, url: &str, key: Option<&str>) -> reqwest::Response {
    let mut request = client.get(url);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    request.send().await.unwrap()
}

/// What a GET of `url` (as [`get`]) answered, as JSON.
async fn get_json(client: &reqwest::Client, url: &str, key: Option<&str>) -> serde_json::Value {
    get(client, url, key).await.json().await.unwrap()
}

/// Fails unless `out` is that of a start that failed, saying `says` on stderr.
fn assert_refused(out: &Output, says: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains(says), "{stderr}");
}

#[tokio::test]
async fn it_takes_llama_servers_flags_and_requires_the_key_beyond_health() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.gguf");
    std::fs::write(&model, b"GGUF").unwrap();
    let key_file = dir.path().join("api-key");
    std::fs::write(&key_file, "sekret\n").unwrap();
    let port = free_port();
    let child = Command::new(PROGRAM)
        .args(["--model", model.to_str().unwrap()])
        .args(["--api-key-file", key_file.to_str().unwrap()])
        .args([
            "--alias",
            "tiny",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .args([
            "--jinja",
            "--ctx-size",
            "2048",
            "--threads",
            "2",
            "--parallel",
            "1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _running = Running(child);
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let root = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(response) = client.get(format!("{root}/health")).send().await
            && response.status() == 200
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the stand-in did not answer /health"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let models = get_json(&client, &format!("{root}/v1/models"), None).await;
    assert_eq!(models["data"][0]["id"], "tiny");

    for path in ["/props", "/slots"] {
        let url = format!("{root}{path}");
        for (key, status) in [(None, 401), (Some("wrong"), 401), (Some("sekret"), 200)] {
            assert_eq!(
                get(&client, &url, key).await.status(),
                status,
                "{path} {key:?}"
            );
        }
    }
    let props = get_json(&client, &format!("{root}/props"), Some("sekret")).await;
    assert_eq!(props["default_generation_settings"]["n_ctx"], 2048);

    let chat = serde_json::json!({"model": "tiny", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let url = format!("{root}/v1/chat/completions");
    assert_eq!(
        client.post(&url).json(&chat).send().await.unwrap().status(),
        401
    );
    let body = client
        .post(&url)
        .bearer_auth("sekret")
        .json(&chat)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let answer: String = body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .filter_map(|data| {
            let chunk: serde_json::Value = serde_json::from_str(data).unwrap();
            chunk["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(answer, CANNED_ANSWER);
    assert!(body.ends_with("data: [DONE]\n\n"), "{body}");
}

#[test]
fn it_refuses_to_start_as_llama_server_does() {
    let dir = tempfile::tempdir().unwrap();
    let missing = Command::new(PROGRAM)
        .args(["--model", dir.path().join("none.gguf").to_str().unwrap()])
        .output()
        .unwrap();
    assert_refused(&missing, "failed to load model");
    let unknown = Command::new(PROGRAM)
        .args(["--model", "m.gguf", "--no-such-flag"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());

    let model = dir.path().join("m.gguf");
    std::fs::write(&model, b"GGUF").unwrap();
    let taken = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let bound = Command::new(PROGRAM)
        .args(["--model", model.to_str().unwrap(), "--port", &port])
        .output()
        .unwrap();
    assert_refused(&bound, "couldn't bind HTTP server socket");
}
