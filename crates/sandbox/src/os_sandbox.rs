//! The OS sandbox every command runs in, and what it enforces on this machine.
//!
//! On Linux the sandbox is a helper process: the host binary (the `tooltrail` CLI, the desktop
//! app) re-executed with a hidden first argument. Every binary that runs commands calls
//! [`maybe_run_helper`] first thing in `main`; that both serves the helper modes and registers
//! the binary as able to serve them. [`Sandbox::detect`] then runs the helper's self-test once
//! and reports what held. Where nothing can be enforced (another kernel, a binary that cannot
//! be its own helper), [`Sandbox::is_enforced`] is false and callers must ask the user before
//! every command: a command never runs unconfined without anyone knowing.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::helper_args::{CONFINE_ARG, HELPER_ARG, PROBE_ARG, USERNS_CHECK_ARG};

/// The program that serves the helper modes in this process, once registered.
static HELPER: OnceLock<PathBuf> = OnceLock::new();
/// The self-test result for this process's helper, once run.
static DETECTED: OnceLock<Sandbox> = OnceLock::new();

/// Serves the helper's hidden modes when this process was started as the sandbox helper (and
/// then exits); otherwise registers this binary as the helper and returns. Call it first in
/// `main`, before any thread is started.
pub fn maybe_run_helper() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let Some(mode) = args.first().and_then(|mode| mode.to_str())
        && let Some(code) = run_mode(mode, &args[1..])
    {
        std::process::exit(code);
    }
    if let Ok(exe) = std::env::current_exe() {
        let _ = HELPER.set(exe);
    }
}

#[cfg(target_os = "linux")]
fn run_mode(mode: &str, args: &[std::ffi::OsString]) -> Option<i32> {
    match mode {
        HELPER_ARG => Some(crate::linux::supervise(args)),
        CONFINE_ARG => Some(crate::linux::confine(args)),
        PROBE_ARG => Some(crate::linux::probe()),
        USERNS_CHECK_ARG => Some(crate::linux::user_namespace_check()),
        _ => None,
    }
}

#[cfg(not(target_os = "linux"))]
fn run_mode(mode: &str, _args: &[std::ffi::OsString]) -> Option<i32> {
    match mode {
        HELPER_ARG | CONFINE_ARG | PROBE_ARG | USERNS_CHECK_ARG => {
            eprintln!("tooltrail: the sandbox helper only exists on Linux");
            Some(126)
        }
        _ => None,
    }
}

/// What the sandbox enforces on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxStatus {
    /// `linux`, `macos`, `windows`, ...
    pub platform: &'static str,
    /// Commands run confined: file access limited, no network. When false, every command is
    /// asked about first.
    pub enforced: bool,
    /// The mechanism, e.g. `Landlock ABI 7 and seccomp`.
    pub mechanism: String,
    /// Linux: the kernel's Landlock ABI version (0 when it has none).
    pub landlock_abi: Option<u32>,
    /// Linux: whether the seccomp filter holds (no network sockets, no ptrace, ...).
    pub seccomp: Option<bool>,
    /// Limits on file size, CPU time and processes, and no process outliving its call.
    pub process_limits: bool,
    /// What bounds the number of a command's processes: `cgroup` (a pids cgroup, a hard
    /// limit), `rlimit` (`RLIMIT_NPROC`, a hard limit for users other than root), `watchdog`
    /// (the helper counts and stops the command; a fast fork bomb may briefly exceed it), `job`
    /// (Windows: the command's Job Object, a hard limit), or `none`.
    pub process_cap: &'static str,
    /// Linux: the command gets a PID namespace and a `/proc` of its own, so `ps` shows its own
    /// processes; without one it cannot read `/proc` at all.
    pub own_processes: bool,
    /// Why the sandbox is not (fully) enforced, in one sentence.
    pub problem: Option<String>,
}

/// The OS sandbox commands run in: the helper program and what it enforces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    helper: Option<PathBuf>,
    status: SandboxStatus,
}

impl Sandbox {
    /// The sandbox of this process: its helper if `main` called [`maybe_run_helper`], tested
    /// once and remembered.
    pub fn detect() -> Self {
        DETECTED
            .get_or_init(|| match HELPER.get() {
                Some(helper) => Self::with_helper(helper),
                None => Self::unavailable(
                    "this program cannot start the sandbox helper (its main does not call \
                     maybe_run_helper)",
                ),
            })
            .clone()
    }

    /// The sandbox served by `helper` (a binary whose `main` calls [`maybe_run_helper`]),
    /// after running its self-test.
    pub fn with_helper(helper: &Path) -> Self {
        let (helper, status) = platform_status(helper);
        Self {
            helper: helper.filter(|_| status.enforced),
            status,
        }
    }

    /// No sandbox: commands run with process hygiene only, and only after the user approved.
    pub fn unavailable(problem: &str) -> Self {
        Self {
            helper: None,
            status: SandboxStatus {
                platform: std::env::consts::OS,
                enforced: false,
                mechanism: "none".to_string(),
                landlock_abi: None,
                seccomp: None,
                process_limits: false,
                process_cap: "none",
                own_processes: false,
                problem: Some(problem.to_string()),
            },
        }
    }

    pub fn status(&self) -> &SandboxStatus {
        &self.status
    }

    pub fn is_enforced(&self) -> bool {
        self.status.enforced && self.helper.is_some()
    }

    /// The helper program, when the sandbox is enforced.
    pub fn helper(&self) -> Option<&Path> {
        if self.status.enforced {
            self.helper.as_deref()
        } else {
            None
        }
    }
}

/// The program that runs confined commands, and what it enforces.
#[cfg(target_os = "linux")]
fn platform_status(helper: &Path) -> (Option<PathBuf>, SandboxStatus) {
    (Some(helper.to_path_buf()), linux_status(helper))
}

#[cfg(target_os = "linux")]
fn linux_status(helper: &Path) -> SandboxStatus {
    let output = std::process::Command::new(helper)
        .arg(PROBE_ARG)
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let text = match output {
        Ok(output) => String::from_utf8_lossy(&output.stdout).into_owned(),
        Err(error) => {
            let mut status = Sandbox::unavailable(&format!(
                "the sandbox helper could not be started ({})",
                error.kind()
            ))
            .status;
            status.platform = "linux";
            return status;
        }
    };
    parse_probe(&text)
}

/// macOS: `sandbox-exec` itself runs the command (see `macos.rs`).
#[cfg(target_os = "macos")]
fn platform_status(_helper: &Path) -> (Option<PathBuf>, SandboxStatus) {
    let program = PathBuf::from(crate::macos::SANDBOX_EXEC);
    if !program.exists() {
        return (
            None,
            Sandbox::unavailable("sandbox-exec is missing on this Mac").status,
        );
    }
    let status = SandboxStatus {
        platform: "macos",
        enforced: true,
        mechanism: "sandbox-exec".to_string(),
        landlock_abi: None,
        seccomp: None,
        process_limits: false,
        process_cap: "none",
        own_processes: true,
        problem: None,
    };
    (Some(program), status)
}

#[cfg(windows)]
fn platform_status(_helper: &Path) -> (Option<PathBuf>, SandboxStatus) {
    (None, windows_status())
}

/// Windows: the file system is not confined, so nothing runs without the user's yes; what an
/// approved command does is bounded by its Job Object (`process.rs`, `tooltrail-job`).
#[cfg(any(windows, test))]
pub(crate) fn windows_status() -> SandboxStatus {
    SandboxStatus {
        platform: "windows",
        enforced: false,
        mechanism: "Job Object".to_string(),
        landlock_abi: None,
        seccomp: None,
        process_limits: true,
        process_cap: "job",
        own_processes: false,
        problem: Some(
            "Windows has no file-system confinement here yet: approved commands run in a Job \
             Object that limits their processes, memory, CPU time and access to the desktop"
                .to_string(),
        ),
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
fn platform_status(_helper: &Path) -> (Option<PathBuf>, SandboxStatus) {
    let problem = format!(
        "the OS sandbox is not implemented on {} yet",
        std::env::consts::OS
    );
    (None, Sandbox::unavailable(&problem).status)
}

/// Reads the helper self-test's `key=value` lines.
pub(crate) fn parse_probe(text: &str) -> SandboxStatus {
    let value = |key: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix('='))
            .map(str::trim)
    };
    let abi = value("landlock_abi").and_then(|abi| abi.parse::<u32>().ok());
    let landlock = value("landlock") == Some("true");
    let seccomp = value("seccomp") == Some("true");
    let enforced = landlock && seccomp;
    let problem =
        if enforced {
            None
        } else if !landlock {
            Some(value("problem").map(str::to_string).unwrap_or_else(|| {
                "Landlock does not confine file access on this system".to_string()
            }))
        } else {
            Some("the seccomp filter could not be installed on this system".to_string())
        };
    let mut mechanism = Vec::new();
    if landlock {
        mechanism.push(format!("Landlock ABI {}", abi.unwrap_or(0)));
    }
    if seccomp {
        mechanism.push("seccomp".to_string());
    }
    SandboxStatus {
        platform: "linux",
        enforced,
        mechanism: if mechanism.is_empty() {
            "none".to_string()
        } else {
            mechanism.join(" and ")
        },
        landlock_abi: Some(abi.unwrap_or(0)),
        seccomp: Some(seccomp),
        process_limits: enforced,
        process_cap: match value("processes") {
            Some("cgroup") => "cgroup",
            Some("rlimit") => "rlimit",
            Some("watchdog") => "watchdog",
            _ => "none",
        },
        own_processes: enforced && value("pid_namespace") == Some("true"),
        problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_passing_self_test_is_enforced() {
        let status = parse_probe(
            "landlock_abi=7\nlandlock=true\nseccomp=true\nprocesses=cgroup\npid_namespace=true\n",
        );
        assert_eq!(
            status,
            SandboxStatus {
                platform: "linux",
                enforced: true,
                mechanism: "Landlock ABI 7 and seccomp".to_string(),
                landlock_abi: Some(7),
                seccomp: Some(true),
                process_limits: true,
                process_cap: "cgroup",
                own_processes: true,
                problem: None,
            }
        );
    }

    #[test]
    fn a_kernel_without_landlock_is_not_enforced() {
        let status = parse_probe(
            "landlock_abi=0\nlandlock=false\nseccomp=true\nproblem=Landlock is not available on this system\n",
        );
        assert!(!status.enforced);
        assert_eq!(
            status.problem.as_deref(),
            Some("Landlock is not available on this system")
        );
        assert_eq!(parse_probe("").enforced, false);
    }

    #[test]
    fn on_windows_commands_are_asked_about_and_held_by_a_job_object() {
        let report = windows_status().report();
        assert!(report.starts_with("Sandbox: NOT enforced\n"), "{report}");
        assert!(
            report.contains("512 processes held by a Job Object"),
            "{report}"
        );
        assert!(
            report.contains("problem:         Windows has no file-system confinement here yet"),
            "{report}"
        );
        assert!(
            report.ends_with("Every command will be asked about before it runs.\n"),
            "{report}"
        );
    }

    #[test]
    fn unavailable_has_no_helper() {
        let sandbox = Sandbox::unavailable("no helper");
        assert!(!sandbox.is_enforced());
        assert_eq!(sandbox.helper(), None);
    }
}
