//! A developer's real machine: toolchains installed in the home folder (rustup's cargo, a
//! pyenv Python, Node) run inside the sandbox when a command is approved, `cargo test` builds
//! offline with its caches outside the workspace, `ps` shows the command's own processes, and
//! a folder added in `config.toml` becomes readable. Run through the `tooltrail` binary with
//! this machine's own `HOME` and `PATH`, as a user would.
//!
//! A toolchain this machine lacks is skipped with a note; so is everything where the kernel
//! enforces no sandbox (the security suite checks that fallback).

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use std::path::Path;

use run::{text, tooltrail};
use serde_json::Value;

/// Runs `command` through `tooltrail tool execute_bash`, approved, in `workspace`.
async fn approved(workspace: &Path, config: &Path, command: &str) -> Value {
    let args = serde_json::json!({ "command": command, "timeout": 120 }).to_string();
    let workspace = workspace.to_str().unwrap();
    let output = tooltrail(
        &[
            "tool",
            "execute_bash",
            "--workspace",
            workspace,
            "--args",
            &args,
            "--approve",
            "all",
        ],
        config,
        &[],
    )
    .await;
    serde_json::from_str(&text(&output.stdout))
        .unwrap_or_else(|_| panic!("not JSON: {}{}", text(&output.stdout), text(&output.stderr)))
}

fn stdout(result: &Value) -> &str {
    result["data"]["stdout"].as_str().unwrap_or_default()
}

fn exit_code(result: &Value) -> i64 {
    result["data"]["exit_code"].as_i64().unwrap_or(-1)
}

/// Whether this machine has `program` on the test's `PATH`.
fn installed(program: &str) -> bool {
    std::process::Command::new("bash")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|out| out.status.success())
}

async fn enforced(config: &Path) -> bool {
    let output = tooltrail(&["doctor", "--json"], config, &[]).await;
    let report: Value = serde_json::from_str(&text(&output.stdout)).unwrap();
    report["sandbox"]["enforced"] == true
}

struct Lab {
    _dir: tempfile::TempDir,
    config: std::path::PathBuf,
    workspace: std::path::PathBuf,
}

fn lab() -> Lab {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let config = base.join("config");
    let workspace = base.join("project");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(workspace.join("src")).unwrap();
    Lab {
        _dir: dir,
        config,
        workspace,
    }
}

#[tokio::test]
async fn approved_commands_run_the_users_toolchains_offline() {
    let lab = lab();
    if !enforced(&lab.config).await {
        println!("no OS sandbox here; the toolchains run unconfined and are not tested");
        return;
    }
    let mut ran = Vec::new();
    if installed("cargo") {
        let result = approved(&lab.workspace, &lab.config, "cargo --version").await;
        assert_eq!(exit_code(&result), 0, "{result}");
        assert!(stdout(&result).starts_with("cargo "), "{result}");

        // A crate without dependencies, built and tested offline; its build stays in the
        // workspace, cargo's own files in the workspace's cache folder.
        std::fs::write(
            lab.workspace.join("Cargo.toml"),
            "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
        )
        .unwrap();
        std::fs::write(
            lab.workspace.join("src/lib.rs"),
            "pub fn add(a: u32, b: u32) -> u32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    \
             #[test]\n    fn adds() { assert_eq!(super::add(2, 2), 4); }\n\n    #[test]\n    \
             fn fails_on_purpose() { assert_eq!(super::add(2, 2), 5); }\n}\n",
        )
        .unwrap();
        let result = approved(&lab.workspace, &lab.config, "cargo test 2>&1").await;
        let out = stdout(&result);
        assert!(out.contains("test tests::adds ... ok"), "{result}");
        assert!(
            out.contains("test tests::fails_on_purpose ... FAILED"),
            "{result}"
        );
        assert!(out.contains("1 passed; 1 failed"), "{result}");
        assert_ne!(exit_code(&result), 0);
        assert!(lab.workspace.join("target/debug").is_dir());
        let caches: Vec<_> = std::fs::read_dir(lab.config.join("data/sandbox-cache"))
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(caches.len(), 1);
        assert!(caches[0].path().join("cargo-home").is_dir());
        ran.push("cargo");
    }
    if installed("node") {
        let result = approved(&lab.workspace, &lab.config, "node --version").await;
        assert_eq!(exit_code(&result), 0, "{result}");
        assert!(stdout(&result).starts_with('v'), "{result}");
        let result = approved(
            &lab.workspace,
            &lab.config,
            "node -e 'console.log(require(\"os\").cpus().length > 0)'",
        )
        .await;
        assert_eq!(stdout(&result), "true\n", "{result}");
        ran.push("node");
    }
    if installed("python3") {
        let result = approved(
            &lab.workspace,
            &lab.config,
            "python3 -c 'import sys, json; print(json.dumps({\"major\": sys.version_info[0]}))'",
        )
        .await;
        assert_eq!(exit_code(&result), 0, "{result}");
        assert_eq!(stdout(&result), "{\"major\": 3}\n", "{result}");
        ran.push("python3");
    }
    println!("toolchains run in the sandbox: {}", ran.join(", "));
}

#[tokio::test]
async fn ps_and_proc_self_show_the_commands_own_processes_only() {
    let lab = lab();
    if !enforced(&lab.config).await {
        return;
    }
    let output = tooltrail(&["doctor", "--json"], &lab.config, &[]).await;
    let report: Value = serde_json::from_str(&text(&output.stdout)).unwrap();
    if report["sandbox"]["own_processes"] != true {
        println!("no PID namespace for commands here: /proc stays hidden");
        let result = approved(&lab.workspace, &lab.config, "ls /proc").await;
        assert_ne!(exit_code(&result), 0, "{result}");
        return;
    }
    // A process of this machine's that the command must not see.
    let mut outside = std::process::Command::new("sleep")
        .arg("98762")
        .spawn()
        .unwrap();
    let result = approved(
        &lab.workspace,
        &lab.config,
        "ps -e -o pid=,comm=; grep ^Pid: /proc/self/status; ls /proc | grep -c '^[0-9]'; \
         cat /proc/*/cmdline | tr '\\0' ' '",
    )
    .await;
    let _ = outside.kill();
    let _ = outside.wait();
    let out = stdout(&result);
    assert_eq!(exit_code(&result), 0, "{result}");
    assert!(!out.contains("Error, do this"), "{result}");
    let processes: Vec<&str> = out
        .lines()
        .take_while(|line| !line.starts_with("Pid:"))
        .collect();
    assert!(
        processes.iter().any(|line| line.trim() == "1 bash"),
        "{result}"
    );
    assert!(
        processes.iter().any(|line| line.trim().ends_with(" ps")),
        "{result}"
    );
    assert!(processes.len() <= 6, "{result}");
    assert!(out.contains("Pid:\t"), "{result}");
    assert!(
        !out.contains("98762"),
        "a process outside was visible: {result}"
    );
    assert!(
        !out.contains("tooltrail"),
        "the helper was visible: {result}"
    );
}

#[tokio::test]
async fn a_folder_added_in_config_toml_becomes_readable_and_doctor_says_why() {
    let lab = lab();
    if !enforced(&lab.config).await {
        return;
    }
    let shared = tempfile::tempdir().unwrap();
    let shared = shared.path().canonicalize().unwrap();
    std::fs::write(shared.join("notes.txt"), "shared notes\n").unwrap();
    std::fs::write(shared.join(".netrc"), "machine x password NEVER-SHOWN\n").unwrap();
    let read = format!("cat {0}/notes.txt {0}/.netrc", shared.display());

    let result = approved(&lab.workspace, &lab.config, &read).await;
    assert_eq!(stdout(&result), "", "{result}");

    std::fs::write(
        lab.config.join("config.toml"),
        format!(
            "[sandbox]\nread_only_folders = [\"{}\"]\n",
            shared.display()
        ),
    )
    .unwrap();
    let result = approved(&lab.workspace, &lab.config, &read).await;
    assert_eq!(stdout(&result), "shared notes\n", "{result}");
    assert!(!result.to_string().contains("NEVER-SHOWN"));
    let write = format!("echo more >> {}/notes.txt", shared.display());
    let result = approved(&lab.workspace, &lab.config, &write).await;
    assert_ne!(exit_code(&result), 0, "{result}");
    assert_eq!(
        std::fs::read_to_string(shared.join("notes.txt")).unwrap(),
        "shared notes\n"
    );

    let output = tooltrail(&["doctor"], &lab.config, &[]).await;
    let report = text(&output.stdout);
    let line = report
        .lines()
        .find(|line| line.contains(&shared.display().to_string()) && line.contains("read"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(line.contains("extra folder from config.toml"), "{report}");
    assert!(
        report.contains(&format!(
            "{}  (netrc logins)",
            shared.join(".netrc").display()
        )),
        "{report}"
    );
}
