//! Windows: the limits of the Job Object a command runs in (`tooltrail-job` holds the job;
//! `process.rs` starts the command suspended, puts it in the job, then lets it run). The job
//! limits processes, memory and CPU time, keeps the command off the desktop and the clipboard,
//! and ends everything it started when the call ends. It does not confine the file system, so
//! on Windows the sandbox reports itself as not enforced and every command is asked about.

pub use tooltrail_job::JobLimits;

use crate::limits::{MAX_FILE_BYTES, MAX_PROCESSES};

/// The limits of a command's job: the same process cap as the Linux sandbox's pids cgroup,
/// four times the largest file a command may write in committed memory, and CPU time a little
/// past its timeout (the timeout itself is kept by the caller; this catches what escaped it).
pub fn job_limits(timeout_secs: u64) -> JobLimits {
    JobLimits {
        active_processes: u32::try_from(MAX_PROCESSES).unwrap_or(u32::MAX),
        job_memory_bytes: MAX_FILE_BYTES.saturating_mul(4),
        user_time_100ns: timeout_secs.saturating_add(5).saturating_mul(10_000_000),
        kill_on_close: true,
        die_on_unhandled_exception: true,
        ui_restricted: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn limits_for_a_thirty_second_command() {
        assert_eq!(
            job_limits(30),
            JobLimits {
                active_processes: 512,
                job_memory_bytes: 4 * 1024 * 1024 * 1024,
                user_time_100ns: 350_000_000,
                kill_on_close: true,
                die_on_unhandled_exception: true,
                ui_restricted: true,
            }
        );
    }

    #[test]
    fn huge_timeouts_do_not_overflow() {
        assert_eq!(job_limits(u64::MAX).user_time_100ns, u64::MAX);
    }
}
