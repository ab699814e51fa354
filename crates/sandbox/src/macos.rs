//! macOS: a `sandbox-exec` (Seatbelt) profile, deny by default. Built and tested on every
//! platform; used by [`crate::run_bash`] on macOS only.

use std::ffi::OsString;
use std::path::Path;

/// System folders programs are read and run from.
const SYSTEM: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library/Apple",
    "/opt/homebrew",
    "/usr/local",
    "/private/etc/ssl",
    "/private/var/db/timezone",
    "/dev",
];

/// The program that applies a profile.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The profile for one command: system folders and the workspace readable, the workspace
/// writable only when `writable`, the private temp folder writable, no network.
pub fn profile(workspace: &Path, writable: bool, temp: &Path) -> String {
    let mut out = String::from(
        "(version 1)\n(deny default)\n(allow process-fork)\n(allow process-exec)\n\
         (allow signal (target same-sandbox))\n(allow sysctl-read)\n(allow mach-lookup)\n\
         (deny network*)\n(allow file-read-metadata)\n",
    );
    for folder in SYSTEM {
        out.push_str(&format!("(allow file-read* (subpath {}))\n", quote(folder)));
    }
    for device in ["/dev/null", "/dev/zero", "/dev/urandom"] {
        out.push_str(&format!(
            "(allow file-read* file-write-data (literal {}))\n",
            quote(device)
        ));
    }
    let workspace = quote(&workspace.to_string_lossy());
    out.push_str(&format!("(allow file-read* (subpath {workspace}))\n"));
    if writable {
        out.push_str(&format!("(allow file-write* (subpath {workspace}))\n"));
    }
    let temp = quote(&temp.to_string_lossy());
    out.push_str(&format!(
        "(allow file-read* file-write* (subpath {temp}))\n"
    ));
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

    #[test]
    fn read_only_profile_denies_by_default_and_writes_only_temp() {
        let text = profile(Path::new("/Users/me/proj"), false, Path::new("/tmp/t"));
        assert!(text.starts_with("(version 1)\n(deny default)\n"));
        assert!(text.contains("(deny network*)"));
        assert!(text.contains("(allow file-read* (subpath \"/Users/me/proj\"))"));
        assert!(!text.contains("(allow file-write* (subpath \"/Users/me/proj\"))"));
        assert!(text.contains("(allow file-read* file-write* (subpath \"/tmp/t\"))"));
        assert!(!text.contains("/Users/me\")"));
    }

    #[test]
    fn approved_profile_writes_the_workspace() {
        let text = profile(Path::new("/Users/me/proj"), true, Path::new("/tmp/t"));
        assert!(text.contains("(allow file-write* (subpath \"/Users/me/proj\"))"));
    }

    #[test]
    fn paths_cannot_break_out_of_the_string() {
        let text = profile(
            Path::new("/x\") (allow default) (\""),
            true,
            Path::new("/t"),
        );
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
