//! Is this process, or this port, still the one the runtime started?
//!
//! A process id read from a file may have been given to another process since (the supervisor
//! died and the system reused its number), and a port chosen free and then released may have
//! been taken by another local program before llama-server bound it. Both are checked before
//! anything is sent: a signal to a process, a prompt or the API key to a port.
//!
//! - A process is known by its id *and* its start time ([`start_time`]), recorded when it
//!   started: a reused id has another start time ([`same_process`]).
//! - A port is known by the key: llama-server refuses a request without it (401) and takes one
//!   with it, which no other program can fake without the key (see `probe.rs`). On Linux the
//!   listening socket is also looked up in the child's open files ([`listener_owned_by`])
//!   *before* the key is sent, so even a program that answers 401 to everything never sees it.

#[cfg(any(target_os = "macos", windows))]
mod other_systems;
#[cfg(windows)]
pub(in crate::supervisor) use other_systems::with_process;

/// Whether `pid` is still the process that started at `recorded` (as [`start_time`] read it
/// then), so that a signal or a kill reaches it and no other: the check before anything is
/// done to a process id read from a file or handed down.
///
/// With no recorded start time (a system that did not tell when it was written), the id alone
/// is trusted, as it always was: a reused id is then signalled, which is the gap the start time
/// closes where the system tells it.
pub(crate) fn same_process(pid: u32, recorded: Option<u64>) -> bool {
    match recorded {
        Some(recorded) => start_time(pid) == Some(recorded),
        None => true,
    }
}

/// When the process `pid` started, as a number only compared with another read on the same
/// computer: clock ticks since boot on Linux (field 22 of `/proc/PID/stat`), seconds since
/// the Unix epoch on macOS and Windows (`other_systems.rs`). `None` where it has ended or
/// the system does not tell.
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        parse_start_time(&stat)
    }
    #[cfg(any(target_os = "macos", windows))]
    {
        other_systems::start_time(pid)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        let _ = pid;
        None
    }
}

/// Field 22 of a `/proc/PID/stat` line. The second field, the command's name in parentheses,
/// may itself hold spaces and parentheses, so fields are counted after its last `)`.
pub(crate) fn parse_start_time(stat: &str) -> Option<u64> {
    let (_, after_name) = stat.rsplit_once(") ")?;
    // After the name come field 3 (the state) onwards: field 22 is the 20th of those.
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the socket listening on `127.0.0.1:port` is one of `pid`'s open files: `Some(true)`
/// or `Some(false)` on Linux, `None` where the system does not tell.
pub(crate) fn listener_owned_by(pid: u32, port: u16) -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
        let inodes = listening_inodes(&table, port);
        if inodes.is_empty() {
            return Some(false);
        }
        // The child's own open files are always readable to its parent's user: when they are
        // not, it has ended, and an ended process holds no socket.
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return Some(false);
        };
        let owned = fds
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok())
            .filter_map(|link| {
                link.to_str()?
                    .strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .parse::<u64>()
                    .ok()
            })
            .any(|inode| inodes.contains(&inode));
        Some(owned)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pid, port);
        None
    }
}

/// The inodes of the sockets listening on `127.0.0.1:port` in a `/proc/net/tcp` table.
pub(crate) fn listening_inodes(table: &str, port: u16) -> Vec<u64> {
    let local = format!("0100007F:{port:04X}");
    table
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // `0A` is TCP_LISTEN; the header line names no address, so it never matches.
            let listening = fields.get(1) == Some(&local.as_str()) && fields.get(3) == Some(&"0A");
            listening.then(|| fields.get(9)?.parse().ok()).flatten()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_start_time_is_field_22_counted_after_the_name() {
        let stat = "4242 (tool (trail) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 987654 1000 50";
        assert_eq!(parse_start_time(stat), Some(987_654));
        assert_eq!(parse_start_time("4242 (short) S 1"), None);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn this_process_has_a_start_time_that_does_not_change() {
        let me = std::process::id();
        let first = start_time(me);
        assert!(first.is_some());
        assert_eq!(start_time(me), first);
    }

    /// The check `models stop` and the watch make before they signal a process id.
    #[test]
    #[cfg(any(target_os = "linux", target_os = "macos", windows))]
    fn a_process_is_the_same_only_with_the_start_time_it_had() {
        let me = std::process::id();
        let started = start_time(me).unwrap();
        assert!(same_process(me, Some(started)));
        assert!(!same_process(me, Some(started + 1)));
        // Nothing recorded: the id alone, as before start times were kept.
        assert!(same_process(me, None));
    }

    /// An ended and reaped process has no start time. (Not on Windows, where the process
    /// object lives on for as long as a handle to it is open, as the test's own is.)
    #[test]
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    fn an_ended_process_is_not_the_one_recorded() {
        let mut ended = std::process::Command::new("true").spawn().unwrap();
        let pid = ended.id();
        let started = start_time(pid);
        ended.wait().unwrap();
        assert_eq!(start_time(pid), None);
        assert!(!same_process(pid, Some(started.unwrap_or(1))));
    }

    #[test]
    fn only_listening_sockets_on_the_port_count() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
           0: 0100007F:A028 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0 100 0 0 10 0\n\
           1: 0100007F:A028 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 222 1 0 20 4 30 10 -1\n\
           2: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 333 1 0 100 0 0 10 0\n";
        assert_eq!(listening_inodes(table, 0xA028), vec![111]);
        assert_eq!(listening_inodes(table, 8080), vec![333]);
        assert_eq!(listening_inodes(table, 9), Vec::<u64>::new());
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_listener_belongs_to_the_process_that_holds_it_and_to_no_other() {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(listener_owned_by(std::process::id(), port), Some(true));
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert_eq!(listener_owned_by(other.id(), port), Some(false));
        other.kill().unwrap();
        other.wait().unwrap();
        drop(listener);
        assert_eq!(listener_owned_by(std::process::id(), port), Some(false));
    }
}
