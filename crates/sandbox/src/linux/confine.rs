//! Stage 2 of the helper: confine this process, then become the command.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::process::Command;

use rustix::process::{
    Resource, Rlimit, Signal, geteuid, getpriority_process, set_parent_process_death_signal,
    setpriority_process, setrlimit,
};
use rustix::thread::{
    CapabilitiesSecureBits, CapabilitySet, CapabilitySets, set_capabilities,
    set_capabilities_secure_bits, set_no_new_privs,
};

use super::cgroup::{self, CGROUP_ENV};
use super::landlock_rules::{abi_version, restrict};
use super::namespaces;
use super::seccomp;
use super::supervise::REFUSED;
use crate::helper_args::HelperSpec;
use crate::limits::{CPU_GRACE_SECS, MAX_FILE_BYTES, MAX_PROCESSES};

/// How much nicer than the supervisor the command runs.
const COMMAND_NICENESS: i32 = 5;

/// Confines this process as `args` say and `exec`s the program. Returns only on failure.
pub(crate) fn confine(args: &[OsString]) -> i32 {
    let spec = match HelperSpec::decode(args) {
        Ok(spec) => spec,
        Err(message) => return refuse(&message),
    };
    // If the supervisor is killed, the command goes too.
    let _ = set_parent_process_death_signal(Some(Signal::KILL));
    // Into the command's pids cgroup before anything can fork.
    cgroup::join_from_env();
    // A lower priority than the supervisor's, so that a flood of processes cannot starve the
    // watchdog that stops it.
    if let Ok(current) = getpriority_process(None) {
        let _ = setpriority_process(None, current.saturating_add(COMMAND_NICENESS).min(19));
    }
    let user_namespace = namespaces::user_namespace_from_env();
    if let Err(message) = limit_resources(spec.timeout_secs, user_namespace.is_some()) {
        return refuse(&message);
    }
    // The command's own /proc, where it is the first process of a PID namespace (see
    // `supervise`): `ps` and `/proc/self` work and show its processes only. Without one, /proc
    // stays out of reach, since the machine's would show every process of every user.
    let mut read = spec.read.clone();
    if own_proc() {
        // In its own mount namespace: nothing but what it may write stays writable, so no
        // chmod, chown or touch reaches the user's other files either.
        let _ = namespaces::read_only_but(&spec.write);
    } else {
        read.retain(|path| !path.starts_with("/proc"));
    }
    // As root of a user namespace made for an ordinary user: the user again from here on.
    if let Some((uid, gid)) = user_namespace {
        let _ = namespaces::become_user_again(uid, gid);
    }
    drop_root_capabilities(user_namespace.is_some());
    if set_no_new_privs(true).is_err() {
        return refuse("the sandbox could not forbid gaining privileges");
    }
    if let Err(message) = restrict(&read, &spec.write, spec.network) {
        return refuse(&message);
    }
    if let Err(message) = seccomp::apply(spec.network) {
        return refuse(&message);
    }
    let error = Command::new(&spec.program)
        .args(&spec.args)
        .env_remove(CGROUP_ENV)
        .env_remove(namespaces::USER_NAMESPACE_ENV)
        .exec();
    eprintln!(
        "tooltrail: {} could not be started ({})",
        spec.program.to_string_lossy(),
        error.kind()
    );
    127
}

/// The self-test: confines this process with no workspace at all, checks that the root folder
/// and the network are out of reach, and prints what held as `key=value` lines.
pub(crate) fn probe() -> i32 {
    // What bounds the number of processes: checked first, while the file system is in reach.
    let processes = if cgroup::PidsCgroup::create(MAX_PROCESSES).is_some() {
        "cgroup"
    } else if geteuid().is_root() {
        "watchdog"
    } else {
        "rlimit"
    };
    let pid_namespace = namespaces::available();
    let _ = set_no_new_privs(true);
    let landlock = restrict(&[], &[], false);
    let abi = landlock.as_ref().ok().and_then(abi_version).unwrap_or(0);
    let landlock_enforced = landlock.is_ok() && std::fs::read_dir("/").is_err();
    let seccomp_enforced =
        seccomp::apply(false).is_ok() && std::net::UdpSocket::bind(("127.0.0.1", 0)).is_err();
    println!("landlock_abi={abi}");
    println!("landlock={landlock_enforced}");
    println!("seccomp={seccomp_enforced}");
    println!("processes={processes}");
    println!("pid_namespace={pid_namespace}");
    if let Err(message) = landlock {
        println!("problem={message}");
    }
    0
}

/// Mounts a fresh /proc when this process is the first of its own PID namespace.
fn own_proc() -> bool {
    std::process::id() == 1 && namespaces::mount_own_proc()
}

fn refuse(message: &str) -> i32 {
    eprintln!("tooltrail: {message}, so the command was not run");
    REFUSED
}

/// File size, CPU time, core dumps, and the number of processes (for an ordinary user
/// `RLIMIT_NPROC` counts all their processes, so the limit is what they have plus the cap).
/// `user_namespace`: this process is root only of a user namespace made for an ordinary user,
/// whose processes count as its own.
fn limit_resources(timeout_secs: u64, user_namespace: bool) -> Result<(), String> {
    let set = |resource: Resource, value: u64| {
        setrlimit(
            resource,
            Rlimit {
                current: Some(value),
                maximum: Some(value),
            },
        )
        .map_err(|_| "the sandbox could not limit the command's resources".to_string())
    };
    set(Resource::Fsize, MAX_FILE_BYTES)?;
    set(Resource::Cpu, timeout_secs.saturating_add(CPU_GRACE_SECS))?;
    set(Resource::Core, 0)?;
    let uid = geteuid();
    if !uid.is_root() || user_namespace {
        let own = processes_of(uid.as_raw());
        let wanted = own.saturating_add(MAX_PROCESSES);
        let current = rustix::process::getrlimit(Resource::Nproc);
        let allowed = current.maximum.map_or(wanted, |hard| hard.min(wanted));
        set(Resource::Nproc, allowed)?;
    }
    Ok(())
}

fn processes_of(uid: u32) -> u64 {
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .flatten()
                .filter(|entry| entry.file_name().to_string_lossy().parse::<u32>().is_ok())
                .filter(|entry| entry.metadata().is_ok_and(|meta| meta.uid() == uid))
                .count() as u64
        })
        .unwrap_or(0)
}

/// Root keeps its user id but loses every capability, and cannot get them back by running a
/// program: Landlock still hides the machine from it, and it cannot override file permissions,
/// load modules or change the system clock either.
/// In a user namespace made for an ordinary user (`user_namespace`), the capabilities it gave
/// go too.
fn drop_root_capabilities(user_namespace: bool) {
    if !geteuid().is_root() && !user_namespace {
        return;
    }
    let _ = set_capabilities_secure_bits(
        CapabilitiesSecureBits::NO_ROOT
            | CapabilitiesSecureBits::NO_ROOT_LOCKED
            | CapabilitiesSecureBits::NO_SETUID_FIXUP
            | CapabilitiesSecureBits::NO_SETUID_FIXUP_LOCKED,
    );
    let _ = set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    );
}
