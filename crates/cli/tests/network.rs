//! Network rules (`[sandbox] network_commands` in `config.toml`): an approved command that the
//! rules cover entirely reaches a TCP listener on 127.0.0.1; without a rule, unapproved, or
//! joined to a command no rule covers, its socket is refused (EPERM). The approval card says
//! the network is open. Run through the `tooltrail` binary, as a user would, and through the
//! tool with the binary as the sandbox helper.
//!
//! Where the kernel enforces no sandbox, commands run unconfined and this is skipped with a
//! note (the security suite checks that fallback).

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use run::{text, tooltrail};
use serde_json::Value;
use tooltrail_sandbox::{HostEnv, Sandbox, SandboxSettings};
use tooltrail_tools::{ToolContext, ToolRegistry};

/// A loopback listener that counts the connections it accepted.
struct Listener {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Listener {
    fn start() -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stream.is_ok() {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        Self { port, accepted }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// A Python command that connects to the listener and says so.
    fn connect_command(&self) -> String {
        format!(
            "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {}), timeout=5); \
             print(\"connected\")'",
            self.port
        )
    }
}

struct Lab {
    _dir: tempfile::TempDir,
    config: PathBuf,
    workspace: PathBuf,
}

fn lab(config_toml: &str) -> Lab {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let config = base.join("config");
    let workspace = base.join("project");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(config.join("config.toml"), config_toml).unwrap();
    Lab {
        _dir: dir,
        config,
        workspace,
    }
}

const PYTHON_RULE: &str = "[sandbox]\nnetwork_commands = [\"npm install\", \"python3 -c\"]\n";

/// Runs `command` through `tooltrail tool execute_bash`, with `--approve all` or not.
async fn execute_bash(lab: &Lab, command: &str, approve: bool) -> (Value, String) {
    let args = serde_json::json!({ "command": command, "timeout": 30 }).to_string();
    let workspace = lab.workspace.to_str().unwrap();
    let mut argv = vec![
        "tool",
        "execute_bash",
        "--workspace",
        workspace,
        "--args",
        &args,
    ];
    if approve {
        argv.extend(["--approve", "all"]);
    }
    let output = tooltrail(&argv, &lab.config, &[]).await;
    let stdout = text(&output.stdout);
    let value = serde_json::from_str(&stdout).unwrap_or_else(|_| {
        panic!("not JSON: {stdout}{}", text(&output.stderr));
    });
    (value, text(&output.stderr))
}

fn helper() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tooltrail"))
}

fn enforced() -> bool {
    let enforced = Sandbox::with_helper(&helper()).is_enforced();
    if !enforced {
        println!(
            "no OS sandbox here; commands run unconfined and the network rules are not tested"
        );
    }
    enforced
}

fn refused(output: &str) -> bool {
    output.contains("Operation not permitted")
}

#[tokio::test]
async fn an_approved_command_a_rule_covers_reaches_the_network_through_the_binary() {
    if !enforced() {
        return;
    }
    let listener = Listener::start();
    let lab = lab(PYTHON_RULE);
    let command = listener.connect_command();

    // Not approved: the reason on the card says the network would be open, and why.
    let (denied, _) = execute_bash(&lab, &command, false).await;
    let message = denied["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("; the network is open for it: config.toml's network rule `python3 -c`"),
        "{denied}"
    );
    assert_eq!(listener.accepted(), 0);

    // Approved: the connection is made.
    let (approved, stderr) = execute_bash(&lab, &command, true).await;
    assert_eq!(
        approved["data"]["stdout"].as_str(),
        Some("connected\n"),
        "{approved} {stderr}"
    );
    assert_eq!(listener.accepted(), 1);

    // Joined to a command no rule covers: no network for any of it.
    let (joined, _) = execute_bash(&lab, &format!("true && {command}"), true).await;
    assert!(
        refused(joined["data"]["stderr"].as_str().unwrap_or_default()),
        "{joined}"
    );
    assert_eq!(listener.accepted(), 1);

    // Without the rule, approved or not, the socket is refused.
    let plain = self::lab("");
    let (denied, _) = execute_bash(&plain, &command, false).await;
    let message = denied["error"]["message"].as_str().unwrap_or_default();
    assert!(!message.contains("network"), "{denied}");
    let (approved, _) = execute_bash(&plain, &command, true).await;
    assert!(
        refused(approved["data"]["stderr"].as_str().unwrap_or_default()),
        "{approved}"
    );
    assert_ne!(approved["data"]["exit_code"].as_i64(), Some(0));
    assert_eq!(listener.accepted(), 1);

    // The doctor lists the rules.
    let output = tooltrail(&["doctor"], &lab.config, &[]).await;
    assert!(
        text(&output.stdout).contains(
            "open for an approved command made only of commands \
                                       starting with `npm install`, `python3 -c`"
        ),
        "{}",
        text(&output.stdout)
    );
}

fn settings(network_commands: &[&str], home: &Path) -> SandboxSettings {
    SandboxSettings {
        read_only_folders: Vec::new(),
        network_commands: network_commands
            .iter()
            .map(|command| command.split(' ').map(str::to_string).collect())
            .collect(),
        cache_root: None,
        host: HostEnv {
            home: Some(home.to_path_buf()),
            path: std::env::var_os("PATH"),
            vars: Default::default(),
        },
    }
}

#[tokio::test]
async fn only_an_approved_call_gets_the_network_through_the_tool() {
    if !enforced() {
        return;
    }
    let listener = Listener::start();
    let lab = lab("");
    let home = lab.config.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let registry = ToolRegistry::with_builtins();
    let args =
        serde_json::json!({ "command": listener.connect_command(), "timeout": 30 }).to_string();
    let ctx = |rules: &[&str], approved: bool| {
        ToolContext::open(&lab.workspace)
            .unwrap()
            .with_sandbox(Sandbox::with_helper(&helper()))
            .with_sandbox_settings(settings(rules, &home))
            .approved(approved)
    };
    for (rules, approved, connects) in [
        (&["python3 -c"][..], true, true),
        (&["python3 -c"][..], false, false),
        (&["npm install"][..], true, false),
        (&[][..], true, false),
    ] {
        let before = listener.accepted();
        let output = registry
            .call("execute_bash", &args, &ctx(rules, approved))
            .await
            .unwrap();
        let stdout = output.data["stdout"].as_str().unwrap_or_default();
        let stderr = output.data["stderr"].as_str().unwrap_or_default();
        if connects {
            assert_eq!(stdout, "connected\n", "{rules:?} {approved}: {stderr}");
            assert_eq!(listener.accepted(), before + 1);
        } else {
            assert!(refused(stderr), "{rules:?} {approved}: {stdout} {stderr}");
            assert_eq!(listener.accepted(), before);
        }
    }
}
