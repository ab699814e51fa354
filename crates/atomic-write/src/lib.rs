//! Writing a file so that a crash leaves the old content or the new, never a mix, and so that
//! nothing planted in the folder can lead the write anywhere else.
//!
//! Every write goes through a directory handle ([`cap_std::fs::Dir`]), never through a path
//! string that is checked and then opened again:
//! - the bytes go to a temporary file beside the target, with a random name, created
//!   exclusively (`O_CREAT | O_EXCL`, which never follows a link: a link already standing at
//!   that name makes the creation fail, and another random name is tried);
//! - they are flushed to disk, and the file gets the old file's permissions through its own
//!   handle (`fchmod`), never by path;
//! - the temporary file is renamed over the target inside the same folder handle, which
//!   replaces the target in one step. A link standing at the target's name is replaced, not
//!   followed.
//!
//! The handle confines every name beneath it (`cap-std` resolves with `openat2` and
//! `RESOLVE_BENEATH` on Linux, and component by component elsewhere): a `..` or a link that
//! would leave the folder is refused by the system, so a path relative to the handle cannot
//! name a file outside it however the folder changes meanwhile.
//!
//! Its own crate, below every crate that writes such files (the built-in file tools and undo
//! through the workspace's handle; Tooltrail's own folders: settings, `mcp.json`, the models
//! folder's records), since none of those may depend on another for it.
//!
//! ```
//! let folder = tempfile::tempdir()?;
//! let path = folder.path().join("notes.txt");
//! tooltrail_atomic_write::write_atomically(&path, b"first")?;
//! tooltrail_atomic_write::write_atomically(&path, b"second")?;
//! assert_eq!(std::fs::read(&path)?, b"second");
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{ErrorKind, Write};
use std::path::{Component, Path};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

/// How many random temporary names are tried before giving up (each is taken only when no
/// file or link stands there already).
const TEMPORARY_TRIES: usize = 16;

/// Writes `bytes` to `path`, a path relative to `dir` that stays beneath it, through a
/// temporary file and a rename inside `dir`'s handle. Missing folders on the way are made
/// through the handle too. An existing file keeps its permissions.
pub fn write_in(dir: &Dir, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = last_name(path)?;
    match path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        Some(parent) => {
            dir.create_dir_all(parent)?;
            write_beside(&dir.open_dir(parent)?, name, Mode::Kept, |file| {
                file.write_all(bytes)
            })
        }
        None => write_beside(dir, name, Mode::Kept, |file| file.write_all(bytes)),
    }
}

/// Writes `bytes` to `path` in one of Tooltrail's own folders (settings, data, the models
/// folder): the folder is made when missing and opened as a handle, and the file is written
/// as by [`write_in`]. An existing file keeps its permissions.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_with(path, |file| file.write_all(bytes))
}

/// As [`write_atomically`], for content written in pieces (an export): `fill` writes it into
/// the temporary file, which takes the target's name only when `fill` succeeded. On an error
/// nothing is left under either name.
pub fn replace_with<T, E: From<std::io::Error>>(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> Result<T, E>,
) -> Result<T, E> {
    write_in_own_folder(path, Mode::Kept, fill)
}

/// As [`write_atomically`], for a file only its owner may read (the local runtime's key and
/// state): the temporary file is made owner-only (`0600` on Unix) before anything is written
/// to it, and the file keeps that whatever the old one had.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_in_own_folder(path, Mode::OwnerOnly, |file| file.write_all(bytes))
}

/// `path`'s folder, made when missing and opened as a handle, and the file written beside
/// the others there.
fn write_in_own_folder<T, E: From<std::io::Error>>(
    path: &Path,
    mode: Mode,
    fill: impl FnOnce(&mut std::fs::File) -> Result<T, E>,
) -> Result<T, E> {
    let folder = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = last_name(path)?;
    std::fs::create_dir_all(folder)?;
    let dir = Dir::open_ambient_dir(folder, ambient_authority())?;
    write_beside(&dir, name, mode, fill)
}

/// Whose the written file is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The old file's permissions, or the usual ones for a new file.
    Kept,
    /// Owner-only, from its creation on.
    OwnerOnly,
}

/// Options for a file in one of Tooltrail's own folders that is written where it stands (a
/// download's part file, a lock, a log): a link standing at its name is refused, not
/// followed, so nobody who could write in the folder can lead the write to another file.
pub fn in_place() -> std::fs::OpenOptions {
    #[allow(unused_mut)]
    let mut options = std::fs::OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    options
}

/// The last part of `path`, which must be a plain name (not `..`, `.` or a root).
fn last_name(path: &Path) -> std::io::Result<&Path> {
    match path.components().next_back() {
        Some(Component::Normal(name)) => Ok(Path::new(name)),
        _ => Err(std::io::Error::new(
            ErrorKind::InvalidInput,
            "a file can only be written under a plain name",
        )),
    }
}

/// Writes `name` directly inside `dir`, its content written by `fill`.
fn write_beside<T, E: From<std::io::Error>>(
    dir: &Dir,
    name: &Path,
    mode: Mode,
    fill: impl FnOnce(&mut std::fs::File) -> Result<T, E>,
) -> Result<T, E> {
    let (temp, file) = create_temporary(dir, name, mode)?;
    let mut file = file.into_std();
    let result = fill(&mut file).and_then(|filled| {
        // The old file's permissions, when it is a file: a link standing at the name is
        // replaced by the rename, and its target's permissions are not looked at.
        if mode == Mode::Kept
            && let Ok(meta) = dir.symlink_metadata(name)
            && meta.is_file()
        {
            file.set_permissions(meta.permissions().into_std(&file)?)?;
        }
        file.sync_all()?;
        drop(file);
        dir.rename(&temp, dir, name)?;
        Ok(filled)
    });
    if result.is_err() {
        let _ = dir.remove_file(&temp);
    }
    result
}

/// A new, empty temporary file beside `name`, under a random name nobody could have prepared.
fn create_temporary(
    dir: &Dir,
    name: &Path,
    mode: Mode,
) -> std::io::Result<(String, cap_std::fs::File)> {
    let shown = name.to_string_lossy();
    // Long names stay within the system's limit on one name (255 bytes).
    let stem: String = shown.chars().take(100).collect();
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if mode == Mode::OwnerOnly {
        use cap_std::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut last = std::io::Error::from(ErrorKind::AlreadyExists);
    for _ in 0..TEMPORARY_TRIES {
        let temp = format!(".{stem}.{:016x}.tooltrail.tmp", rand::random::<u64>());
        match dir.open_with(&temp, &options) {
            Ok(file) => return Ok((temp, file)),
            Err(err) if err.kind() == ErrorKind::AlreadyExists => last = err,
            Err(err) => return Err(err),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn names_in(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn handle(folder: &Path) -> Dir {
        Dir::open_ambient_dir(folder, ambient_authority()).unwrap()
    }

    /// A folder outside with a file in it that no write may touch.
    fn victim() -> (tempfile::TempDir, std::path::PathBuf) {
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, b"untouched").unwrap();
        (outside, victim)
    }

    #[test]
    fn a_new_file_is_written_in_a_new_folder_and_no_temporary_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deeper").join("notes.txt");
        write_atomically(&path, b"hello").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"hello");
        assert_eq!(names_in(&dir.path().join("deeper")), vec!["notes.txt"]);
    }

    #[test]
    fn a_new_file_is_written_through_a_handle_in_new_folders() {
        let dir = tempfile::tempdir().unwrap();
        write_in(&handle(dir.path()), Path::new("a/b/notes.txt"), b"hello").unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("a/b/notes.txt")).unwrap(),
            b"hello"
        );
        assert_eq!(names_in(&dir.path().join("a/b")), vec!["notes.txt"]);
    }

    #[test]
    fn an_existing_file_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, b"a much longer first version").unwrap();
        write_atomically(&path, b"short").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"short");
        assert_eq!(names_in(dir.path()), vec!["notes.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        write_atomically(&path, b"#!/bin/sh\necho hi\n").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // A folder where the file should be: the rename fails.
        let path = dir.path().join("taken");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside"), b"kept").unwrap();
        assert!(write_atomically(&path, b"new").is_err());
        assert_eq!(std::fs::read(path.join("inside")).unwrap(), b"kept");
        assert_eq!(names_in(dir.path()), vec!["taken"]);
    }

    #[test]
    fn a_path_that_climbs_out_of_the_handle_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("inner")).unwrap();
        let inner = handle(&dir.path().join("inner"));
        assert!(write_in(&inner, Path::new("../escaped.txt"), b"x").is_err());
        assert!(write_in(&inner, Path::new("/tmp/escaped.txt"), b"x").is_err());
        assert_eq!(names_in(dir.path()), vec!["inner"]);
    }

    /// Links planted at every name a temporary file used to get (`.NAME.tooltrail-<pid>.tmp`)
    /// and at guessable others, all pointing at one file outside: the write lands on the
    /// target's name inside the folder, the outside file is untouched, and the target is a
    /// file, not a link.
    #[cfg(unix)]
    #[test]
    fn attack_links_a_link_planted_at_a_temporary_name_does_not_lead_the_write_out() {
        let (_outside, victim) = victim();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("README.md"), b"old").unwrap();
        let own = std::process::id();
        for pid in own.saturating_sub(50)..own + 50 {
            std::os::unix::fs::symlink(
                &victim,
                dir.path().join(format!(".README.md.tooltrail-{pid}.tmp")),
            )
            .unwrap();
        }
        write_in(&handle(dir.path()), Path::new("README.md"), b"approved").unwrap();
        write_atomically(&dir.path().join("README.md"), b"approved again").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"untouched");
        let meta = std::fs::symlink_metadata(dir.path().join("README.md")).unwrap();
        assert!(meta.is_file(), "README.md must stay a file");
        assert_eq!(
            std::fs::read(dir.path().join("README.md")).unwrap(),
            b"approved again"
        );
    }

    /// A link standing at the target's own name is replaced by the new file; its target
    /// outside is neither written nor has its permissions changed.
    #[cfg(unix)]
    #[test]
    fn attack_links_a_link_at_the_target_name_is_replaced_not_followed() {
        use std::os::unix::fs::PermissionsExt;
        let (_outside, victim) = victim();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("notes.txt")).unwrap();
        write_in(&handle(dir.path()), Path::new("notes.txt"), b"new").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"untouched");
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(
            std::fs::symlink_metadata(dir.path().join("notes.txt"))
                .unwrap()
                .is_file()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_private_file_is_owner_only_whatever_the_old_one_allowed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("api-key");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&path, b"secret").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"secret");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(names_in(dir.path()), vec!["api-key"]);
    }

    /// A part file, lock or log opened in place refuses a link standing at its name.
    #[cfg(unix)]
    #[test]
    fn attack_links_a_file_written_in_place_refuses_a_link_at_its_name() {
        let (_outside, victim) = victim();
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("model.gguf.part");
        std::os::unix::fs::symlink(&victim, &part).unwrap();
        assert!(in_place().create(true).append(true).open(&part).is_err());
        assert!(
            in_place()
                .create(true)
                .write(true)
                .truncate(true)
                .open(&part)
                .is_err()
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"untouched");
        in_place()
            .create(true)
            .append(true)
            .open(dir.path().join("plain.part"))
            .unwrap();
    }

    /// A folder on the way that is a link out of the handle is refused by the system.
    #[cfg(unix)]
    #[test]
    fn attack_links_a_linked_folder_on_the_way_out_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("docs")).unwrap();
        assert!(write_in(&handle(dir.path()), Path::new("docs/notes.txt"), b"x").is_err());
        assert!(names_in(outside.path()).is_empty());
    }
}
