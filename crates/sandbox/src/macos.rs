//! macOS: a `sandbox-exec` (Seatbelt) profile, deny by default. Built and tested on every
//! platform; used by [`crate::run_bash`] on macOS only.

use crate::reach::{Access, Grant};
use std::ffi::OsString;

/// The program that applies a profile.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The profile for one command: deny by default, no network, and the folders it can reach
/// (see [`crate::reach`]) readable or writable as listed.
pub fn profile(grants: &[Grant]) -> String {
    let mut out = String::from(
        "(version 1)\n(deny default)\n(allow process-fork)\n(allow process-exec)\n\
         (allow signal (target same-sandbox))\n(allow sysctl-read)\n(allow mach-lookup)\n\
         (deny network*)\n(allow file-read-metadata)\n",
    );
    for grant in grants {
        if grant.path.starts_with("/proc") {
            continue;
        }
        let path = quote(&grant.path.to_string_lossy());
        match grant.access {
            Access::Read => out.push_str(&format!("(allow file-read* (subpath {path}))\n")),
            Access::Write => out.push_str(&format!(
                "(allow file-read* file-write* (subpath {path}))\n"
            )),
        }
    }
    out
}

/// `sandbox-exec -p <profile> <program> <args>...`
pub fn command_line(profile: &str, program: &str, args: &[OsString]) -> Vec<OsString> {
    let mut out = vec![
        OsString::from("-p"),
        OsString::from(profile),
        OsString::from(program),
    ];
    out.extend(args.iter().cloned());
    out
}

/// A Scheme string literal.
fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            ch => out.push(ch),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    use std::path::PathBuf;

    fn grant(path: &str, access: Access) -> Grant {
        Grant {
            path: PathBuf::from(path),
            access,
            reason: crate::reach::Reason::Workspace,
        }
    }

    #[test]
    fn the_profile_denies_by_default_and_allows_what_the_reach_lists() {
        let text = profile(&[
            grant("/Users/me/proj", Access::Read),
            grant("/tmp/t", Access::Write),
        ]);
        assert!(text.starts_with("(version 1)\n(deny default)\n"));
        assert!(text.contains("(deny network*)"));
        assert!(text.contains("(allow file-read* (subpath \"/Users/me/proj\"))"));
        assert!(!text.contains("file-write* (subpath \"/Users/me/proj\")"));
        assert!(text.contains("(allow file-read* file-write* (subpath \"/tmp/t\"))"));
    }

    #[test]
    fn paths_cannot_break_out_of_the_string() {
        let text = profile(&[grant("/x\") (allow default) (\"", Access::Write)]);
        assert!(!text.contains("(allow default)\n"));
        assert!(text.contains("\"/x\\\") (allow default) (\\\"\""));
    }

    #[test]
    fn command_line_puts_the_profile_first() {
        let line = command_line(
            "(version 1)",
            "bash",
            &[OsString::from("-c"), OsString::from("ls")],
        );
        assert_eq!(
            line,
            ["-p", "(version 1)", "bash", "-c", "ls"]
                .map(OsString::from)
                .to_vec()
        );
    }
}
