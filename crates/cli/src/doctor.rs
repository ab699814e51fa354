//! `tooltrail doctor`: what protects this machine when the model runs commands.

use std::io::Write;
use std::process::ExitCode;

use serde_json::json;
use tooltrail_sandbox::limits::{CPU_GRACE_SECS, MAX_FILE_BYTES, MAX_PROCESSES};
use tooltrail_sandbox::{Sandbox, SandboxStatus};

pub fn run(as_json: bool) -> anyhow::Result<ExitCode> {
    let sandbox = Sandbox::detect();
    let status = sandbox.status();
    let mut out = std::io::stdout().lock();
    if as_json {
        writeln!(out, "{}", serde_json::to_string_pretty(&to_json(status))?)?;
    } else {
        write!(out, "{}", to_text(status))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn to_json(status: &SandboxStatus) -> serde_json::Value {
    json!({
        "sandbox": {
            "platform": status.platform,
            "enforced": status.enforced,
            "mechanism": status.mechanism,
            "landlock_abi": status.landlock_abi,
            "seccomp": status.seccomp,
            "process_limits": status.process_limits,
            "process_cap": status.process_cap,
            "limits": {
                "max_file_bytes": MAX_FILE_BYTES,
                "max_processes": MAX_PROCESSES,
                "cpu_seconds_beyond_timeout": CPU_GRACE_SECS,
            },
            "problem": status.problem,
            "commands": if status.enforced { "sandboxed" } else { "ask_before_every_command" },
        }
    })
}

fn to_text(status: &SandboxStatus) -> String {
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
            "Commands see the workspace and system folders only, and no network. Commands that \
             ran without asking see the workspace read-only; approved ones may change it.\n",
        );
    } else {
        out.push_str("Every command will be asked about before it runs.\n");
    }
    out
}

fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    };
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn unavailable_sandbox_says_every_command_asks() {
        let sandbox = Sandbox::unavailable("no helper here");
        let text = to_text(sandbox.status());
        assert!(text.starts_with("Sandbox: NOT enforced\n"), "{text}");
        assert!(
            text.contains("  problem:         No helper here.\n"),
            "{text}"
        );
        assert!(text.ends_with("Every command will be asked about before it runs.\n"));
        assert_eq!(
            to_json(sandbox.status())["sandbox"]["commands"],
            "ask_before_every_command"
        );
    }
}
