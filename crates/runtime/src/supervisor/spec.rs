//! What a supervisor is told when it starts: the hidden command line
//! `<binary> __runtime-supervise <JSON>`, one argument holding everything, worked out by the
//! caller (which binary, which model, what context), so the supervisor needs no settings of
//! its own. No secret travels here: the supervisor makes the API key itself.

use std::ffi::OsString;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// First argument of the supervisor's mode.
pub(crate) const SUPERVISE_ARG: &str = "__runtime-supervise";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Spec {
    /// The runtime folder (`<data>/runtime`).
    pub dir: PathBuf,
    pub binary: PathBuf,
    /// Where the binary was found (`BinarySource::as_str`).
    pub binary_source: String,
    pub model: String,
    pub model_path: PathBuf,
    /// Whether the GGUF carries a chat template of its own.
    pub model_has_template: bool,
    pub context_size: u32,
    pub threads: u32,
    /// Unused this long, the runtime stops.
    pub idle_secs: u64,
    /// How long llama-server may take to load the model and answer `/health`.
    pub start_timeout_secs: u64,
}

impl Spec {
    pub(crate) fn encode(&self) -> OsString {
        serde_json::to_string(self).unwrap_or_default().into()
    }

    pub(crate) fn decode(args: &[OsString]) -> Result<Self, String> {
        let text = args
            .first()
            .and_then(|arg| arg.to_str())
            .ok_or("the runtime's supervisor was started without its description")?;
        serde_json::from_str(text).map_err(|error| {
            format!("the runtime's supervisor could not read its description: {error}")
        })
    }

    /// llama-server's command line (the port and the key's file change per start).
    pub(crate) fn server_args(&self, port: u16, api_key_file: &std::path::Path) -> Vec<OsString> {
        let port = port.to_string();
        let context = self.context_size.to_string();
        let threads = self.threads.to_string();
        let mut args: Vec<OsString> = vec![
            "--model".into(),
            self.model_path.clone().into(),
            "--api-key-file".into(),
            api_key_file.into(),
        ];
        args.extend(
            [
                "--alias",
                self.model.as_str(),
                "--host",
                "127.0.0.1",
                "--port",
                &port,
                // Templates render through Jinja: what makes native tool calls possible at all.
                "--jinja",
                "--ctx-size",
                &context,
                "--threads",
                &threads,
                // One conversation at a time gets the whole window; a second question waits.
                "--parallel",
                "1",
            ]
            .map(OsString::from),
        );
        // The prefixes saved across starts (see `crate::prefix`).
        args.push("--slot-save-path".into());
        args.push(
            crate::prefix_store::PrefixStore::in_runtime_dir(&self.dir)
                .dir()
                .into(),
        );
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_spec_goes_through_the_command_line_whole() {
        let spec = Spec {
            dir: "/d/runtime".into(),
            binary: "/b/llama-server".into(),
            binary_source: "cache".into(),
            model: "gemma".into(),
            model_path: "/d/models/gemma.gguf".into(),
            model_has_template: false,
            context_size: 8192,
            threads: 2,
            idle_secs: 600,
            start_timeout_secs: 180,
        };
        assert_eq!(Spec::decode(&[spec.encode()]).unwrap(), spec);
        assert!(Spec::decode(&[]).is_err());
        let args: Vec<String> = spec
            .server_args(41000, std::path::Path::new("/d/runtime/api-key"))
            .into_iter()
            .map(|arg| arg.into_string().unwrap())
            .collect();
        assert_eq!(
            args.join(" "),
            "--model /d/models/gemma.gguf --api-key-file /d/runtime/api-key --alias gemma \
             --host 127.0.0.1 --port 41000 --jinja --ctx-size 8192 --threads 2 --parallel 1 \
             --slot-save-path /d/runtime/prefixes"
        );
    }
}
