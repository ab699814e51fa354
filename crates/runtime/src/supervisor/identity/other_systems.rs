//! When a process started, on macOS and Windows: through `sysinfo`, which asks the system
//! (`proc_pidinfo` on macOS, the process's creation time on Windows) without code of ours that
//! calls it directly. Its start times count whole seconds since the Unix epoch: an id given to
//! another process within the same second as the one recorded would pass, a far narrower gap
//! than trusting the id alone.

use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

pub(super) fn start_time(pid: u32) -> Option<u64> {
    with_process(pid, sysinfo::Process::start_time)
}

/// What `read` makes of the process `pid`, looked up on its own; `None` where it has ended.
pub(in crate::supervisor) fn with_process<T>(
    pid: u32,
    read: impl FnOnce(&sysinfo::Process) -> T,
) -> Option<T> {
    let pid = Pid::from_u32(pid);
    let mut system = System::new();
    // Start times are read even when nothing else is asked for.
    system.refresh_processes_specifics(
        ProcessesToUpdate::Some(&[pid]),
        true,
        ProcessRefreshKind::nothing(),
    );
    system.process(pid).map(read)
}
