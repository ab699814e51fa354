//! The Linux sandbox: a helper process (the host binary re-executed, see
//! [`crate::maybe_run_helper`]) in two stages.
//!
//! 1. [`supervise`]: becomes a child subreaper, makes a pids cgroup for the command where it
//!    may (the bound on processes that holds for root), starts stage 2 in its own process group, and
//!    when the command ends, times out, is cancelled (its stdin pipe closes) or starts too many
//!    processes, kills every descendant, including those that left the group with `setsid` or a
//!    double fork: orphans are re-parented to the subreaper, never to init.
//! 2. [`confine`]: applies resource limits, drops capabilities, sets `no_new_privs`, restricts
//!    itself with Landlock to the folders the caller listed (see [`crate::reach`]: system
//!    folders, toolchains with their secrets left out, the workspace, writable only when the
//!    user approved, a private temp folder and the workspace's caches; everything else invisible)
//!    and a seccomp filter (no network sockets, no ptrace, mount, bpf, keyctl ...), then
//!    `exec`s the shell. Where the system allows it, stage 2 is the first process of a PID
//!    namespace of its own and mounts a `/proc` showing only the command's processes (see
//!    `namespaces.rs`). No `unsafe`: every call goes through `rustix`, `landlock` and
//!    `seccompiler`.

mod cgroup;
mod confine;
mod landlock_rules;
mod namespaces;
mod processes;
mod seccomp;
mod supervise;

pub(crate) use confine::{confine, probe};
pub(crate) use namespaces::user_namespace_check;
pub(crate) use supervise::supervise;
