//! `tooltrail doctor`: what protects this machine when the model runs commands, and what a
//! command run in the current folder can see and change, and why.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use tooltrail_host::sandbox_limits::{CPU_GRACE_SECS, MAX_FILE_BYTES, MAX_PROCESSES};
use tooltrail_host::{
    CommandReach, Grant, Reason, Sandbox, SandboxOverview, SandboxStatus, Skipped,
};

pub fn run(as_json: bool) -> anyhow::Result<ExitCode> {
    let workspace = std::env::current_dir()?;
    let workspace = workspace.canonicalize().unwrap_or(workspace);
    let config = tooltrail_settings::ConfigFile::read(&tooltrail_settings::config_path()?)?;
    let overview = SandboxOverview::of(
        Sandbox::detect().status().clone(),
        Some(&workspace),
        &config.sandbox,
    );
    let (status, seen, settings) = (&overview.status, &overview.reach, &overview.settings);
    // What every request begins with, estimated: the share of the window it takes.
    let prefix = tooltrail_settings::Settings::resolve(&tooltrail_settings::Overrides::default())
        .ok()
        .map(|resolved| tooltrail_host::fixed_prefix_estimate(&resolved));
    let mut out = crate::terminal::stdout_for(as_json);
    if as_json {
        let mut value = to_json(status);
        // The key stays `view`, as `tooltrail doctor --json` has always printed it.
        value["view"] = reach_json(seen, status, &workspace);
        value["local_runtime"] = crate::runtime_cmd::doctor_json();
        if let Some((tools, tokens)) = prefix {
            value["fixed_prefix"] = json!({ "tools": tools, "estimated_tokens": tokens });
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        write!(out, "{}", status.report())?;
        write!(
            out,
            "{}",
            reach_report(seen, status, &workspace, &settings.network_commands)
        )?;
        write!(out, "{}", crate::runtime_cmd::doctor_text())?;
        if let Some((tools, tokens)) = prefix {
            writeln!(
                out,
                "\nEvery request begins with the system prompt and {tools} tool descriptions: about {tokens} tokens by Tooltrail's estimate (`tooltrail tools --tokens` counts them with the model server)."
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The folders a command sees, as listed.
fn listed<'a>(seen: &'a CommandReach, status: &SandboxStatus) -> Vec<&'a Grant> {
    seen.shown(status.own_processes)
}

fn detail(grant: &Grant) -> String {
    match grant.reason {
        Reason::Temp => format!(
            "{} (a new one per call, removed after it)",
            grant.reason.describe()
        ),
        Reason::Workspace | Reason::Cache => format!(
            "{} (read-only for commands that ran without asking)",
            grant.reason.describe()
        ),
        Reason::Processes => format!(
            "{} (a PID namespace and /proc of its own)",
            grant.reason.describe()
        ),
        Reason::Toolchain(_) | Reason::Extra => {
            format!("{} (secrets inside left out)", grant.reason.describe())
        }
        Reason::System | Reason::Devices => grant.reason.describe(),
    }
}

/// The reach as `tooltrail doctor` prints it.
fn reach_report(
    seen: &CommandReach,
    status: &SandboxStatus,
    workspace: &Path,
    network_commands: &[Vec<String>],
) -> String {
    let mut out = String::new();
    if !status.enforced {
        out.push_str(
            "Without the sandbox, an approved command runs with the environment below but can \
             reach everything this user can.\n",
        );
    }
    out.push_str(&format!(
        "\nWhat an approved command in {} can see and change:\n",
        workspace.display()
    ));
    let folders = listed(seen, status);
    // The chosen entries of /etc on one line: they are many, and all alike.
    let (etc, folders): (Vec<&Grant>, Vec<&Grant>) = folders
        .into_iter()
        .partition(|grant| grant.reason == Reason::System && grant.path.starts_with("/etc"));
    let width = folders
        .iter()
        .map(|grant| grant.path.as_os_str().len())
        .max()
        .unwrap_or(0)
        .min(60);
    for grant in &folders {
        out.push_str(&format!(
            "  {:<5}  {:<width$}  {}\n",
            grant.access.as_str(),
            grant.path.display(),
            detail(grant),
        ));
    }
    if !etc.is_empty() {
        let names: Vec<String> = etc
            .iter()
            .filter_map(|grant| grant.path.strip_prefix("/etc").ok())
            .map(|name| name.display().to_string())
            .collect();
        out.push_str(&format!(
            "  read   /etc: {}  system settings (not shadow, sudoers, ssh, ...)\n",
            names.join(" ")
        ));
    }
    if !status.own_processes {
        out.push_str(
            "  (none)  /proc  hidden: this system gives the command no PID namespace of its own\n",
        );
    }
    out.push_str(
        "\nSecrets left out of those folders (never visible, even where the folder is):\n",
    );
    if seen.hidden.is_empty() {
        out.push_str("  none found\n");
    }
    for hidden in &seen.hidden {
        out.push_str(&format!("  {}  ({})\n", hidden.path.display(), hidden.what));
    }
    for Skipped { path, why } in &seen.skipped {
        out.push_str(&format!(
            "Left out of [sandbox] read_only_folders: {} ({why})\n",
            path.display()
        ));
    }
    out.push_str(
        "Everything else is invisible: the rest of the home folder (SSH keys, cloud \
         credentials, keychains, browser profiles, shell histories), other users' files, /tmp.\n",
    );
    out.push_str(&network_line(network_commands));
    if let Some((_, path)) = seen.env.iter().find(|(name, _)| name == "PATH") {
        out.push_str(&format!("PATH: {}\n", path.to_string_lossy()));
    }
    out.push_str(
        "Add folders with [sandbox] read_only_folders = [\"~/folder\"] in config.toml or in \
         Settings → Sandbox.\n",
    );
    out
}

/// Whether any command gets the network, and which.
fn network_line(network_commands: &[Vec<String>]) -> String {
    if network_commands.is_empty() {
        return "Network: off for every command (no network sockets).\n".to_string();
    }
    let rules: Vec<String> = network_commands
        .iter()
        .map(|words| format!("`{}`", words.join(" ")))
        .collect();
    format!(
        "Network: off for every command, but open for an approved command made only of \
         commands starting with {} ([sandbox] network_commands).\n",
        rules.join(", ")
    )
}

fn reach_json(seen: &CommandReach, status: &SandboxStatus, workspace: &Path) -> serde_json::Value {
    let folders: Vec<serde_json::Value> = listed(seen, status)
        .into_iter()
        .map(|grant| {
            json!({
                "path": grant.path,
                "access": grant.access.as_str(),
                "reason": grant.reason.key(),
                "detail": grant.reason.describe(),
            })
        })
        .collect();
    let hidden: Vec<serde_json::Value> = seen
        .hidden
        .iter()
        .map(|hidden| json!({ "path": hidden.path, "what": hidden.what }))
        .collect();
    let skipped: Vec<serde_json::Value> = seen
        .skipped
        .iter()
        .map(|skipped| json!({ "path": skipped.path, "why": skipped.why }))
        .collect();
    let env: serde_json::Map<String, serde_json::Value> = seen
        .env
        .iter()
        .map(|(name, value)| (name.clone(), json!(value.to_string_lossy())))
        .collect();
    json!({
        "workspace": workspace,
        "approved": true,
        "folders": folders,
        "hidden": hidden,
        "skipped": skipped,
        "network": false,
        "own_processes": status.own_processes,
        "cache": seen.cache,
        "environment": env,
    })
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
            "own_processes": status.own_processes,
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
    use std::path::PathBuf;
    use tooltrail_host::{HostEnv, SandboxSettings};

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

    #[test]
    fn the_report_names_each_folder_with_its_reason_and_the_secrets_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let home = base.join("home");
        for folder in [".cargo/bin", ".rustup", "notes", ".ssh"] {
            std::fs::create_dir_all(home.join(folder)).unwrap();
        }
        std::fs::write(home.join(".cargo/credentials.toml"), "t").unwrap();
        std::fs::write(home.join("notes/.netrc"), "t").unwrap();
        let workspace = base.join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        let settings = SandboxSettings {
            read_only_folders: vec![PathBuf::from("~/notes"), PathBuf::from("~/gone")],
            network_commands: Vec::new(),
            cache_root: Some(base.join("data")),
            host: HostEnv {
                home: Some(home.clone()),
                path: None,
                vars: Default::default(),
            },
        };
        let mut status = Sandbox::unavailable("x").status().clone();
        status.enforced = true;
        status.own_processes = true;
        let seen = SandboxOverview::with_settings(status.clone(), Some(&workspace), settings).reach;
        let text = reach_report(&seen, &status, &workspace, &[]);
        let line = |needle: &str| {
            text.lines()
                .find(|line| line.starts_with("  ") && line.contains(needle))
                .unwrap_or_else(|| panic!("no line with {needle} in\n{text}"))
                .to_string()
        };
        assert!(line(&workspace.display().to_string()).contains("write"));
        assert!(line(&home.join(".rustup").display().to_string()).contains("toolchain: rustup"));
        assert!(line(&home.join(".cargo").display().to_string()).starts_with("  read"));
        assert!(
            line(&home.join("notes").display().to_string())
                .contains("extra folder from config.toml")
        );
        assert!(line("credentials.toml").contains("(credentials)"));
        assert!(line(".netrc").contains("netrc logins"));
        assert!(line("/proc").contains("own processes"));
        assert!(text.contains(&format!(
            "Left out of [sandbox] read_only_folders: {} (it does not exist)",
            home.join("gone").display()
        )));
        assert!(!text.contains(&format!("{}  ", home.join(".ssh").display())));

        let value = reach_json(&seen, &status, &workspace);
        let reasons: Vec<&str> = value["folders"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|folder| {
                folder["path"]
                    .as_str()
                    .unwrap()
                    .starts_with(home.to_str().unwrap())
            })
            .map(|folder| folder["detail"].as_str().unwrap())
            .collect();
        assert_eq!(
            reasons,
            [
                "toolchain: rustup",
                "toolchain: cargo",
                "extra folder from config.toml"
            ]
        );
        assert_eq!(value["hidden"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn the_network_line_lists_the_network_rules() {
        assert_eq!(
            network_line(&[]),
            "Network: off for every command (no network sockets).\n"
        );
        let rules = [
            vec!["npm".to_string(), "install".to_string()],
            vec!["cargo".to_string(), "fetch".to_string()],
        ];
        assert_eq!(
            network_line(&rules),
            "Network: off for every command, but open for an approved command made only of \
             commands starting with `npm install`, `cargo fetch` ([sandbox] network_commands).\n"
        );
    }
}
