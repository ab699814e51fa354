//! What the tests of the local runtime share, against llama-server and against its stand-in:
//! a config folder that chooses the `local` provider, the runtime's state file in the data
//! folder beside it, and the processes of /proc (which run, and killing what a test leaves).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Writes `config`'s config.toml: the `local` provider serving `model` in a 2048-token window,
/// answers of at most 64 tokens (these tests are about the runtime, not the answer: left
/// alone, a small model writes until the answer's room is full), and none of the tools a
/// question about the demo workspace does not need.
pub fn choose_local_model(config: &Path, model: &str) {
    std::fs::write(
        config.join("config.toml"),
        format!(
            "active_provider = \"local\"\n\
             max_tokens = 64\n\
             disabled_tools = [\"execute_bash\", \"code_query\", \"snippets\", \"ask_user\"]\n\
             [local]\nmodel = \"{model}\"\ncontext_size = 2048\n"
        ),
    )
    .unwrap();
}

/// The runtime's folder, in the data folder of `config`.
pub fn runtime_dir(config: &Path) -> PathBuf {
    config.join("data/runtime")
}

/// The runtime's state file, read while a runtime of `config` runs.
pub fn state(config: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(runtime_dir(config).join("state.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Fails unless `ps`, what `tooltrail models ps --json` printed, lists the llama-server of
/// `state` and not its key.
pub fn assert_listed_without_key(ps: &Output, state: &Value) {
    let listed: Value = serde_json::from_slice(&ps.stdout).unwrap_or(Value::Null);
    assert_eq!(
        listed["server_pid"],
        state["server_pid"],
        "{}",
        String::from_utf8_lossy(&ps.stderr)
    );
    assert!(!String::from_utf8_lossy(&ps.stdout).contains(state["api_key"].as_str().unwrap()));
}

/// Fails unless `stop`, what `tooltrail models stop` printed, says it stopped `model`, served
/// by the llama-server of `state`.
pub fn assert_stopped(stop: &Output, model: &str, state: &Value) {
    assert_eq!(
        String::from_utf8_lossy(&stop.stdout),
        format!(
            "Stopped the local model {model} (llama-server pid {}, port {}).\n",
            state["server_pid"], state["port"]
        ),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
}

/// Kills whatever is left of `config`'s runtime, so that a failed assertion leaves nothing
/// running: its supervisor and llama-server name the folder on their command lines.
pub fn kill_runtime(config: &Path) {
    let needle = config.display().to_string();
    for (pid, cmdline) in processes() {
        if cmdline.contains(&needle) {
            kill(pid);
        }
    }
}

/// Every running process's id and command line.
pub fn processes() -> Vec<(u32, String)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            Some((pid, String::from_utf8_lossy(&cmdline).replace('\0', " ")))
        })
        .filter(|(pid, _)| alive(*pid))
        .collect()
}

/// Running: there, and not a zombie waiting for a parent that may never reap it.
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(") ")?.1.chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

pub fn kill(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
}

/// The process id the state names in `field`.
pub fn pid(state: &Value, field: &str) -> u32 {
    u32::try_from(
        state[field]
            .as_u64()
            .unwrap_or_else(|| panic!("{field} in {state}")),
    )
    .unwrap()
}

/// Waits until `done`, failing with `what` when it takes longer than `within`.
pub async fn wait_until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(
            Instant::now() < deadline,
            "{what} did not happen within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
