//! The seccomp filter: system calls a command never needs, refused with `EPERM` (the program
//! sees an ordinary error and carries on; nothing is killed).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Refused outright: debugging other processes, mounting, loading kernel code, keyrings,
/// namespaces, `io_uring` (its requests bypass this filter), file handles (a classic container
/// escape) and the like.
const REFUSED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fsconfig,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_bpf,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_perf_event_open,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_userfaultfd,
    libc::SYS_acct,
    libc::SYS_syslog,
];

/// Builds the filter for this machine's architecture; `network` leaves `socket()` alone (a
/// network rule covers the approved command).
pub(crate) fn filter(network: bool) -> Result<BpfProgram, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| format!("seccomp is not supported on {}", std::env::consts::ARCH))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = REFUSED
        .iter()
        .map(|&syscall| (syscall, Vec::new()))
        .collect();
    // Sockets: only local (AF_UNIX) ones, so nothing reaches the network.
    let not_local = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )
    .and_then(|condition| SeccompRule::new(vec![condition]))
    .map_err(|_| "the seccomp socket rule could not be built".to_string())?;
    if !network {
        rules.insert(libc::SYS_socket, vec![not_local]);
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|_| "the seccomp filter could not be built".to_string())?;
    BpfProgram::try_from(filter).map_err(|_| "the seccomp filter could not be compiled".to_string())
}

/// Installs the filter on this process (inherited by everything it runs). Needs
/// `no_new_privs`, which Landlock has set by then.
pub(crate) fn apply(network: bool) -> Result<(), String> {
    let program = filter(network)?;
    seccompiler::apply_filter(&program)
        .map_err(|_| "the seccomp filter could not be installed".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_compiles_for_this_machine() {
        let program = filter(false);
        assert!(program.is_ok(), "{program:?}");
        let closed = program.map(|p| p.len()).unwrap_or(0);
        assert!(closed > REFUSED.len());
        let open = filter(true).map(|p| p.len()).unwrap_or(0);
        assert!(open > REFUSED.len() && open < closed);
    }
}
