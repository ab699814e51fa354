//! Windows: the limits of the Job Object a command runs in. The builder is portable and
//! tested everywhere; applying it (with a restricted token) is not implemented yet, so on
//! Windows the sandbox reports itself as not enforced and every command is asked about.

use crate::limits::{MAX_FILE_BYTES, MAX_PROCESSES};

/// What the Job Object enforces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobLimits {
    /// `JOB_OBJECT_LIMIT_ACTIVE_PROCESS`.
    pub active_processes: u32,
    /// `JOB_OBJECT_LIMIT_JOB_MEMORY`, in bytes.
    pub job_memory_bytes: u64,
    /// `JOB_OBJECT_LIMIT_JOB_TIME`, in 100-nanosecond units of user time.
    pub user_time_100ns: u64,
    /// `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: closing the handle kills every process in the job.
    pub kill_on_close: bool,
    /// `JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION`: no error dialogs waiting for a click.
    pub die_on_unhandled_exception: bool,
    /// `JOB_OBJECT_UILIMIT_*`: no desktop, clipboard or system settings access.
    pub ui_restricted: bool,
}

impl JobLimits {
    pub fn for_command(timeout_secs: u64) -> Self {
        Self {
            active_processes: u32::try_from(MAX_PROCESSES).unwrap_or(u32::MAX),
            job_memory_bytes: MAX_FILE_BYTES.saturating_mul(4),
            user_time_100ns: timeout_secs.saturating_add(5).saturating_mul(10_000_000),
            kill_on_close: true,
            die_on_unhandled_exception: true,
            ui_restricted: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn limits_for_a_thirty_second_command() {
        assert_eq!(
            JobLimits::for_command(30),
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
        assert_eq!(JobLimits::for_command(u64::MAX).user_time_100ns, u64::MAX);
    }
}
