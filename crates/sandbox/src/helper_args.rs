//! The hidden command line of the sandbox helper: `<binary> __sandbox-exec <ro|rw> <timeout>
//! <workspace> <temp> -- <program> <args>...`.
//!
//! Paths travel as `OsString`s, so a workspace whose name is not UTF-8 still works.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// First argument of the supervising helper.
pub const HELPER_ARG: &str = "__sandbox-exec";
/// First argument of the helper's second stage, which confines itself and runs the program.
pub(crate) const CONFINE_ARG: &str = "__sandbox-confine";
/// First argument of the self-test `Sandbox::detect` runs.
pub(crate) const PROBE_ARG: &str = "__sandbox-probe";

/// What one sandboxed run may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HelperSpec {
    /// The user approved the command, so it may write in the workspace.
    pub writable: bool,
    pub timeout_secs: u64,
    pub workspace: PathBuf,
    /// The private temp and home folder of this call (always writable).
    pub temp: PathBuf,
    pub program: OsString,
    pub args: Vec<OsString>,
}

impl HelperSpec {
    pub(crate) fn encode(&self) -> Vec<OsString> {
        let mut out = vec![
            OsString::from(if self.writable { "rw" } else { "ro" }),
            OsString::from(self.timeout_secs.to_string()),
            self.workspace.clone().into_os_string(),
            self.temp.clone().into_os_string(),
            OsString::from("--"),
            self.program.clone(),
        ];
        out.extend(self.args.iter().cloned());
        out
    }

    pub(crate) fn decode(args: &[OsString]) -> Result<Self, String> {
        let [
            mode,
            timeout,
            workspace,
            temp,
            separator,
            program,
            rest @ ..,
        ] = args
        else {
            return Err("the sandbox helper was started with too few arguments".to_string());
        };
        let writable = match mode.to_str() {
            Some("rw") => true,
            Some("ro") => false,
            _ => return Err("the sandbox helper was given an unknown mode".to_string()),
        };
        let timeout_secs = timeout
            .to_str()
            .and_then(|text| text.parse::<u64>().ok())
            .ok_or_else(|| "the sandbox helper was given an invalid timeout".to_string())?;
        if separator != OsStr::new("--") {
            return Err("the sandbox helper's arguments are malformed".to_string());
        }
        let workspace = PathBuf::from(workspace);
        let temp = PathBuf::from(temp);
        if !workspace.is_absolute() || !temp.is_absolute() {
            return Err("the sandbox helper needs absolute folders".to_string());
        }
        Ok(Self {
            writable,
            timeout_secs,
            workspace,
            temp,
            program: program.clone(),
            args: rest.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn spec() -> HelperSpec {
        HelperSpec {
            writable: true,
            timeout_secs: 30,
            workspace: PathBuf::from("/home/me/project with space"),
            temp: PathBuf::from("/tmp/tooltrail-home-x"),
            program: OsString::from("bash"),
            args: vec![OsString::from("-c"), OsString::from("echo -- hi")],
        }
    }

    #[test]
    fn round_trips() {
        let spec = spec();
        assert_eq!(HelperSpec::decode(&spec.encode()), Ok(spec));
    }

    #[test]
    fn refuses_bad_input_with_a_sentence() {
        let mut args = spec().encode();
        args[0] = OsString::from("write");
        assert_eq!(
            HelperSpec::decode(&args),
            Err("the sandbox helper was given an unknown mode".to_string())
        );
        assert!(HelperSpec::decode(&args[..3]).is_err());
        let mut args = spec().encode();
        args[2] = OsString::from("relative/path");
        assert!(HelperSpec::decode(&args).is_err());
    }
}
