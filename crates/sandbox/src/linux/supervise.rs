//! Stage 1 of the helper: start the confined command and make sure nothing it started
//! outlives it.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Signal, WaitStatus, getpid, kill_process, set_child_subreaper};

use super::cgroup::{CGROUP_ENV, PidsCgroup};
use super::namespaces::{PidNamespace, USER_NAMESPACE_ENV};
use super::processes::{descendants, kill_all, reap};
use crate::helper_args::{CONFINE_ARG, HelperSpec};
use crate::limits::MAX_PROCESSES;

/// How often the helper wakes to reap and to watch its stdin.
const TICK: Duration = Duration::from_millis(20);
/// How often it counts the command's processes.
const COUNT_EVERY: Duration = Duration::from_millis(100);
/// Past the command's timeout, how long before the helper stops it by itself (the caller
/// normally does first, by closing the helper's stdin).
const TIMEOUT_GRACE: Duration = Duration::from_secs(2);

/// Exit status when the helper itself failed or refused.
pub(crate) const REFUSED: i32 = 126;

/// Runs the command described by `args`; returns the exit status for the helper process.
/// The caller closes the helper's stdin (a pipe) to cancel.
pub(crate) fn supervise(args: &[OsString]) -> i32 {
    let spec = match HelperSpec::decode(args) {
        Ok(spec) => spec,
        Err(message) => return refuse(&message),
    };
    let me = getpid();
    if set_child_subreaper(Some(me)).is_err() {
        return refuse("the sandbox helper could not adopt the command's orphaned processes");
    }
    let Ok(exe) = std::env::current_exe() else {
        return refuse("the sandbox helper could not find its own program");
    };
    let cgroup = PidsCgroup::create(MAX_PROCESSES);
    // The command starts a PID namespace of its own where the system allows one: it sees its
    // own processes only, and when its first process ends, the kernel ends the rest.
    let pid_namespace = super::namespaces::new_pid_namespace_for_children(&exe);
    let mut command = Command::new(exe);
    command
        .arg(CONFINE_ARG)
        .args(spec.encode())
        .stdin(Stdio::null())
        .process_group(0);
    if let Some(cgroup) = &cgroup {
        command.env(CGROUP_ENV, cgroup.dir());
    }
    if let PidNamespace::User { uid, gid } = pid_namespace {
        command.env(USER_NAMESPACE_ENV, format!("{uid}:{gid}"));
    }
    let child = command.spawn();
    let child = match child {
        Ok(child) => child,
        Err(error) => {
            return refuse(&format!(
                "the sandbox helper could not start the command ({})",
                error.kind()
            ));
        }
    };
    // The child is reaped with `waitpid` below, together with adopted orphans.
    let Ok(pid) = i32::try_from(child.id()) else {
        return refuse("the sandbox helper got an invalid process id");
    };
    drop(child);

    let deadline = Instant::now() + Duration::from_secs(spec.timeout_secs) + TIMEOUT_GRACE;
    let mut counted = Instant::now();
    let stop = |cgroup: &Option<PidsCgroup>| {
        let members = cgroup.as_ref().map(PidsCgroup::members).unwrap_or_default();
        kill_all(pid, pid, &members);
    };
    loop {
        if let Some(status) = reap(pid) {
            // The shell ended: whatever it left running in the background goes with it.
            stop(&cgroup);
            // Removed before a signal that killed the shell may be raised here.
            drop(cgroup);
            return exit_code(status);
        }
        if caller_gone() {
            stop(&cgroup);
            return 128 + 9;
        }
        if Instant::now() >= deadline {
            stop(&cgroup);
            eprintln!("tooltrail: the command ran past its timeout and was stopped");
            return 124;
        }
        // The cgroup's counter is cheap to read every tick; the walk of /proc is not.
        let too_many = match &cgroup {
            Some(cgroup) => cgroup.limit_hit(),
            None if counted.elapsed() >= COUNT_EVERY => {
                counted = Instant::now();
                descendants(me.as_raw_nonzero().get()).len() as u64 > MAX_PROCESSES
            }
            None => false,
        };
        if too_many {
            stop(&cgroup);
            eprintln!(
                "tooltrail: the command started more than {MAX_PROCESSES} processes and was stopped"
            );
            return 125;
        }
    }
}

fn refuse(message: &str) -> i32 {
    eprintln!("tooltrail: {message}, so the command was not run");
    REFUSED
}

/// Waits one tick on stdin; true when the caller closed its end (cancel, or the caller died).
fn caller_gone() -> bool {
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    let tick = Timespec {
        tv_sec: 0,
        tv_nsec: TICK.as_nanos() as _,
    };
    match poll(&mut fds, Some(&tick)) {
        Ok(0) => false,
        Ok(_) => {
            let events = fds[0].revents();
            if events.intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL) {
                return true;
            }
            // Readable without a hang-up (not a pipe, e.g. /dev/null): just wait the tick.
            std::thread::sleep(TICK);
            false
        }
        Err(_) => {
            std::thread::sleep(TICK);
            false
        }
    }
}

/// The helper's own exit status: the shell's, or a re-raised signal that killed it.
fn exit_code(status: WaitStatus) -> i32 {
    if let Some(code) = status.exit_status() {
        return code;
    }
    if let Some(signal) = status.terminating_signal() {
        if let Some(signal) = Signal::from_named_raw(signal) {
            let _ = kill_process(getpid(), signal);
        }
        return 128 + signal;
    }
    REFUSED
}
