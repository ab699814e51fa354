//! A server's own request sent outside a call's stream, on the session's standing stream (the
//! client's GET), while that GET is still on its way (`tests/mcp/fixtures/late-stream-server.mjs`
//! holds it 400 ms). A server drops what it has no stream for, so a client that calls at once
//! never hears the question and waits out its timeout; Tooltrail waits for its standing stream
//! before it sends anything on a new session.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tooltrail_mcp::{ElicitationPolicy, McpConfig, McpManager, McpOptions, ServerConfig};
use tooltrail_tools::{ToolContext, ToolRegistry};

use crate::support::{self, fixture, workspace};

struct LateStream {
    child: Child,
    url: String,
}

impl LateStream {
    fn start(delay_ms: u64) -> Self {
        let mut child = Command::new("node")
            .arg(fixture("late-stream-server.mjs"))
            .arg(delay_ms.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().strip_prefix("listening ").unwrap().to_string();
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for LateStream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn a_question_the_server_sends_on_a_late_standing_stream_is_answered() {
    require_node!();
    let (_dir, root) = workspace();
    let server = LateStream::start(400);
    let mut config = McpConfig::default();
    let mut late = ServerConfig::http("late", &server.url);
    late.timeout = Duration::from_secs(5);
    config.servers.insert("late".to_string(), late);
    let mut options = McpOptions::for_workspace(&root);
    options.login_shell_path = false;
    options.elicitation = ElicitationPolicy::AcceptDefaults;
    let manager = McpManager::new(config, options);
    let mut registry = ToolRegistry::with_builtins();
    assert!(manager.register_into(&mut registry).await.is_empty());
    let ctx = ToolContext::open(&root).unwrap();

    let started = Instant::now();
    let output = registry
        .call("late__ask_aside", "{}", &ctx)
        .await
        .expect("the call is answered, not timed out");
    assert_eq!(output.text, "answered accept: teal");
    assert!(started.elapsed() < Duration::from_secs(5));
    manager.shutdown().await;
}
