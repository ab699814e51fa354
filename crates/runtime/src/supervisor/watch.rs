//! The watch that ends llama-server when its supervisor ends, on every system.
//!
//! The supervisor starts a small process of its own program in a hidden mode, the watcher,
//! whose stdin is a pipe the supervisor holds the only writing end of and never writes to.
//! The system closes that end when the supervisor ends, however it ends (SIGKILL included),
//! and the watcher reads end-of-file: it then kills llama-server, once it has checked that the
//! process id still names the llama-server that was started (the same start time, see
//! `identity.rs`), and exits.
//!
//! llama-server does not watch its own stdin, hence a process in between; a thread of the
//! supervisor cannot do it, since it ends with the supervisor. On Linux the parent-death signal
//! (`exec.rs`) is a second line; on Windows the Job Object (`job.rs`) is.
//!
//! When the supervisor ends llama-server itself, it ends the watcher first (it is its own
//! child, so that id cannot name another process), before the pipe closes: a watcher never
//! acts on a llama-server its supervisor already reaped.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

use super::identity;

/// First argument of the watcher's mode: `<binary> __runtime-watch <pid> <start time or ->`.
pub(crate) const WATCH_ARG: &str = "__runtime-watch";

/// The supervisor's side: the watcher and the pipe's writing end, held for as long as
/// llama-server runs.
#[derive(Debug)]
pub(crate) struct Watch {
    watcher: Child,
    /// Never written to: closing it (the supervisor ending) is the message.
    _pipe: ChildStdin,
}

impl Watch {
    /// Starts a watcher of `program` (this Tooltrail binary) for the llama-server `pid`.
    pub(crate) fn start(program: &Path, pid: u32) -> Result<Self, String> {
        let started = identity::start_time(pid).map_or_else(|| "-".to_string(), |t| t.to_string());
        let mut watcher = Command::new(program)
            .arg(WATCH_ARG)
            .arg(pid.to_string())
            .arg(started)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            // The supervisor's own log: the watcher says there when it acted.
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|error| {
                format!("llama-server could not be tied to its supervisor, so it was stopped: the watch could not start ({error})")
            })?;
        let Some(pipe) = watcher.stdin.take() else {
            let _ = watcher.kill();
            let _ = watcher.wait();
            return Err(
                "llama-server could not be tied to its supervisor, so it was stopped: the watch has no pipe".to_string(),
            );
        };
        Ok(Self {
            watcher,
            _pipe: pipe,
        })
    }
}

impl Drop for Watch {
    /// Ends the watcher before the pipe closes (fields drop after this), so it never acts.
    fn drop(&mut self) {
        let _ = self.watcher.kill();
        let _ = self.watcher.wait();
    }
}

/// Runs the watcher's mode; returns its exit status.
pub(crate) fn run(args: &[OsString]) -> i32 {
    let text = |index: usize| args.get(index).and_then(|arg| arg.to_str());
    let Some(pid) = text(0).and_then(|pid| pid.parse::<u32>().ok()) else {
        eprintln!("tooltrail: the runtime's watch was started without a process id");
        return 2;
    };
    let recorded = text(1).and_then(|start| start.parse::<u64>().ok());
    wait_for_end(std::io::stdin().lock());
    if end(pid, recorded) {
        eprintln!("tooltrail: llama-server (pid {pid}) was stopped because its supervisor ended");
    }
    0
}

/// Returns once `input` reaches its end (or fails, which a closed pipe may do too).
pub(crate) fn wait_for_end(mut input: impl Read) {
    let mut buffer = [0_u8; 64];
    loop {
        match input.read(&mut buffer) {
            Ok(0) => return,
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Kills `pid` if it is still the process that started at `recorded`; whether it did.
pub(crate) fn end(pid: u32, recorded: Option<u64>) -> bool {
    identity::same_process(pid, recorded) && kill(pid)
}

#[cfg(unix)]
fn kill(pid: u32) -> bool {
    use rustix::process::{Pid, Signal, kill_process};
    i32::try_from(pid)
        .ok()
        .and_then(Pid::from_raw)
        .is_some_and(|pid| kill_process(pid, Signal::KILL).is_ok())
}

#[cfg(windows)]
fn kill(pid: u32) -> bool {
    identity::with_process(pid, sysinfo::Process::kill).unwrap_or(false)
}

#[cfg(not(any(unix, windows)))]
fn kill(_pid: u32) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watch_waits_for_the_pipe_to_close_and_no_longer() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let waiting = std::thread::spawn(move || {
            wait_for_end(reader);
            done_tx.send(()).unwrap();
        });
        // Bytes are not the end: only the closed pipe is.
        std::io::Write::write_all(&mut writer, b"not the end").unwrap();
        assert!(
            done_rx
                .recv_timeout(std::time::Duration::from_millis(200))
                .is_err()
        );
        drop(writer);
        done_rx.recv().unwrap();
        waiting.join().unwrap();
    }

    /// The watch acts on the process it was started for, and on no other that has since been
    /// given its id (here a `sleep` of the test's own, with a start time that is not its own).
    #[test]
    #[cfg(target_os = "linux")]
    fn attack_runtime_the_watch_does_not_kill_a_reused_process_id() {
        let mut bystander = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let started = identity::start_time(bystander.id()).unwrap();
        assert!(!end(bystander.id(), Some(started + 1)));
        assert!(
            bystander.try_wait().unwrap().is_none(),
            "the bystander was killed"
        );
        assert!(end(bystander.id(), Some(started)));
        assert!(bystander.wait().unwrap().code().is_none());
    }
}
