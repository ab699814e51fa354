//! When a process started, and which processes hold the listening TCP sockets, on macOS and
//! Windows, through crates that ask the system without `unsafe` code of ours:
//!
//! - start times through `sysinfo` (`proc_pidinfo` on macOS, the process's creation time on
//!   Windows). They count whole seconds since the Unix epoch: an id given to another process
//!   within the same second as the one recorded would pass, a far narrower gap than trusting
//!   the id alone.
//! - listening sockets through `netstat2`: on macOS every process's open sockets that this
//!   user may look at (`proc_pidinfo` with `PROC_PIDLISTFDS`, then `proc_pidfdinfo` with
//!   `PROC_PIDFDSOCKETINFO`, the kernel's structures read through bindings generated from the
//!   SDK's headers), on Windows the TCP tables with their owners' ids
//!   (`GetExtendedTcpTable`). `libc` has the calls but not the socket structures, and writing
//!   those by hand is where a mistake would go unseen.

use netstat2::{AddressFamilyFlags, ProtocolFlags, ProtocolSocketInfo, TcpState};
use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

use super::ListeningSocket;

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

/// Every listening TCP socket the system shows, IPv4 and IPv6, with its processes; `None`
/// when the system would not list them.
///
/// A process this user may not look at (another user's, on macOS) is passed over, its sockets
/// unseen. A socket that could not be described fails the whole listing, which is asked again
/// a few times, since that is mostly one closed while it was read; if it goes on failing, the
/// owner is unknown and the port not trusted.
pub(super) fn listening_sockets() -> Option<Vec<ListeningSocket>> {
    let sockets = (0..3).find_map(|_| {
        netstat2::get_sockets_info(
            AddressFamilyFlags::IPV4 | AddressFamilyFlags::IPV6,
            ProtocolFlags::TCP,
        )
        .ok()
    })?;
    Some(
        sockets
            .into_iter()
            .filter_map(|socket| match socket.protocol_socket_info {
                ProtocolSocketInfo::Tcp(tcp) if tcp.state == TcpState::Listen => {
                    Some(ListeningSocket {
                        addr: tcp.local_addr,
                        port: tcp.local_port,
                        pids: socket.associated_pids,
                    })
                }
                _ => None,
            })
            .collect(),
    )
}
