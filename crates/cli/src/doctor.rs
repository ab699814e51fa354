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
        write!(out, "{}", status.report())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn unavailable_sandbox_says_every_command_asks() {
        let sandbox = Sandbox::unavailable("no helper here");
        let text = sandbox.status().report();
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
