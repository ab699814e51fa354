//! The runtime's folder (`<data>/runtime/`) and the state file every front end reads to find
//! the running runtime.
//!
//! `state.json` exists exactly while a supervisor serves a ready llama-server: the supervisor
//! writes it (owner-only, through a temporary file and a rename, so a reader never sees half a
//! file) once llama-server answers `/health`, and removes it before it stops llama-server.
//! It holds the API key, which is why the file and its folder are the owner's alone.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::error::SupervisorError;

/// What a running runtime is: written by its supervisor, read by every front end.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeState {
    /// The supervising Tooltrail process.
    pub supervisor_pid: u32,
    /// When it started, as the system tells it (see `identity::start_time`): with the id, what
    /// `models stop` checks before it signals, so that an id the system gave to another process
    /// since is left alone.
    #[serde(default)]
    pub supervisor_start: Option<u64>,
    /// llama-server, the supervisor's child.
    pub server_pid: u32,
    /// When llama-server started, likewise.
    #[serde(default)]
    pub server_start: Option<u64>,
    /// llama-server's port on 127.0.0.1.
    pub port: u16,
    /// The key llama-server requires; never shown.
    pub api_key: String,
    /// The model's name in the models folder.
    pub model: String,
    pub model_path: PathBuf,
    /// The context size llama-server was started with, in tokens.
    pub context_size: u32,
    pub threads: u32,
    /// The llama-server program, and where it was found.
    pub binary: PathBuf,
    pub binary_source: String,
    /// When llama-server became ready (seconds since the Unix epoch).
    pub started_unix: u64,
    /// When the last question let go of the runtime (seconds since the Unix epoch); the idle
    /// time counts from here while no question holds it.
    pub last_used_unix: u64,
    /// How long the runtime stays up unused.
    pub idle_secs: u64,
    /// Whether the model's chat template renders tools (llama-server's `/props`); when not,
    /// questions offer the tools in the prompt from the start.
    pub tools_in_template: bool,
}

impl std::fmt::Debug for RuntimeState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeState")
            .field("supervisor_pid", &self.supervisor_pid)
            .field("supervisor_start", &self.supervisor_start)
            .field("server_pid", &self.server_pid)
            .field("server_start", &self.server_start)
            .field("port", &self.port)
            .field("api_key", &"<redacted>")
            .field("model", &self.model)
            .field("model_path", &self.model_path)
            .field("context_size", &self.context_size)
            .field("threads", &self.threads)
            .field("binary", &self.binary)
            .field("binary_source", &self.binary_source)
            .field("started_unix", &self.started_unix)
            .field("last_used_unix", &self.last_used_unix)
            .field("idle_secs", &self.idle_secs)
            .field("tools_in_template", &self.tools_in_template)
            .finish()
    }
}

impl RuntimeState {
    /// The OpenAI-compatible base URL.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The server's own root, where `/health` and `/props` are.
    pub(crate) fn root_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// The files of `<data>/runtime/`.
#[derive(Debug, Clone)]
pub struct RuntimeDir {
    root: PathBuf,
}

impl RuntimeDir {
    /// The runtime folder inside the data folder `data_dir`.
    pub fn in_data_dir(data_dir: &Path) -> Self {
        Self {
            root: data_dir.join("runtime"),
        }
    }

    pub(crate) fn from_root(root: PathBuf) -> Self {
        Self { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn state(&self) -> PathBuf {
        self.root.join("state.json")
    }

    /// Held exclusively by whoever is starting a runtime, so that two questions asked at once
    /// start one.
    pub(crate) fn start_lock(&self) -> PathBuf {
        self.root.join("start.lock")
    }

    /// Held shared by every question using the runtime (see `Lease`).
    pub(crate) fn in_use_lock(&self) -> PathBuf {
        self.root.join("in-use.lock")
    }

    /// Held exclusively by the live supervisor for as long as it lives: a test for "is a
    /// supervisor alive" that a reused process id cannot fool.
    pub(crate) fn alive_lock(&self) -> PathBuf {
        self.root.join("supervisor.lock")
    }

    /// llama-server's output, started afresh with each llama-server.
    pub fn server_log(&self) -> PathBuf {
        self.root.join("llama-server.log")
    }

    /// The supervisor's own lines: starts, stops and why.
    pub fn supervisor_log(&self) -> PathBuf {
        self.root.join("supervisor.log")
    }

    /// The API key, handed to llama-server as a file so that it is not on its command line
    /// (which other users can read).
    pub(crate) fn api_key_file(&self) -> PathBuf {
        self.root.join("api-key")
    }

    /// Makes the folder, the owner's alone.
    pub(crate) fn create(&self) -> Result<(), SupervisorError> {
        std::fs::create_dir_all(&self.root).map_err(SupervisorError::io(format!(
            "create the runtime folder {}",
            self.root.display()
        )))?;
        // The folder holds the key: one that cannot be made the owner's alone is not used.
        restrict_to_owner(&self.root, 0o700).map_err(SupervisorError::io(format!(
            "make the runtime folder {} readable by its owner only",
            self.root.display()
        )))
    }

    /// The state file, when there is one that can be read.
    pub(crate) fn read_state(&self) -> Option<RuntimeState> {
        let text = std::fs::read_to_string(self.state()).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub(crate) fn write_state(&self, state: &RuntimeState) -> Result<(), SupervisorError> {
        let text = serde_json::to_string_pretty(state).unwrap_or_default();
        write_private(&self.state(), text.as_bytes())
    }

    /// Removes the state file if it still describes the supervisor `pid` (a newer runtime's
    /// file is left alone).
    pub(crate) fn remove_state_of(&self, pid: u32) {
        if self
            .read_state()
            .is_some_and(|state| state.supervisor_pid == pid)
        {
            let _ = std::fs::remove_file(self.state());
        }
    }

    /// The file that asks the supervisor `pid` to stop: how `models stop` asks on every
    /// system (Windows has no signal to send), and beside SIGTERM on Unix. Named by the
    /// supervisor's id, so a request meant for an earlier runtime stops no later one.
    fn stop_request(&self, pid: u32) -> PathBuf {
        self.root.join(format!("stop-{pid}"))
    }

    /// Asks the supervisor `pid` to stop; it looks at every tick of its watch.
    pub(crate) fn request_stop(&self, pid: u32) -> Result<(), SupervisorError> {
        write_private(&self.stop_request(pid), b"")
    }

    /// Whether the supervisor `pid` was asked to stop; the request is used up.
    pub(crate) fn take_stop_request(&self, pid: u32) -> bool {
        std::fs::remove_file(self.stop_request(pid)).is_ok()
    }

    pub(crate) fn write_api_key(&self, key: &str) -> Result<(), SupervisorError> {
        write_private(&self.api_key_file(), key.as_bytes())
    }

    /// The last `lines` lines of llama-server's log, for a sentence about why it failed.
    pub(crate) fn server_log_tail(&self, lines: usize) -> String {
        let text = std::fs::read(self.server_log())
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default();
        let kept: Vec<&str> = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .collect();
        kept[kept.len().saturating_sub(lines)..].join("\n")
    }
}

/// Writes `bytes` to `path` owner-only, through a temporary file with a random name, made
/// exclusively and owner-only before anything is written to it, and a rename.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), SupervisorError> {
    tooltrail_atomic_write::write_private(path, bytes)
        .map_err(SupervisorError::io(format!("write {}", path.display())))
}

#[cfg(unix)]
fn restrict_to_owner(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn restrict_to_owner(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

/// Seconds since the Unix epoch: the clock of [`RuntimeState`]'s times, of
/// [`super::RuntimeStatus::stops_in_secs`] and of the models folder's records, which every
/// front end reads them with.
/// A line of the runtime's log, after the time it was written (seconds since the Unix epoch,
/// to the millisecond).
pub(crate) fn stamped(line: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("[{}.{:03}] {line}", now.as_secs(), now.subsec_millis())
}

pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn sample() -> RuntimeState {
        RuntimeState {
            supervisor_pid: 10,
            supervisor_start: Some(5),
            server_pid: 11,
            server_start: None,
            port: 41000,
            api_key: "secret-key".into(),
            model: "gemma".into(),
            model_path: "/m/gemma.gguf".into(),
            context_size: 8192,
            threads: 2,
            binary: "/bin/llama-server".into(),
            binary_source: "PATH".into(),
            started_unix: 1,
            last_used_unix: 2,
            idle_secs: 600,
            tools_in_template: false,
        }
    }

    #[test]
    fn the_state_file_is_the_owners_alone_and_never_shows_the_key() {
        let data = tempfile::tempdir().unwrap();
        let dir = RuntimeDir::in_data_dir(data.path());
        dir.create().unwrap();
        assert_eq!(dir.read_state(), None);
        dir.write_state(&sample()).unwrap();
        assert_eq!(dir.read_state(), Some(sample()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&dir.state()), 0o600);
            assert_eq!(mode(dir.root()), 0o700);
        }
        assert!(!format!("{:?}", sample()).contains("secret-key"));
        assert_eq!(sample().base_url(), "http://127.0.0.1:41000/v1");
    }

    /// `/proc/self` exists and cannot have its mode changed, even by root: what a folder on a
    /// file system that ignores owner-only permissions looks like to the runtime.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_folder_that_cannot_be_made_owner_only_is_an_error_not_a_shrug() {
        let dir = RuntimeDir::from_root(PathBuf::from("/proc/self"));
        let error = dir.create().unwrap_err().to_string();
        assert!(
            error.starts_with(
                "could not make the runtime folder /proc/self readable by its owner only: "
            ),
            "{error}"
        );
    }

    #[test]
    fn only_the_supervisor_a_state_file_names_removes_it() {
        let data = tempfile::tempdir().unwrap();
        let dir = RuntimeDir::in_data_dir(data.path());
        dir.create().unwrap();
        dir.write_state(&sample()).unwrap();
        dir.remove_state_of(99);
        assert!(dir.read_state().is_some());
        dir.remove_state_of(10);
        assert_eq!(dir.read_state(), None);
    }

    #[test]
    fn the_log_tail_keeps_the_last_lines_that_say_something() {
        let data = tempfile::tempdir().unwrap();
        let dir = RuntimeDir::in_data_dir(data.path());
        dir.create().unwrap();
        std::fs::write(dir.server_log(), "one\n\ntwo\nthree\n\n").unwrap();
        assert_eq!(dir.server_log_tail(2), "two\nthree");
        assert_eq!(dir.server_log_tail(10), "one\ntwo\nthree");
    }
}
