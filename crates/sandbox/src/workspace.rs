//! The workspace root and path resolution beneath it.
//!
//! A path is resolved the way the kernel would walk it, one component at a time, but against
//! the workspace root instead of `/`: every symlink met on the way is read and its target
//! resolved in turn, and the walk is refused the moment it would step above the root. Comparing
//! components (never string prefixes) is what keeps `/ws-evil` out of `/ws`.
//!
//! This walk gives the clear messages and the canonical relative name; it is not what keeps a
//! file operation inside. Every open, write and removal goes through the folder's directory
//! handle (`handle.rs`), which the operating system confines beneath the root, so a folder
//! swapped for a link after this walk looked at it still cannot lead anywhere outside.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::error::{PathError, WorkspaceError};

/// Symlinks followed in one resolution before giving up, as Linux's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// An opened workspace folder.
#[derive(Debug)]
pub struct Workspace {
    /// Canonical root: no symlinks, no `..`.
    root: PathBuf,
    /// The root as it was given (made absolute), when that differs from the canonical one:
    /// absolute paths the user writes are often spelled this way (`/tmp` vs `/private/tmp`).
    alias: Option<PathBuf>,
    /// The folder itself, opened once: every file operation inside goes through it.
    pub(crate) dir: Dir,
}

/// A path resolved beneath the workspace root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    path: PathBuf,
    relative: String,
    exists: bool,
}

impl ResolvedPath {
    /// The absolute path on disk, every symlink resolved. For the file system, never for
    /// messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The workspace-relative path with `/` separators; `.` for the root itself.
    pub fn relative(&self) -> &str {
        &self.relative
    }

    /// False only for paths from [`Workspace::resolve_new`] that do not exist yet.
    pub fn exists(&self) -> bool {
        self.exists
    }

    pub fn is_root(&self) -> bool {
        self.relative == "."
    }
}

/// One step still to walk.
enum Step {
    Parent,
    Name(OsString),
}

impl Workspace {
    pub fn open(root: impl AsRef<Path>) -> Result<Self, WorkspaceError> {
        let root = root.as_ref();
        let canonical = root
            .canonicalize()
            .ok()
            .filter(|path| path.is_dir())
            .ok_or_else(|| WorkspaceError::NotAFolder(root.display().to_string()))?;
        let given = std::path::absolute(root).ok();
        let alias = given.filter(|given| given != &canonical && is_plain_absolute(given));
        let dir = Dir::open_ambient_dir(&canonical, ambient_authority())
            .map_err(|_| WorkspaceError::NotAFolder(root.display().to_string()))?;
        Ok(Self {
            root: canonical,
            alias,
            dir,
        })
    }

    /// The canonical root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path the model or user gave to an existing file or folder in the workspace.
    ///
    /// Relative paths are taken from the root; absolute ones are accepted only when they lie
    /// inside it. `..` that would leave the root, symlinks that point out of it, NUL bytes, `~`,
    /// and Windows drive, UNC and device prefixes are refused. Nothing is expanded or decoded.
    pub fn resolve(&self, user_path: &str) -> Result<ResolvedPath, PathError> {
        self.resolve_inner(user_path, false)
    }

    /// As [`resolve`](Self::resolve), but the last components may not exist yet (a file about
    /// to be written, with its missing folders). What does exist is checked as strictly.
    pub fn resolve_new(&self, user_path: &str) -> Result<ResolvedPath, PathError> {
        self.resolve_inner(user_path, true)
    }

    /// The workspace-relative form of a path on disk, with `/` separators (`.` for the root).
    /// A path outside the workspace is shown by its file name only, so that no system path
    /// reaches a message.
    pub fn relative(&self, path: &Path) -> String {
        let inside = path
            .strip_prefix(&self.root)
            .ok()
            .or_else(|| {
                self.alias
                    .as_deref()
                    .and_then(|alias| path.strip_prefix(alias).ok())
            })
            .or_else(|| path.is_relative().then_some(path));
        match inside {
            Some(rest) => join_display(rest.components().filter_map(|c| match c {
                Component::Normal(name) => Some(name),
                _ => None,
            })),
            None => path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_else(|| "?".to_string()),
        }
    }

    /// Whether an absolute, canonical path lies inside the workspace (component-wise).
    pub fn contains(&self, path: &Path) -> bool {
        path.starts_with(&self.root)
    }

    fn resolve_inner(
        &self,
        user_path: &str,
        allow_missing: bool,
    ) -> Result<ResolvedPath, PathError> {
        check_form(user_path)?;
        let path = Path::new(user_path);
        let mut walk = Walk::from(self.root.clone());
        if path.is_absolute() || path.has_root() {
            let rest = self.strip_root(path).ok_or(PathError::AbsoluteOutside)?;
            push_steps(&mut walk.pending, rest, false)?;
        } else {
            push_steps(&mut walk.pending, path, false)?;
        }

        while let Some(step) = walk.pending.pop_front() {
            let name = match step {
                Step::Parent => {
                    if walk.resolved.pop().is_none() {
                        return Err(PathError::Outside(display_of(user_path)));
                    }
                    walk.current.pop();
                    continue;
                }
                Step::Name(name) => name,
            };
            let candidate = walk.current.join(&name);
            match std::fs::symlink_metadata(&candidate) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    self.follow_link(&mut walk, &name, &candidate)?;
                }
                Ok(meta) => walk.enter(name, candidate, &meta)?,
                Err(err)
                    if matches!(err.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) =>
                {
                    return walk.missing(name, candidate, allow_missing);
                }
                Err(err) => {
                    walk.resolved.push(name);
                    return Err(PathError::Io {
                        path: walk.relative(),
                        kind: err.kind(),
                    });
                }
            }
        }
        Ok(ResolvedPath {
            path: walk.current,
            relative: join_display(walk.resolved.iter().map(OsString::as_os_str)),
            exists: true,
        })
    }

    /// Replaces the link `name` (at `candidate`) by its target's steps, from the root when the
    /// target is absolute; refuses a target outside the root, or too many links in one walk.
    fn follow_link(
        &self,
        walk: &mut Walk,
        name: &OsStr,
        candidate: &Path,
    ) -> Result<(), PathError> {
        walk.links += 1;
        let here = join_display(walk.resolved.iter().map(OsString::as_os_str).chain([name]));
        if walk.links > MAX_LINKS {
            return Err(PathError::TooManyLinks(here));
        }
        let target = std::fs::read_link(candidate).map_err(|err| PathError::Io {
            path: here.clone(),
            kind: err.kind(),
        })?;
        if target.is_absolute() || target.has_root() {
            let rest = self
                .strip_root(&target)
                .ok_or(PathError::Outside(here.clone()))?;
            walk.resolved.clear();
            walk.current = self.root.clone();
            push_steps(&mut walk.pending, rest, true)?;
        } else {
            push_steps(&mut walk.pending, &target, true)?;
        }
        // A link whose target climbs above the root is reported as the link itself.
        if escapes(&walk.resolved, &walk.pending) {
            return Err(PathError::Outside(here));
        }
        Ok(())
    }

    /// The part of an absolute path below the root, if it lies there (compared by component).
    fn strip_root<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        path.strip_prefix(&self.root).ok().or_else(|| {
            self.alias
                .as_deref()
                .and_then(|alias| path.strip_prefix(alias).ok())
        })
    }
}

/// Refuses the forms of path that are never accepted, before touching the file system.
fn check_form(user_path: &str) -> Result<(), PathError> {
    if user_path.contains('\0') {
        return Err(PathError::Refused("paths may not contain NUL bytes"));
    }
    if user_path.starts_with('~') {
        return Err(PathError::Refused(
            "`~` is not expanded; use a path relative to the workspace root",
        ));
    }
    let bytes = user_path.as_bytes();
    let unc = bytes.len() >= 2 && is_sep(bytes[0]) && is_sep(bytes[1]);
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    // On Windows `C:\ws\x` may name a file inside the workspace; everywhere else (and for
    // drive-relative `C:x`) a drive prefix is refused.
    let drive_refused = drive && (!cfg!(windows) || !bytes.get(2).copied().is_some_and(is_sep));
    if unc || drive_refused {
        return Err(PathError::Refused(
            "Windows drive, UNC and device paths are not accepted; use a path relative to the workspace root",
        ));
    }
    if cfg!(windows) && user_path.split(['/', '\\']).any(is_windows_device) {
        return Err(PathError::Refused(
            "Windows device names (CON, NUL, COM1, ...) are not accepted as paths",
        ));
    }
    // A drive prefix was refused or allowed above; what follows it may hold no `:`.
    let after_drive = if drive { &user_path[2..] } else { user_path };
    if cfg!(windows) && after_drive.split(['/', '\\']).any(is_windows_alias) {
        return Err(PathError::Refused(
            "names with `:` (alternate data streams) or short `~1` names are not accepted on Windows; use the file's full name",
        ));
    }
    Ok(())
}

/// Whether a path part names something other than itself on Windows: an alternate data
/// stream or a stream type (`.git::$INDEX_ALLOCATION` is the folder `.git`, `a:b` a stream
/// of `a`), or a short 8.3 name (`GIT~1`, `PROGRA~1`), which can stand for a longer name that
/// a check of the long form would have refused.
pub(crate) fn is_windows_alias(component: &str) -> bool {
    if component.contains(':') {
        return true;
    }
    let stem = component.split('.').next().unwrap_or_default();
    stem.char_indices().any(|(at, c)| {
        c == '~'
            && at > 0
            && stem[at + 1..]
                .chars()
                .next()
                .is_some_and(|d| d.is_ascii_digit())
            && stem[at + 1..].chars().all(|d| d.is_ascii_digit())
    })
}

fn is_sep(byte: u8) -> bool {
    byte == b'/' || byte == b'\\'
}

fn is_windows_device(component: &str) -> bool {
    let stem = component.split('.').next().unwrap_or_default().trim_end();
    let upper = stem.to_ascii_uppercase();
    matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) || ((upper.starts_with("COM") || upper.starts_with("LPT"))
        && upper.len() == 4
        && upper.as_bytes()[3].is_ascii_digit())
}

/// Where a resolution stands: the steps still to take, and the components resolved so far
/// beneath the root (never a symlink, never `..`).
struct Walk {
    pending: VecDeque<Step>,
    resolved: Vec<OsString>,
    /// The root joined with `resolved`.
    current: PathBuf,
    /// Symlinks followed so far.
    links: usize,
}

impl From<PathBuf> for Walk {
    fn from(root: PathBuf) -> Self {
        Self {
            pending: VecDeque::new(),
            resolved: Vec::new(),
            current: root,
            links: 0,
        }
    }
}

impl Walk {
    /// The resolved components as a workspace-relative name.
    fn relative(&self) -> String {
        join_display(self.resolved.iter().map(OsString::as_os_str))
    }

    /// Steps into `name`, which exists and is not a link; only a folder may have steps after it.
    fn enter(
        &mut self,
        name: OsString,
        candidate: PathBuf,
        meta: &std::fs::Metadata,
    ) -> Result<(), PathError> {
        self.resolved.push(name);
        self.current = candidate;
        if !meta.is_dir() && !self.pending.is_empty() {
            return Err(PathError::NotADirectory(self.relative()));
        }
        Ok(())
    }

    /// `name` does not exist: the rest of the path is taken as written, and is an answer only
    /// where a missing path was asked for.
    fn missing(
        mut self,
        name: OsString,
        candidate: PathBuf,
        allow_missing: bool,
    ) -> Result<ResolvedPath, PathError> {
        self.resolved.push(name);
        self.current = candidate;
        let mut missing_ok = allow_missing;
        for step in self.pending.drain(..) {
            match step {
                Step::Name(name) => {
                    self.current.push(&name);
                    self.resolved.push(name);
                }
                // The kernel would fail here too: `missing/..` does not exist.
                Step::Parent => missing_ok = false,
            }
        }
        let relative = self.relative();
        if !missing_ok {
            return Err(PathError::NotFound(relative));
        }
        Ok(ResolvedPath {
            path: self.current,
            relative,
            exists: false,
        })
    }
}

/// Adds `path`'s components in front of (`front`) or behind the steps still to walk.
fn push_steps(pending: &mut VecDeque<Step>, path: &Path, front: bool) -> Result<(), PathError> {
    let mut steps = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir | Component::RootDir => {}
            Component::ParentDir => steps.push(Step::Parent),
            Component::Normal(name) => steps.push(Step::Name(name.to_os_string())),
            Component::Prefix(_) => {
                return Err(PathError::Refused(
                    "Windows drive, UNC and device paths are not accepted; use a path relative to the workspace root",
                ));
            }
        }
    }
    if front {
        for step in steps.into_iter().rev() {
            pending.push_front(step);
        }
    } else {
        pending.extend(steps);
    }
    Ok(())
}

/// Whether walking `pending` from `resolved` would climb above the root at some point.
fn escapes(resolved: &[OsString], pending: &VecDeque<Step>) -> bool {
    let mut depth = resolved.len();
    for step in pending {
        match step {
            Step::Parent if depth == 0 => return true,
            Step::Parent => depth -= 1,
            Step::Name(_) => depth += 1,
        }
    }
    false
}

fn is_plain_absolute(path: &Path) -> bool {
    path.components()
        .all(|c| !matches!(c, Component::ParentDir | Component::CurDir))
}

fn join_display<'a>(names: impl Iterator<Item = &'a OsStr>) -> String {
    let mut out = String::new();
    for name in names {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(&name.to_string_lossy());
    }
    if out.is_empty() { ".".to_string() } else { out }
}

/// The user's path as it may be repeated in a message: relative paths as given.
fn display_of(user_path: &str) -> String {
    if Path::new(user_path).is_absolute() {
        "the path".to_string()
    } else {
        user_path.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::is_windows_alias;

    /// Checked on every system; applied on Windows, where these names reach another file
    /// than they spell (`.git::$INDEX_ALLOCATION` is the folder `.git`).
    #[test]
    fn attack_links_windows_stream_and_short_names_are_recognised() {
        for alias in [
            ".git::$INDEX_ALLOCATION",
            "README.md:hidden",
            "a:b",
            "GIT~1",
            "PROGRA~12",
            "docume~1.txt",
        ] {
            assert!(is_windows_alias(alias), "{alias} should be refused");
        }
        for plain in [
            "README.md",
            "~notes",
            "a~b",
            "notes~",
            "x~1y",
            ".git",
            "file-1",
        ] {
            assert!(!is_windows_alias(plain), "{plain} is a plain name");
        }
    }
}
