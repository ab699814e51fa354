//! What can keep the local model runtime from answering, in sentences a user can act on.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SupervisorError {
    /// No llama-server binary anywhere Tooltrail looks.
    #[error(
        "no llama-server program was found (looked {looked}); build one with `scripts/setup --local-runtime`, install llama.cpp so that llama-server is on the PATH, or set TOOLTRAIL_LLAMA_SERVER to its path"
    )]
    NoLlamaServer { looked: String },
    /// `TOOLTRAIL_LLAMA_SERVER` names something that cannot be run.
    #[error(
        "TOOLTRAIL_LLAMA_SERVER names {}, which is not a program that can be run",
        path.display()
    )]
    BadOverride { path: PathBuf },
    /// The model file the settings chose is gone.
    #[error("the model file {} is missing", path.display())]
    ModelFileMissing { path: PathBuf },
    /// The running program does not serve the supervisor's hidden mode (a test binary, a
    /// program that forgot to call `maybe_run_supervisor`).
    #[error(
        "this program cannot start the local model runtime; use the tooltrail command or the desktop app"
    )]
    CannotSupervise,
    /// The runtime is written for Unix process control.
    #[error("the local model runtime is not available on this system yet")]
    Unsupported,
    /// The process id the runtime's lock names belongs to another process now.
    #[error(
        "process {pid}, which {} names as the local model runtime's supervisor, is not that supervisor any more (it started at another time), so it was not signalled; if a runtime is still running, end it from the system's process list",
        lock.display()
    )]
    NotTheSupervisor { pid: u32, lock: PathBuf },
    /// The supervisor said why llama-server did not start (with the tail of its log).
    #[error("{0}")]
    StartFailed(String),
    /// A file or process operation failed.
    #[error("could not {what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

impl SupervisorError {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }
}
