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
    sandbox_settings_from(&settings.read_only_folders)
}

/// The same from the folders as written in `[sandbox] read_only_folders`.
pub fn sandbox_settings_from(read_only_folders: &[String]) -> SandboxSettings {
    SandboxSettings {
        read_only_folders: read_only_folders.iter().map(PathBuf::from).collect(),
        cache_root: tooltrail_store::data_dir()
            .ok()
            .map(|dir| dir.join(CACHE_FOLDER)),
        host: HostEnv::current(),
    }
}
