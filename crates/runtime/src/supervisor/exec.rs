//! The step between the supervisor and llama-server: Tooltrail's own program, started by the
//! supervisor in a hidden mode, asks the kernel to kill it when its parent dies
//! (`PR_SET_PDEATHSIG`, Linux) and then becomes llama-server with `exec`. The request
//! survives `exec`, so llama-server dies with its supervisor however the supervisor dies,
//! SIGKILL included: a runtime is never an orphan.
//!
//! Doing this in the child between `fork` and `exec` would take `pre_exec`, which is
//! `unsafe`; a process of our own that sets the signal on itself needs no `unsafe` at all, at
//! the cost of one more `exec` (a few milliseconds) per start.
//!
//! The kernel sends the signal when the *thread* that started the child ends, not the process,
//! so the supervisor starts llama-server from its main thread, which lives as long as it does.
//!
//! The signal is the second line: the watch (`watch.rs`) ends llama-server on every system.
//! [`PARENT_DEATH_SIGNAL_ENV`] set to `off` leaves the signal unset, so that a test shows
//! the watch alone does the job.

use std::ffi::OsString;

/// First argument of this mode: `<binary> __runtime-exec <parent pid> <program> <args>...`.
pub(crate) const EXEC_ARG: &str = "__runtime-exec";

/// `off` leaves the parent-death signal unset (for tests of the watch); anything else, or
/// unset, sets it.
pub const PARENT_DEATH_SIGNAL_ENV: &str = "TOOLTRAIL_RUNTIME_PARENT_DEATH_SIGNAL";

/// Exit status when llama-server could not be started.
const NOT_STARTED: i32 = 127;

/// Runs the mode; returns only when llama-server could not be started.
pub(crate) fn run(args: &[OsString]) -> i32 {
    let Some((parent, rest)) = args.split_first() else {
        eprintln!("tooltrail: the runtime's launcher was started without a program");
        return NOT_STARTED;
    };
    let Some((program, program_args)) = rest.split_first() else {
        eprintln!("tooltrail: the runtime's launcher was started without a program");
        return NOT_STARTED;
    };
    let parent: Option<u32> = parent.to_str().and_then(|pid| pid.parse().ok());
    if !die_with_parent(parent) {
        return NOT_STARTED;
    }
    exec(program, program_args)
}

#[cfg(target_os = "linux")]
fn die_with_parent(parent: Option<u32>) -> bool {
    use rustix::process::{Signal, getppid, set_parent_process_death_signal};
    if std::env::var_os(PARENT_DEATH_SIGNAL_ENV).is_some_and(|value| value == "off") {
        // Said in llama-server's log, where a test reads that the switch took.
        eprintln!(
            "tooltrail: llama-server is started without the parent-death signal ({PARENT_DEATH_SIGNAL_ENV}=off); the watch alone ties it to its supervisor"
        );
        return true;
    }
    if let Err(error) = set_parent_process_death_signal(Some(Signal::KILL)) {
        eprintln!(
            "tooltrail: llama-server could not be tied to its supervisor ({error}), so it was not started"
        );
        return false;
    }
    // The parent may have died before the request was made; then nothing would ever come.
    let now = getppid().map(|pid| pid.as_raw_nonzero().get().unsigned_abs());
    if parent.is_some() && now != parent {
        eprintln!("tooltrail: the runtime's supervisor ended before llama-server started");
        return false;
    }
    true
}

/// Elsewhere there is no parent-death signal; the watch (`watch.rs`) ends llama-server when
/// its supervisor ends, however it ends.
#[cfg(not(target_os = "linux"))]
fn die_with_parent(_parent: Option<u32>) -> bool {
    true
}

#[cfg(unix)]
fn exec(program: &OsString, args: &[OsString]) -> i32 {
    use std::os::unix::process::CommandExt;
    let error = std::process::Command::new(program).args(args).exec();
    eprintln!(
        "tooltrail: {} could not be started: {error}",
        std::path::Path::new(program).display()
    );
    NOT_STARTED
}

/// Never reached: without `exec`, the supervisor starts llama-server itself (`server.rs`).
#[cfg(not(unix))]
fn exec(_program: &OsString, _args: &[OsString]) -> i32 {
    eprintln!("tooltrail: this system starts llama-server without the launcher step");
    NOT_STARTED
}
