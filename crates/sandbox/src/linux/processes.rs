//! Finding and killing every descendant of the helper, from `/proc`.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use rustix::process::{Pid, Signal, WaitOptions, getpid, kill_process, kill_process_group, wait};

/// Rounds of kill-and-reap before giving up on processes that keep appearing.
const KILL_ROUNDS: usize = 2000;
const KILL_PAUSE: Duration = Duration::from_millis(2);

/// Every live process whose ancestry leads to `root` (not `root` itself).
pub(crate) fn descendants(root: i32) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some(parent) = parent_of(pid) {
            children.entry(parent).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    let mut queue = vec![root];
    while let Some(next) = queue.pop() {
        for &child in children.get(&next).map(Vec::as_slice).unwrap_or_default() {
            if seen.insert(child) {
                found.push(child);
                queue.push(child);
            }
        }
    }
    found
}

/// The parent pid, from `/proc/<pid>/stat` (the field after the command name, which may itself
/// contain spaces and parentheses, so the last `)` is where it ends).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_parent(&stat)
}

pub(crate) fn parse_parent(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let _state = fields.next()?;
    fields.next()?.parse().ok()
}

/// Reaps every child that has ended; returns the status of `watched` if it was among them.
pub(crate) fn reap(watched: i32) -> Option<rustix::process::WaitStatus> {
    let mut found = None;
    // `wait`, not `waitpid(None)`: that one only sees children in this process group.
    while let Ok(Some((pid, status))) = wait(WaitOptions::NOHANG) {
        if pid.as_raw_nonzero().get() == watched {
            found = Some(status);
        }
    }
    found
}

/// Kills the command's process group and every descendant of this process until none is left
/// (orphans of killed processes are re-parented here, the subreaper, and caught next round).
/// Returns the status of `watched` if it was reaped here.
/// `also` are known members (of the command's cgroup), killed first without a walk of `/proc`.
pub(crate) fn kill_all(
    group: i32,
    watched: i32,
    also: &[i32],
) -> Option<rustix::process::WaitStatus> {
    let me = getpid().as_raw_nonzero().get();
    let mut status = None;
    for pid in also.iter().filter_map(|pid| Pid::from_raw(*pid)) {
        let _ = kill_process(pid, Signal::KILL);
    }
    for _ in 0..KILL_ROUNDS {
        if let Some(pid) = Pid::from_raw(group) {
            let _ = kill_process_group(pid, Signal::KILL);
        }
        let alive = descendants(me);
        for pid in &alive {
            if let Some(pid) = Pid::from_raw(*pid) {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
        if let Some(found) = reap(watched) {
            status = Some(found);
        }
        if alive.is_empty() {
            break;
        }
        std::thread::sleep(KILL_PAUSE);
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_is_read_past_odd_command_names() {
        assert_eq!(parse_parent("42 (a) b (c)) S 7 42 42 0"), Some(7));
        assert_eq!(parse_parent("42 (bash) R 1 42"), Some(1));
        assert_eq!(parse_parent("garbage"), None);
    }

    #[test]
    fn this_process_has_no_unknown_descendants() {
        let me = getpid().as_raw_nonzero().get();
        assert!(descendants(me).iter().all(|pid| *pid != me));
    }
}
