//! The folder of saved prompt prefixes (`<runtime>/prefixes`, llama-server's
//! `--slot-save-path`): how a saved prefix is named, how much the folder may hold, and which
//! files go first. The supervisor starts llama-server with this folder, the models folder
//! drops a model's files with the model, and [`crate::prefix`] saves and restores through it;
//! it knows nothing of a running server, so each of them can use it without the others.
//!
//! A file is named after the model's SHA-256, the context size and the prefix's own hash, so
//! another model, window, tool list or instruction never restores the wrong cache. The folder
//! is kept under a size bound, oldest used first out.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

/// What the prefixes may take on disk. One entry is the prefix's key-value cache: about 11 MB
/// for a 270M model's 1,000 tokens, 150 MB for a 4B model's.
pub const DEFAULT_LIMIT_BYTES: u64 = 1024 * 1024 * 1024;

/// The saved prefixes of one runtime folder.
#[derive(Debug, Clone)]
pub struct PrefixStore {
    dir: PathBuf,
    limit_bytes: u64,
}

impl PrefixStore {
    /// The store of the runtime folder `runtime_dir` (`<data>/runtime`).
    pub fn in_runtime_dir(runtime_dir: &Path) -> Self {
        Self {
            dir: runtime_dir.join("prefixes"),
            limit_bytes: DEFAULT_LIMIT_BYTES,
        }
    }

    /// The same with another bound on its size.
    pub fn with_limit(mut self, limit_bytes: u64) -> Self {
        self.limit_bytes = limit_bytes;
        self
    }

    /// The folder llama-server saves to (`--slot-save-path`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file name of the prefix `prefix` of the model whose file hashes to `model_sha256`,
    /// in a window of `context` tokens.
    pub fn file_name(model_sha256: &str, context: u32, prefix: &str) -> String {
        let prefix_hash = hex(&Sha256::digest(prefix.as_bytes()));
        format!(
            "{}-{context}-{}.bin",
            model_key(model_sha256),
            &prefix_hash[..16]
        )
    }

    /// Bytes the saved prefixes take.
    pub fn disk_used(&self) -> u64 {
        self.entries().iter().map(|entry| entry.bytes).sum()
    }

    /// Removes the prefixes saved for the model whose file hashes to `model_sha256`.
    pub fn remove_model(&self, model_sha256: &str) {
        let start = format!("{}-", model_key(model_sha256));
        for entry in self.entries() {
            if entry.name.starts_with(&start) {
                let _ = std::fs::remove_file(self.dir.join(&entry.name));
            }
        }
    }

    /// Removes the least recently used files until the rest fit the bound; `keep` stays.
    pub(crate) fn trim(&self, keep: &str) {
        let mut entries = self.entries();
        entries.sort_by_key(|entry| (entry.name != keep, std::cmp::Reverse(entry.used)));
        let mut total = 0;
        for entry in entries {
            total += entry.bytes;
            // The one just saved counts first, and always stays.
            if total > self.limit_bytes && entry.name != keep {
                let _ = std::fs::remove_file(self.dir.join(&entry.name));
                total -= entry.bytes;
            }
        }
    }

    fn entries(&self) -> Vec<Entry> {
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        read.flatten()
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let meta = entry.metadata().ok()?;
                (meta.is_file() && name.ends_with(".bin")).then(|| Entry {
                    name,
                    bytes: meta.len(),
                    used: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                })
            })
            .collect()
    }

    /// Marks `name` as used now, so that trimming keeps it over older ones.
    pub(crate) fn touch(&self, name: &str) {
        if let Ok(file) = std::fs::File::options()
            .append(true)
            .open(self.dir.join(name))
        {
            let _ = file.set_modified(SystemTime::now());
        }
    }
}

struct Entry {
    name: String,
    bytes: u64,
    used: SystemTime,
}

/// The model's part of a file name: enough of its hash to tell models apart.
fn model_key(model_sha256: &str) -> String {
    let clean: String = model_sha256
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(16)
        .collect();
    if clean.is_empty() {
        "model".to_string()
    } else {
        clean.to_ascii_lowercase()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_name_changes_with_the_model_the_window_and_the_prefix() {
        let one = PrefixStore::file_name("AB12cd", 8192, "prefix");
        assert_eq!(
            one,
            format!("ab12cd-8192-{}.bin", &hex(&Sha256::digest(b"prefix"))[..16])
        );
        assert_ne!(one, PrefixStore::file_name("ab12ce", 8192, "prefix"));
        assert_ne!(one, PrefixStore::file_name("ab12cd", 4096, "prefix"));
        assert_ne!(one, PrefixStore::file_name("ab12cd", 8192, "prefix "));
    }

    #[test]
    fn attack_runtime_a_prefix_file_name_never_leaves_its_folder() {
        // A model record's hash is read from the models folder: whatever it holds, the name is
        // hex digits, the window and the prefix's hash, inside the prefixes folder.
        for hash in [
            "../../etc/passwd",
            "a/b\\c",
            "",
            "ab\0cd",
            "deadbeef/../../x",
        ] {
            let name = PrefixStore::file_name(hash, 8192, "p");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'),
                "{name}"
            );
            assert!(!name.starts_with('.') && name.ends_with(".bin"), "{name}");
        }
        // A model whose hash is nothing but odd characters removes no other model's files.
        let dir = tempfile::tempdir().unwrap();
        let store = PrefixStore::in_runtime_dir(dir.path());
        std::fs::create_dir_all(store.dir()).unwrap();
        std::fs::write(store.dir().join("ab12-8192-x.bin"), "kept").unwrap();
        store.remove_model("../..");
        assert!(store.dir().join("ab12-8192-x.bin").is_file());
    }

    #[test]
    fn the_folder_is_trimmed_oldest_first_and_a_model_takes_its_files_along() {
        let dir = tempfile::tempdir().unwrap();
        let store = PrefixStore::in_runtime_dir(dir.path()).with_limit(25);
        std::fs::create_dir_all(store.dir()).unwrap();
        let at = |secs: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
        for (name, used) in [
            ("aa-1-old.bin", 1),
            ("aa-1-mid.bin", 2),
            ("bb-1-new.bin", 3),
        ] {
            std::fs::write(store.dir().join(name), [0u8; 10]).unwrap();
            let file = std::fs::File::options()
                .append(true)
                .open(store.dir().join(name))
                .unwrap();
            file.set_modified(at(used)).unwrap();
        }
        std::fs::write(store.dir().join("notes.txt"), "not a prefix").unwrap();
        assert_eq!(store.disk_used(), 30);
        store.trim("aa-1-old.bin");
        // The newest two would fit, but the one just used stays: the middle one goes.
        let mut left: Vec<String> = store.entries().into_iter().map(|e| e.name).collect();
        left.sort();
        assert_eq!(left, vec!["aa-1-old.bin", "bb-1-new.bin"]);
        store.remove_model("AA");
        let left: Vec<String> = store.entries().into_iter().map(|e| e.name).collect();
        assert_eq!(left, vec!["bb-1-new.bin"]);
        assert!(store.dir().join("notes.txt").is_file());
    }
}
