//! The hidden command line of the sandbox helper: `<binary> __sandbox-exec <timeout>
//! [--network] [--read <path> | --write <path>]... -- <program> <args>...`.
//!
//! The caller works out every folder the command may use (see [`crate::reach`]); the helper
//! applies the lists as they are. Paths travel as `OsString`s, so a workspace whose name is
//! not UTF-8 still works.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use crate::reach::{Access, CommandReach};

/// First argument of the supervising helper.
pub const HELPER_ARG: &str = "__sandbox-exec";
/// First argument of the helper's second stage, which confines itself and runs the program.
pub(crate) const CONFINE_ARG: &str = "__sandbox-confine";
/// First argument of the self-test `Sandbox::detect` runs.
pub(crate) const PROBE_ARG: &str = "__sandbox-probe";
/// First argument of the throwaway check that user namespaces can be made (see
/// `linux/namespaces.rs`).
pub(crate) const USERNS_CHECK_ARG: &str = "__sandbox-userns-check";

/// What one sandboxed run may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HelperSpec {
    pub timeout_secs: u64,
    /// Network sockets are allowed (a network rule covers the approved command).
    pub network: bool,
    /// Folders and files the command may read.
    pub read: Vec<PathBuf>,
    /// Folders and files it may read and change.
    pub write: Vec<PathBuf>,
    pub program: OsString,
    pub args: Vec<OsString>,
}

impl HelperSpec {
    /// The spec for `reach`'s folders.
    pub(crate) fn of(
        reach: &CommandReach,
        timeout_secs: u64,
        network: bool,
        program: OsString,
        args: Vec<OsString>,
    ) -> Self {
        let paths = |access: Access| {
            reach
                .grants
                .iter()
                .filter(|grant| grant.access == access)
                .map(|grant| grant.path.clone())
                .collect()
        };
        Self {
            timeout_secs,
            network,
            read: paths(Access::Read),
            write: paths(Access::Write),
            program,
            args,
        }
    }

    pub(crate) fn encode(&self) -> Vec<OsString> {
        let mut out = vec![OsString::from(self.timeout_secs.to_string())];
        if self.network {
            out.push(OsString::from("--network"));
        }
        for (flag, paths) in [("--read", &self.read), ("--write", &self.write)] {
            for path in paths {
                out.push(OsString::from(flag));
                out.push(path.clone().into_os_string());
            }
        }
        out.push(OsString::from("--"));
        out.push(self.program.clone());
        out.extend(self.args.iter().cloned());
        out
    }

    pub(crate) fn decode(args: &[OsString]) -> Result<Self, String> {
        let Some((timeout, mut rest)) = args.split_first() else {
            return Err("the sandbox helper was started with too few arguments".to_string());
        };
        let timeout_secs = timeout
            .to_str()
            .and_then(|text| text.parse::<u64>().ok())
            .ok_or_else(|| "the sandbox helper was given an invalid timeout".to_string())?;
        let network = rest
            .first()
            .is_some_and(|flag| flag == OsStr::new("--network"));
        if network {
            rest = &rest[1..];
        }
        let mut read = Vec::new();
        let mut write = Vec::new();
        loop {
            match rest {
                [flag, path, more @ ..]
                    if flag == OsStr::new("--read") || flag == OsStr::new("--write") =>
                {
                    let path = PathBuf::from(path);
                    if !path.is_absolute() {
                        return Err("the sandbox helper needs absolute folders".to_string());
                    }
                    if flag == OsStr::new("--read") {
                        read.push(path);
                    } else {
                        write.push(path);
                    }
                    rest = more;
                }
                [separator, program, more @ ..] if separator == OsStr::new("--") => {
                    return Ok(Self {
                        timeout_secs,
                        network,
                        read,
                        write,
                        program: program.clone(),
                        args: more.to_vec(),
                    });
                }
                [] | [_] => {
                    return Err("the sandbox helper was started with too few arguments".to_string());
                }
                _ => return Err("the sandbox helper's arguments are malformed".to_string()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn spec() -> HelperSpec {
        HelperSpec {
            timeout_secs: 30,
            network: false,
            read: vec![PathBuf::from("/usr"), PathBuf::from("/home/me/.cargo/bin")],
            write: vec![
                PathBuf::from("/home/me/project with space"),
                PathBuf::from("/tmp/t"),
            ],
            program: OsString::from("bash"),
            args: vec![OsString::from("-c"), OsString::from("echo -- --read /")],
        }
    }

    #[test]
    fn round_trips() {
        let spec = spec();
        assert_eq!(HelperSpec::decode(&spec.encode()), Ok(spec));
        let open = HelperSpec {
            network: true,
            ..self::spec()
        };
        assert_eq!(HelperSpec::decode(&open.encode()), Ok(open));
    }

    #[test]
    fn refuses_bad_input_with_a_sentence() {
        let mut args = spec().encode();
        args[0] = OsString::from("soon");
        assert_eq!(
            HelperSpec::decode(&args),
            Err("the sandbox helper was given an invalid timeout".to_string())
        );
        assert!(HelperSpec::decode(&spec().encode()[..3]).is_err());
        let mut args = spec().encode();
        args[2] = OsString::from("relative/path");
        assert_eq!(
            HelperSpec::decode(&args),
            Err("the sandbox helper needs absolute folders".to_string())
        );
    }
}
