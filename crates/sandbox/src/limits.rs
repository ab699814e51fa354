//! Resource limits every sandboxed command runs under, on every platform that can apply them.

/// Largest file a command may write (`RLIMIT_FSIZE`; a Job Object's memory limit on Windows).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024 * 1024;

/// Most processes a command may have alive at once. `RLIMIT_NPROC` applies it for ordinary
/// users; the kernel never applies it to root, so the Linux helper also counts descendants
/// and stops the command when there are more.
pub const MAX_PROCESSES: u64 = 512;

/// CPU seconds each process may use beyond the command's timeout (`RLIMIT_CPU`).
pub const CPU_GRACE_SECS: u64 = 5;
