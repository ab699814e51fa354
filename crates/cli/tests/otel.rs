//! OpenTelemetry traces reach a real OTLP receiver: Arize Phoenix (from PyPI, installed by
//! `scripts/test` into a venv under `~/.cache/tooltrail`), started here on free loopback ports
//! with its data in a temporary folder. The spans are read back through Phoenix's own REST API.
//!
//! Without Phoenix the tests say why and pass, except under CI, where it must be there.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use run::text;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tooltrail_test_support::{Reply, ScriptedServer};

/// The project the spans are filed under in Phoenix, named by a resource attribute.
const PROJECT: &str = "tooltrail-otel-test";

fn phoenix_program() -> Option<PathBuf> {
    let program = match std::env::var_os("TOOLTRAIL_PHOENIX") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(std::env::var_os("HOME")?)
            .join(".cache/tooltrail/phoenix-venv/bin/phoenix"),
    };
    if program.exists() {
        return Some(program);
    }
    tooltrail_test_support::dependency_missing(&format!(
        "Arize Phoenix is not installed at {} (scripts/test installs it into a venv)",
        program.display()
    ));
    None
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Phoenix on loopback, stopped when dropped.
struct Phoenix {
    child: tokio::process::Child,
    url: String,
    /// Where Phoenix takes OTLP over gRPC.
    grpc: String,
    _dir: tempfile::TempDir,
}

impl Phoenix {
    async fn start(program: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let grpc_port = free_port();
        let child = tokio::process::Command::new(program)
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc_port.to_string())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdin(std::process::Stdio::null())
            .stdout(std::fs::File::create(dir.path().join("phoenix.log")).unwrap())
            .stderr(std::fs::File::create(dir.path().join("phoenix.err")).unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let phoenix = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
            grpc: format!("http://127.0.0.1:{grpc_port}"),
            _dir: dir,
        };
        // Phoenix migrates its database before it listens: on two busy cores, a minute or two.
        let client = reqwest::Client::new();
        for _ in 0..480 {
            let ready = client
                .get(format!("{}/healthz", phoenix.url))
                .timeout(Duration::from_secs(2))
                .send()
                .await
                .is_ok_and(|response| response.status().is_success());
            if ready {
                return phoenix;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let log =
            std::fs::read_to_string(phoenix._dir.path().join("phoenix.err")).unwrap_or_default();
        panic!(
            "Phoenix did not answer within 4 minutes:\n{}",
            log.lines().rev().take(30).collect::<Vec<_>>().join("\n")
        );
    }

    /// The spans of `trace_id` as Phoenix has them, once `count` of them have arrived.
    async fn spans(&self, trace_id: &str, count: usize) -> Vec<Span> {
        let client = reqwest::Client::new();
        let mut spans = Vec::new();
        for _ in 0..120 {
            let response = client
                .get(format!(
                    "{}/v1/projects/{PROJECT}/spans?trace_id={trace_id}&limit=1000",
                    self.url
                ))
                .send()
                .await
                .unwrap();
            if response.status().is_success() {
                let body: Value = response.json().await.unwrap();
                spans = body["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(Span::from_phoenix)
                    .collect();
                if spans.len() >= count {
                    return spans;
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!(
            "Phoenix has {} span(s) of trace {trace_id}, not {count}: {:?}",
            spans.len(),
            spans.iter().map(|span| &span.name).collect::<Vec<_>>()
        );
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

#[derive(Debug, Clone)]
struct Span {
    name: String,
    trace_id: String,
    span_id: String,
    parent_id: Option<String>,
    status: String,
    /// Attributes with their dotted names, values as JSON.
    attributes: BTreeMap<String, Value>,
}

impl Span {
    fn from_phoenix(span: &Value) -> Self {
        let mut attributes = BTreeMap::new();
        flatten("", &span["attributes"], &mut attributes);
        Self {
            name: span["name"].as_str().unwrap().to_string(),
            trace_id: span["context"]["trace_id"].as_str().unwrap().to_string(),
            span_id: span["context"]["span_id"].as_str().unwrap().to_string(),
            parent_id: span["parent_id"].as_str().map(str::to_string),
            status: span["status_code"].as_str().unwrap_or_default().to_string(),
            attributes,
        }
    }

    fn attr(&self, key: &str) -> &Value {
        self.attributes
            .get(key)
            .unwrap_or_else(|| panic!("{} has no {key}: {:?}", self.name, self.attributes))
    }
}

/// Phoenix gives attributes back nested by their dots; the tests name them dotted.
fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                let key = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&key, value, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

fn named<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    spans
        .iter()
        .find(|span| span.name == name)
        .unwrap_or_else(|| panic!("no span {name} among {spans:?}"))
}

/// A folder with a file, and a config folder whose mcp.json has the reference filesystem
/// server (its read tool allowed) and `tests/mcp/fixtures/trace-server.js` (which answers with
/// the `traceparent` its call brought), when node and the server are installed.
struct Setup {
    workspace: tempfile::TempDir,
    config: tempfile::TempDir,
    mcp: bool,
}

fn setup() -> Setup {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("plans.txt"), "secret plans\n").unwrap();
    std::fs::write(workspace.path().join("main.go"), "package main\n").unwrap();
    let config = tempfile::tempdir().unwrap();
    let entry = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let has_node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    let mcp = has_node && entry.exists();
    if mcp {
        let root = workspace.path().canonicalize().unwrap();
        let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/mcp/fixtures/trace-server.js")
            .canonicalize()
            .unwrap();
        let servers = json!({"mcpServers": {
            "fs": {"command": "node", "args": [entry.canonicalize().unwrap(), root],
                   "tools": {"read_text_file": "allow"}},
            "trace": {"command": "node", "args": [trace], "approval": "allow"}
        }});
        std::fs::write(config.path().join("mcp.json"), servers.to_string()).unwrap();
    } else {
        tooltrail_test_support::dependency_missing(
            "node or the MCP filesystem server is missing (scripts/mcp-setup installs them), \
             so the MCP call is left out",
        );
    }
    Setup {
        workspace,
        config,
        mcp,
    }
}

fn telemetry_env(endpoint: &str, content: bool) -> Vec<(&'static str, String)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.to_string()),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            format!("openinference.project.name={PROJECT}"),
        ),
        (
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
            content.to_string(),
        ),
    ]
}

async fn ask(setup: &Setup, model: &ScriptedServer, envs: &[(&str, String)]) -> (Value, String) {
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let workspace = setup.workspace.path().to_str().unwrap().to_string();
    let base_url = model.base_url();
    let args = [
        "ask",
        "--json",
        "--approve",
        "deny",
        "-w",
        &workspace,
        "--base-url",
        &base_url,
        "--model",
        "scripted",
        "What are the plans?",
    ];
    let out = run::tooltrail(&args, setup.config.path(), &envs).await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let started = events
        .iter()
        .find(|event| event["type"] == "turn_started")
        .unwrap()
        .clone();
    (started, stderr)
}

/// Two built-in calls, a command that needs approval (denied), and two MCP calls; then the
/// answer.
fn replies(setup: &Setup) -> Vec<Reply> {
    let mut calls = vec![
        ("search_files", r#"{"pattern":"*.txt"}"#.to_string()),
        ("read_file", r#"{"path":"plans.txt"}"#.to_string()),
        ("execute_bash", r#"{"command":"rm plans.txt"}"#.to_string()),
    ];
    if setup.mcp {
        let path = setup
            .workspace
            .path()
            .canonicalize()
            .unwrap()
            .join("plans.txt");
        calls.push(("fs__read_text_file", json!({"path": path}).to_string()));
        calls.push(("trace__whereami", "{}".to_string()));
    }
    let calls: Vec<(&str, &str)> = calls.iter().map(|(n, a)| (*n, a.as_str())).collect();
    vec![
        Reply::tool_calls(&calls),
        Reply::text("The plans are secret."),
    ]
}

#[tokio::test]
async fn a_question_is_one_trace_in_phoenix_and_serve_joins_the_callers() {
    let Some(program) = phoenix_program() else {
        return;
    };
    let phoenix = Phoenix::start(&program).await;
    let setup = setup();

    // Without content: the spans, their links and attributes, and no prompt or result.
    let model = ScriptedServer::start(replies(&setup)).await;
    let (started, stderr) = ask(&setup, &model, &telemetry_env(&phoenix.url, false)).await;
    assert!(!stderr.contains("traces could not be sent"), "{stderr}");
    let turn_id = started["turn_id"].as_str().unwrap();
    let trace_id = turn_id.strip_prefix("turn_").unwrap();
    let calls = if setup.mcp { 5 } else { 3 };
    // invoke_agent, two chat spans, the calls, the approval's wait.
    let spans = phoenix.spans(trace_id, 1 + 2 + calls + 1).await;
    let mut names: Vec<&str> = spans.iter().map(|span| span.name.as_str()).collect();
    names.sort_unstable();
    let mut expected = vec![
        "approval execute_bash",
        "chat scripted",
        "chat scripted",
        "execute_tool execute_bash",
        "execute_tool read_file",
        "execute_tool search_files",
        "invoke_agent tooltrail",
    ];
    if setup.mcp {
        expected.push("execute_tool fs__read_text_file");
        expected.push("execute_tool trace__whereami");
        expected.sort_unstable();
    }
    assert_eq!(names, expected);

    let root = named(&spans, "invoke_agent tooltrail");
    assert_eq!(root.parent_id, None);
    let bash = named(&spans, "execute_tool execute_bash");
    for span in &spans {
        assert_eq!(span.trace_id, trace_id);
        let parent = match span.name.as_str() {
            "invoke_agent tooltrail" => None,
            "approval execute_bash" => Some(bash.span_id.clone()),
            _ => Some(root.span_id.clone()),
        };
        assert_eq!(span.parent_id, parent, "{}", span.name);
    }
    assert_eq!(root.attr("gen_ai.operation.name"), "invoke_agent");
    assert_eq!(
        root.attr("gen_ai.conversation.id"),
        &started["conversation_id"]
    );
    assert_eq!(root.attr("tooltrail.turn.end"), "completed");
    assert_eq!(root.attr("tooltrail.tool_calls"), calls);

    let chat = spans
        .iter()
        .find(|span| span.name == "chat scripted" && span.attr("tooltrail.round") == 1)
        .unwrap();
    assert_eq!(chat.attr("gen_ai.operation.name"), "chat");
    assert_eq!(chat.attr("gen_ai.request.model"), "scripted");
    assert_eq!(chat.attr("gen_ai.response.model"), "scripted");
    assert_eq!(
        chat.attr("gen_ai.response.finish_reasons"),
        &json!(["tool_calls"])
    );
    assert_eq!(chat.attr("server.address"), "127.0.0.1");
    assert_eq!(chat.attr("server.port"), model.addr().port());
    assert!(chat.attr("gen_ai.usage.input_tokens").is_u64(), "{chat:?}");
    assert!(chat.attr("gen_ai.usage.output_tokens").is_u64(), "{chat:?}");

    let read = named(&spans, "execute_tool read_file");
    assert_eq!(read.attr("gen_ai.operation.name"), "execute_tool");
    assert_eq!(read.attr("gen_ai.tool.name"), "read_file");
    assert_eq!(read.attr("gen_ai.tool.type"), "function");
    assert!(read.attr("gen_ai.tool.call.id").is_string());
    assert_eq!(read.attr("tooltrail.decision"), "allowed");
    assert_eq!(read.attr("tooltrail.decision.by"), "policy");
    assert_eq!(read.attr("tooltrail.tool_mode"), "native");
    assert_eq!(read.status, "UNSET");

    assert_eq!(bash.attr("tooltrail.decision"), "denied");
    assert_eq!(bash.attr("error.type"), "denied");
    assert_eq!(bash.status, "ERROR");
    assert!(bash.attr("tooltrail.approval.wait_ms").is_u64());
    assert!(bash.attr("tooltrail.sandbox").is_string());

    if setup.mcp {
        let mcp = named(&spans, "execute_tool fs__read_text_file");
        assert_eq!(mcp.attr("gen_ai.tool.type"), "extension");
        assert_eq!(mcp.attr("tooltrail.mcp.server"), "fs");
        assert_eq!(mcp.status, "UNSET", "{mcp:?}");
    }
    for span in &spans {
        for (key, value) in &span.attributes {
            assert!(
                !value.to_string().contains("secret"),
                "{} carries content in {key}: {value}",
                span.name
            );
        }
    }

    // With content turned on, the arguments and results are there; this time over gRPC.
    let model = ScriptedServer::start(replies(&setup)).await;
    let mut envs = telemetry_env(&phoenix.grpc, true);
    envs.push(("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".to_string()));
    let (started, stderr) = ask(&setup, &model, &envs).await;
    assert!(!stderr.contains("traces could not be sent"), "{stderr}");
    let trace_id = started["turn_id"]
        .as_str()
        .unwrap()
        .strip_prefix("turn_")
        .unwrap();
    let spans = phoenix.spans(trace_id, 1 + 2 + calls + 1).await;
    let read = named(&spans, "execute_tool read_file");
    assert_eq!(
        read.attr("gen_ai.tool.call.arguments"),
        r#"{"path":"plans.txt"}"#
    );
    assert!(
        read.attr("gen_ai.tool.call.result")
            .as_str()
            .unwrap()
            .contains("secret plans"),
        "{read:?}"
    );
    // The MCP server was told the call's span (SEP-414 `_meta.traceparent`).
    if setup.mcp {
        let whereami = named(&spans, "execute_tool trace__whereami");
        let expected = format!("traceparent 00-{trace_id}-{}-01", whereami.span_id);
        assert!(
            whereami
                .attr("gen_ai.tool.call.result")
                .as_str()
                .unwrap()
                .contains(&expected),
            "{expected} not in {whereami:?}"
        );
    }
    let root = named(&spans, "invoke_agent tooltrail");
    assert!(
        root.attr("gen_ai.output.messages")
            .as_str()
            .unwrap()
            .contains("The plans are secret."),
        "{root:?}"
    );

    // A question asked with telemetry off, sent later from the record: the same trace.
    let model = ScriptedServer::start(replies(&setup)).await;
    let (started, _) = ask(&setup, &model, &[]).await;
    let conversation = started["conversation_id"].as_str().unwrap();
    let trace_id = started["turn_id"]
        .as_str()
        .unwrap()
        .strip_prefix("turn_")
        .unwrap();
    let envs = telemetry_env(&phoenix.url, false);
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = run::tooltrail(
        &["export", "--otlp", "-c", conversation],
        setup.config.path(),
        &envs,
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.starts_with(&format!(
            "Sent {} spans of 1 question to ",
            1 + 2 + calls + 1
        )),
        "{said}"
    );
    let spans = phoenix.spans(trace_id, 1 + 2 + calls + 1).await;
    let root = named(&spans, "invoke_agent tooltrail");
    assert_eq!(root.attr("gen_ai.conversation.id"), conversation);
    assert_eq!(
        named(&spans, "execute_tool read_file").parent_id.as_deref(),
        Some(root.span_id.as_str())
    );

    // serve: a request with a traceparent lands in the caller's trace, under the caller's span.
    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[("search_files", r#"{"pattern":"*.go"}"#)]),
        Reply::text("One Go file."),
    ])
    .await;
    let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_tooltrail"))
        .args([
            "serve",
            "--port",
            "0",
            "--token",
            "let-me-in",
            "--base-url",
            &model.base_url(),
            "--model",
            "scripted",
            "-w",
            setup.workspace.path().to_str().unwrap(),
        ])
        .env_remove("TOOLTRAIL_BASE_URL")
        .env_remove("TOOLTRAIL_MODEL")
        .env_remove("TOOLTRAIL_SERVE_TOKEN")
        .envs(telemetry_env(&phoenix.url, false))
        .env("TOOLTRAIL_CONFIG_DIR", setup.config.path())
        .env("TOOLTRAIL_DATA_DIR", setup.config.path().join("data"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(serve.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("serve said where it listens")
        .unwrap()
        .unwrap();
    let url = first.strip_prefix("listening on ").unwrap().to_string();
    let caller_trace = "0af7651916cd43dd8448eb211c80319c";
    let caller_span = "b7ad6b7169203331";
    let answer: Value = reqwest::Client::new()
        .post(format!("{url}/v1/chat/completions"))
        .bearer_auth("let-me-in")
        .header("traceparent", format!("00-{caller_trace}-{caller_span}-01"))
        .json(&json!({
            "model": "scripted",
            "messages": [{"role": "user", "content": "How many Go files?"}],
            "tools": [{"type": "function", "function": {"name": "search_files", "parameters": {"type": "object"}}}],
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        answer["choices"][0]["message"]["content"], "One Go file.",
        "{answer}"
    );
    let spans = phoenix.spans(caller_trace, 4).await;
    let root = named(&spans, "invoke_agent tooltrail");
    assert_eq!(root.parent_id.as_deref(), Some(caller_span));
    let search = named(&spans, "execute_tool search_files");
    assert_eq!(search.parent_id.as_deref(), Some(root.span_id.as_str()));
    // The model endpoint was told which request of the trace it serves.
    let sent: Vec<String> = model
        .chat_requests()
        .iter()
        .map(|request| {
            request
                .headers
                .get("traceparent")
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    let chats: Vec<&Span> = spans.iter().filter(|s| s.name == "chat scripted").collect();
    assert_eq!(chats.len(), 2);
    for header in &sent {
        assert!(
            chats
                .iter()
                .any(|chat| *header == format!("00-{caller_trace}-{}-01", chat.span_id)),
            "{header} names none of {chats:?}"
        );
    }
    let _ = serve.start_kill();
}

#[tokio::test]
async fn a_dead_collector_costs_a_warning_not_the_answer() {
    let setup = setup();
    let model = ScriptedServer::start(replies(&setup)).await;
    // Nothing listens on this port.
    let dead = format!("http://127.0.0.1:{}", free_port());
    let (started, stderr) = ask(&setup, &model, &telemetry_env(&dead, false)).await;
    assert_eq!(started["type"], "turn_started");
    let warnings = stderr
        .lines()
        .filter(|line| line.contains("traces could not be sent"))
        .count();
    assert_eq!(warnings, 1, "{stderr}");
}
