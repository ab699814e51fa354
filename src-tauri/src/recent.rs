//! Recently opened folders, newest first, kept as a small JSON file beside `config.toml`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How many folders the list keeps.
const KEEP: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RecentWorkspace {
    pub path: String,
    pub name: String,
    pub opened_ms: i64,
}

fn file() -> Option<PathBuf> {
    crate::settings::config_dir()
        .ok()
        .map(|dir| dir.join("recent-workspaces.json"))
}

/// The list, without folders that no longer exist. A missing or damaged file is an empty list.
pub fn load() -> Vec<RecentWorkspace> {
    file().map(|path| read(&path)).unwrap_or_default()
}

fn read(path: &Path) -> Vec<RecentWorkspace> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<Vec<RecentWorkspace>>(&text).ok())
        .unwrap_or_default()
        .into_iter()
        .filter(|entry| Path::new(&entry.path).is_dir())
        .collect()
}

/// Puts `entry` first. Failing to save the list is not worth bothering the user about.
pub fn remember(entry: RecentWorkspace) {
    if let Some(path) = file() {
        let list = with_first(read(&path), entry);
        // Whole or not at all, and never through a link planted beside it.
        if let Ok(text) = serde_json::to_string_pretty(&list) {
            let _ = tooltrail_atomic_write::write_atomically(&path, text.as_bytes());
        }
    }
}

fn with_first(list: Vec<RecentWorkspace>, entry: RecentWorkspace) -> Vec<RecentWorkspace> {
    let mut out = vec![entry.clone()];
    out.extend(list.into_iter().filter(|old| old.path != entry.path));
    out.truncate(KEEP);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn entry(path: &str, opened_ms: i64) -> RecentWorkspace {
        RecentWorkspace {
            path: path.to_string(),
            name: path.rsplit('/').next().unwrap_or(path).to_string(),
            opened_ms,
        }
    }

    #[test]
    fn reopening_a_folder_moves_it_to_the_front_without_duplicates() {
        let list = vec![entry("/a", 1), entry("/b", 2)];
        let list = with_first(list, entry("/b", 3));
        assert_eq!(list, vec![entry("/b", 3), entry("/a", 1)]);
    }

    #[test]
    fn the_list_is_capped() {
        let list = (0..20).fold(Vec::new(), |list, i| {
            with_first(list, entry(&format!("/{i}"), i))
        });
        assert_eq!(list.len(), KEEP);
        assert_eq!(list[0].path, "/19");
    }
}
