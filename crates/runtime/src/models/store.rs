//! The models folder on disk, `<data>/models/`:
//!
//! ```text
//! qwen3-1.7b.gguf             the model (for a linked import, a hard or symbolic link)
//! qwen3-1.7b.json             its record: size, SHA-256, GGUF metadata, where it came from
//! qwen3-4b.gguf.part          a download not finished yet
//! qwen3-4b.gguf.part.json     what that download is of (its SHA-256 and size), to resume it
//! .qwen3-4b.lock              held while a pull, import or removal of that name runs
//! ```
//!
//! A model is listed when its record exists, and the record is written last (to a temporary
//! file, then renamed over), after the model file is whole, verified and in place; removal
//! takes the record away first. So nothing partial is ever listed, whatever is interrupted.

use std::fs::{File, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::gguf::{GgufInfo, read_gguf};
use crate::models::{ModelError, disk, names};
use crate::supervisor::unix_now;

/// A model in the models folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstalledModel {
    pub name: String,
    /// The GGUF file to serve.
    pub path: PathBuf,
    pub size_bytes: u64,
    /// The file's SHA-256 in lower-case hex, as verified when it was pulled or imported.
    pub sha256: String,
    pub metadata: GgufInfo,
    pub source: ModelSource,
    /// When it was installed, in seconds since the Unix epoch.
    pub installed_at: u64,
    /// The file is gone: the original of a symbolically linked import was moved or deleted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
}

/// Where an installed model came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelSource {
    /// Pulled as a model of the built-in catalogue.
    Catalogue {
        entry: String,
        repo: String,
        revision: String,
        file: String,
    },
    /// Pulled from the hub by its repository and file.
    Hub {
        repo: String,
        revision: String,
        file: String,
    },
    /// A file the user had.
    Imported { from: PathBuf, how: ImportMode },
}

impl ModelSource {
    /// A few words for a listing.
    pub fn describe(&self) -> String {
        match self {
            ModelSource::Catalogue { repo, .. } => format!("catalogue ({repo})"),
            ModelSource::Hub {
                repo,
                revision,
                file,
            } => {
                if revision == "main" {
                    format!("hf.co/{repo}/{file}")
                } else {
                    format!("hf.co/{repo}/{file}@{revision}")
                }
            }
            ModelSource::Imported { from, how } => {
                let how = match how {
                    ImportMode::Copy => "copied",
                    ImportMode::HardLink => "hard-linked",
                    ImportMode::SymLink => "linked",
                };
                format!("{how} from {}", from.display())
            }
        }
    }
}

/// How an imported file got into the models folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportMode {
    /// A copy: the original may go.
    Copy,
    /// A hard link: no space used, and the model stays if the original's name goes.
    HardLink,
    /// A symbolic link (the original is on another file system): the original must stay.
    SymLink,
}

/// A download that was stopped and can be carried on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingPull {
    pub name: String,
    /// Bytes downloaded so far.
    pub have: u64,
    pub total: Option<u64>,
}

/// What a removal took away.
#[derive(Debug, Clone, PartialEq)]
pub struct Removed {
    /// The installed model, when there was one.
    pub model: Option<InstalledModel>,
    /// The bytes of an unfinished download of that name, when there was one.
    pub unfinished: Option<u64>,
}

/// The record of a model, as kept in `<name>.json`; the path is where the record is.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    name: String,
    size_bytes: u64,
    sha256: String,
    metadata: GgufInfo,
    source: ModelSource,
    installed_at: u64,
}

/// What an unfinished download is of, kept in `<name>.gguf.part.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PartState {
    pub sha256: String,
    pub size: Option<u64>,
    pub url: String,
}

/// The models folder.
#[derive(Debug, Clone)]
pub struct ModelStore {
    dir: PathBuf,
}

/// Held while an operation on one name runs; released when dropped.
#[derive(Debug)]
pub(crate) struct NameLock {
    _file: File,
}

impl ModelStore {
    /// The models folder at `dir`, created if need be.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, ModelError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)
            .map_err(|source| ModelError::io("create the models folder", &dir, source))?;
        Ok(Self { dir })
    }

    /// `<data>/models`, where the data folder is `TOOLTRAIL_DATA_DIR` or the OS's.
    pub fn default_dir() -> Result<PathBuf, ModelError> {
        Ok(tooltrail_settings::data_dir()?.join("models"))
    }

    /// The models folder in the data folder.
    pub fn open_default() -> Result<Self, ModelError> {
        Self::open(Self::default_dir()?)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every installed model, by name.
    pub fn list(&self) -> Result<Vec<InstalledModel>, ModelError> {
        let mut models = Vec::new();
        for entry in self.entries()? {
            let Some(name) = entry.strip_suffix(".json") else {
                continue;
            };
            if name.ends_with(".part") || names::check(name).is_err() {
                continue;
            }
            // A record that cannot be read names no model Tooltrail can serve.
            if let Some(model) = self.read_record(name)? {
                models.push(model);
            }
        }
        models.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(models)
    }

    /// The installed model of this name (case does not matter).
    pub fn find(&self, name: &str) -> Result<Option<InstalledModel>, ModelError> {
        let name = name.trim().to_ascii_lowercase();
        if names::check(&name).is_err() {
            return Ok(None);
        }
        self.read_record(&name)
    }

    /// Downloads stopped before they finished, by name.
    pub fn pending(&self) -> Result<Vec<PendingPull>, ModelError> {
        let mut pending = Vec::new();
        for entry in self.entries()? {
            let Some(name) = entry.strip_suffix(".gguf.part") else {
                continue;
            };
            if names::check(name).is_err() {
                continue;
            }
            let have = std::fs::metadata(self.part_path(name)).map_or(0, |m| m.len());
            let total = self.read_part_state(name).and_then(|state| state.size);
            pending.push(PendingPull {
                name: name.to_string(),
                have,
                total,
            });
        }
        pending.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(pending)
    }

    /// Removes a model, and any unfinished download of that name.
    pub fn remove(&self, name: &str) -> Result<Removed, ModelError> {
        let name = names::normalize(name)?;
        let _lock = self.lock(&name)?;
        let model = self.read_record(&name)?;
        // The record first: from here on the model is not listed, even if the rest fails.
        if let Some(model) = &model {
            remove_if_there(&self.record_path(&name))?;
            remove_if_there(&self.model_path(&name))?;
            // Its saved prompt prefixes go with it (the runtime folder is beside this one).
            if let Some(data_dir) = self.dir.parent() {
                crate::prefix_store::PrefixStore::in_runtime_dir(&data_dir.join("runtime"))
                    .remove_model(&model.sha256);
            }
        }
        let part = self.part_path(&name);
        let unfinished = std::fs::metadata(&part).ok().map(|m| m.len());
        if unfinished.is_some() {
            remove_if_there(&part)?;
        }
        remove_if_there(&self.part_state_path(&name))?;
        if model.is_none() && unfinished.is_none() {
            return Err(ModelError::NotInstalled { name });
        }
        Ok(Removed { model, unfinished })
    }

    /// Imports a GGUF file the user has: copied, or with `link` hard-linked (or, across file
    /// systems, symbolically linked) so that it takes no more space. A symbolic link given is
    /// followed to its file first, and that file is what is read, linked and recorded. Its metadata is read
    /// first, so a file that is not a GGUF model is refused before anything is written.
    /// `progress` is told the bytes copied or hashed so far and the file's size.
    pub fn import(
        &self,
        file: &Path,
        name: Option<&str>,
        link: bool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<InstalledModel, ModelError> {
        // The file itself, not a link to it: a hard link made of a symbolic link is another
        // symbolic link, whose relative target would name a different file from inside the
        // models folder than the one whose header was read and whose bytes were hashed.
        let from = std::fs::canonicalize(file)
            .map_err(|source| ModelError::io("find the full path of", file, source))?;
        let metadata = read_gguf(&from)?;
        let name = match name {
            Some(name) => names::normalize(name)?,
            None => names::from_file_name(&file.to_string_lossy())?,
        };
        let size = std::fs::metadata(&from)
            .map_err(|source| ModelError::io("read", &from, source))?
            .len();
        let _lock = self.lock(&name)?;
        if self.read_record(&name)?.is_some() {
            return Err(ModelError::NameTaken { name });
        }
        // An unfinished pull under this name gives way: the name is the import's now.
        let part = self.part_path(&name);
        remove_if_there(&part)?;
        remove_if_there(&self.part_state_path(&name))?;
        let (how, sha256) = if link {
            match std::fs::hard_link(&from, &part) {
                Ok(()) => (ImportMode::HardLink, hash_file(&part, size, progress)?),
                Err(hard) => {
                    symlink(&from, &part).map_err(|_| ModelError::LinkFailed {
                        path: from.display().to_string(),
                        source: hard,
                    })?;
                    (ImportMode::SymLink, hash_file(&part, size, progress)?)
                }
            }
        } else {
            let available = disk::available_space(&self.dir)?;
            if available < size {
                return Err(ModelError::NoSpaceToCopy {
                    path: from.display().to_string(),
                    dir: self.dir.display().to_string(),
                    needed: size,
                    available,
                });
            }
            let copied = copy_hashing(&from, &part, size, progress);
            match copied {
                Ok(sha) => (ImportMode::Copy, sha),
                Err(error) => {
                    let _ = std::fs::remove_file(&part);
                    return Err(error);
                }
            }
        };
        let source = ModelSource::Imported { from, how };
        self.install(&name, size, sha256, metadata, source)
    }

    /// Moves a whole, verified `<name>.gguf.part` into place and writes its record, which
    /// makes the model listed.
    pub(crate) fn install(
        &self,
        name: &str,
        size_bytes: u64,
        sha256: String,
        metadata: GgufInfo,
        source: ModelSource,
    ) -> Result<InstalledModel, ModelError> {
        let part = self.part_path(name);
        let path = self.model_path(name);
        std::fs::rename(&part, &path)
            .map_err(|source| ModelError::io("move the model into place at", &path, source))?;
        let record = Record {
            name: name.to_string(),
            size_bytes,
            sha256,
            metadata,
            source,
            installed_at: unix_now(),
        };
        let text = serde_json::to_string_pretty(&record).map_err(|error| {
            ModelError::io(
                "write the record of",
                &path,
                std::io::Error::other(error.to_string()),
            )
        })?;
        write_atomically(&self.record_path(name), text.as_bytes())?;
        remove_if_there(&self.part_state_path(name))?;
        Ok(self.model_from(record))
    }

    /// Takes the lock of a name, or says another operation on it is running.
    pub(crate) fn lock(&self, name: &str) -> Result<NameLock, ModelError> {
        let path = self.dir.join(format!(".{name}.lock"));
        let file = tooltrail_atomic_write::in_place()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|source| ModelError::io("create", &path, source))?;
        match file.try_lock() {
            Ok(()) => Ok(NameLock { _file: file }),
            Err(TryLockError::WouldBlock) => Err(ModelError::Busy {
                name: name.to_string(),
            }),
            Err(TryLockError::Error(source)) => Err(ModelError::io("lock", &path, source)),
        }
    }

    pub(crate) fn model_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.gguf"))
    }

    fn record_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.json"))
    }

    pub(crate) fn part_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.gguf.part"))
    }

    pub(crate) fn part_state_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.gguf.part.json"))
    }

    pub(crate) fn read_part_state(&self, name: &str) -> Option<PartState> {
        let text = std::fs::read_to_string(self.part_state_path(name)).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub(crate) fn write_part_state(&self, name: &str, state: &PartState) -> Result<(), ModelError> {
        let text = serde_json::to_string_pretty(state).map_err(|error| {
            ModelError::io(
                "write",
                &self.part_state_path(name),
                std::io::Error::other(error.to_string()),
            )
        })?;
        write_atomically(&self.part_state_path(name), text.as_bytes())
    }

    fn entries(&self) -> Result<Vec<String>, ModelError> {
        let read = std::fs::read_dir(&self.dir)
            .map_err(|source| ModelError::io("read the models folder", &self.dir, source))?;
        Ok(read
            .filter_map(Result::ok)
            .filter_map(|entry| entry.file_name().to_str().map(str::to_string))
            .filter(|name| !name.starts_with('.'))
            .collect())
    }

    fn read_record(&self, name: &str) -> Result<Option<InstalledModel>, ModelError> {
        let path = self.record_path(name);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(ModelError::io("read", &path, source)),
        };
        Ok(serde_json::from_str::<Record>(&text)
            .ok()
            .filter(|record| record.name == name)
            .map(|record| self.model_from(record)))
    }

    fn model_from(&self, record: Record) -> InstalledModel {
        let path = self.model_path(&record.name);
        // `exists` follows a symbolic link: a link whose original is gone is missing.
        let missing = !path.exists();
        InstalledModel {
            name: record.name,
            path,
            size_bytes: record.size_bytes,
            sha256: record.sha256,
            metadata: record.metadata,
            source: record.source,
            installed_at: record.installed_at,
            missing,
        }
    }
}

/// [`tooltrail_atomic_write::write_atomically`], with the error naming the file.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ModelError> {
    tooltrail_atomic_write::write_atomically(path, bytes)
        .map_err(|source| ModelError::io("write", path, source))
}

pub(crate) fn remove_if_there(path: &Path) -> Result<(), ModelError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(ModelError::io("remove", path, source)),
    }
}

/// The SHA-256 of a file in lower-case hex, read in large blocks.
pub(crate) fn hash_file(
    path: &Path,
    size: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<String, ModelError> {
    let mut file = File::open(path).map_err(|source| ModelError::io("read", path, source))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1024 * 1024];
    let mut done = 0u64;
    loop {
        let n = file
            .read(&mut buffer)
            .map_err(|source| ModelError::io("read", path, source))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        done += n as u64;
        progress(done, size);
    }
    Ok(hex(&hasher.finalize()))
}

/// Copies `from` to `to`, hashing as it goes, and flushes the copy to disk.
fn copy_hashing(
    from: &Path,
    to: &Path,
    size: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<String, ModelError> {
    let mut input = File::open(from).map_err(|source| ModelError::io("read", from, source))?;
    let mut output = tooltrail_atomic_write::in_place()
        .write(true)
        .create(true)
        .truncate(true)
        .open(to)
        .map_err(|source| ModelError::io("create", to, source))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1024 * 1024];
    let mut done = 0u64;
    loop {
        let n = input
            .read(&mut buffer)
            .map_err(|source| ModelError::io("read", from, source))?;
        if n == 0 {
            break;
        }
        output.write_all(&buffer[..n]).map_err(|source| {
            if disk::is_full(&source) {
                ModelError::DiskFullCopying {
                    path: from.display().to_string(),
                    dir: to
                        .parent()
                        .map(|d| d.display().to_string())
                        .unwrap_or_default(),
                }
            } else {
                ModelError::io("write", to, source)
            }
        })?;
        hasher.update(&buffer[..n]);
        done += n as u64;
        progress(done, size);
    }
    output
        .sync_all()
        .map_err(|source| ModelError::io("write", to, source))?;
    Ok(hex(&hasher.finalize()))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

#[cfg(unix)]
fn symlink(original: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(original, link)
}

#[cfg(windows)]
fn symlink(original: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_file(original, link)
}

#[cfg(not(any(unix, windows)))]
fn symlink(_original: &Path, _link: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "symbolic links are not supported here",
    ))
}
