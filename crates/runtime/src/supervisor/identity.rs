//! Is this process, or this port, still the one the runtime started?
//!
//! A process id read from a file may have been given to another process since (the supervisor
//! died and the system reused its number), and a port chosen free and then released may have
//! been taken by another local program before llama-server bound it. Both are checked before
//! anything is sent: a signal to a process, a prompt or the API key to a port.
//!
//! - A process is known by its id *and* its start time ([`start_time`]), recorded when it
//!   started: a reused id has another start time ([`same_process`]).
//! - A port is known by the process holding its listening socket, looked up in the system's
//!   own tables ([`listening_sockets`]) *before* the key is sent: `/proc` on Linux, the
//!   processes' open sockets on macOS, the TCP table with owners on Windows
//!   (`other_systems.rs`). Every socket that could take a connection to `127.0.0.1:PORT` must
//!   be the child's, and where the system does not say whose a socket is, the port is not
//!   trusted ([`port_owner`], the same rule on every system). The key alone proves nothing
//!   before it is sent: a program that answers 401 without it and then takes any key would
//!   pass, having received it. After this check the key must still be taken (see `probe.rs`).

#[cfg(any(target_os = "macos", windows))]
mod other_systems;
#[cfg(windows)]
pub(in crate::supervisor) use other_systems::with_process;

use std::net::{IpAddr, Ipv4Addr};

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

/// Whether the process `pid` that started at `recorded` still runs: it has not ended, is not
/// an ended process its parent has yet to collect, and its id names no other process since.
pub(crate) fn still_running(pid: u32, recorded: Option<u64>) -> bool {
    #[cfg(target_os = "linux")]
    {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            parse_state(&stat).is_some_and(|state| state != 'Z' && state != 'X')
                && recorded.is_none_or(|recorded| parse_start_time(&stat) == Some(recorded))
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        start_time(pid).is_some() && same_process(pid, recorded)
    }
}

/// Field 3 of a `/proc/PID/stat` line, the process's state (`R`, `S`, `Z` for one that ended
/// and waits for its parent, ...), read after the name as [`parse_start_time`] reads.
pub(crate) fn parse_state(stat: &str) -> Option<char> {
    stat.rsplit_once(") ")?.1.chars().next()
}

/// Field 22 of a `/proc/PID/stat` line. The second field, the command's name in parentheses,
/// may itself hold spaces and parentheses, so fields are counted after its last `)`.
pub(crate) fn parse_start_time(stat: &str) -> Option<u64> {
    let (_, after_name) = stat.rsplit_once(") ")?;
    // After the name come field 3 (the state) onwards: field 22 is the 20th of those.
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// A TCP socket in the listening state, and the processes holding it as far as the system
/// lets this process see (none: held by a process it may not look at).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListeningSocket {
    pub(crate) addr: IpAddr,
    pub(crate) port: u16,
    pub(crate) pids: Vec<u32>,
}

/// Whose the socket listening on the runtime's port is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PortOwner {
    /// The child's, and no other process's.
    Child,
    /// No socket listens there, or one is held by another process (or one not shown).
    Other,
    /// The system did not tell.
    Unknown,
}

/// Whether `child` alone holds the sockets in `sockets` that take connections to
/// `127.0.0.1:port` (`None`: the system gave no table). Unknown is never the child: the key
/// goes to a port only when the table shows it the child's.
pub(crate) fn port_owner(sockets: Option<&[ListeningSocket]>, child: u32, port: u16) -> PortOwner {
    let Some(sockets) = sockets else {
        return PortOwner::Unknown;
    };
    let mut there = sockets
        .iter()
        .filter(|socket| socket.port == port && takes_loopback(socket.addr))
        .peekable();
    if there.peek().is_none() {
        return PortOwner::Other;
    }
    if there.all(|socket| !socket.pids.is_empty() && socket.pids.iter().all(|&pid| pid == child)) {
        PortOwner::Child
    } else {
        PortOwner::Other
    }
}

/// Whether a socket listening on `addr` may take a connection made to `127.0.0.1`: bound to
/// it, to every address, or (IPv6 sockets that also take IPv4) to `::` or `::ffff:127.0.0.1`.
fn takes_loopback(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => v4 == Ipv4Addr::LOCALHOST || v4.is_unspecified(),
        IpAddr::V6(v6) => v6.is_unspecified() || v6.to_ipv4_mapped() == Some(Ipv4Addr::LOCALHOST),
    }
}

/// The TCP sockets listening on this computer, with their processes as far as they are seen;
/// `None` where the system does not tell.
///
/// On Linux, `/proc/net/tcp` lists every socket but not its process, and only `child`'s open
/// files are looked in (another user's cannot be read): a socket not among them is shown held
/// by no process seen, which [`port_owner`] takes for another's.
pub(crate) fn listening_sockets(child: u32) -> Option<Vec<ListeningSocket>> {
    #[cfg(target_os = "linux")]
    {
        let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
        // The child's own open files are always readable to its parent's user: when they are
        // not, it has ended, and an ended process holds no socket.
        let held: Vec<u64> = std::fs::read_dir(format!("/proc/{child}/fd"))
            .map(|fds| {
                fds.flatten()
                    .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                    .filter_map(|link| {
                        link.to_str()?
                            .strip_prefix("socket:[")?
                            .strip_suffix(']')?
                            .parse::<u64>()
                            .ok()
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(
            listening_in_proc_table(&table)
                .into_iter()
                .map(|(addr, port, inode)| ListeningSocket {
                    addr: IpAddr::V4(addr),
                    port,
                    pids: if held.contains(&inode) {
                        vec![child]
                    } else {
                        Vec::new()
                    },
                })
                .collect(),
        )
    }
    #[cfg(any(target_os = "macos", windows))]
    {
        let _ = child;
        other_systems::listening_sockets()
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        let _ = child;
        None
    }
}

/// The listening sockets of a `/proc/net/tcp` table: address, port and inode each.
pub(crate) fn listening_in_proc_table(table: &str) -> Vec<(Ipv4Addr, u16, u64)> {
    table
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // `0A` is TCP_LISTEN; the header line names no address, so it never parses.
            if fields.get(3) != Some(&"0A") {
                return None;
            }
            let (addr, port) = fields.get(1)?.split_once(':')?;
            // The address is printed as the 32-bit word holds it in memory, in this
            // machine's byte order.
            let addr = u32::from_str_radix(addr, 16).ok()?;
            let port = u16::from_str_radix(port, 16).ok()?;
            let inode = fields.get(9)?.parse().ok()?;
            Some((Ipv4Addr::from(addr.to_ne_bytes()), port, inode))
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
        assert_eq!(parse_state(stat), Some('S'));
        assert_eq!(parse_state("4242 (a) b) Z 1"), Some('Z'));
        assert_eq!(parse_state("4242 (cut"), None);
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
    fn the_proc_table_gives_each_listening_socket_its_address_port_and_inode() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
           0: 0100007F:A028 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0 100 0 0 10 0\n\
           1: 0100007F:A028 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 222 1 0 20 4 30 10 -1\n\
           2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 333 1 0 100 0 0 10 0\n";
        let loopback = Ipv4Addr::from(0x0100_007F_u32.to_ne_bytes());
        assert_eq!(
            listening_in_proc_table(table),
            vec![(loopback, 0xA028, 111), (Ipv4Addr::UNSPECIFIED, 8080, 333)]
        );
        // On the machines this runs on (little-endian), that word is 127.0.0.1.
        if cfg!(target_endian = "little") {
            assert_eq!(loopback, Ipv4Addr::LOCALHOST);
        }
    }

    fn socket(addr: &str, port: u16, pids: &[u32]) -> ListeningSocket {
        ListeningSocket {
            addr: addr.parse().unwrap(),
            port,
            pids: pids.to_vec(),
        }
    }

    /// The rule every system's table goes through before the key is sent.
    #[test]
    fn attack_runtime_the_key_goes_only_to_a_port_the_table_shows_the_childs() {
        let child = 4242;
        let port = 41000;
        let owner = |sockets: &[ListeningSocket]| port_owner(Some(sockets), child, port);

        // The system gave no table (an error, a system not known): never the child's.
        assert_eq!(port_owner(None, child, port), PortOwner::Unknown);
        // Nothing listens there (the child has not bound it, or lost it).
        assert_eq!(owner(&[]), PortOwner::Other);
        assert_eq!(
            owner(&[socket("127.0.0.1", 41001, &[child])]),
            PortOwner::Other
        );
        // Another process holds it, or a process the system does not show.
        assert_eq!(
            owner(&[socket("127.0.0.1", port, &[777])]),
            PortOwner::Other
        );
        assert_eq!(owner(&[socket("127.0.0.1", port, &[])]), PortOwner::Other);
        assert_eq!(
            owner(&[socket("127.0.0.1", port, &[child, 777])]),
            PortOwner::Other
        );
        // The child's, but another process listens on every address or on `::` as well.
        for squatter in ["0.0.0.0", "::", "::ffff:127.0.0.1"] {
            assert_eq!(
                owner(&[
                    socket("127.0.0.1", port, &[child]),
                    socket(squatter, port, &[777])
                ]),
                PortOwner::Other,
                "{squatter}"
            );
        }
        // The child's alone; sockets on other addresses or ports are not in the way.
        assert_eq!(
            owner(&[socket("127.0.0.1", port, &[child])]),
            PortOwner::Child
        );
        assert_eq!(
            owner(&[socket("0.0.0.0", port, &[child])]),
            PortOwner::Child
        );
        assert_eq!(
            owner(&[
                socket("127.0.0.1", port, &[child]),
                socket("10.0.0.7", port, &[777]),
                socket("::1", port, &[777]),
                socket("127.0.0.1", 41001, &[777]),
            ]),
            PortOwner::Child
        );
    }

    #[cfg(target_os = "linux")]
    fn listener_owner(child: u32, port: u16) -> PortOwner {
        port_owner(listening_sockets(child).as_deref(), child, port)
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_listener_belongs_to_the_process_that_holds_it_and_to_no_other() {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(listener_owner(std::process::id(), port), PortOwner::Child);
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert_eq!(listener_owner(other.id(), port), PortOwner::Other);
        other.kill().unwrap();
        other.wait().unwrap();
        drop(listener);
        assert_eq!(listener_owner(std::process::id(), port), PortOwner::Other);
    }
}
