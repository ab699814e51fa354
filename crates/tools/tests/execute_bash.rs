//! `execute_bash`: gating, environment, working folder, output caps, cancel and timeout.

// The fixtures use Unix symlinks (and `execute_bash` needs bash).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use crate::support::fixture;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tooltrail_tools::{Gate, ToolContext, ToolErrorCode, ToolLimits};

use fixture::fixture;

fn gate(fx: &fixture::Fixture, args: Value) -> Gate {
    let (tool, args) = fx
        .registry
        .prepare("execute_bash", &args.to_string())
        .unwrap();
    tool.gate(&args, &fx.ctx)
}

#[tokio::test]
async fn gate_follows_the_policy() {
    let fx = fixture();
    // Read-only, but no OS sandbox confines this test binary's commands: asked first.
    assert_eq!(
        gate(&fx, json!({"command": "find . -name '*.go' | wc -l"})),
        Gate::Ask {
            summary: "find . -name '*.go' | wc -l".into(),
            cwd: Some(".".into()),
            reason: "No OS sandbox confines commands on this machine, so every command is \
                     approved first"
                .into(),
        }
    );
    assert_eq!(
        gate(&fx, json!({"command": "echo hi > out.txt", "cwd": "docs"})),
        Gate::Ask {
            summary: "echo hi > out.txt".into(),
            cwd: Some("docs".into()),
            reason: "It redirects output to a file".into(),
        }
    );
    match gate(&fx, json!({"command": "sudo ls"})) {
        Gate::Refuse(error) => {
            assert_eq!(error.code, ToolErrorCode::Denied);
            assert_eq!(
                error.message,
                "`sudo` and other ways to change user are never run; this command is never run"
            );
        }
        other => panic!("{other:?}"),
    }
    match gate(&fx, json!({"command": "ls", "cwd": "../outside"})) {
        Gate::Refuse(error) => assert_eq!(error.code, ToolErrorCode::OutsideWorkspace),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_card_says_when_a_network_rule_opens_the_network() {
    let fx = fixture();
    let mut settings = fx.ctx.sandbox_settings.clone();
    settings.network_commands = vec![vec!["npm".to_string(), "install".to_string()]];
    let ctx = fx.ctx.clone().with_sandbox_settings(settings);
    let gate = |command: &str| {
        let (tool, args) = fx
            .registry
            .prepare("execute_bash", &json!({ "command": command }).to_string())
            .unwrap();
        tool.gate(&args, &ctx)
    };
    match gate("npm install left-pad") {
        Gate::Ask { reason, .. } => assert!(
            reason.ends_with(
                "; the network is open for it: config.toml's network rule `npm install`"
            ),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
    match gate("npm install left-pad && curl https://example.com") {
        Gate::Ask { reason, .. } => assert!(!reason.contains("network"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn without_a_sandbox_an_unapproved_command_never_runs() {
    let fx = fixture();
    let ctx = fx.ctx.clone().approved(false);
    let error = fx
        .registry
        .call("execute_bash", r#"{"command": "touch made.txt"}"#, &ctx)
        .await
        .unwrap_err();
    assert_eq!(error.code, ToolErrorCode::ApprovalRequired);
    assert!(!fx.root.join("made.txt").exists());
}

#[tokio::test]
async fn runs_in_the_confined_working_folder() {
    let fx = fixture();
    let out = fx
        .ok("execute_bash", json!({"command": "pwd", "cwd": "cmd/tool"}))
        .await;
    let pwd = out.data["stdout"].as_str().unwrap().trim().to_string();
    assert_eq!(pwd, fx.root.join("cmd/tool").display().to_string());
    assert_eq!(out.data["cwd"], "cmd/tool");
    for (cwd, code) in [
        ("..", ToolErrorCode::OutsideWorkspace),
        ("link_out", ToolErrorCode::OutsideWorkspace),
        ("README.md", ToolErrorCode::NotADirectory),
        ("missing", ToolErrorCode::NotFound),
    ] {
        let error = fx
            .err("execute_bash", json!({"command": "ls", "cwd": cwd}))
            .await;
        assert_eq!(error.code, code, "{cwd}");
    }
}

#[tokio::test]
async fn environment_is_cleared() {
    let fx = fixture();
    let out = fx.ok("execute_bash", json!({"command": "env"})).await;
    let keys: BTreeSet<String> = out.data["stdout"]
        .as_str()
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once('=').map(|(key, _)| key.to_string()))
        .collect();
    let allowed: BTreeSet<String> = [
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "GIT_OPTIONAL_LOCKS",
        "GIT_TERMINAL_PROMPT",
        "GIT_PAGER",
        "PAGER",
        "PWD",
        "SHLVL",
        "_",
        "OLDPWD",
        // Where the workspace's caches go, and that nothing is fetched.
        "XDG_CACHE_HOME",
        "npm_config_cache",
        "npm_config_offline",
        "npm_config_update_notifier",
        "PIP_CACHE_DIR",
        "PIP_NO_INPUT",
        "PIP_DISABLE_PIP_VERSION_CHECK",
        "UV_CACHE_DIR",
        "UV_OFFLINE",
        "GOCACHE",
        "GOPROXY",
        "GOTOOLCHAIN",
        "GOTELEMETRY",
        // Where the toolchains found in the home folder are.
        "RUSTUP_HOME",
        "RUSTUP_AUTO_INSTALL",
        "CARGO_HOME",
        "CARGO_NET_OFFLINE",
        "NVM_DIR",
        "FNM_DIR",
        "VOLTA_HOME",
        "PYENV_ROOT",
        "PIPX_HOME",
        "UV_PYTHON_INSTALL_DIR",
        "SDKMAN_DIR",
        "GOROOT",
        "GOPATH",
        "GOMODCACHE",
        "JAVA_HOME",
        "BUN_INSTALL",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    let extra: Vec<&String> = keys.difference(&allowed).collect();
    assert!(extra.is_empty(), "unexpected variables: {extra:?}");
    // Home is a private folder, not the user's: it holds only the call's own cache folder.
    let out = fx
        .ok(
            "execute_bash",
            json!({"command": "echo $HOME; ls -A $HOME"}),
        )
        .await;
    let stdout = out.data["stdout"].as_str().unwrap();
    assert!(stdout.contains("tooltrail-home-"), "{stdout}");
    assert!(stdout.ends_with("\ncache\n"), "{stdout}");
}

#[tokio::test]
async fn stdin_is_empty_and_exit_codes_and_stderr_come_back() {
    let fx = fixture();
    let out = fx.ok("execute_bash", json!({"command": "cat"})).await;
    assert_eq!(out.data["stdout"], "");
    assert!(out.text.starts_with("(no output)\n[exit code 0, "));
    let out = fx
        .ok(
            "execute_bash",
            json!({"command": "echo out; echo err >&2; exit 3"}),
        )
        .await;
    assert_eq!(out.data["exit_code"], 3);
    assert_eq!(out.data["stderr"], "err\n");
    assert!(
        out.text
            .starts_with("stdout:\nout\nstderr:\nerr\n[exit code 3, "),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn output_is_capped_per_stream() {
    let fx = fixture();
    let ctx = ToolContext::new(
        Arc::clone(&fx.ctx.workspace),
        ToolLimits {
            max_output_bytes: 1000,
            ..ToolLimits::default()
        },
        Default::default(),
    )
    .approved(true);
    let out = fx
        .registry
        .call("execute_bash", r#"{"command": "seq 1 100000"}"#, &ctx)
        .await
        .unwrap();
    assert_eq!(out.data["stdout_truncated"], true);
    assert_eq!(out.data["stdout"].as_str().unwrap().len(), 1000);
    assert_eq!(out.data["stdout_bytes"], 588_895);
    assert!(
        out.text
            .contains("[stdout cut: 587895 of 588895 bytes not shown]")
    );
}

#[tokio::test]
async fn cancel_kills_the_command() {
    let fx = fixture();
    let cancel = fx.ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let error = fx.err("execute_bash", json!({"command": "sleep 30"})).await;
    assert_eq!(error.code, ToolErrorCode::Cancelled);
}

#[tokio::test]
async fn timeouts_are_capped_at_the_maximum() {
    let fx = fixture();
    let out = fx
        .ok("execute_bash", json!({"command": "true", "timeout": 500}))
        .await;
    assert!(out.text.ends_with("(the timeout was capped at 120 s)\n"));
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn background_children_do_not_outlive_the_call() {
    let fx = fixture();
    let out = fx
        .ok("execute_bash", json!({"command": "sleep 987 & echo $!"}))
        .await;
    let pid: u32 = out.data["stdout"].as_str().unwrap().trim().parse().unwrap();
    let mut alive = true;
    for _ in 0..50 {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting to be reaped.
        if state.is_empty() || state.contains(") Z ") {
            alive = false;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!alive, "the background sleep survived");
}
