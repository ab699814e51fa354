//! A PID namespace and a `/proc` of the command's own, so that `ps` and `/proc/self` work and
//! show its processes only, never the machine's (other users' command lines included).
//!
//! The supervisor asks for a new PID namespace for its children (it stays in the machine's, so
//! its walk of `/proc` still finds every descendant); the helper's second stage, the first
//! process there, takes a mount namespace of its own and mounts a fresh `/proc` over the old
//! one, seen by nobody else. Both need privileges an ordinary user may lack; then the command
//! runs without `/proc` at all, as before.

use rustix::mount::{MountFlags, MountPropagationFlags, mount, mount_change};
use rustix::thread::UnshareFlags;

/// `unshare(2)` for namespace flags. rustix deprecates its safe `unshare` because
/// `CLONE_FILES` can leave other threads with a file table they do not expect; the flags used
/// here (`CLONE_NEWPID`, `CLONE_NEWNS`) share no file descriptors, and this crate has no
/// `unsafe`.
#[allow(deprecated)]
fn unshare(flags: UnshareFlags) -> rustix::io::Result<()> {
    rustix::thread::unshare(flags)
}

/// Puts the children this process starts from now on into a new PID namespace. False where
/// the system does not allow it (they then share the machine's).
pub(crate) fn new_pid_namespace_for_children() -> bool {
    unshare(UnshareFlags::NEWPID).is_ok()
}

/// In the first process of a PID namespace: a private mount namespace with a fresh `/proc`.
pub(crate) fn mount_own_proc() -> bool {
    unshare(UnshareFlags::NEWNS).is_ok()
        // Nothing mounted here reaches the machine's mount namespace.
        && mount_change("/", MountPropagationFlags::PRIVATE | MountPropagationFlags::REC).is_ok()
        && mount(
            "proc",
            "/proc",
            "proc",
            MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
            None,
        )
        .is_ok()
}

/// For the self-test: whether this process may make the namespaces above.
pub(crate) fn available() -> bool {
    unshare(UnshareFlags::NEWPID | UnshareFlags::NEWNS).is_ok()
}
