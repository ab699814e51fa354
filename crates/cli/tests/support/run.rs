//! Running the `tooltrail` binary as a person would, with a clean environment: no user
//! config, no inherited settings, config and data in folders of the test's own.

use std::path::Path;
use std::process::Output;

/// Runs `tooltrail ARGS` with its config in `config_dir` and its data beside it, and waits.
pub async fn tooltrail(args: &[&str], config_dir: &Path, envs: &[(&str, &str)]) -> Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tooltrail"));
    command
        .args(args)
        .env_remove("TOOLTRAIL_BASE_URL")
        .env_remove("TOOLTRAIL_MODEL")
        .env_remove("TOOLTRAIL_API_KEY")
        .env_remove("TOOLTRAIL_TOOL_MODE")
        .env("TOOLTRAIL_CONFIG_DIR", config_dir)
        .env("TOOLTRAIL_DATA_DIR", config_dir.join("data"))
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null());
    for (key, value) in envs {
        command.env(key, value);
    }
    command.output().await.unwrap()
}

/// What a stream printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
