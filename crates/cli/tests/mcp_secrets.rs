//! The secrets of `mcp.json` (`headers` and `env` values taken from `${NAME}` variables) as a
//! user meets them: set to canary strings, they must show up in no listing, no error, no
//! question's output, no export and no byte of the data folder. Against the reference
//! filesystem server from npm (`tests/mcp`), a server that prints its environment to stderr,
//! and a local HTTP endpoint that refuses every request quoting the `Authorization` header it
//! got.

#![allow(clippy::unwrap_used)]

use crate::support::mcp as support;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use support::{Setup, ask, listed_server, reference_server, text, tooltrail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tooltrail_test_support::{Reply, ScriptedServer};

/// What `${TOKEN}` expands to: the bearer token of the HTTP server.
const TOKEN: &str = "tokcanary-3f9a1c7e5d20";
/// What `${API_KEY}` expands to: the key given to the stdio servers.
const API_KEY: &str = "keycanary-8b2d6e0a4c19";

/// Fails naming the place when either secret is in `bytes`.
fn assert_no_secret(what: &str, bytes: &[u8]) {
    let shown = String::from_utf8_lossy(bytes);
    for secret in [TOKEN, API_KEY] {
        assert!(!shown.contains(secret), "{what} holds {secret}:\n{shown}");
    }
}

fn assert_output_has_no_secret(what: &str, out: &Output) {
    assert_no_secret(&format!("{what} (stdout)"), &out.stdout);
    assert_no_secret(&format!("{what} (stderr)"), &out.stderr);
}

/// Every file under `dir`, with its bytes.
fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            files.push((path.display().to_string(), bytes));
        }
    }
    files
}

/// A Streamable HTTP endpoint on 127.0.0.1 that answers each JSON-RPC request with an error
/// quoting the request's `Authorization` header, as a careless server might. Its URL.
async fn echoing_endpoint() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                // The head, then the body its Content-Length announces.
                let (head, body) = loop {
                    let Ok(read) = stream.read(&mut buf).await else {
                        return;
                    };
                    if read == 0 {
                        return;
                    }
                    request.extend_from_slice(&buf[..read]);
                    let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") else {
                        continue;
                    };
                    let head = String::from_utf8_lossy(&request[..end]).to_string();
                    let length: usize = head
                        .lines()
                        .find_map(|line| {
                            let (name, value) = line.split_once(':')?;
                            name.eq_ignore_ascii_case("content-length")
                                .then(|| value.trim().parse().ok())?
                        })
                        .unwrap_or(0);
                    while request.len() < end + 4 + length {
                        let Ok(read) = stream.read(&mut buf).await else {
                            return;
                        };
                        if read == 0 {
                            return;
                        }
                        request.extend_from_slice(&buf[..read]);
                    }
                    break (head, request[end + 4..end + 4 + length].to_vec());
                };
                let authorization = head
                    .lines()
                    .find_map(|line| {
                        let (name, value) = line.split_once(':')?;
                        name.eq_ignore_ascii_case("authorization")
                            .then(|| value.trim().to_string())
                    })
                    .unwrap_or_default();
                let id = serde_json::from_slice::<Value>(&body)
                    .ok()
                    .and_then(|message| message.get("id").cloned());
                let (status, body) = match id {
                    Some(id) => (
                        "200 OK",
                        json!({"jsonrpc": "2.0", "id": id, "error": {
                            "code": -32600,
                            "message": format!("refused Authorization: {authorization}")}})
                        .to_string(),
                    ),
                    None => ("202 Accepted", String::new()),
                };
                let response = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    url
}

#[tokio::test]
async fn attack_secrets_listings_errors_questions_and_the_record_never_show_them() {
    let Some(entry) = reference_server("server-filesystem") else {
        return;
    };
    let Some(everything) = reference_server("server-everything") else {
        return;
    };
    let url = echoing_endpoint().await;
    let setup = Setup::new(
        &[("notes.txt", "alpha\nbeta\n")],
        |workspace| {
            json!({"mcpServers": {
                "fs": {"command": "node", "args": [entry, workspace],
                       "env": {"API_KEY": "${API_KEY}"},
                       "tools": {"read_text_file": "allow"}},
                // Its get-env tool answers with its whole environment.
                "everything": {"command": "node", "args": [everything, "stdio"],
                               "env": {"API_KEY": "${API_KEY}"},
                               "tools": {"get-env": "allow"}},
                "leaky": {"command": "node",
                          "args": ["-e", "console.error('my key is ' + process.env.API_KEY); process.exit(3)"],
                          "env": {"API_KEY": "${API_KEY}"}},
                "web": {"url": url, "headers": {"Authorization": "Bearer ${TOKEN}"}}
            }})
        },
        "",
    )
    .with_env(&[("TOKEN", TOKEN), ("API_KEY", API_KEY)]);

    // The listing as JSON: values as written, the failures' words scrubbed.
    let out = tooltrail(&["mcp", "list", "--json"], &setup).await;
    assert_output_has_no_secret("mcp list --json", &out);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let servers: Value = serde_json::from_slice(&out.stdout).unwrap();
    let by_name = |name: &str| listed_server(&servers, name);
    let fs = by_name("fs");
    assert_eq!(fs["state"], "running", "{fs}");
    assert_eq!(fs["transport"]["env"], json!({"API_KEY": "${API_KEY}"}));
    let web = by_name("web");
    assert_eq!(
        web["transport"]["headers"],
        json!({"Authorization": "Bearer ${TOKEN}"})
    );
    assert_eq!(web["state"], "failed", "{web}");
    // The endpoint's refusal quoted the header; it reads as written in mcp.json.
    assert!(
        web["error"]
            .as_str()
            .unwrap()
            .contains("refused Authorization: Bearer ${TOKEN}"),
        "{web}"
    );
    let leaky = by_name("leaky");
    assert_eq!(leaky["state"], "failed", "{leaky}");
    assert!(
        leaky["stderr"].to_string().contains("my key is ${API_KEY}"),
        "{leaky}"
    );

    for args in [
        &["mcp", "list"][..],
        &["mcp", "test", "web"],
        &["mcp", "test", "leaky"],
        &["mcp", "test", "fs"],
    ] {
        let out = tooltrail(args, &setup).await;
        assert_output_has_no_secret(&args.join(" "), &out);
    }

    // A question that uses the servers, kept in the history.
    let path = setup.workspace.join("notes.txt");
    let call = json!({"path": path}).to_string();
    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[("fs__read_text_file", &call), ("everything__get-env", "{}")]),
        Reply::text("Alpha and beta."),
    ])
    .await;
    let out = ask(
        &model,
        &["--approve", "deny", "--json", "What do the notes say?"],
        &setup,
    )
    .await;
    assert_output_has_no_secret("ask --json", &out);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("alpha\\nbeta"),
        "the question did not use the server: {}",
        text(&out.stdout)
    );
    let requests = model.chat_requests();
    for request in &requests {
        assert_no_secret(
            "a request to the model",
            request.body.to_string().as_bytes(),
        );
    }
    // The environment the server answered with reached the model, its key as written.
    let last = requests.last().unwrap().body.to_string();
    assert!(
        last.contains("API_KEY") && last.contains("${API_KEY}"),
        "{last}"
    );

    let workspace = setup.workspace.to_str().unwrap();
    for args in [
        &["history", "--json"][..],
        &["export", "-w", workspace, "--format", "jsonl"],
        &["export", "-w", workspace, "--format", "md"],
    ] {
        let out = tooltrail(args, &setup).await;
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_output_has_no_secret(&args.join(" "), &out);
    }
    let files = files_under(&setup.data);
    assert!(!files.is_empty(), "the question left no record");
    for (path, bytes) in files {
        assert_no_secret(&path, &bytes);
    }
}

/// `tests/mcp/fixtures/echoing-secrets-server.js`, which says its `API_KEY` in everything it
/// sends. `None` (after saying why) without node.
fn echoing_server() -> Option<std::path::PathBuf> {
    if !support::node_installed() {
        return None;
    }
    Some(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/mcp/fixtures/echoing-secrets-server.js")
            .canonicalize()
            .unwrap(),
    )
}

#[tokio::test]
async fn attack_secrets_a_server_that_echoes_its_key_in_prompts_tools_and_resources_keeps_it() {
    let Some(server) = echoing_server() else {
        return;
    };
    let setup = Setup::new(
        &[],
        |_| {
            json!({"mcpServers": {
                "echoing": {"command": "node", "args": [server],
                            "env": {"API_KEY": "${API_KEY}"},
                            "tools": {"echo": "allow"}}
            }})
        },
        "",
    )
    .with_env(&[("API_KEY", API_KEY)]);

    // Its listings, as text and as JSON.
    for args in [
        &["mcp", "list"][..],
        &["mcp", "list", "--json"],
        &["mcp", "test", "echoing"],
        &["mcp", "prompts", "echoing"],
        &["mcp", "prompts", "echoing", "--json"],
        &["mcp", "resources", "echoing"],
        &["mcp", "resources", "echoing", "--json"],
        &["mcp", "read", "echoing", "echo://note"],
        &["tools", "--json"],
    ] {
        let out = tooltrail(args, &setup).await;
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert_output_has_no_secret(&args.join(" "), &out);
    }

    // A question from its prompt, with one of its resources attached, that calls its tool.
    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[("echoing__echo", r#"{"text": "hi"}"#)]),
        Reply::text("Echoed."),
    ])
    .await;
    let out = ask(
        &model,
        &[
            "--approve",
            "deny",
            "--prompt",
            "echoing/leak",
            "--arg",
            "topic=keys",
            "--attach",
            "echoing:echo://note",
            "What now?",
        ],
        &setup,
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_output_has_no_secret("ask --prompt", &out);
    let requests = model.chat_requests();
    assert_eq!(requests.len(), 2, "the tool was not called");
    for request in &requests {
        assert_no_secret(
            "a request to the model",
            request.body.to_string().as_bytes(),
        );
    }
    // The server was heard, its key as written in mcp.json: its prompt, its tool's
    // description, its result.
    let last = requests.last().unwrap().body.to_string();
    for said in [
        "My key is ${API_KEY}; the topic is keys.",
        "Echoes its text; the key is ${API_KEY}.",
        "echo of hi with ${API_KEY}",
        "a note with ${API_KEY}",
    ] {
        assert!(last.contains(said), "{said} is not in {last}");
    }

    let files = files_under(&setup.data);
    assert!(!files.is_empty(), "the question left no record");
    for (path, bytes) in files {
        assert_no_secret(&path, &bytes);
    }
}
