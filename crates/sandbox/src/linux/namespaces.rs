//! A PID namespace and a `/proc` of the command's own, so that `ps` and `/proc/self` work and
//! show its processes only, never the machine's (other users' command lines included).
//!
//! The supervisor asks for a new PID namespace for its children (it stays in the machine's, so
//! its walk of `/proc` still finds every descendant); the helper's second stage, the first
//! process there, takes a mount namespace of its own and mounts a fresh `/proc` over the old
//! one, seen by nobody else.
//!
//! Root may do that at once. An ordinary user first needs a user namespace in which they are
//! root: the supervisor makes one (after a throwaway child showed that this system lets it map
//! the user, since a half-made one cannot be left), and the second stage, once `/proc` is
//! mounted, makes a second one inside it that maps the user back to their own id, so the
//! command runs as who the user is. Where none of this is allowed, the command runs without
//! `/proc` at all.

use rustix::mount::{MountFlags, MountPropagationFlags, mount, mount_change};
use rustix::process::{getgid, getuid};
use rustix::thread::UnshareFlags;

/// Set by the supervisor for the second stage when it runs as root of a user namespace made
/// for it; the value is the user's own id and group, `uid:gid`.
pub(crate) const USER_NAMESPACE_ENV: &str = "TOOLTRAIL_SANDBOX_USERNS";

/// `unshare(2)` for namespace flags. rustix deprecates its safe `unshare` because
/// `CLONE_FILES` can leave other threads with a file table they do not expect; the flags used
/// here (`CLONE_NEWPID`, `CLONE_NEWNS`, `CLONE_NEWUSER`) share no file descriptors, and this
/// crate has no `unsafe`.
#[allow(deprecated)]
fn unshare(flags: UnshareFlags) -> rustix::io::Result<()> {
    rustix::thread::unshare(flags)
}

/// How the children of the supervisor were put into a PID namespace of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PidNamespace {
    /// Directly (root).
    Direct,
    /// Inside a user namespace where the user is root; the value is `uid:gid` to map back to.
    User {
        uid: u32,
        gid: u32,
    },
    None,
}

/// Puts the children this process starts from now on into a new PID namespace, where the
/// system allows it. `helper` is this program, for the throwaway check an ordinary user needs.
pub(crate) fn new_pid_namespace_for_children(helper: &std::path::Path) -> PidNamespace {
    if unshare(UnshareFlags::NEWPID).is_ok() {
        return PidNamespace::Direct;
    }
    let (uid, gid) = (getuid().as_raw(), getgid().as_raw());
    if user_namespace_check_passes(helper)
        && enter_user_namespace_as_root(uid, gid)
        && unshare(UnshareFlags::NEWPID).is_ok()
    {
        return PidNamespace::User { uid, gid };
    }
    PidNamespace::None
}

/// Whether [`user_namespace_check`] passes in a throwaway child of `helper` (this program): a
/// process cannot leave the namespaces it enters, so the try is made in one that then ends.
fn user_namespace_check_passes(helper: &std::path::Path) -> bool {
    std::process::Command::new(helper)
        .arg(crate::helper_args::USERNS_CHECK_ARG)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// The throwaway check: whether this process may become root of a user namespace of its own.
pub(crate) fn user_namespace_check() -> i32 {
    let (uid, gid) = (getuid().as_raw(), getgid().as_raw());
    if enter_user_namespace_as_root(uid, gid) && unshare(UnshareFlags::NEWPID).is_ok() {
        0
    } else {
        1
    }
}

/// A new user namespace in which this process (user `uid`, group `gid` outside) is root.
fn enter_user_namespace_as_root(uid: u32, gid: u32) -> bool {
    unshare(UnshareFlags::NEWUSER).is_ok() && map_ids(0, uid, 0, gid)
}

/// Maps `inside` to `outside` in this process's (new) user namespace.
fn map_ids(uid_inside: u32, uid_outside: u32, gid_inside: u32, gid_outside: u32) -> bool {
    std::fs::write("/proc/self/setgroups", "deny").is_ok()
        && std::fs::write(
            "/proc/self/uid_map",
            format!("{uid_inside} {uid_outside} 1"),
        )
        .is_ok()
        && std::fs::write(
            "/proc/self/gid_map",
            format!("{gid_inside} {gid_outside} 1"),
        )
        .is_ok()
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

/// The user's own ids when the supervisor made a user namespace for this process.
pub(crate) fn user_namespace_from_env() -> Option<(u32, u32)> {
    let value = std::env::var(USER_NAMESPACE_ENV).ok()?;
    let (uid, gid) = value.split_once(':')?;
    Some((uid.parse().ok()?, gid.parse().ok()?))
}

/// In the second stage, as root of the supervisor's user namespace: a user namespace inside it
/// where the user is themselves again (`uid`, `gid`), so the command does not run as root.
pub(crate) fn become_user_again(uid: u32, gid: u32) -> bool {
    unshare(UnshareFlags::NEWUSER).is_ok() && map_ids(uid, 0, gid, 0)
}

/// For the self-test: whether this process may make the namespaces above (for an ordinary
/// user, checked in a throwaway child, as the supervisor does).
pub(crate) fn available() -> bool {
    if unshare(UnshareFlags::NEWPID | UnshareFlags::NEWNS).is_ok() {
        return true;
    }
    std::env::current_exe().is_ok_and(|helper| user_namespace_check_passes(&helper))
}

/// In the command's own mount namespace: every mount read-only but the folders it may write
/// (bound onto themselves first, so they stay writable). Landlock does not cover changes of a
/// file's mode, owner or times, so without this a command could `chmod` or `touch` any file
/// of the user it can name, even one it cannot read; on a read-only mount those fail.
/// Best effort per mount: returns how many mounts could not be made read-only.
pub(crate) fn read_only_but(writable: &[std::path::PathBuf]) -> usize {
    let dirs: Vec<&std::path::PathBuf> = writable.iter().filter(|path| path.is_dir()).collect();
    for dir in &dirs {
        let _ = rustix::mount::mount_bind_recursive(dir.as_path(), dir.as_path());
    }
    // The working folder still points below the new mounts; enter it again through them.
    if let Ok(cwd) = std::env::current_dir() {
        let _ = std::env::set_current_dir(cwd);
    }
    let Ok(table) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return 1;
    };
    let mut failed = 0;
    for line in table.lines() {
        let Some((target, options)) = mount_point(line) else {
            continue;
        };
        if dirs.iter().any(|dir| target.starts_with(dir)) {
            continue;
        }
        let flags =
            options
                .split(',')
                .fold(MountFlags::BIND | MountFlags::RDONLY, |flags, option| {
                    flags
                        | match option {
                            // A user namespace may not drop these from a mount it was given.
                            "nosuid" => MountFlags::NOSUID,
                            "nodev" => MountFlags::NODEV,
                            "noexec" => MountFlags::NOEXEC,
                            "noatime" => MountFlags::NOATIME,
                            "nodiratime" => MountFlags::NODIRATIME,
                            "relatime" => MountFlags::RELATIME,
                            _ => MountFlags::empty(),
                        }
                });
        if rustix::mount::mount_remount(target.as_path(), flags, "").is_err() {
            failed += 1;
        }
    }
    failed
}

/// The mount point and per-mount options of a `/proc/self/mountinfo` line (fields 5 and 6;
/// spaces and the like in the path are written as octal escapes).
fn mount_point(line: &str) -> Option<(std::path::PathBuf, &str)> {
    let mut fields = line.split(' ');
    let target = fields.nth(4)?;
    let options = fields.next()?;
    Some((std::path::PathBuf::from(unescape(target)), options))
}

fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'\\'
            && at + 3 < bytes.len()
            && let Ok(code) = u8::from_str_radix(&text[at + 1..at + 4], 8)
        {
            out.push(code);
            at += 4;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_read_with_their_escapes() {
        let line = "36 35 98:0 /mnt1 /my\\040folder rw,nosuid,noatime master:1 - ext3 /dev/root rw";
        let (target, options) = mount_point(line).unwrap();
        assert_eq!(target, std::path::PathBuf::from("/my folder"));
        assert_eq!(options, "rw,nosuid,noatime");
        assert_eq!(mount_point("garbage"), None);
    }
}
