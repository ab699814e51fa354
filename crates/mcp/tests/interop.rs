//! Interop against real MCP servers: the reference servers from npm
//! (`@modelcontextprotocol/server-filesystem`, `@modelcontextprotocol/server-everything`), over
//! stdio and Streamable HTTP, and a small server that misbehaves on purpose
//! (`tests/mcp/fixtures/misbehaving-server.js`).
//!
//! The npm packages are installed into `tests/mcp/node_modules` on first run (the same
//! `npm install` that `scripts/mcp-setup` does). Without `node` the tests print why and pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{everything, fixture, manager, package_entry, registry_with};
use tokio_util::sync::CancellationToken;
use tooltrail_agent::{Agent, AgentConfig, AllowAll, CollectingSink, Conversation};
use tooltrail_keychain::KeychainError;
use tooltrail_llm::{LlmClient, LlmConfig};
use tooltrail_mcp::{
    Approval, McpConfig, McpError, McpManager, McpOptions, ServerConfig, ServerState,
};
use tooltrail_protocol::{EventBody, ToolErrorCode, ToolSource, ToolStatus};
use tooltrail_test_support::{Reply, ScriptedServer};
use tooltrail_tools::{Gate, ToolContext, ToolRegistry};

fn filesystem(workspace: &Path) -> ServerConfig {
    let entry = package_entry("server-filesystem");
    ServerConfig::stdio(
        "fs",
        "node",
        &[entry.to_str().unwrap(), workspace.to_str().unwrap()],
    )
}

fn misbehaving(mode: &str, log: &Path, timeout: Duration) -> ServerConfig {
    let mut server = ServerConfig::stdio(
        "odd",
        "node",
        &[
            &fixture("misbehaving-server.js"),
            mode,
            log.to_str().unwrap(),
        ],
    );
    server.timeout = timeout;
    server
}

/// A workspace with one file.
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let (dir, root) = support::workspace();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\n").unwrap();
    (dir, root)
}

async fn wait_for(mut check: impl FnMut() -> bool, within: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    check()
}

fn log_has(log: &Path, needle: &str) -> bool {
    std::fs::read_to_string(log).is_ok_and(|text| text.contains(needle))
}

#[tokio::test]
async fn filesystem_tools_are_listed_over_stdio_with_prefixed_names() {
    require_node!();
    let (_dir, root) = workspace();
    let manager = manager(vec![filesystem(&root)], &root);
    let server = manager.server("fs").unwrap();
    let handshake = server.start().await.unwrap();
    assert!(handshake < Duration::from_secs(30));
    let info = server.info().await.unwrap();
    assert_eq!(info.protocol_version, "2025-11-25");
    let (tools, failures) = manager.tools(["read_file"]).await;
    assert!(failures.is_empty());
    let names: Vec<&str> = tools.iter().map(|tool| tool.spec().name.as_str()).collect();
    for expected in ["fs__read_text_file", "fs__list_directory", "fs__write_file"] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert!(names.iter().all(|name| name.len() <= 64));
    assert!(matches!(server.state().await, ServerState::Running { .. }));
    manager.shutdown().await;
    assert_eq!(server.state().await, ServerState::Stopped);
}

use tooltrail_tools::Tool as _;

#[tokio::test]
async fn filesystem_tool_runs_through_the_registry_and_its_gate() {
    require_node!();
    let (_dir, root) = workspace();
    let mut fs = filesystem(&root);
    fs.tools.insert("read_text_file".into(), Approval::Allow);
    fs.tools.insert("write_file".into(), Approval::Never);
    let manager = manager(vec![fs], &root);
    let registry = registry_with(&manager).await;
    let ctx = ToolContext::open(&root).unwrap();

    let path = root.join("notes.txt");
    let args = json!({"path": path}).to_string();
    let (tool, parsed) = registry.prepare("fs__read_text_file", &args).unwrap();
    assert_eq!(
        tool.source(),
        ToolSource::Mcp {
            server: "fs".into()
        }
    );
    assert_eq!(
        tool.gate(&parsed, &ctx),
        Gate::Allowed {
            reason: "read_text_file is set to \"allow\" for the MCP server \"fs\" in mcp.json"
                .into()
        }
    );
    let output = registry
        .call("fs__read_text_file", &args, &ctx)
        .await
        .unwrap();
    assert_eq!(output.text, "alpha\nbeta\n");
    assert_eq!(output.data["server"], "fs");
    assert_eq!(output.data["tool"], "read_text_file");

    // Defaults: ask, with the server's hint shown but not trusted.
    let (tool, parsed) = registry
        .prepare("fs__list_directory", &json!({"path": root}).to_string())
        .unwrap();
    match tool.gate(&parsed, &ctx) {
        Gate::Ask {
            summary, reason, ..
        } => {
            assert!(summary.starts_with("fs__list_directory {"), "{summary}");
            assert!(reason.contains("external MCP server \"fs\""), "{reason}");
        }
        other => panic!("expected Ask, got {other:?}"),
    }
    let (tool, parsed) = registry
        .prepare(
            "fs__write_file",
            &json!({"path": path, "content": "x"}).to_string(),
        )
        .unwrap();
    assert!(
        matches!(tool.gate(&parsed, &ctx), Gate::Refuse(error) if error.code == ToolErrorCode::Denied)
    );

    // Schema validation happens before the server is asked.
    let error = registry.prepare("fs__read_text_file", "{}").err().unwrap();
    assert_eq!(error.code, ToolErrorCode::InvalidArguments);

    // A server-side error comes back as a failed result with the server's text.
    let outside = json!({"path": "/etc/hostname"}).to_string();
    let error = registry
        .call("fs__read_text_file", &outside, &ctx)
        .await
        .unwrap_err();
    assert_eq!(error.code, ToolErrorCode::Failed);
    assert!(error.message.contains("Access denied"), "{}", error.message);
    manager.shutdown().await;
}

#[tokio::test]
async fn an_agent_turn_calls_an_mcp_tool() {
    require_node!();
    let (_dir, root) = workspace();
    let manager = manager(vec![filesystem(&root)], &root);
    let registry = registry_with(&manager).await;
    let path = root.join("notes.txt");
    let call_args = json!({"path": path}).to_string();
    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[("fs__read_text_file", &call_args)]),
        Reply::text("The notes say alpha and beta."),
    ])
    .await;
    let agent = Agent::new(
        // A window the server's tools fit in a quarter of, so that all of them are offered.
        LlmClient::new(LlmConfig {
            context_window: Some(131_072),
            ..LlmConfig::new(model.base_url(), "m")
        })
        .unwrap(),
        Arc::new(registry),
        ToolContext::open(&root).unwrap(),
        AgentConfig::default(),
    );
    let sink = CollectingSink::new();
    let outcome = agent
        .run_turn(
            &mut Conversation::new(),
            "What do the notes say?",
            &sink,
            &AllowAll,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.text, "The notes say alpha and beta.");
    let finished: Vec<_> = sink
        .events()
        .into_iter()
        .filter_map(|event| match event.body {
            EventBody::ToolCallFinished {
                tool,
                source,
                status,
                result,
                ..
            } => Some((tool, source, status, result)),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        vec![(
            "fs__read_text_file".to_string(),
            ToolSource::Mcp {
                server: "fs".into()
            },
            ToolStatus::Success,
            "alpha\nbeta\n".to_string()
        )]
    );
    // The model saw the tool and its result.
    let requests = model.chat_requests();
    let first = &requests[0].body;
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"fs__read_text_file"), "{offered:?}");
    let second = requests[1].body.to_string();
    assert!(second.contains("alpha\\nbeta"), "{second}");
    manager.shutdown().await;
}

#[tokio::test]
async fn stdio_servers_get_a_minimal_environment_and_the_workspace_as_root() {
    require_node!();
    let (_dir, root) = workspace();
    let mut everything = everything();
    if let tooltrail_mcp::Transport::Stdio { env, .. } = &mut everything.transport {
        env.insert("MARKER".into(), "from-config".into());
    }
    let manager = manager(vec![everything], &root);
    let server = manager.server("everything").unwrap();
    server.start().await.unwrap();
    // server-everything adds its roots tool after the handshake and says so with
    // tools/list_changed; we re-list.
    let mut changes = server.tools_changed();
    let relisted = tokio::time::timeout(Duration::from_secs(10), changes.changed()).await;
    assert!(relisted.is_ok(), "no tools/list_changed re-list");
    let tools = server.known_tools().unwrap();
    assert!(tools.iter().any(|tool| tool.name == "get-roots-list"));

    let registry = registry_with(&manager).await;
    let ctx = ToolContext::open(&root).unwrap();
    let output = registry
        .call("everything__get-env", "{}", &ctx)
        .await
        .unwrap();
    let env: Value = serde_json::from_str(&output.text).unwrap();
    let names: Vec<&String> = env.as_object().unwrap().keys().collect();
    let allowed = [
        "PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "USER", "LOGNAME", "TMPDIR", "TERM", "MARKER",
    ];
    for name in &names {
        assert!(
            allowed.contains(&name.as_str()),
            "{name} reached the server: {names:?}"
        );
    }
    assert_eq!(env["MARKER"], "from-config");

    let output = registry
        .call("everything__get-roots-list", "{}", &ctx)
        .await
        .unwrap();
    let uri = format!("file://{}", root.display());
    assert!(output.text.contains(&uri), "{}", output.text);
    manager.shutdown().await;
}

/// server-everything over Streamable HTTP on a loopback port.
struct HttpEverything {
    child: std::process::Child,
    url: String,
}

impl HttpEverything {
    async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("node")
            .arg("-r")
            .arg(fixture("loopback.cjs"))
            .arg(package_entry("server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let ready = wait_for(
            || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
            Duration::from_secs(20),
        )
        .await;
        assert!(ready, "server-everything did not listen on {port}");
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A keychain that answers nothing, as on a machine where none runs.
struct NoKeychain;

impl tooltrail_mcp::SecretStore for NoKeychain {
    fn get(&self, _: &str) -> Result<Option<String>, KeychainError> {
        Err(KeychainError::NoService)
    }
    fn set(&self, _: &str, _: &str) -> Result<(), KeychainError> {
        Err(KeychainError::NoService)
    }
    fn delete(&self, _: &str) -> Result<(), KeychainError> {
        Err(KeychainError::NoService)
    }
}

/// server-everything speaks a revision before 2026-07-28: the session starts with
/// `server/discover`, falls back to `initialize`, and works; a keychain that cannot be read
/// stops nothing for a server that never asks for sign-in.
#[tokio::test]
async fn an_older_http_server_works_by_fallback_without_a_keychain() {
    require_node!();
    let (_dir, root) = workspace();
    let http = HttpEverything::start().await;
    let mut config = McpConfig::default();
    config
        .servers
        .insert("web".to_string(), ServerConfig::http("web", &http.url));
    let mut options = McpOptions::for_workspace(&root);
    options.login_shell_path = false;
    options.sign_in.secrets = Some(Arc::new(NoKeychain));
    let manager = McpManager::new(config, options);
    let server = manager.server("web").unwrap();
    server.start().await.unwrap();
    let info = server.info().await.unwrap();
    assert_eq!(info.protocol_version, "2025-11-25");
    assert!(server.list_tools().await.unwrap().len() > 5);
    assert_eq!(
        manager.sign_in_state("web"),
        Some(tooltrail_mcp::SignInState::NotNeeded)
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn streamable_http_calls_with_progress_media_and_cancellation() {
    require_node!();
    let (_dir, root) = workspace();
    let http = HttpEverything::start().await;
    let manager = manager(vec![ServerConfig::http("web", &http.url)], &root);
    let registry = registry_with(&manager).await;
    let ctx = ToolContext::open(&root).unwrap();

    let output = registry
        .call("web__echo", r#"{"message": "hello over http"}"#, &ctx)
        .await
        .unwrap();
    assert_eq!(output.text, "Echo: hello over http");

    // Progress notifications are collected with the result, and reach the caller as they come.
    let mut live = manager.progress();
    let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel();
    let reporting = ToolContext {
        progress: Some(progress_tx),
        ..ctx.clone()
    };
    let output = registry
        .call(
            "web__trigger-long-running-operation",
            r#"{"duration": 1, "steps": 4}"#,
            &reporting,
        )
        .await
        .unwrap();
    let mut reported = Vec::new();
    while let Ok(update) = progress_rx.try_recv() {
        reported.push((update.progress, update.total));
    }
    assert_eq!(
        reported,
        vec![
            (1.0, Some(4.0)),
            (2.0, Some(4.0)),
            (3.0, Some(4.0)),
            (4.0, Some(4.0))
        ]
    );
    assert!(
        output.text.starts_with("Long running operation completed"),
        "{}",
        output.text
    );
    let progress: Vec<f64> = output.data["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, vec![1.0, 2.0, 3.0, 4.0]);
    let first_live = live.try_recv().unwrap();
    assert_eq!(first_live.server, "web");
    assert_eq!(
        first_live.tool.as_deref(),
        Some("trigger-long-running-operation")
    );
    assert_eq!(first_live.total, Some(4.0));

    // Images: marked in the text, kept whole as media and in data.
    let output = registry
        .call("web__get-tiny-image", "{}", &ctx)
        .await
        .unwrap();
    assert!(
        output.text.contains("[image 1: image/png"),
        "{}",
        output.text
    );
    assert_eq!(output.media.len(), 1);
    assert_eq!(output.media[0].mime_type, "image/png");
    let blocks = output.data["result"]["content"].as_array().unwrap();
    let image = blocks
        .iter()
        .find(|block| block["type"] == "image")
        .unwrap();
    assert!(image["data"].as_str().unwrap().len() > 100);

    // Cancelling the turn ends the call at once; the server is told and goes on serving.
    let cancel = CancellationToken::new();
    let cancel_ctx = ToolContext::new(ctx.workspace.clone(), ctx.limits.clone(), cancel.clone());
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let error = registry
        .call(
            "web__trigger-long-running-operation",
            r#"{"duration": 30, "steps": 30}"#,
            &cancel_ctx,
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, ToolErrorCode::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(5));
    let output = registry
        .call("web__echo", r#"{"message": "still here"}"#, &ctx)
        .await
        .unwrap();
    assert_eq!(output.text, "Echo: still here");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_told_to_cancel() {
    require_node!();
    let (_dir, root) = workspace();
    let log = root.join("hang.log");
    let manager = manager(
        vec![misbehaving("hang", &log, Duration::from_secs(1))],
        &root,
    );
    let registry = registry_with(&manager).await;
    let ctx = ToolContext::open(&root).unwrap();
    let started = Instant::now();
    let error = registry.call("odd__work", "{}", &ctx).await.unwrap_err();
    assert_eq!(error.code, ToolErrorCode::Timeout);
    assert_eq!(
        error.message,
        "the MCP server \"odd\" did not answer within 1 s; the call was cancelled"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        wait_for(
            || log_has(&log, "notifications/cancelled"),
            Duration::from_secs(3)
        )
        .await,
        "no notifications/cancelled in {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );

    // Cancelling the turn sends notifications/cancelled too.
    std::fs::write(&log, "").unwrap();
    let cancel = CancellationToken::new();
    let cancel_ctx = ToolContext::new(ctx.workspace.clone(), ctx.limits.clone(), cancel.clone());
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let error = registry
        .call("odd__work", "{}", &cancel_ctx)
        .await
        .unwrap_err();
    assert_eq!(error.code, ToolErrorCode::Cancelled);
    assert!(
        wait_for(
            || log_has(&log, "the user stopped the call"),
            Duration::from_secs(3)
        )
        .await
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn a_server_that_crashes_mid_call_is_reported_and_restarted_with_backoff() {
    require_node!();
    let (_dir, root) = workspace();
    let log = root.join("crash.log");
    let manager = manager(
        vec![misbehaving("crash-once", &log, Duration::from_secs(10))],
        &root,
    );
    let registry = registry_with(&manager).await;
    let ctx = ToolContext::open(&root).unwrap();
    let error = registry.call("odd__work", "{}", &ctx).await.unwrap_err();
    assert_eq!(error.code, ToolErrorCode::Failed);
    assert!(
        error
            .message
            .starts_with("the MCP server \"odd\" stopped during the call"),
        "{}",
        error.message
    );
    assert!(error.message.contains("out of cheese"), "{}", error.message);
    let server = manager.server("odd").unwrap();
    assert!(matches!(
        server.state().await,
        ServerState::Failed { failures: 1, .. }
    ));
    assert!(
        server
            .stderr()
            .lines()
            .iter()
            .any(|line| line.contains("out of cheese"))
    );

    // Right away: still backing off.
    let error = registry.call("odd__work", "{}", &ctx).await.unwrap_err();
    assert!(
        error.message.contains("will be started again in"),
        "{}",
        error.message
    );
    // After the backoff the server is started again and the call works.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let output = registry.call("odd__work", "{}", &ctx).await.unwrap();
    assert_eq!(output.text, "still fine");
    assert!(matches!(server.state().await, ServerState::Running { .. }));
    manager.shutdown().await;
}

#[tokio::test]
async fn garbage_on_stdout_is_skipped_and_every_page_of_tools_is_listed() {
    require_node!();
    let (_dir, root) = workspace();
    let log = root.join("garbage.log");
    let manager = manager(
        vec![misbehaving("garbage", &log, Duration::from_secs(10))],
        &root,
    );
    let registry = registry_with(&manager).await;
    // Both pages of tools/list, the second tool's name sanitised.
    let names: Vec<&str> = registry
        .names()
        .filter(|name| name.starts_with("odd__"))
        .collect();
    assert_eq!(names, vec!["odd__more_work", "odd__work"]);
    let ctx = ToolContext::open(&root).unwrap();
    for _ in 0..3 {
        let output = registry
            .call("odd__work", r#"{"what": "x"}"#, &ctx)
            .await
            .unwrap();
        assert_eq!(output.text, "still fine");
    }
    manager.shutdown().await;
}

#[tokio::test]
async fn servers_that_fail_to_start_say_why() {
    require_node!();
    let (_dir, root) = workspace();
    let dies = ServerConfig::stdio(
        "dies",
        "node",
        &[
            "-e",
            "console.error('boom: the config is missing'); process.exit(2)",
        ],
    );
    // Exits before reading anything: our first write may find the pipe already closed.
    let gone = ServerConfig::stdio("gone", "true", &[]);
    let missing = ServerConfig::stdio("missing", "no-such-program-here", &[]);
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let nobody = ServerConfig::http("nobody", format!("http://127.0.0.1:{closed_port}/mcp"));
    let mut off = ServerConfig::stdio("off", "node", &[]);
    off.disabled = true;
    let manager = manager(vec![dies, gone, missing, nobody, off], &root);

    let mut registry = ToolRegistry::with_builtins();
    let builtins = registry.len();
    let failures = manager.register_into(&mut registry).await;
    assert_eq!(registry.len(), builtins);
    let mut messages: Vec<(String, String)> = failures
        .iter()
        .map(|f| (f.server.clone(), f.error.to_string()))
        .collect();
    messages.sort();
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(
        messages[0].1,
        "the MCP server \"dies\" did not complete the MCP handshake: the server closed its \
         output before answering (it may have exited)"
    );
    assert_eq!(
        messages[1].1,
        "the MCP server \"gone\" did not complete the MCP handshake: the server closed its \
         output before answering (it may have exited)"
    );
    assert_eq!(
        messages[2].1,
        "the MCP server \"missing\" could not be started: \"no-such-program-here\" was not \
         found (searched the PATH)"
    );
    assert!(
        messages[3].1.starts_with(&format!(
            "the MCP server \"nobody\" did not complete the MCP handshake: error sending \
             request for url (http://127.0.0.1:{closed_port}/mcp)"
        )),
        "{}",
        messages[3].1
    );
    assert!(
        messages[3].1.contains("Connection refused"),
        "{}",
        messages[3].1
    );
    let dies = failures.iter().find(|f| f.server == "dies").unwrap();
    assert!(
        dies.error
            .stderr()
            .iter()
            .any(|line| line.contains("boom: the config is missing")),
        "{:?}",
        dies.error.stderr()
    );
    let off = manager.server("off").unwrap();
    assert_eq!(off.state().await, ServerState::Disabled);
    assert!(matches!(off.start().await, Err(McpError::Disabled(_))));
}

#[tokio::test]
async fn status_lists_servers_states_and_tools() {
    require_node!();
    let (_dir, root) = workspace();
    let manager = manager(vec![filesystem(&root)], &root);
    let before = manager.status(false).await;
    assert_eq!(before[0].state, ServerState::Idle);
    assert!(before[0].tools.is_empty());
    let after = manager.status(true).await;
    assert!(matches!(after[0].state, ServerState::Running { .. }));
    let read = after[0]
        .tools
        .iter()
        .find(|tool| tool.remote_name == "read_text_file")
        .unwrap();
    assert_eq!(read.name, "fs__read_text_file");
    assert_eq!(read.approval, Approval::Ask);
    assert_eq!(read.read_only_hint, Some(true));
    let json = serde_json::to_value(&after).unwrap();
    assert_eq!(json[0]["state"], "running");
    assert_eq!(json[0]["info"]["name"], "secure-filesystem-server");
    manager.shutdown().await;
}
