//! The Landlock ruleset: what a sandboxed command may see and change.

use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, RestrictionStatus,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};

/// The newest ABI this build knows; older kernels get what they support (best effort), and
/// [`restrict`] refuses when nothing at all is enforced.
const ABI_WANTED: ABI = ABI::V10;

/// Restricts this process (and everything it runs) to reading `read` and reading and
/// changing `write` (files or folders, with everything below them). Both are empty for the
/// self-test. TCP is refused unless `network` (a network rule covers the approved command).
pub(crate) fn restrict(
    read: &[PathBuf],
    write: &[PathBuf],
    network: bool,
) -> Result<RestrictionStatus, String> {
    let all = AccessFs::from_all(ABI_WANTED);
    let read_access = AccessFs::from_read(ABI_WANTED);
    let failed = |_| "the Landlock rules could not be built".to_string();
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(failed)?;
    if !network {
        // No TCP bind or connect (seccomp refuses the sockets too, on kernels without this).
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI_WANTED))
            .map_err(failed)?;
    }
    let ruleset = ruleset
        // No signals to processes outside the sandbox, no abstract UNIX sockets outside it.
        .scope(Scope::from_all(ABI_WANTED))
        .map_err(failed)?
        .create()
        .map_err(failed)?
        // A path that does not exist is left out (nothing to allow).
        .add_rules(path_beneath_rules(read, read_access))
        .map_err(failed)?
        .add_rules(path_beneath_rules(write, all))
        .map_err(failed)?;
    let status = ruleset
        .restrict_self()
        .map_err(|_| "Landlock could not restrict the command".to_string())?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("Landlock is not available on this system".to_string());
    }
    Ok(status)
}

/// The Landlock ABI version the kernel speaks, from a restriction's status.
pub(crate) fn abi_version(status: &RestrictionStatus) -> Option<i32> {
    match status.landlock {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => Some(kernel_abi.unwrap_or(effective_abi as i32)),
        LandlockStatus::NotEnabled | LandlockStatus::NotImplemented => None,
    }
}
