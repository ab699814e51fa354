//! Windows: llama-server in a Job Object with kill-on-close (through `process-wrap`).
//!
//! The job's handle is the supervisor's alone; the system closes it when the supervisor ends,
//! however it ends, and then ends every process in the job. This is Windows' own form of the
//! parent-death signal Linux has (`exec.rs`); the watch (`watch.rs`) is the line every system
//! shares.

use process_wrap::tokio::{CommandWrap, JobObject, KillOnDrop};

/// Puts what `command` starts in a job of its own that ends with the supervisor.
pub(super) fn hold(command: &mut CommandWrap) {
    // `KillOnDrop` beside `JobObject` is what has process-wrap create the job with
    // `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`.
    command.wrap(JobObject).wrap(KillOnDrop);
}
