//! What auto tool mode found out about servers: for an endpoint and model that refused native
//! tools, prompt mode is used from the start next time, instead of a refused request first.
//!
//! Kept in `tool-modes.json` beside `config.toml`, apart from the file the user edits: it is
//! learned, not chosen, and Settings lists it with a way to forget each entry.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tooltrail_protocol::ToolMode;

use crate::SettingsError;

/// The file name inside the config folder.
pub const FILE: &str = "tool-modes.json";

/// One endpoint and model, and the mode it was found to need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct LearnedToolMode {
    pub base_url: String,
    pub model: String,
    pub mode: ToolMode,
}

/// Every learned mode.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LearnedToolModes {
    #[serde(default)]
    pub entries: Vec<LearnedToolMode>,
}

impl LearnedToolModes {
    /// The file in `dir`; a missing file holds nothing. A file that cannot be read is treated
    /// as empty too: what it held is learned again at the cost of one refused request.
    pub fn read(dir: &Path) -> Self {
        std::fs::read_to_string(path(dir))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// What was learned for `model` at `base_url`.
    pub fn get(&self, base_url: &str, model: &str) -> Option<ToolMode> {
        self.entries
            .iter()
            .find(|entry| same_url(&entry.base_url, base_url) && entry.model == model)
            .map(|entry| entry.mode)
    }

    /// Keeps `mode` for `model` at `base_url` in the file in `dir`.
    pub fn remember(
        dir: &Path,
        base_url: &str,
        model: &str,
        mode: ToolMode,
    ) -> Result<(), SettingsError> {
        let mut learned = Self::read(dir);
        learned
            .entries
            .retain(|entry| !(same_url(&entry.base_url, base_url) && entry.model == model));
        learned.entries.push(LearnedToolMode {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            mode,
        });
        learned.write(dir)
    }

    /// Forgets what was learned for `model` at `base_url`; true when there was something.
    pub fn forget(dir: &Path, base_url: &str, model: &str) -> Result<bool, SettingsError> {
        let mut learned = Self::read(dir);
        let before = learned.entries.len();
        learned
            .entries
            .retain(|entry| !(same_url(&entry.base_url, base_url) && entry.model == model));
        if learned.entries.len() == before {
            return Ok(false);
        }
        learned.write(dir)?;
        Ok(true)
    }

    fn write(&self, dir: &Path) -> Result<(), SettingsError> {
        let path = path(dir);
        let failed = |source| SettingsError::Write {
            path: path.display().to_string(),
            source,
        };
        let text = serde_json::to_string_pretty(self).unwrap_or_default() + "\n";
        tooltrail_atomic_write::write_atomically(&path, text.as_bytes()).map_err(failed)
    }
}

fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_learned_mode_is_kept_per_endpoint_and_model_and_can_be_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            LearnedToolModes::read(dir.path()),
            LearnedToolModes::default()
        );
        LearnedToolModes::remember(dir.path(), "http://a/v1/", "m", ToolMode::Prompt).unwrap();
        LearnedToolModes::remember(dir.path(), "http://a/v1", "m", ToolMode::Prompt).unwrap();
        let learned = LearnedToolModes::read(dir.path());
        assert_eq!(learned.entries.len(), 1);
        assert_eq!(learned.get("http://a/v1", "m"), Some(ToolMode::Prompt));
        assert_eq!(learned.get("http://a/v1", "other"), None);
        assert_eq!(learned.get("http://b/v1", "m"), None);
        assert!(LearnedToolModes::forget(dir.path(), "http://a/v1", "m").unwrap());
        assert!(!LearnedToolModes::forget(dir.path(), "http://a/v1", "m").unwrap());
        assert_eq!(
            LearnedToolModes::read(dir.path()).get("http://a/v1", "m"),
            None
        );
    }

    #[test]
    fn a_broken_file_holds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), "{not json").unwrap();
        assert_eq!(
            LearnedToolModes::read(dir.path()),
            LearnedToolModes::default()
        );
    }
}
