//! The tool items of the acceptance list (docs/requirements.md), on a fixture tree with Go files, a
//! README, a 2 MB file and a sleeping command.

// The fixtures use Unix symlinks (and `execute_bash` needs bash).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::disallowed_methods)]

use crate::support::fixture;

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;
use tooltrail_tools::{Gate, ToolErrorCode};

use fixture::{MAIN_GO, TOOL_GO, fixture};

#[tokio::test]
async fn search_files_returns_every_go_file() {
    let fx = fixture();
    let out = fx.ok("search_files", json!({"pattern": "**/*.go"})).await;
    assert_eq!(
        out.data["files"],
        json!([
            "cmd/tool/main.go",
            "internal/util/util.go",
            "internal/util/util_test.go",
            "link_in.go",
            "main.go"
        ])
    );
}

#[tokio::test]
async fn read_file_returns_the_readme() {
    let fx = fixture();
    let out = fx.ok("read_file", json!({"path": "README.md"})).await;
    assert!(out.text.contains("# Demo"));
    assert!(out.text.contains("A demo project."));
}

#[tokio::test]
async fn search_text_finds_func_main_in_go_files() {
    let fx = fixture();
    let out = fx
        .ok(
            "search_text",
            json!({"pattern": "func main", "glob": "*.go"}),
        )
        .await;
    assert_eq!(
        out.text,
        "2 matching lines in 2 files for `func main` in files matching `*.go`:\n\
         cmd/tool/main.go:4: func main() {\n\
         main.go:5: func main() {\n"
    );
    assert_eq!(out.data["files"], json!(["cmd/tool/main.go", "main.go"]));
    assert_eq!(out.data["total"], 2);
    assert_eq!(out.data["truncated"], false);
    // Sanity: the fixture's Go files with `func main` are exactly these two.
    assert!(MAIN_GO.contains("func main") && TOOL_GO.contains("func main"));
}

#[tokio::test]
async fn execute_bash_echo_returns_hello() {
    let fx = fixture();
    let (tool, args) = fx
        .registry
        .prepare("execute_bash", r#"{"command": "echo hello"}"#)
        .unwrap();
    // Without an OS sandbox (a test binary cannot be its helper) even this is asked first.
    assert!(matches!(tool.gate(&args, &fx.ctx), Gate::Ask { .. }));
    let out = fx
        .ok("execute_bash", json!({"command": "echo hello"}))
        .await;
    assert_eq!(out.data["stdout"], "hello\n");
    assert_eq!(out.data["exit_code"], 0);
    assert!(out.text.starts_with("hello\n[exit code 0, "));
}

#[tokio::test]
async fn count_lines_totals_the_go_files_like_wc() {
    let fx = fixture();
    let out = fx
        .ok("count_lines", json!({"path": ".", "pattern": "*.go"}))
        .await;
    let files = [
        "main.go",
        "cmd/tool/main.go",
        "internal/util/util.go",
        "internal/util/util_test.go",
    ];
    let wc = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("cat {} | wc -l", files.join(" ")))
        .current_dir(&fx.root)
        .output()
        .unwrap();
    let expected: u64 = String::from_utf8_lossy(&wc.stdout).trim().parse().unwrap();
    assert_eq!(out.data["total"], expected);
    assert_eq!(out.data["file_count"], 4);
    assert!(
        out.text
            .starts_with(&format!("{expected} lines in 4 files under `.`"))
    );
}

#[tokio::test]
async fn read_file_refuses_etc_passwd() {
    let fx = fixture();
    let error = fx.err("read_file", json!({"path": "/etc/passwd"})).await;
    assert_eq!(error.code, ToolErrorCode::OutsideWorkspace);
    assert!(!error.message.contains("/etc"));
}

#[tokio::test]
async fn execute_bash_refuses_rm_rf_root_even_when_approved() {
    let fx = fixture();
    let (tool, args) = fx
        .registry
        .prepare("execute_bash", r#"{"command": "rm -rf /"}"#)
        .unwrap();
    match tool.gate(&args, &fx.ctx) {
        Gate::Refuse(error) => assert_eq!(error.code, ToolErrorCode::Denied),
        other => panic!("rm -rf / was not refused: {other:?}"),
    }
    // Calling it directly (as if approved) is refused too.
    let error = fx.err("execute_bash", json!({"command": "rm -rf /"})).await;
    assert_eq!(error.code, ToolErrorCode::Denied);
}

#[tokio::test]
async fn a_file_over_one_megabyte_is_truncated() {
    let fx = fixture();
    let size = std::fs::metadata(fx.root.join("data/big.txt"))
        .unwrap()
        .len();
    assert!(size > 2 * 1024 * 1024 - 100);
    let out = fx
        .ok(
            "read_file",
            json!({"path": "data/big.txt", "offset": 1, "limit": 3}),
        )
        .await;
    assert_eq!(out.data["truncated_at_limit"], true);
    assert!(out.text.contains("only its first 1 MB were read"));
}

#[tokio::test]
async fn a_command_past_its_timeout_is_stopped_and_reported() {
    let fx = fixture();
    let started = Instant::now();
    let error = fx
        .err(
            "execute_bash",
            json!({"command": "echo started; sleep 30", "timeout": 1}),
        )
        .await;
    assert_eq!(error.code, ToolErrorCode::Timeout);
    assert!(
        error
            .message
            .starts_with("the command ran longer than 1 s and was stopped"),
        "{}",
        error.message
    );
    assert!(error.message.contains("started"), "{}", error.message);
    // The model is not told of `timeout` up front: the error names it.
    assert!(
        error.message.contains("pass `timeout` in seconds"),
        "{}",
        error.message
    );
    // Stopped, not waited for.
    assert!(started.elapsed() < Duration::from_secs(20));
}
