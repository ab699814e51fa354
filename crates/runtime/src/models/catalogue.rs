//! The built-in catalogue of recommended models: a data file (`crates/runtime/catalogue.toml`)
//! compiled into the binary, so that `tooltrail models pull qwen3-1.7b` needs no index from
//! the network and the file's expected SHA-256 comes from this release, not from the hub alone.

use serde::{Deserialize, Serialize};

use crate::models::{ModelError, hub_path, names};

const BUILTIN: &str = include_str!("../../catalogue.toml");

/// A model the catalogue recommends: one GGUF file on the hub.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogueEntry {
    /// The short name to pull it by, and its name once installed (`qwen3-1.7b`).
    pub name: String,
    pub title: String,
    pub description: String,
    /// `owner/name` on the hub.
    pub repo: String,
    /// The commit of the repository the file is pinned to.
    #[serde(default = "main")]
    pub revision: String,
    /// The file's path in the repository.
    pub file: String,
    /// The file's size, when known for certain.
    pub size_bytes: Option<u64>,
    /// The file's SHA-256 in lower-case hex, when known for certain; else the hub's is used.
    pub sha256: Option<String>,
    /// Memory needed to serve it with an 8,192-token window, in GB.
    pub memory_gb: f64,
    /// The context window it was trained for, in tokens.
    pub context_length: u64,
    pub licence: String,
}

fn main() -> String {
    "main".to_string()
}

/// The recommended models, in the order the catalogue lists them.
#[derive(Debug, Clone, PartialEq)]
pub struct Catalogue {
    entries: Vec<CatalogueEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogueFile {
    model: Vec<CatalogueEntry>,
}

impl Catalogue {
    /// The catalogue built into this release.
    pub fn builtin() -> Result<Self, ModelError> {
        Self::parse(BUILTIN)
    }

    /// A catalogue from TOML text of the built-in one's shape, checked entry by entry.
    pub fn parse(text: &str) -> Result<Self, ModelError> {
        let file: CatalogueFile = toml::from_str(text)
            .map_err(|error| ModelError::Catalogue(error.message().to_string()))?;
        for (i, entry) in file.model.iter().enumerate() {
            names::check(&entry.name).map_err(|error| ModelError::Catalogue(error.to_string()))?;
            if file.model[..i].iter().any(|other| other.name == entry.name) {
                return Err(ModelError::Catalogue(format!(
                    "{} is listed twice",
                    entry.name
                )));
            }
            if let Some(sha) = &entry.sha256
                && !names::is_sha256(sha)
            {
                return Err(ModelError::Catalogue(format!(
                    "the SHA-256 of {} is not 64 lower-case hex digits",
                    entry.name
                )));
            }
            if entry.repo.split('/').count() != 2 || entry.file.is_empty() {
                return Err(ModelError::Catalogue(format!(
                    "{} does not name a repository and a file",
                    entry.name
                )));
            }
            // The same rules as a reference a user types: nothing climbs out of the repository.
            hub_path::check_revision(&entry.revision)
                .and_then(|_| hub_path::check_file(&entry.file))
                .map_err(|reason| ModelError::Catalogue(format!("{}: {reason}", entry.name)))?;
        }
        Ok(Self {
            entries: file.model,
        })
    }

    pub fn entries(&self) -> &[CatalogueEntry] {
        &self.entries
    }

    /// The entry of this name (case does not matter).
    pub fn get(&self, name: &str) -> Option<&CatalogueEntry> {
        self.entries
            .iter()
            .find(|entry| entry.name.eq_ignore_ascii_case(name.trim()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_builtin_catalogue_is_valid_and_pins_every_file() {
        let catalogue = Catalogue::builtin().unwrap();
        let names: Vec<&str> = catalogue
            .entries()
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "qwen3-1.7b",
                "qwen3-4b",
                "llama3.2-3b",
                "qwen2.5-coder-1.5b",
                "qwen2.5-coder-3b"
            ]
        );
        for entry in catalogue.entries() {
            assert!(entry.file.ends_with(".gguf"), "{}", entry.name);
            assert_eq!(
                entry.revision.len(),
                40,
                "{} is pinned to a commit",
                entry.name
            );
            assert!(entry.memory_gb > 0.0);
            // A model needs at least its file in memory.
            if let Some(size) = entry.size_bytes {
                assert!(entry.memory_gb * 1e9 > size as f64, "{}", entry.name);
            }
        }
        let entry = catalogue.get("Qwen3-1.7B").unwrap();
        assert_eq!(entry.repo, "unsloth/Qwen3-1.7B-GGUF");
        assert_eq!(entry.size_bytes, Some(1_107_409_472));
    }

    #[test]
    fn a_broken_catalogue_is_refused_with_a_sentence() {
        let entry = |name: &str, sha: &str| {
            format!(
                "[[model]]\nname = \"{name}\"\ntitle = \"T\"\ndescription = \"D\"\nrepo = \"a/b\"\nfile = \"f.gguf\"\nsha256 = \"{sha}\"\nmemory_gb = 1.0\ncontext_length = 4096\nlicence = \"MIT\"\n"
            )
        };
        let good = "a".repeat(64);
        let error = Catalogue::parse(&format!("{}{}", entry("m", &good), entry("m", &good)))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "the built-in model catalogue is not valid: m is listed twice"
        );
        let error = Catalogue::parse(&entry("m", "abc"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "the built-in model catalogue is not valid: the SHA-256 of m is not 64 lower-case hex digits"
        );
        let catalogue = Catalogue::parse(&entry("m", &good)).unwrap();
        assert_eq!(catalogue.entries()[0].revision, "main");
    }
}
