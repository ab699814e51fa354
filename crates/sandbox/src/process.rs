//! Running one shell command with process hygiene: `bash --noprofile --norc -c`, stdin from
//! `/dev/null`, a cleared environment (but for what [`crate::reach`] gives: a `PATH` of
//! visible folders, where toolchains and caches are), its own process group (killed on timeout, on cancel, and
//! once the shell exits, so no background child outlives the call), and output capped per
//! stream while the pipes keep being drained so the command never blocks on a full pipe.
//!
//! With a [`Confinement`], the shell runs inside the OS sandbox: on Linux through the helper
//! (see `linux.rs`), which also kills what left the process group; cancelling closes the
//! helper's stdin, and the helper stops everything it started.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

use crate::reach::{CommandReach, SandboxSettings};

/// How long the output pipes may stay open after the command ended and its group was killed
/// (a process that left the group could hold them forever).
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How long the sandbox helper gets to stop a cancelled command's processes.
const HELPER_GRACE: Duration = Duration::from_secs(5);

/// One command to run.
#[derive(Debug, Clone)]
pub struct BashCommand {
    pub script: String,
    /// Working folder, already confined to the workspace.
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// Bytes kept of stdout, and separately of stderr.
    pub output_cap: usize,
    /// Folders never put on `PATH` (the workspace: a script there named `ls` must not win).
    pub untrusted: Vec<PathBuf>,
    /// The OS sandbox to run in; `None` runs with process hygiene only, which callers allow
    /// only for commands the user approved.
    pub confinement: Option<Confinement>,
    /// Toolchains, extra read-only folders and where caches go (see [`crate::reach`]).
    pub sandbox: SandboxSettings,
}

/// How a command is confined by the OS sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    /// The helper program ([`crate::Sandbox::helper`]).
    pub helper: PathBuf,
    /// The workspace root: readable, and writable when `writable`.
    pub workspace: PathBuf,
    /// The user approved the command, so it may change the workspace.
    pub writable: bool,
    /// The user approved the command and a network rule covers it, so it may open network
    /// sockets (see [`crate::rules::network_rule`]).
    pub network: bool,
}

/// Bash and its arguments for `script`.
const BASH: &str = "bash";
fn bash_args(script: &str) -> Vec<OsString> {
    ["--noprofile", "--norc", "-c", script]
        .into_iter()
        .map(OsString::from)
        .collect()
}

/// How the command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashOutput {
    pub stdout: String,
    pub stderr: String,
    /// Bytes the command wrote to each stream, kept or not.
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// More was written than the cap kept.
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// `None` when the command was killed by a signal (see `signal`) or never finished.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub duration: Duration,
    pub timed_out: bool,
    pub cancelled: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the command could not be started ({0})")]
    Spawn(std::io::ErrorKind),
    #[error("a private home folder could not be created ({0})")]
    Home(std::io::ErrorKind),
    #[error("the workspace's cache folder could not be created ({0})")]
    Cache(std::io::ErrorKind),
    /// No bash to run commands in (Windows without Git for Windows), in a sentence.
    #[error("{0}")]
    NoBash(String),
    /// Windows: the command's Job Object could not be made or joined, so it was not run.
    #[error("the command could not be put in its job object, so it was not run ({0})")]
    Job(String),
}

/// Runs the command to its end, its timeout, or `cancel`.
pub async fn run_bash(
    command: &BashCommand,
    cancel: &CancellationToken,
) -> Result<BashOutput, RunError> {
    // A private, empty home and temp folder per call, removed afterwards.
    let home = tempfile::Builder::new()
        .prefix("tooltrail-home-")
        .tempdir()
        .map_err(|err| RunError::Home(err.kind()))?;
    let reach = reach_for(command, home.path())?;
    let mut process = shell_process(command, &reach)?;

    let started = Instant::now();
    let mut child = process.spawn().map_err(|err| RunError::Spawn(err.kind()))?;
    let group = match Group::hold(&child, command.timeout) {
        Ok(group) => group,
        Err(error) => {
            let _ = child.start_kill();
            let _ = child.wait().await;
            return Err(error);
        }
    };
    let helper_stdin = child.stdin.take();
    let cap = command.output_cap;
    let stdout = child
        .stdout
        .take()
        .map(|pipe| tokio::spawn(read_capped(pipe, cap)));
    let stderr = child
        .stderr
        .take()
        .map(|pipe| tokio::spawn(read_capped(pipe, cap)));

    let ending = wait_or_stop(&mut child, &group, helper_stdin, command.timeout, cancel).await;
    group.kill();
    let duration = started.elapsed();

    let (stdout, stdout_bytes) = collect(stdout).await;
    let (stderr, stderr_bytes) = collect(stderr).await;
    drop(home);

    let (exit_code, signal) = match ending.status {
        Some(status) => (status.code(), signal_of(&status)),
        None => (None, None),
    };
    // A command stopped early reports no exit code or signal: they would be those of the kill.
    let stopped = ending.timed_out || ending.cancelled;
    Ok(BashOutput {
        stdout,
        stderr,
        stdout_bytes,
        stderr_bytes,
        stdout_truncated: stdout_bytes > cap as u64,
        stderr_truncated: stderr_bytes > cap as u64,
        exit_code: if stopped { None } else { exit_code },
        signal: if stopped { None } else { signal },
        duration,
        timed_out: ending.timed_out,
        cancelled: ending.cancelled,
    })
}

/// What the command sees, with `home` its private folder, and its caches made ready.
fn reach_for(command: &BashCommand, home: &Path) -> Result<CommandReach, RunError> {
    let (workspace, writable) = match &command.confinement {
        Some(confinement) => (confinement.workspace.as_path(), confinement.writable),
        None => (command.cwd.as_path(), true),
    };
    let mut reach = crate::reach::command_reach(
        &command.sandbox,
        workspace,
        writable,
        home,
        &command.untrusted,
    );
    // Unconfined (approved, no OS sandbox) the network is open anyway.
    if command
        .confinement
        .as_ref()
        .is_none_or(|confinement| confinement.network)
    {
        reach.open_network();
    }
    prepare_caches(&reach).map_err(|err| RunError::Cache(err.kind()))?;
    Ok(reach)
}

/// The process to start: the sandbox helper running bash when confined, else bash itself,
/// with nothing of this process's environment but what its reach gives.
fn shell_process(
    command: &BashCommand,
    reach: &CommandReach,
) -> Result<tokio::process::Command, RunError> {
    let (program, args) = match &command.confinement {
        Some(confinement) => confined(confinement, command, reach),
        // Unconfined: on Windows, Git for Windows' bash (see `shell.rs`).
        None => (
            crate::shell::bash().map_err(RunError::NoBash)?,
            bash_args(&command.script),
        ),
    };
    let mut process = tokio::process::Command::new(program);
    process
        .args(args)
        .env_clear()
        .envs(reach.env.iter().map(|(name, value)| (name, value)))
        .current_dir(&command.cwd)
        // The helper watches its stdin: closing it is how a call is cancelled.
        .stdin(if command.confinement.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    process.process_group(0);
    // Started suspended, so that it runs only once it is in its job (see `Group::hold`), and
    // with no console window of its own.
    #[cfg(windows)]
    process.creation_flags(CREATE_SUSPENDED | CREATE_NO_WINDOW);
    Ok(process)
}

/// How the wait for the command ended.
struct Ending {
    /// `None` when it never finished, or its status could not be read.
    status: Option<std::process::ExitStatus>,
    timed_out: bool,
    cancelled: bool,
}

/// Waits for the command to end on its own; on timeout or `cancel`, stops it and everything it
/// started, and waits for that.
async fn wait_or_stop(
    child: &mut tokio::process::Child,
    group: &Group,
    mut helper_stdin: Option<tokio::process::ChildStdin>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Ending {
    let mut timed_out = false;
    let mut cancelled = false;
    let status = tokio::select! {
        status = child.wait() => status.ok(),
        () = tokio::time::sleep(timeout) => {
            timed_out = true;
            None
        }
        () = cancel.cancelled() => {
            cancelled = true;
            None
        }
    };
    let status = match status {
        Some(status) => Some(status),
        None if helper_stdin.is_some() => {
            // The helper stops everything it started once its stdin closes; killing it
            // outright would leave the processes that left its group behind.
            helper_stdin.take();
            match tokio::time::timeout(HELPER_GRACE, child.wait()).await {
                Ok(status) => status.ok(),
                Err(_) => {
                    group.kill();
                    let _ = child.start_kill();
                    child.wait().await.ok()
                }
            }
        }
        None => {
            group.kill();
            let _ = child.start_kill();
            child.wait().await.ok()
        }
    };
    drop(helper_stdin);
    Ending {
        status,
        timed_out,
        cancelled,
    }
}

/// Makes the workspace's cache folder and the command's own `CARGO_HOME` (outside the
/// sandbox, before the command starts).
fn prepare_caches(reach: &CommandReach) -> std::io::Result<()> {
    std::fs::create_dir_all(&reach.cache)?;
    if let Some(cargo_home) = &reach.cargo_home {
        cargo_home.prepare()?;
    }
    Ok(())
}

/// The helper and its arguments for a confined command.
#[cfg(not(target_os = "macos"))]
fn confined(
    confinement: &Confinement,
    command: &BashCommand,
    reach: &CommandReach,
) -> (OsString, Vec<OsString>) {
    let spec = crate::helper_args::HelperSpec::of(
        reach,
        command.timeout.as_secs().max(1),
        confinement.network,
        OsString::from(BASH),
        bash_args(&command.script),
    );
    let mut args = vec![OsString::from(crate::helper_args::HELPER_ARG)];
    args.extend(spec.encode());
    (confinement.helper.clone().into_os_string(), args)
}

/// `sandbox-exec` with the command's profile.
#[cfg(target_os = "macos")]
fn confined(
    confinement: &Confinement,
    command: &BashCommand,
    reach: &CommandReach,
) -> (OsString, Vec<OsString>) {
    let profile = crate::macos::profile(&reach.grants);
    (
        confinement.helper.clone().into_os_string(),
        crate::macos::command_line(&profile, BASH, &bash_args(&command.script)),
    )
}

/// Everything a command started, to be ended with it: its process group on Unix (the
/// confined helper also kills what left the group), its Job Object on Windows.
struct Group {
    #[cfg(unix)]
    pid: Option<u32>,
    #[cfg(windows)]
    job: tooltrail_job::Job,
}

/// `CREATE_SUSPENDED` and `CREATE_NO_WINDOW`, from the Windows SDK's `winbase.h`.
#[cfg(windows)]
const CREATE_SUSPENDED: u32 = 0x0000_0004;
#[cfg(windows)]
const CREATE_NO_WINDOW: u32 = 0x0800_0000;

impl Group {
    #[cfg(unix)]
    fn hold(child: &tokio::process::Child, _timeout: Duration) -> Result<Self, RunError> {
        Ok(Self { pid: child.id() })
    }

    /// Puts the suspended child in a job with the command's limits, then lets it run.
    #[cfg(windows)]
    fn hold(child: &tokio::process::Child, timeout: Duration) -> Result<Self, RunError> {
        let limits = crate::windows::job_limits(timeout.as_secs().max(1));
        let job = tooltrail_job::Job::new(&limits).map_err(|err| RunError::Job(err.to_string()))?;
        let (Some(handle), Some(pid)) = (child.raw_handle(), child.id()) else {
            return Err(RunError::Job(
                "the command ended before it started".to_string(),
            ));
        };
        job.adopt_suspended(handle, pid)
            .map_err(|err| RunError::Job(err.to_string()))?;
        Ok(Self { job })
    }

    #[cfg(not(any(unix, windows)))]
    fn hold(_child: &tokio::process::Child, _timeout: Duration) -> Result<Self, RunError> {
        Ok(Self {})
    }

    /// Ends every process of the command that is still running.
    #[cfg(unix)]
    fn kill(&self) {
        let Some(pid) = self
            .pid
            .and_then(|pid| i32::try_from(pid).ok())
            .and_then(rustix::process::Pid::from_raw)
        else {
            return;
        };
        // The group may already be gone; nothing to do then.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }

    #[cfg(windows)]
    fn kill(&self) {
        self.job.terminate();
    }

    #[cfg(not(any(unix, windows)))]
    fn kill(&self) {}
}

#[cfg(unix)]
fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// Reads a pipe to its end, keeping the first `cap` bytes and counting the rest.
async fn read_capped(mut pipe: impl AsyncRead + Unpin, cap: usize) -> (Vec<u8>, u64) {
    let mut kept = Vec::new();
    let mut total = 0u64;
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                total += read as u64;
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buffer[..read.min(room)]);
            }
        }
    }
    (kept, total)
}

async fn collect(task: Option<tokio::task::JoinHandle<(Vec<u8>, u64)>>) -> (String, u64) {
    let Some(task) = task else {
        return (String::new(), 0);
    };
    let abort = task.abort_handle();
    match tokio::time::timeout(DRAIN_GRACE, task).await {
        Ok(Ok((bytes, total))) => (String::from_utf8_lossy(&bytes).into_owned(), total),
        _ => {
            abort.abort();
            (String::new(), 0)
        }
    }
}
