//! The Windows Job Object a command runs in: what it limits ([`JobLimits`], with the flags
//! the Windows API takes, portable and tested on every system), and on Windows the job itself
//! ([`Job`]), which holds a command from its first instruction to its end.
//!
//! A job is Windows' counterpart of what the Linux sandbox does with a process group, a pids
//! cgroup and resource limits: it caps how many processes run at once, how much memory they
//! commit together and how much CPU time they take; it keeps them off the desktop, the
//! clipboard and the system's settings; an error dialog never waits for a click; and closing
//! its handle ends every process in it, so nothing a command starts outlives the call.
//!
//! It does not confine the file system: on Windows every command is still asked about first
//! (see `docs/sandbox.md`).
//!
//! This is the workspace's one crate with `unsafe` code, all of it in `windows.rs`: the calls
//! into the Windows API that no maintained crate offers with these limits.

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::Job;

/// What the job enforces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobLimits {
    /// `JOB_OBJECT_LIMIT_ACTIVE_PROCESS`: processes running at once.
    pub active_processes: u32,
    /// `JOB_OBJECT_LIMIT_JOB_MEMORY`: memory committed by all of them together, in bytes.
    pub job_memory_bytes: u64,
    /// `JOB_OBJECT_LIMIT_JOB_TIME`: user-mode CPU time of all of them, in 100-nanosecond units.
    pub user_time_100ns: u64,
    /// `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: closing the handle ends every process in the job.
    pub kill_on_close: bool,
    /// `JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION`: no error dialog waiting for a click.
    pub die_on_unhandled_exception: bool,
    /// `JOB_OBJECT_UILIMIT_*`: no other desktop, clipboard, global atoms, other processes'
    /// windows, display or system settings, and no logging off.
    pub ui_restricted: bool,
}

// The values of winnt.h; `windows.rs` checks them against the Windows API's own when it is
// compiled.
pub(crate) const LIMIT_JOB_TIME: u32 = 0x0000_0004;
pub(crate) const LIMIT_ACTIVE_PROCESS: u32 = 0x0000_0008;
pub(crate) const LIMIT_JOB_MEMORY: u32 = 0x0000_0200;
pub(crate) const LIMIT_DIE_ON_UNHANDLED_EXCEPTION: u32 = 0x0000_0400;
pub(crate) const LIMIT_KILL_ON_JOB_CLOSE: u32 = 0x0000_2000;
pub(crate) const UILIMIT_HANDLES: u32 = 0x0001;
pub(crate) const UILIMIT_READCLIPBOARD: u32 = 0x0002;
pub(crate) const UILIMIT_WRITECLIPBOARD: u32 = 0x0004;
pub(crate) const UILIMIT_SYSTEMPARAMETERS: u32 = 0x0008;
pub(crate) const UILIMIT_DISPLAYSETTINGS: u32 = 0x0010;
pub(crate) const UILIMIT_GLOBALATOMS: u32 = 0x0020;
pub(crate) const UILIMIT_DESKTOP: u32 = 0x0040;
pub(crate) const UILIMIT_EXITWINDOWS: u32 = 0x0080;

impl JobLimits {
    /// `LimitFlags` of `JOBOBJECT_BASIC_LIMIT_INFORMATION`.
    pub fn limit_flags(&self) -> u32 {
        let mut flags = LIMIT_ACTIVE_PROCESS | LIMIT_JOB_MEMORY | LIMIT_JOB_TIME;
        if self.kill_on_close {
            flags |= LIMIT_KILL_ON_JOB_CLOSE;
        }
        if self.die_on_unhandled_exception {
            flags |= LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
        }
        flags
    }

    /// `UIRestrictionsClass` of `JOBOBJECT_BASIC_UI_RESTRICTIONS`.
    pub fn ui_restrictions(&self) -> u32 {
        if !self.ui_restricted {
            return 0;
        }
        UILIMIT_HANDLES
            | UILIMIT_READCLIPBOARD
            | UILIMIT_WRITECLIPBOARD
            | UILIMIT_SYSTEMPARAMETERS
            | UILIMIT_DISPLAYSETTINGS
            | UILIMIT_GLOBALATOMS
            | UILIMIT_DESKTOP
            | UILIMIT_EXITWINDOWS
    }

    /// `PerJobUserTimeLimit`, which the API takes as a signed count.
    pub fn user_time_limit(&self) -> i64 {
        i64::try_from(self.user_time_100ns).unwrap_or(i64::MAX)
    }

    /// `JobMemoryLimit`, at most what the address space can hold.
    pub fn job_memory_limit(&self) -> usize {
        usize::try_from(self.job_memory_bytes).unwrap_or(usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn limits() -> JobLimits {
        JobLimits {
            active_processes: 512,
            job_memory_bytes: 4 << 30,
            user_time_100ns: 350_000_000,
            kill_on_close: true,
            die_on_unhandled_exception: true,
            ui_restricted: true,
        }
    }

    #[test]
    fn a_command_s_job_limits_processes_memory_and_time_and_ends_with_its_handle() {
        assert_eq!(
            limits().limit_flags(),
            0x2000 | 0x0400 | 0x0200 | 0x0008 | 0x0004
        );
        let without = JobLimits {
            kill_on_close: false,
            die_on_unhandled_exception: false,
            ..limits()
        };
        assert_eq!(without.limit_flags(), 0x0200 | 0x0008 | 0x0004);
    }

    #[test]
    fn a_command_s_job_keeps_it_off_the_desktop_the_clipboard_and_the_settings() {
        assert_eq!(limits().ui_restrictions(), 0xff);
        let open = JobLimits {
            ui_restricted: false,
            ..limits()
        };
        assert_eq!(open.ui_restrictions(), 0);
    }

    #[test]
    fn limits_too_large_for_the_api_become_its_largest() {
        let huge = JobLimits {
            user_time_100ns: u64::MAX,
            job_memory_bytes: u64::MAX,
            ..limits()
        };
        assert_eq!(huge.user_time_limit(), i64::MAX);
        assert_eq!(huge.job_memory_limit(), usize::MAX);
        assert_eq!(limits().user_time_limit(), 350_000_000);
    }
}
