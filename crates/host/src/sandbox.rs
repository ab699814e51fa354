//! What commands see besides the workspace, from the settings: the extra read-only folders of
//! `config.toml` and the data folder where each workspace's build caches are kept; and the
//! overview of it that `tooltrail doctor` and Settings → Sandbox show.

use std::path::{Path, PathBuf};

use tooltrail_sandbox::reach::command_reach;
use tooltrail_sandbox::{CommandReach, HostEnv, SandboxSettings, SandboxStatus};
use tooltrail_settings::{SandboxConfig, Settings};

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

/// The sandbox settings for the `[sandbox]` section of config.toml as written.
pub fn sandbox_settings_of(config: &SandboxConfig) -> SandboxSettings {
    let mut sandbox = sandbox_settings_from(&config.read_only_folders);
    sandbox.network_commands = network_commands(&config.network_commands);
    sandbox
}

/// What an approved command sees, as `tooltrail doctor` and Settings → Sandbox show it.
pub struct SandboxOverview {
    /// What the OS sandbox enforces here.
    pub status: SandboxStatus,
    /// The folders a command sees, those hidden inside them, and those left out.
    pub reach: CommandReach,
    /// The settings it was worked out with.
    pub settings: SandboxSettings,
}

impl SandboxOverview {
    /// For a command in `folder` (or, with none open, in a stand-in folder whose own grants a
    /// listing leaves out) with `config` as written.
    pub fn of(status: SandboxStatus, folder: Option<&Path>, config: &SandboxConfig) -> Self {
        Self::with_settings(status, folder, sandbox_settings_of(config))
    }

    /// [`Self::of`] with the settings given whole.
    pub fn with_settings(
        status: SandboxStatus,
        folder: Option<&Path>,
        settings: SandboxSettings,
    ) -> Self {
        let temp = temp_placeholder();
        let root = folder.map_or_else(|| temp.join("workspace"), Path::to_path_buf);
        let reach = command_reach(&settings, &root, true, &temp, std::slice::from_ref(&root));
        Self {
            status,
            reach,
            settings,
        }
    }
}

/// Each call gets a new private folder; this stands for it in a report.
fn temp_placeholder() -> PathBuf {
    std::env::temp_dir().join("tooltrail-home-XXXXXX")
}
