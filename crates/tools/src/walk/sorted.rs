//! A depth-first walk in sorted order that decides whether an entry is ignored before it opens
//! it, for the tools whose results follow path order (`search_text`, `list_dir`).
//!
//! The `ignore` crate's sorted walk reads and sorts every entry of an ignored folder before it
//! learns the folder is ignored; with a large ignored folder (build output, vendored data) that
//! is work for nothing on every call. This walk reads a folder only once it is known to be
//! wanted, and only when the caller asks for what follows it. It applies the same rules as the
//! parallel walks of [`super::builder`]: `.ignore`, `.gitignore` (in or out of a git repository)
//! and `.git/info/exclude` of the folder and every folder above it, and the user's global git
//! excludes, in that precedence, the nearest folder's file first; `.git` is skipped and
//! symlinks are never followed. A folder's listing also tells which of its ignore files exist,
//! so folders without one cost no extra system call.

use std::ffi::OsString;
use std::fs::{self, FileType};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// One entry of the walk: the root itself (depth 0) or something below it.
pub(crate) struct Entry {
    path: PathBuf,
    kind: FileType,
    depth: usize,
}

impl Entry {
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn into_path(self) -> PathBuf {
        self.path
    }

    /// The entry's own type: a symlink is a symlink, whatever it points to.
    pub(crate) fn file_type(&self) -> FileType {
        self.kind
    }

    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    pub(crate) fn file_name(&self) -> &std::ffi::OsStr {
        self.path.file_name().unwrap_or(self.path.as_os_str())
    }
}

/// The ignore files of one folder, chained to those of the folders above it. Only folders that
/// have at least one get a link of their own.
struct Rules {
    /// `.ignore`, `.gitignore` and `.git/info/exclude`, highest precedence first.
    files: [Gitignore; 3],
    /// A folder above the walk's root: its rules see paths from the root's real location.
    above_root: bool,
    parent: Option<Arc<Rules>>,
}

/// Which ignore files a folder's listing holds.
#[derive(Default)]
struct Found {
    ignore: bool,
    gitignore: bool,
    /// `.git`, and whether it is a file (a worktree or submodule pointing elsewhere).
    git: Option<bool>,
}

/// A folder being listed: its remaining entries, in order, and the rules that apply to them.
struct Frame {
    dir: PathBuf,
    entries: std::vec::IntoIter<(OsString, FileType)>,
    rules: Option<Arc<Rules>>,
    depth: usize,
}

/// The walk. Entries that cannot be read are skipped, as the parallel walks skip them.
pub(crate) struct SortedWalk {
    root: PathBuf,
    /// The root's real location, when it differs from `root`.
    real_root: Option<PathBuf>,
    respect_ignores: bool,
    global: Gitignore,
    max_depth: Option<usize>,
    stack: Vec<Frame>,
    /// A folder just returned, to be opened when the caller asks for the next entry.
    pending: Option<(PathBuf, usize, Option<Arc<Rules>>)>,
    started: bool,
}

impl SortedWalk {
    /// A walk of `root`. `include_ignored` turns off every ignore file; `.git` stays skipped.
    pub(crate) fn new(root: &Path, include_ignored: bool) -> Self {
        let respect_ignores = !include_ignored;
        let real_root = fs::canonicalize(root).ok().filter(|real| real != root);
        let global = if respect_ignores {
            Gitignore::global().0
        } else {
            Gitignore::empty()
        };
        Self {
            root: root.to_path_buf(),
            real_root,
            respect_ignores,
            global,
            max_depth: None,
            stack: Vec::new(),
            pending: None,
            started: false,
        }
    }

    /// Descends at most this many levels below the root (`Some(1)`: its direct entries).
    pub(crate) fn max_depth(mut self, depth: Option<usize>) -> Self {
        self.max_depth = depth;
        self
    }

    /// The root, and the rules of the folders above it (which apply below it too).
    fn start(&mut self) -> Option<Entry> {
        let meta = fs::metadata(&self.root).ok()?;
        let entry = Entry {
            path: self.root.clone(),
            kind: meta.file_type(),
            depth: 0,
        };
        if meta.is_dir() && self.max_depth != Some(0) {
            let rules = if self.respect_ignores {
                self.rules_above_root()
            } else {
                None
            };
            self.pending = Some((self.root.clone(), 0, rules));
        }
        Some(entry)
    }

    fn rules_above_root(&self) -> Option<Arc<Rules>> {
        let real = self.real_root.as_deref().unwrap_or(&self.root);
        // From the filesystem's root down to the root's parent.
        let mut above: Vec<&Path> = real
            .parent()
            .map(Path::ancestors)
            .into_iter()
            .flatten()
            .collect();
        above.reverse();
        let mut rules = None;
        for dir in above {
            let git = fs::metadata(dir.join(".git"))
                .ok()
                .map(|meta| meta.is_file());
            let found = Found {
                ignore: dir.join(".ignore").exists(),
                gitignore: dir.join(".gitignore").exists(),
                git,
            };
            rules = chain(dir, &found, true, rules);
        }
        rules
    }

    /// Lists a folder, sorted by name, and adds its ignore files to the rules.
    fn open(&mut self, dir: PathBuf, depth: usize, rules: Option<Arc<Rules>>) {
        let Ok(listing) = fs::read_dir(&dir) else {
            return;
        };
        let mut found = Found::default();
        let mut entries = Vec::new();
        for entry in listing.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            match name.as_encoded_bytes() {
                b".git" => {
                    let is_dir = if kind.is_symlink() {
                        entry.path().is_dir()
                    } else {
                        kind.is_dir()
                    };
                    found.git = Some(!is_dir);
                    continue;
                }
                b".ignore" => found.ignore = true,
                b".gitignore" => found.gitignore = true,
                _ => {}
            }
            entries.push((name, kind));
        }
        entries.sort_unstable_by(|a, b| a.0.as_encoded_bytes().cmp(b.0.as_encoded_bytes()));
        let rules = if self.respect_ignores {
            chain(&dir, &found, false, rules)
        } else {
            None
        };
        self.stack.push(Frame {
            dir,
            entries: entries.into_iter(),
            rules,
            depth,
        });
    }

    fn is_ignored(&self, rules: Option<&Rules>, path: &Path, is_dir: bool) -> bool {
        if !self.respect_ignores {
            return false;
        }
        // Rules above the root see the path from the root's real location; made once, if needed.
        let mut from_real_root: Option<PathBuf> = None;
        for file in 0..3 {
            let mut level = rules;
            while let Some(rules) = level {
                let subject = match &self.real_root {
                    Some(real) if rules.above_root => from_real_root
                        .get_or_insert_with(|| {
                            real.join(path.strip_prefix(&self.root).unwrap_or(path))
                        })
                        .as_path(),
                    _ => path,
                };
                match rules.files[file].matched(subject, is_dir) {
                    Match::None => level = rules.parent.as_deref(),
                    found => return found.is_ignore(),
                }
            }
        }
        self.global.matched(path, is_dir).is_ignore()
    }
}

impl Iterator for SortedWalk {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        if !self.started {
            self.started = true;
            return self.start();
        }
        if let Some((dir, depth, rules)) = self.pending.take() {
            self.open(dir, depth, rules);
        }
        loop {
            let frame = self.stack.last_mut()?;
            let Some((name, kind)) = frame.entries.next() else {
                self.stack.pop();
                continue;
            };
            let path = frame.dir.join(name);
            let depth = frame.depth + 1;
            let rules = frame.rules.clone();
            if self.is_ignored(rules.as_deref(), &path, kind.is_dir()) {
                continue;
            }
            if kind.is_dir() && self.max_depth.is_none_or(|max| depth < max) {
                self.pending = Some((path.clone(), depth, rules));
            }
            return Some(Entry { path, kind, depth });
        }
    }
}

/// The rules below `dir`: its own ignore files in front of `parent`, or `parent` itself when it
/// has none (or none with a rule).
fn chain(
    dir: &Path,
    found: &Found,
    above_root: bool,
    parent: Option<Arc<Rules>>,
) -> Option<Arc<Rules>> {
    let read = |present: bool, file: PathBuf| {
        if !present {
            return Gitignore::empty();
        }
        let mut builder = GitignoreBuilder::new(dir);
        // A line that does not parse is dropped and the rest still apply, as git does.
        let _ = builder.add(file);
        builder.build().unwrap_or_else(|_| Gitignore::empty())
    };
    let exclude = match found.git {
        None => None,
        Some(is_file) => git_dir(dir, is_file).map(|git| git.join("info").join("exclude")),
    };
    let files = [
        read(found.ignore, dir.join(".ignore")),
        read(found.gitignore, dir.join(".gitignore")),
        match exclude {
            Some(path) => read(path.is_file(), path),
            None => Gitignore::empty(),
        },
    ];
    if files.iter().all(Gitignore::is_empty) {
        return parent;
    }
    Some(Arc::new(Rules {
        files,
        above_root,
        parent,
    }))
}

/// The folder holding `info/exclude` for a repository at `dir`: `.git` itself, or for a `.git`
/// file (`gitdir: …`) the common folder of that worktree or the submodule's own folder.
fn git_dir(dir: &Path, dot_git_is_file: bool) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    if !dot_git_is_file {
        return Some(dot_git);
    }
    let text = fs::read_to_string(&dot_git).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir: ")?.trim_end();
    let git = dir.join(target);
    match fs::read_to_string(git.join("commondir")) {
        Ok(common) => Some(git.join(common.lines().next()?.trim_end())),
        Err(_) => Some(git),
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// A tree exercising every kind of rule: precedence between the files, negation, anchored
    /// and folder-only patterns, rules from above the root, a nested repository with its own
    /// exclude file, hidden entries, symlinks and names whose byte order differs from a
    /// case-insensitive one.
    fn tree() -> tempfile::TempDir {
        let top = tempfile::tempdir().unwrap();
        let t = top.path();
        write(
            t,
            ".gitignore",
            "from_parent.txt\n/ws/parent_anchored.txt\n",
        );
        let ws = &t.join("ws");
        write(
            ws,
            ".gitignore",
            "*.log\nbuild/\n!keep.log\n/anchored.txt\nnested/deep/*.tmp\ncache/\n",
        );
        write(ws, ".ignore", "secret/\n!forced.log\n");
        write(ws, ".git/info/exclude", "excluded.txt\n");
        write(ws, ".git/HEAD", "ref: refs/heads/main\n");
        for file in [
            "a.txt",
            "B.txt",
            "Z",
            "_x",
            "é.txt",
            "main.log",
            "keep.log",
            "forced.log",
            "anchored.txt",
            "excluded.txt",
            "from_parent.txt",
            "parent_anchored.txt",
            ".env",
            ".config/settings.toml",
            "build/out.o",
            "build2/out.o",
            "secret/key",
            "cache/blob",
            "src/anchored.txt",
            "src/cache",
            "src/deep/x.tmp",
            "nested/deep/y.tmp",
            "nested/deep/y.rs",
            "sub/app.log",
            "sub/data/raw.csv",
            "sub/database.rs",
            "sub/inner/README.md",
            "sub/inner/lib.rs",
            "vendor/lib/excluded.txt",
            "vendor/lib/nested_excluded.rs",
            "vendor/lib/code.rs",
        ] {
            write(ws, file, "x\n");
        }
        write(ws, "sub/.gitignore", "!*.log\ndata\n");
        write(ws, "sub/inner/.ignore", "*.md\n");
        write(ws, "vendor/lib/.git/info/exclude", "nested_excluded.rs\n");
        symlink(ws.join("a.txt"), ws.join("link_file")).unwrap();
        symlink(ws.join("sub"), ws.join("link_dir")).unwrap();
        symlink(ws, t.join("ws_link")).unwrap();
        top
    }

    fn ours(root: &Path, include_ignored: bool, max_depth: Option<usize>) -> Vec<String> {
        SortedWalk::new(root, include_ignored)
            .max_depth(max_depth)
            .map(|entry| describe(root, entry.path(), entry.depth(), entry.file_type()))
            .collect()
    }

    /// What `ignore`'s own sorted walk gives with the options of the parallel walks.
    fn reference(root: &Path, include_ignored: bool, max_depth: Option<usize>) -> Vec<String> {
        let mut builder = super::super::builder(root, include_ignored);
        builder
            .max_depth(max_depth)
            .sort_by_file_name(|a, b| a.cmp(b));
        builder
            .build()
            .flatten()
            .map(|entry| {
                let kind = entry.file_type().unwrap();
                describe(root, entry.path(), entry.depth(), kind)
            })
            .collect()
    }

    fn describe(root: &Path, path: &Path, depth: usize, kind: FileType) -> String {
        let kind = if kind.is_symlink() {
            "symlink"
        } else if kind.is_dir() {
            "dir"
        } else {
            "file"
        };
        let below = path.strip_prefix(root).unwrap().display();
        format!("{depth} {kind} {below}")
    }

    #[test]
    fn applies_the_same_rules_in_the_same_order_as_the_ignore_crate() {
        let top = tree();
        let ws = top.path().join("ws");
        let walked = ours(&ws, false, None);
        pretty_assertions::assert_eq!(walked, reference(&ws, false, None));
        // The rules the tree is built to exercise did apply.
        for gone in [
            "main.log",
            "build/",
            "anchored.txt",
            "excluded.txt",
            "from_parent.txt",
            "parent_anchored.txt",
            "secret",
            "cache/blob",
            "nested/deep/y.tmp",
            "sub/data/",
            "sub/inner/README.md",
            "vendor/lib/nested_excluded.rs",
            ".git",
        ] {
            assert!(
                !walked.iter().any(|line| line.ends_with(&format!(" {gone}"))
                    || line.contains(&format!(" {gone}/"))),
                "{gone} should be ignored: {walked:#?}"
            );
        }
        for kept in [
            "1 file keep.log",
            "1 file forced.log",
            "1 file .env",
            "2 file src/anchored.txt",
            "2 file src/cache",
            "3 file src/deep/x.tmp",
            "2 file sub/app.log",
            "2 file sub/database.rs",
            "1 symlink link_dir",
            "1 dir build2",
        ] {
            assert!(
                walked.iter().any(|line| line == kept),
                "{kept} missing: {walked:#?}"
            );
        }
    }

    #[test]
    fn a_root_reached_through_a_symlink_keeps_the_rules_above_its_real_location() {
        let top = tree();
        let link = top.path().join("ws_link");
        // The root itself is reported as the folder it is (`ignore` calls it a symlink).
        let walked = ours(&link, false, None);
        pretty_assertions::assert_eq!(walked[0], "0 dir ");
        pretty_assertions::assert_eq!(walked[1..], reference(&link, false, None)[1..]);
        assert!(
            !walked
                .iter()
                .any(|line| line.ends_with(" parent_anchored.txt"))
        );
    }

    #[test]
    fn include_ignored_and_max_depth_match_the_ignore_crate() {
        let top = tree();
        let ws = top.path().join("ws");
        let everything = ours(&ws, true, None);
        pretty_assertions::assert_eq!(everything, reference(&ws, true, None));
        assert!(everything.contains(&"2 file secret/key".to_string()));
        assert!(!everything.iter().any(|line| line.contains(".git/")));
        for depth in [0, 1, 2] {
            pretty_assertions::assert_eq!(
                ours(&ws, false, Some(depth)),
                reference(&ws, false, Some(depth))
            );
        }
        pretty_assertions::assert_eq!(
            ours(&ws.join("sub"), false, None),
            reference(&ws.join("sub"), false, None)
        );
    }

    #[test]
    fn a_file_root_is_the_only_entry() {
        let top = tree();
        let file = top.path().join("ws/a.txt");
        let walked: Vec<_> = SortedWalk::new(&file, false)
            .map(Entry::into_path)
            .collect();
        assert_eq!(walked, vec![file]);
        assert_eq!(
            SortedWalk::new(&top.path().join("missing"), false).count(),
            0
        );
    }

    #[test]
    fn folders_are_listed_only_when_wanted_and_only_when_not_ignored() {
        let top = tree();
        let ws = top.path().join("ws");
        let mut walk = SortedWalk::new(&ws, false);
        let mut listed = Vec::new();
        while let Some(entry) = walk.next() {
            let top_frame = walk.stack.last().map(|frame| frame.dir.clone());
            if entry.file_type().is_dir() && entry.depth() > 0 {
                // Returning a folder does not list it yet: a caller that stops here has read
                // nothing more.
                assert_ne!(top_frame.as_deref(), Some(entry.path()));
            }
            listed.extend(top_frame.filter(|dir| !listed.contains(dir)));
        }
        for ignored in ["secret", "build", "cache", "sub/data", ".git"] {
            assert!(
                !listed.contains(&ws.join(ignored)),
                "{ignored} was listed: {listed:?}"
            );
        }
        assert!(listed.contains(&ws.join("sub/inner")), "{listed:?}");
    }
}
