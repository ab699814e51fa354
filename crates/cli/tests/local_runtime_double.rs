//! The local runtime's supervisor against a stand-in for llama-server
//! (`llama-server-stand-in`, crates/test-support), on every run: `tooltrail ask` with the
//! `local` provider starts it under a supervisor, the next question reuses it, it stops when
//! unused, a crashed server is replaced by the next question, it dies with its supervisor, and
//! a program that takes the chosen port first is refused without being sent the key or a
//! prompt. The same behaviours against the real llama-server are in `local_runtime.rs`.
//!
//! The stand-in is a binary of another package: `cargo test --workspace` builds it beside
//! `tooltrail`; alone, `cargo build -p tooltrail-test-support --bin llama-server-stand-in`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(target_os = "linux")]

use crate::support::run;
use crate::support::runtime;

use std::path::{Path, PathBuf};
use std::time::Duration;

use run::text;
use runtime::{alive, kill, pid, processes, wait_until};
use serde_json::Value;
use tooltrail_test_support::gguf::GgufBuilder;
use tooltrail_test_support::stand_in::{
    CANNED_ANSWER, CHUNK_MS_ENV, SQUATTER_ENV, SQUATTER_LOG_ENV,
};
use tooltrail_test_support::{demo_workspace, dependency_missing};

/// The stand-in, beside the `tooltrail` binary; `None` (said, and failing under CI) when it
/// was not built.
fn stand_in() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_BIN_EXE_tooltrail")).with_file_name("llama-server-stand-in");
    if path.is_file() {
        return Some(path);
    }
    dependency_missing(&format!(
        "the llama-server stand-in is not built at {}; `cargo test --workspace` builds it, or `cargo build -p tooltrail-test-support --bin llama-server-stand-in`",
        path.display()
    ));
    None
}

/// Config and data folders of the test's own with a small model imported as `tiny` and the
/// `local` provider chosen; kills whatever is left of its runtime when dropped.
struct Setup {
    config: tempfile::TempDir,
    workspace: tempfile::TempDir,
    stand_in: PathBuf,
}

impl Setup {
    fn new(stand_in: PathBuf) -> Self {
        let config = tempfile::tempdir().unwrap();
        let model = config.path().join("tiny.gguf");
        std::fs::write(
            &model,
            GgufBuilder::new()
                .string("general.architecture", "llama")
                .string("general.name", "Tiny")
                .u32("llama.context_length", 4096)
                .tensor("token_embd.weight", &[64, 64], 12)
                .data_bytes(10_000)
                .build(),
        )
        .unwrap();
        tooltrail_runtime::models::ModelStore::open(config.path().join("data/models"))
            .unwrap()
            .import(&model, Some("tiny"), false, &mut |_, _| {})
            .unwrap();
        runtime::choose_local_model(config.path(), "tiny");
        Self {
            config,
            workspace: demo_workspace().unwrap(),
            stand_in,
        }
    }

    fn runtime_dir(&self) -> PathBuf {
        runtime::runtime_dir(self.config.path())
    }

    fn state(&self) -> Option<Value> {
        runtime::state(self.config.path())
    }

    fn envs<'a>(&'a self, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut envs = vec![("TOOLTRAIL_LLAMA_SERVER", self.stand_in.to_str().unwrap())];
        envs.extend_from_slice(extra);
        envs
    }

    async fn tooltrail(&self, args: &[&str], extra: &[(&str, &str)]) -> std::process::Output {
        run::tooltrail(args, self.config.path(), &self.envs(extra)).await
    }

    async fn ask(&self, extra: &[(&str, &str)]) -> std::process::Output {
        let workspace = self.workspace.path().to_str().unwrap().to_string();
        self.tooltrail(
            &["ask", "--approve", "deny", "-w", &workspace, "Say hello."],
            extra,
        )
        .await
    }

    /// An answered question: exit 0 and the stand-in's answer on stdout.
    async fn answered(&self, extra: &[(&str, &str)]) {
        let out = self.ask(extra).await;
        let stdout = text(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(CANNED_ANSWER),
            "{stdout}\n{}",
            text(&out.stderr)
        );
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        runtime::kill_runtime(self.config.path());
    }
}

/// The program a process runs.
fn program(pid: u32) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/exe")).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_starts_the_runtime_the_next_reuses_it_and_models_stop_ends_it() {
    let Some(stand_in) = stand_in() else { return };
    let setup = Setup::new(stand_in.clone());

    setup.answered(&[]).await;
    let first = setup.state().expect("a state file while the runtime runs");
    assert_eq!(first["model"], "tiny");
    assert_eq!(first["context_size"], 2048);
    assert_eq!(first["binary_source"], "TOOLTRAIL_LLAMA_SERVER");
    let (supervisor, server) = (pid(&first, "supervisor_pid"), pid(&first, "server_pid"));
    assert!(alive(supervisor) && alive(server));
    assert_eq!(program(server), stand_in.canonicalize().unwrap());
    assert_eq!(
        program(supervisor),
        Path::new(env!("CARGO_BIN_EXE_tooltrail"))
            .canonicalize()
            .unwrap()
    );
    // The start times the stop checks are recorded.
    assert!(first["supervisor_start"].as_u64().is_some(), "{first}");
    {
        use std::os::unix::fs::PermissionsExt;
        for file in ["state.json", "api-key"] {
            let mode = std::fs::metadata(setup.runtime_dir().join(file))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{file}");
        }
    }
    // The key is required: the server refuses a request without it.
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let props = format!("http://127.0.0.1:{}/props", first["port"]);
    assert_eq!(client.get(&props).send().await.unwrap().status(), 401);

    // The next question reuses it: same processes, same port.
    setup.answered(&[]).await;
    let second = setup.state().unwrap();
    for field in ["supervisor_pid", "server_pid", "port", "api_key"] {
        assert_eq!(second[field], first[field], "{field}");
    }

    let ps = setup.tooltrail(&["models", "ps", "--json"], &[]).await;
    runtime::assert_listed_without_key(&ps, &first);

    let stop = setup.tooltrail(&["models", "stop"], &[]).await;
    runtime::assert_stopped(&stop, "tiny", &first);
    wait_until(
        "the runtime's end after models stop",
        Duration::from_secs(10),
        || !alive(supervisor) && !alive(server),
    )
    .await;
    assert!(setup.state().is_none());
    // The stop request SIGTERM outran is not left behind.
    let left: Vec<String> = std::fs::read_dir(setup.runtime_dir())
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("stop-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let ps = setup.tooltrail(&["models", "ps"], &[]).await;
    assert_eq!(text(&ps.stdout), "No local model is running.\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashed_server_is_replaced_by_the_next_question() {
    let Some(stand_in) = stand_in() else { return };
    let setup = Setup::new(stand_in);
    setup.answered(&[]).await;
    let first = setup.state().unwrap();
    kill(pid(&first, "server_pid"));
    // Its supervisor clears the state and ends...
    wait_until("the supervisor's end", Duration::from_secs(10), || {
        !alive(pid(&first, "supervisor_pid")) && setup.state().is_none()
    })
    .await;
    let log = std::fs::read_to_string(setup.runtime_dir().join("supervisor.log")).unwrap();
    assert!(
        log.contains("llama-server stopped by itself (killed by signal 9)"),
        "{log}"
    );
    // ... and the next question starts a new one.
    setup.answered(&[]).await;
    let second = setup.state().unwrap();
    assert_ne!(second["supervisor_pid"], first["supervisor_pid"]);
    assert_ne!(second["server_pid"], first["server_pid"]);
    assert!(alive(pid(&second, "server_pid")));
}

/// The prefix files of the runtime folder.
fn prefixes(setup: &Setup) -> Vec<PathBuf> {
    let dir = setup.runtime_dir().join("prefixes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|read| read.flatten().map(|entry| entry.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// The runtime's log lines about its prefix.
fn prefix_lines(setup: &Setup) -> Vec<String> {
    std::fs::read_to_string(setup.runtime_dir().join("supervisor.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            line.split_once("] prefix: ")
                .map(|(_, rest)| rest.to_string())
        })
        .collect()
}

/// What each warm-up did, in order: `read` or `restored`.
fn kinds(setup: &Setup) -> Vec<String> {
    prefix_lines(setup)
        .iter()
        .map(|line| line.split(' ').next().unwrap_or_default().to_string())
        .collect()
}

async fn stop_runtime(setup: &Setup) {
    let state = setup.state().unwrap();
    let stop = setup.tooltrail(&["models", "stop"], &[]).await;
    assert!(stop.status.success(), "{}", text(&stop.stderr));
    wait_until("the runtime's end", Duration::from_secs(10), || {
        !alive(pid(&state, "server_pid"))
    })
    .await;
}

/// What every question begins with (the system prompt and the tools), and what a folder's
/// questions begin with (that, then the folder's context), are read once and saved; a new
/// conversation restores its folder's; a runtime that starts again restores both instead of
/// reading them; a damaged file is read again, never an error; and the model's files go with
/// the model.
#[tokio::test(flavor = "multi_thread")]
async fn the_prefixes_are_saved_once_restored_after_a_restart_and_a_damaged_one_read_again() {
    let Some(stand_in) = stand_in() else { return };
    let setup = Setup::new(stand_in);
    setup.answered(&[]).await;
    // Every question's prefix is read at the start; the folder's, after it is put back.
    assert_eq!(kinds(&setup), ["read", "restored", "read"]);
    let saved = prefixes(&setup);
    assert_eq!(saved.len(), 2, "{saved:?}");
    for file in &saved {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.ends_with(".bin") && name.contains("-2048-"), "{name}");
    }

    // A new conversation in the running runtime restores its folder's prefix.
    setup.answered(&[]).await;
    assert_eq!(kinds(&setup)[3..], ["restored"]);

    // Started again, it restores both.
    stop_runtime(&setup).await;
    setup.answered(&[]).await;
    assert_eq!(kinds(&setup)[4..], ["restored", "restored"]);
    assert_eq!(prefixes(&setup), saved);

    // Files the server cannot read are dropped, and the prefixes read and saved again.
    for file in &saved {
        std::fs::write(file, "not a slot").unwrap();
    }
    stop_runtime(&setup).await;
    setup.answered(&[]).await;
    assert_eq!(kinds(&setup)[6..], ["read", "restored", "read"]);
    for file in &saved {
        assert_ne!(std::fs::read(file).unwrap(), b"not a slot");
    }

    // Removing the model removes its prefixes.
    stop_runtime(&setup).await;
    let removed = setup.tooltrail(&["models", "rm", "tiny"], &[]).await;
    assert!(removed.status.success(), "{}", text(&removed.stderr));
    assert_eq!(prefixes(&setup), Vec::<PathBuf>::new());
}

/// Another folder's first question in a running runtime: its prefix is warmed first, so the
/// question reads only itself.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_folders_question_reads_only_what_follows_the_shared_prefix() {
    let Some(stand_in) = stand_in() else { return };
    let setup = Setup::new(stand_in);
    let other = demo_workspace().unwrap();
    std::fs::write(other.path().join("AGENTS.md"), "Answer in one line.").unwrap();
    setup.answered(&[]).await;
    let workspace = other.path().to_str().unwrap().to_string();
    let question = "What is here?";
    let out = setup
        .tooltrail(
            &[
                "ask",
                "--json",
                "--approve",
                "deny",
                "-w",
                &workspace,
                question,
            ],
            &[],
        )
        .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let progress: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["type"] == "prompt_progress")
        .collect();
    assert!(!progress.is_empty(), "{}", text(&out.stdout));
    let (total, cached) = (
        progress[0]["total"].as_u64().unwrap(),
        progress[0]["cached"].as_u64().unwrap(),
    );
    // Everything up to the question came from the cache (the stand-in counts characters):
    // the question and the end of its turn are all that is read.
    assert!(total - cached < question.len() as u64 + 40, "{progress:?}");
    // The warm-up read that folder's prefix and saved it beside the first folder's.
    let lines = prefix_lines(&setup);
    assert!(lines.last().unwrap().starts_with("read "), "{lines:?}");
    assert_eq!(prefixes(&setup).len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_dies_with_its_supervisor_however_it_dies() {
    let Some(stand_in) = stand_in() else { return };
    let setup = Setup::new(stand_in);
    setup.answered(&[]).await;
    let state = setup.state().unwrap();
    kill(pid(&state, "supervisor_pid"));
    wait_until(
        "the server's end with its supervisor",
        Duration::from_secs(10),
        || !alive(pid(&state, "server_pid")),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unused_runtime_stops_after_its_idle_time_and_not_while_a_question_runs() {
    let Some(stand_in) = stand_in() else { return };
    let setup = Setup::new(stand_in);
    // Each streamed piece waits 300 ms: the question holds the runtime for about three
    // seconds, longer than the idle time. Its whole answer arriving is what shows the runtime
    // did not stop under it.
    setup
        .answered(&[(tooltrail_host::IDLE_SECS_ENV, "1"), (CHUNK_MS_ENV, "300")])
        .await;
    let needle = setup.config.path().display().to_string();
    wait_until("the idle stop", Duration::from_secs(20), || {
        setup.state().is_none()
            && !processes()
                .iter()
                .any(|(_, cmdline)| cmdline.contains(&needle))
    })
    .await;
    let log = std::fs::read_to_string(setup.runtime_dir().join("supervisor.log")).unwrap();
    assert!(log.contains("stopping after 1 s unused"), "{log}");
}

/// What the squatter of a test received, and its process id (killed when dropped).
struct Squatter {
    log: PathBuf,
}

impl Squatter {
    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Squatter {
    fn drop(&mut self) {
        if let Some(pid) = self.lines().first().and_then(|line| line.parse().ok()) {
            kill(pid);
        }
    }
}

/// Another program takes the port chosen for llama-server first (the stand-in starts it, then
/// fails to bind, as llama-server would) and answers every request: the question fails with a
/// sentence, and neither the key nor a prompt is ever sent there.
async fn squatted(mode: &str) -> (String, Vec<String>) {
    let Some(stand_in) = stand_in() else {
        return (String::new(), Vec::new());
    };
    let setup = Setup::new(stand_in);
    let squatter = Squatter {
        log: setup.config.path().join("squatter.log"),
    };
    let log = squatter.log.to_str().unwrap().to_string();
    let out = setup
        .ask(&[(SQUATTER_ENV, mode), (SQUATTER_LOG_ENV, &log)])
        .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(setup.state().is_none());
    let lines = squatter.lines();
    assert!(lines.len() > 1, "the squatter was asked nothing: {lines:?}");
    assert!(
        lines.iter().skip(1).all(|line| line.ends_with(" key=no")),
        "the key reached the squatter: {lines:?}"
    );
    assert!(
        !lines.iter().any(|line| line.starts_with("POST")),
        "a prompt reached the squatter: {lines:?}"
    );
    (stderr, lines)
}

#[tokio::test(flavor = "multi_thread")]
async fn attack_runtime_a_program_on_the_chosen_port_that_answers_without_the_key_gets_nothing() {
    let (stderr, _) = squatted("keyless").await;
    if stderr.is_empty() {
        return;
    }
    assert!(
        stderr.starts_with(
            "error: the local model \"tiny\" could not be served: another program answered on 127.0.0.1:"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "it answered a request without the API key (HTTP 200), which the llama-server Tooltrail starts refuses. Nothing was sent to it"
        ),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn attack_runtime_a_program_on_the_chosen_port_that_refuses_keyless_requests_never_sees_the_key()
 {
    let (stderr, _) = squatted("keyed").await;
    if stderr.is_empty() {
        return;
    }
    assert!(
        stderr.contains(
            "the socket listening there belongs to another process than the llama-server Tooltrail started. Nothing was sent to it"
        ),
        "{stderr}"
    );
}
