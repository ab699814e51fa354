//! What commands see besides the workspace, from the settings: the extra read-only folders of
//! `config.toml` and the data folder where each workspace's build caches are kept.

use std::path::PathBuf;

use tooltrail_sandbox::{HostEnv, SandboxSettings};
use tooltrail_settings::Settings;

/// The folder of the data folder that holds the build caches, one folder per workspace.
pub const CACHE_FOLDER: &str = "sandbox-cache";

/// The sandbox settings for `settings`, with this process's home folder and `PATH`. Where the
/// data folder cannot be found, caches live only as long as each command.
pub fn sandbox_settings(settings: &Settings) -> SandboxSettings {
    let mut sandbox = sandbox_settings_from(&settings.read_only_folders);
    sandbox.network_commands = network_commands(&settings.network_commands);
    sandbox
}

/// The words of each network rule as written in `[sandbox] network_commands`; an entry that is
/// not plain words of one command opens nothing (the settings editor refuses such entries).
pub fn network_commands(written: &[String]) -> Vec<Vec<String>> {
    written
        .iter()
        .filter_map(|command| tooltrail_sandbox::rules::network_prefix(command).ok())
        .collect()
}

/// The same from the folders as written in `[sandbox] read_only_folders`.
pub fn sandbox_settings_from(read_only_folders: &[String]) -> SandboxSettings {
    SandboxSettings {
        read_only_folders: read_only_folders.iter().map(PathBuf::from).collect(),
        network_commands: Vec::new(),
        cache_root: tooltrail_store::data_dir()
            .ok()
            .map(|dir| dir.join(CACHE_FOLDER)),
        host: HostEnv::current(),
    }
}
