//! `scripts/run` hands the command line its own words: every subcommand the CLI has (it asks
//! the CLI for the list), run in the folder the user is in. The built `tooltrail` is given to
//! it with `TOOLTRAIL_RUN_CLI`, so nothing is set up or built here.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pretty_assertions::assert_eq;

const TOOLTRAIL: &str = env!("CARGO_BIN_EXE_tooltrail");

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/run")
}

fn run_script(args: &[&str], cwd: &Path, config: &Path) -> Output {
    Command::new("bash")
        .arg(script())
        .args(args)
        .current_dir(cwd)
        .env("TOOLTRAIL_RUN_CLI", TOOLTRAIL)
        .env("TOOLTRAIL_CONFIG_DIR", config)
        .env("TOOLTRAIL_DATA_DIR", config.join("data"))
        .env_remove("TOOLTRAIL_BASE_URL")
        // Without a display, a word taken for a folder stops at once instead of building the
        // app.
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn tooltrail(args: &[&str], config: &Path) -> Output {
    Command::new(TOOLTRAIL)
        .args(args)
        .env("TOOLTRAIL_CONFIG_DIR", config)
        .env("TOOLTRAIL_DATA_DIR", config.join("data"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The names in the `Commands:` section of `tooltrail --help`.
fn commands_in_help(help: &str) -> BTreeSet<String> {
    help.lines()
        .skip_while(|line| line.trim() != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        // A command's line is indented by two; a description's continuation by more.
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn the_cli_lists_every_command_its_help_shows() {
    let config = tempfile::tempdir().unwrap();
    let help = stdout(&tooltrail(&["--help"], config.path()));
    let in_help = commands_in_help(&help);
    assert!(in_help.contains("serve"), "{help}");
    let listed = tooltrail(&["--list-commands"], config.path());
    assert!(listed.status.success());
    let listed: BTreeSet<String> = stdout(&listed).lines().map(str::to_string).collect();
    assert_eq!(listed, in_help);
}

#[test]
fn subcommands_go_to_the_cli_not_to_the_app_as_a_folder() {
    let config = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    for command in [
        "serve",
        "undo",
        "stats",
        "snippets",
        "models",
        "providers",
        "ask",
    ] {
        let through_script = run_script(&[command, "--help"], cwd.path(), config.path());
        assert!(
            through_script.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&through_script.stderr)
        );
        let direct = tooltrail(&[command, "--help"], config.path());
        assert_eq!(stdout(&through_script), stdout(&direct), "{command}");
    }
    // A word the CLI does not know is a folder for the app (which needs a display here).
    let folder = run_script(&["my-project"], cwd.path(), config.path());
    assert!(!folder.status.success());
    assert!(
        String::from_utf8_lossy(&folder.stderr).contains("no display to open the window on"),
        "{}",
        String::from_utf8_lossy(&folder.stderr)
    );
    let version = run_script(&["--version"], cwd.path(), config.path());
    assert_eq!(
        stdout(&version),
        stdout(&tooltrail(&["--version"], config.path()))
    );
}

#[test]
fn a_command_runs_in_the_folder_the_user_is_in() {
    let config = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("only-here.txt"), "x").unwrap();
    let listing = run_script(&["tool", "list_dir"], cwd.path(), config.path());
    assert!(
        listing.status.success(),
        "{}",
        String::from_utf8_lossy(&listing.stderr)
    );
    assert!(
        stdout(&listing).contains("only-here.txt"),
        "{}",
        stdout(&listing)
    );
}
