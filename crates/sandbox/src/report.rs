//! The sandbox status in words, as `tooltrail doctor` prints it and the app's settings show it.

use tooltrail_protocol::sentence;

use crate::SandboxStatus;
use crate::limits::{CPU_GRACE_SECS, MAX_FILE_BYTES, MAX_PROCESSES};

impl SandboxStatus {
    /// What `tooltrail doctor` prints: a first line saying whether commands are confined, the
    /// mechanisms one per indented line, then what that means for commands.
    pub fn report(&self) -> String {
        let status = self;
        let yes_no = |value: bool| if value { "yes" } else { "no" };
        let mut out = String::new();
        if status.enforced {
            out.push_str(&format!("Sandbox: enforced ({})\n", status.mechanism));
        } else {
            out.push_str("Sandbox: NOT enforced\n");
        }
        out.push_str(&format!("  platform:        {}\n", status.platform));
        if let Some(abi) = status.landlock_abi {
            let text = if abi == 0 {
                "not available".to_string()
            } else {
                format!("ABI {abi}")
            };
            out.push_str(&format!("  Landlock:        {text}\n"));
        }
        if let Some(seccomp) = status.seccomp {
            out.push_str(&format!(
                "  seccomp:         {} (no network sockets, ptrace, mount, bpf, keyctl)\n",
                yes_no(seccomp)
            ));
        }
        out.push_str(&format!(
            "  process limits:  {}",
            yes_no(status.process_limits)
        ));
        if status.process_limits {
            let cap = match status.process_cap {
                "cgroup" => "held by a pids cgroup",
                "rlimit" => "held by RLIMIT_NPROC",
                "job" => "held by a Job Object",
                _ => "watched by the helper only",
            };
            out.push_str(&format!(
                " (files up to {} MiB, {MAX_PROCESSES} processes {cap}, CPU time up to the \
                 timeout + {CPU_GRACE_SECS} s; nothing outlives its call)",
                MAX_FILE_BYTES / (1024 * 1024)
            ));
        }
        out.push('\n');
        if let Some(problem) = &status.problem {
            out.push_str(&format!("  problem:         {}\n", sentence(problem)));
        }
        if status.enforced {
            out.push_str(
                "Commands see the workspace, system folders and the user's toolchains (read-only, \
                 secrets left out), and no network unless a network rule opens it for an approved \
                 command. Commands that ran without asking see the \
                 workspace read-only; approved ones may change it.\n",
            );
        } else {
            out.push_str("Every command will be asked about before it runs.\n");
        }
        out
    }
}
