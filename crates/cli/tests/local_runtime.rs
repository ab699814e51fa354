//! The `local` provider end to end: `tooltrail ask` with empty config and data folders and a
//! model in the models folder starts llama-server under a supervisor of its own, the next
//! question reuses it, and the runtime never outlives its supervisor. A real llama-server and
//! the Gemma 3 270M GGUF are needed (`scripts/real-llm build` caches both in
//! `~/.cache/tooltrail`); without them the test says which is missing, and fails under
//! `CI=true` (elsewhere it is skipped). The same behaviours against a stand-in for
//! llama-server run everywhere: `local_runtime_double.rs`.
//!
//! The model answers badly, so the test asserts what Tooltrail controls: the turn ends with
//! its calls recorded, in prompt mode from the first request (the GGUF has no chat template),
//! and the processes and the state file are as the runtime promises. Questions after the first
//! are stopped as soon as their request reaches llama-server, which is all they are for.
//!
//! ```text
//! cargo test -p tooltrail-cli --test cli -- local_runtime:: --nocapture
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;
use crate::support::runtime;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use run::{text, tooltrail};
use runtime::{alive, kill, pid, processes, wait_until};
use serde_json::Value;
use tooltrail_protocol::{Event, EventBody, ToolMode, TurnEnd};
use tooltrail_runtime::supervisor::SearchPlaces;
use tooltrail_test_support::demo_workspace;

const QUESTION: &str = "How many Go files are in this project? Use the tools.";

/// The GGUF `scripts/real-llm build` assembles.
fn cached_model() -> PathBuf {
    let cache = std::env::var_os("TOOLTRAIL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/tooltrail")
        });
    cache.join("gemma-3-270m-q4_k_m.gguf")
}

/// The model, when it and a llama-server are there; otherwise why the test does not run.
fn prerequisites() -> Result<PathBuf, String> {
    if cfg!(not(target_os = "linux")) {
        return Err("its kill-and-restart checks read /proc, which only Linux has".into());
    }
    let model = cached_model();
    if !model.is_file() {
        return Err(format!(
            "the Gemma 3 270M model {} is missing (scripts/real-llm build puts it there)",
            model.display()
        ));
    }
    SearchPlaces::from_env()
        .find()
        .map_err(|error| format!("{error} (scripts/real-llm build builds it)"))?;
    Ok(model)
}

/// Empty config and data folders with the model imported and the `local` provider chosen; kills
/// whatever runtime is left of them when dropped.
struct Setup {
    config: tempfile::TempDir,
    workspace: tempfile::TempDir,
}

impl Setup {
    fn new(model: &Path) -> Self {
        let config = tempfile::tempdir().unwrap();
        let store =
            tooltrail_runtime::models::ModelStore::open(config.path().join("data/models")).unwrap();
        store
            .import(model, Some("gemma"), true, &mut |_, _| {})
            .unwrap();
        // The tools the question needs, and a window small enough that a 270M model on two
        // busy cores answers in seconds: the answer gets a quarter of it.
        runtime::choose_local_model(config.path(), "gemma");
        Self {
            config,
            workspace: demo_workspace().unwrap(),
        }
    }

    fn runtime_dir(&self) -> PathBuf {
        runtime::runtime_dir(self.config.path())
    }

    fn state(&self) -> Option<Value> {
        runtime::state(self.config.path())
    }

    fn ask_args(&self) -> Vec<String> {
        [
            "ask",
            "--json",
            "--approve",
            "deny",
            "--max-rounds",
            "1",
            "-w",
            self.workspace.path().to_str().unwrap(),
            QUESTION,
        ]
        .map(String::from)
        .to_vec()
    }

    async fn tooltrail(&self, args: &[&str], envs: &[(&str, &str)]) -> std::process::Output {
        tooltrail(args, self.config.path(), envs).await
    }

    /// `tooltrail ask` left running, as the support module runs it.
    fn spawn_ask(&self, envs: &[(&str, &str)]) -> tokio::process::Child {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tooltrail"));
        command
            .args(self.ask_args())
            .env_remove("TOOLTRAIL_BASE_URL")
            .env_remove("TOOLTRAIL_MODEL")
            .env_remove("TOOLTRAIL_API_KEY")
            .env_remove("TOOLTRAIL_TOOL_MODE")
            .env("TOOLTRAIL_CONFIG_DIR", self.config.path())
            .env("TOOLTRAIL_DATA_DIR", self.config.path().join("data"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        for (key, value) in envs {
            command.env(key, value);
        }
        command.spawn().unwrap()
    }

    /// The llama-servers of this setup's runtime folder (its key file is on their command line).
    fn llama_servers(&self) -> Vec<u32> {
        let needle = self.runtime_dir().display().to_string();
        processes()
            .into_iter()
            .filter(|(_, cmdline)| cmdline.contains("llama-server") && cmdline.contains(&needle))
            .filter(|(_, cmdline)| !cmdline.contains("__runtime"))
            .map(|(pid, _)| pid)
            .collect()
    }

    /// A request of the test's own that keeps llama-server's one slot busy for far longer
    /// than the test needs it.
    fn hold_the_slot(&self, state: &Value) -> tokio::task::JoinHandle<()> {
        let url = format!("http://127.0.0.1:{}/completion", state["port"]);
        let key = state["api_key"].as_str().unwrap().to_string();
        tokio::spawn(async move {
            let client = reqwest::Client::builder().no_proxy().build().unwrap();
            let _ = client
                .post(url)
                .bearer_auth(key)
                .json(&serde_json::json!({
                    "prompt": "Count from one to a thousand in words:",
                    "n_predict": 1800,
                    "ignore_eos": true,
                    "cache_prompt": false,
                }))
                .send()
                .await;
        })
    }

    /// Waits until this state's llama-server is working on a request, and returns the state.
    async fn wait_for_a_request(&self, not_from: Option<u32>) -> Value {
        let deadline = Instant::now() + Duration::from_secs(180);
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        loop {
            assert!(
                Instant::now() < deadline,
                "no request reached llama-server in time"
            );
            if let Some(state) = self.state()
                && Some(pid(&state, "server_pid")) != not_from
            {
                let slots = client
                    .get(format!("http://127.0.0.1:{}/slots", state["port"]))
                    .bearer_auth(state["api_key"].as_str().unwrap())
                    .send()
                    .await;
                if let Ok(response) = slots
                    && let Ok(slots) = response.json::<Value>().await
                    && slots
                        .as_array()
                        .is_some_and(|slots| slots.iter().any(|slot| slot["is_processing"] == true))
                {
                    return state;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        runtime::kill_runtime(self.config.path());
    }
}

/// Whether `process` has an established TCP connection to the runtime's port on loopback
/// (the table's header line names no address, so it never matches).
fn connected(process: u32, state: &Value) -> bool {
    let remote = format!("0100007F:{:04X}", pid(state, "port"));
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let sockets: Vec<String> = table
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let established =
                fields.get(2) == Some(&remote.as_str()) && fields.get(3) == Some(&"01");
            Some(format!("socket:[{}]", fields.get(9)?)).filter(|_| established)
        })
        .collect();
    std::fs::read_dir(format!("/proc/{process}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .any(|link| sockets.iter().any(|socket| link.to_str() == Some(socket)))
}

fn alive_field(state: &Value, field: &str) -> bool {
    alive(pid(state, field))
}

fn events(stdout: &[u8]) -> Vec<Event> {
    text(stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_local_provider_runs_llama_server_under_a_supervisor_shared_by_every_question() {
    let model = match prerequisites() {
        Ok(model) => model,
        Err(why) => {
            tooltrail_test_support::dependency_missing(&format!(
                "the test against the real llama-server cannot run: {why}"
            ));
            return;
        }
    };
    let setup = Setup::new(&model);
    let args = setup.ask_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    // doctor names the llama-server it would run.
    let doctor = setup.tooltrail(&["doctor"], &[]).await;
    let report = text(&doctor.stdout);
    assert!(
        report.contains("Local model runtime (the `local` provider):\n  llama-server: /"),
        "{report}"
    );

    // 1. The first question starts the runtime and ends its turn with its calls recorded.
    let started = Instant::now();
    let out = setup.tooltrail(&args, &[]).await;
    let stderr = text(&out.stderr);
    let turn = events(&out.stdout);
    println!(
        "first question: {:.1} s, {} events",
        started.elapsed().as_secs_f64(),
        turn.len()
    );
    let Some(EventBody::TurnFinished { reason, .. }) = turn.last().map(|e| &e.body) else {
        panic!("the turn did not finish: {stderr}");
    };
    assert!(
        matches!(reason, TurnEnd::Completed | TurnEnd::RoundLimit),
        "{reason:?}: {stderr}"
    );
    assert!(matches!(out.status.code(), Some(0 | 3)), "{stderr}");
    // The GGUF has no chat template, so its tools go in the prompt from the first request on.
    let modes: Vec<(ToolMode, bool)> = turn
        .iter()
        .filter_map(|event| match event.body {
            EventBody::ToolModeUsed { mode, fell_back } => Some((mode, fell_back)),
            _ => None,
        })
        .collect();
    assert!(!modes.is_empty(), "{stderr}");
    assert!(
        modes.iter().all(|used| *used == (ToolMode::Prompt, false)),
        "{modes:?}"
    );
    let calls = turn
        .iter()
        .filter(|event| matches!(event.body, EventBody::ToolCallFinished { .. }))
        .count();
    let history = setup
        .tooltrail(&["history", "--json", "--limit", "100"], &[])
        .await;
    let page: Value = serde_json::from_slice(&history.stdout).unwrap();
    assert_eq!(page["items"].as_array().unwrap().len(), calls, "{page}");

    // The runtime outlives the question: a supervisor and its llama-server, as the state says.
    let first = setup.state().expect("a state file while the runtime runs");
    assert_eq!(first["model"], "gemma");
    assert_eq!(first["context_size"], 2048);
    assert_eq!(first["tools_in_template"], false);
    assert!(alive_field(&first, "supervisor_pid") && alive_field(&first, "server_pid"));
    assert_eq!(setup.llama_servers(), [pid(&first, "server_pid")]);
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(setup.runtime_dir().join("state.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // 2. The next question reuses it: same processes, same port, no second llama-server.
    // Its prompt is cached by now, so it could be answered before a kill lands: a long request
    // of the test's own holds the one slot, and the question's request waits behind it.
    let hold = setup.hold_the_slot(&first);
    setup.wait_for_a_request(None).await;
    let second = setup.spawn_ask(&[]);
    // Its request waits for the slot: a connection to the runtime held for a second (the
    // health check before it closes its connection at once).
    let asking = second.id().unwrap();
    let mut connected_since = None;
    wait_until(
        "the question's request to llama-server",
        Duration::from_secs(60),
        || {
            if !connected(asking, &first) {
                connected_since = None;
                return false;
            }
            connected_since.get_or_insert_with(Instant::now).elapsed() >= Duration::from_secs(1)
        },
    )
    .await;
    let state = setup.state().unwrap();
    for field in ["supervisor_pid", "server_pid", "port"] {
        assert_eq!(state[field], first[field], "{field}");
    }
    assert_eq!(setup.llama_servers().len(), 1);
    // llama-server crashing under it is a clear error for that question...
    kill(pid(&first, "server_pid"));
    hold.abort();
    let out = tokio::time::timeout(Duration::from_secs(60), second.wait_with_output())
        .await
        .expect("the question in flight ends when llama-server dies")
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let ended = events(&out.stdout);
    assert!(
        matches!(
            ended.last().map(|e| &e.body),
            Some(EventBody::TurnFinished {
                reason: TurnEnd::Error,
                ..
            })
        ),
        "{stderr}"
    );
    // ... and its supervisor clears the state and ends.
    wait_until("the supervisor's end", Duration::from_secs(10), || {
        !alive_field(&first, "supervisor_pid") && setup.state().is_none()
    })
    .await;

    // 3. The next question starts a new one. Killing that question outright leaves the
    // runtime running for the next (intended), until `models stop`.
    let mut third = setup.spawn_ask(&[]);
    let restarted = setup
        .wait_for_a_request(Some(pid(&first, "server_pid")))
        .await;
    assert_ne!(restarted["supervisor_pid"], first["supervisor_pid"]);
    third.start_kill().unwrap();
    third.wait().await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(alive_field(&restarted, "supervisor_pid") && alive_field(&restarted, "server_pid"));
    let health = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(format!("http://127.0.0.1:{}/health", restarted["port"]))
        .send()
        .await
        .unwrap();
    assert!(health.status().is_success());
    let ps = setup.tooltrail(&["models", "ps", "--json"], &[]).await;
    runtime::assert_listed_without_key(&ps, &restarted);
    let stop = setup.tooltrail(&["models", "stop"], &[]).await;
    runtime::assert_stopped(&stop, "gemma", &restarted);
    assert!(!alive_field(&restarted, "supervisor_pid"));
    wait_until(
        "llama-server's end after models stop",
        Duration::from_secs(5),
        || !alive_field(&restarted, "server_pid"),
    )
    .await;
    assert!(setup.state().is_none());
    let ps = setup.tooltrail(&["models", "ps"], &[]).await;
    assert_eq!(text(&ps.stdout), "No local model is running.\n");

    // 4. A supervisor killed outright takes llama-server with it.
    let mut fourth = setup.spawn_ask(&[]);
    let victim = setup.wait_for_a_request(None).await;
    fourth.start_kill().unwrap();
    fourth.wait().await.unwrap();
    kill(pid(&victim, "supervisor_pid"));
    wait_until(
        "llama-server's end with its supervisor",
        Duration::from_secs(5),
        || !alive_field(&victim, "server_pid"),
    )
    .await;
    assert_eq!(setup.llama_servers(), Vec::<u32>::new());

    // 5. Unused for the idle time, the runtime stops by itself.
    let mut fifth = setup.spawn_ask(&[(tooltrail_host::IDLE_SECS_ENV, "2")]);
    let idle = setup
        .wait_for_a_request(Some(pid(&victim, "server_pid")))
        .await;
    assert_eq!(idle["idle_secs"], 2);
    fifth.start_kill().unwrap();
    fifth.wait().await.unwrap();
    let let_go = Instant::now();
    wait_until("the idle stop", Duration::from_secs(20), || {
        setup.state().is_none()
            && !alive_field(&idle, "supervisor_pid")
            && !alive_field(&idle, "server_pid")
    })
    .await;
    println!(
        "idle stop {:.1} s after the last question let go",
        let_go.elapsed().as_secs_f64()
    );
    let log = std::fs::read_to_string(setup.runtime_dir().join("supervisor.log")).unwrap();
    assert!(log.contains("stopping after 2 s unused"), "{log}");
}
