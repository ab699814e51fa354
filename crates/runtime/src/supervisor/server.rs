//! llama-server as the supervisor's child, tied to it so that it never outlives it:
//!
//! - the watch (`watch.rs`), on every system: a pipe whose end closing ends llama-server;
//! - on Linux, the parent-death signal too (`exec.rs`), through which it is started;
//! - on Windows, a Job Object with kill-on-close too (`job.rs`).

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap};

use super::spec::Spec;
use super::state::RuntimeDir;
use super::watch::Watch;

/// How long a stopping llama-server gets before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A started llama-server.
#[derive(Debug)]
pub(crate) struct Server {
    child: Box<dyn ChildWrapper>,
    /// Dropped after the child, which ends the watcher without it acting (see `watch.rs`).
    _watch: Watch,
}

impl Server {
    /// Starts llama-server on `port`, its output going to its log. Called on the main thread
    /// (see `exec.rs` for why that matters).
    pub(crate) async fn spawn(spec: &Spec, dir: &RuntimeDir, port: u16) -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|error| {
            format!("the runtime's supervisor could not find its own program: {error}")
        })?;
        let log = std::fs::File::create(dir.server_log())
            .map_err(|error| format!("could not write {}: {error}", dir.server_log().display()))?;
        let log_too = log
            .try_clone()
            .map_err(|error| format!("could not write {}: {error}", dir.server_log().display()))?;
        // llama-server refuses to start with a --slot-save-path that is not a folder yet.
        let prefixes = crate::prefix_store::PrefixStore::in_runtime_dir(&spec.dir);
        std::fs::create_dir_all(prefixes.dir())
            .map_err(|error| format!("could not create {}: {error}", prefixes.dir().display()))?;
        let mut command = program(&exe, spec);
        command
            .args(spec.server_args(port, &dir.api_key_file()))
            // No prompt cache beside the slot's own (which already keeps the last
            // conversation's prefix): by default it may grow to 8 GiB in a process that stays
            // up. Set through the environment, which a llama-server too old to know the
            // setting ignores, where an unknown flag would stop it.
            .env("LLAMA_ARG_CACHE_RAM", "0")
            // The whole cache of a sliding-window model (Gemma 3): without it a saved prefix
            // cannot be restored, and a conversation's earlier turns are reused only from
            // checkpoints. The window was sized for a whole cache on every layer (context.rs),
            // so it takes no memory beyond that.
            .env("LLAMA_ARG_SWA_FULL", "1")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_too);
        let mut command = CommandWrap::from(command);
        #[cfg(windows)]
        super::job::hold(&mut command);
        let mut child = command
            .spawn()
            .map_err(|error| format!("{} could not be started: {error}", spec.binary.display()))?;
        // No id only once the child is reaped: then there is nothing to watch either.
        let watched = match child.id() {
            Some(pid) => Watch::start(&exe, pid),
            None => Err(format!(
                "{} ended as soon as it started",
                spec.binary.display()
            )),
        };
        match watched {
            Ok(watch) => Ok(Self {
                child,
                _watch: watch,
            }),
            Err(message) => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                Err(message)
            }
        }
    }

    pub(crate) fn id(&self) -> Option<u32> {
        self.child.id()
    }

    pub(crate) fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    pub(crate) async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// SIGTERM, then a kill after the grace period.
    pub(crate) async fn stop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.child.id().and_then(|pid| i32::try_from(pid).ok())
            && let Some(pid) = rustix::process::Pid::from_raw(pid)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            if tokio::time::timeout(STOP_GRACE, self.child.wait())
                .await
                .is_ok()
            {
                return;
            }
        }
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

/// Through the `exec` step where there is `exec` (it sets the parent-death signal on Linux);
/// elsewhere llama-server itself.
#[cfg(unix)]
fn program(exe: &Path, spec: &Spec) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(exe);
    command
        .arg(super::exec::EXEC_ARG)
        .arg(std::process::id().to_string())
        .arg(&spec.binary);
    command
}

#[cfg(not(unix))]
fn program(_exe: &Path, spec: &Spec) -> tokio::process::Command {
    tokio::process::Command::new(&spec.binary)
}
