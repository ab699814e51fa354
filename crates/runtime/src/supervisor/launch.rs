//! The caller's side of a start: run the supervisor, detached, and wait for its one line.

use std::fs::OpenOptions;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use super::error::SupervisorError;
use super::spec::{SUPERVISE_ARG, Spec};
use super::state::{RuntimeDir, RuntimeState};

/// `CREATE_NEW_PROCESS_GROUP` and `CREATE_NO_WINDOW`, from the Windows SDK's `winbase.h`.
#[cfg(windows)]
const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
#[cfg(windows)]
const CREATE_NO_WINDOW: u32 = 0x0800_0000;

/// Beyond llama-server's own start timeout, how long the caller waits for the supervisor's
/// line (the supervisor reports a timeout itself; this covers a supervisor that hangs).
const EXTRA_WAIT: Duration = Duration::from_secs(30);

/// Starts a supervisor with `program` (this Tooltrail binary) and waits until it says that
/// llama-server is ready, or why not.
pub(crate) async fn start(
    program: &Path,
    spec: &Spec,
    dir: &RuntimeDir,
) -> Result<RuntimeState, SupervisorError> {
    let log_path = dir.supervisor_log();
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(SupervisorError::io(format!("write {}", log_path.display())))?;
    // Every stream is the supervisor's own: a caller's pipe it held would keep whoever reads
    // the caller's output waiting for as long as the runtime lives.
    let mut command = tokio::process::Command::new(program);
    command
        .arg(SUPERVISE_ARG)
        .arg(spec.encode())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .kill_on_drop(false);
    // Windows: a console of its own, never shown (the app has none to lend, and a terminal's
    // Ctrl-C or its closing must not reach the runtime), in a process group of its own. What
    // `setsid` does on Unix, where the supervisor calls it first thing.
    #[cfg(windows)]
    command.creation_flags(CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
    let mut child = command.spawn().map_err(SupervisorError::io(
        "start the local model runtime's supervisor",
    ))?;
    let pid = child.id();
    let Some(stdout) = child.stdout.take() else {
        return Err(SupervisorError::StartFailed(
            "the local model runtime's supervisor could not be listened to".to_string(),
        ));
    };
    let mut lines = BufReader::new(stdout).lines();
    let wait = Duration::from_secs(spec.start_timeout_secs) + EXTRA_WAIT;
    // The child is not waited for: it outlives this question, and the runtime reaps it when
    // it ends if this process is still there.
    let line = match tokio::time::timeout(wait, lines.next_line()).await {
        Ok(Ok(line)) => line,
        Ok(Err(_)) => None,
        Err(_) => {
            let _ = child.start_kill();
            return Err(SupervisorError::StartFailed(format!(
                "the local model runtime was not ready within {} seconds and was stopped; its log is {}",
                wait.as_secs(),
                log_path.display()
            )));
        }
    };
    match line.as_deref() {
        Some("ready") => dir
            .read_state()
            .filter(|state| Some(state.supervisor_pid) == pid)
            .ok_or_else(|| {
                SupervisorError::StartFailed(
                    "the local model runtime said it was ready but left no state file behind"
                        .to_string(),
                )
            }),
        Some(line) => Err(SupervisorError::StartFailed(
            line.strip_prefix("failed: ")
                .unwrap_or(line)
                .replace("\\n", "\n"),
        )),
        None => Err(SupervisorError::StartFailed(format!(
            "the local model runtime stopped before it was ready; its log is {}",
            log_path.display()
        ))),
    }
}
