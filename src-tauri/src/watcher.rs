//! Watches the open folder so the UI can say that files changed since the last answer.
//!
//! Events are debounced (a build or a `git checkout` touches thousands of files at once),
//! only creations, writes, renames and removals count (reading a file is not changing it — the
//! model reads files all the time), and paths are filtered through the folder's `.gitignore`,
//! so `target/` churn does not count either.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use notify_debouncer_full::notify::event::{EventKind, ModifyKind};
use notify_debouncer_full::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use serde::Serialize;
use ts_rs::TS;

/// How long the folder must be quiet before a batch of changes is reported.
const DEBOUNCE: Duration = Duration::from_millis(400);
/// Paths listed in one report; the count says how many there were in all.
const MAX_PATHS: usize = 50;

/// One batch of changes, with workspace-relative paths.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, TS)]
pub struct FilesChanged {
    pub workspace: String,
    pub paths: Vec<String>,
    pub count: usize,
}

/// Keeps the watch alive; dropping it stops watching.
pub struct FolderWatch {
    _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
}

/// Starts watching `root`, calling `report` with each debounced batch that matters. `own`
/// names the paths of a batch that hold what Tooltrail itself left there (its writes and
/// undos): those are not reported.
pub fn watch(
    root: &Path,
    own: impl Fn(&[String]) -> HashSet<String> + Send + 'static,
    report: impl Fn(FilesChanged) + Send + 'static,
) -> Result<FolderWatch, notify_debouncer_full::notify::Error> {
    let filter = ChangeFilter::new(root);
    let workspace = root.display().to_string();
    let mut debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
        let Ok(events) = result else { return };
        let mut paths: Vec<String> = events
            .iter()
            .filter(|event| is_change(&event.event.kind))
            .flat_map(|event| event.event.paths.iter())
            .filter_map(|path| filter.relevant(path))
            .collect();
        paths.sort();
        paths.dedup();
        if !paths.is_empty() {
            let left_by_tooltrail = own(&paths);
            paths.retain(|path| !left_by_tooltrail.contains(path));
        }
        if paths.is_empty() {
            return;
        }
        let count = paths.len();
        paths.truncate(MAX_PATHS);
        report(FilesChanged {
            workspace: workspace.clone(),
            paths,
            count,
        });
    })?;
    debouncer.watch(root, RecursiveMode::Recursive)?;
    Ok(FolderWatch {
        _debouncer: debouncer,
    })
}

/// Whether an event changed the folder's content (not a read, not an access-time update).
fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(_) | EventKind::Any | EventKind::Other => false,
    }
}

/// Decides which changed paths the user would call "my files changed".
pub struct ChangeFilter {
    root: PathBuf,
    gitignore: Gitignore,
}

impl ChangeFilter {
    pub fn new(root: &Path) -> Self {
        let mut builder = GitignoreBuilder::new(root);
        // A missing or unreadable .gitignore just means nothing is ignored.
        let _ = builder.add(root.join(".gitignore"));
        let _ = builder.add(root.join(".ignore"));
        let gitignore = builder.build().unwrap_or_else(|_| Gitignore::empty());
        Self {
            root: root.to_path_buf(),
            gitignore,
        }
    }

    /// The workspace-relative path when the change counts, `None` when it does not.
    pub fn relevant(&self, path: &Path) -> Option<String> {
        let relative = path.strip_prefix(&self.root).ok()?;
        if relative.as_os_str().is_empty() || relative.components().any(|c| c.as_os_str() == ".git")
        {
            return None;
        }
        let is_dir = path.is_dir();
        if self
            .gitignore
            .matched_path_or_any_parents(relative, is_dir)
            .is_ignore()
        {
            return None;
        }
        Some(relative.to_string_lossy().replace('\\', "/"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_and_git_paths_do_not_count() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(".gitignore"), "target/\n*.log\n").expect("write");
        let filter = ChangeFilter::new(dir.path());
        let root = dir.path();
        assert_eq!(
            filter.relevant(&root.join("src/main.rs")).as_deref(),
            Some("src/main.rs")
        );
        assert_eq!(filter.relevant(&root.join("target/debug/app")), None);
        assert_eq!(filter.relevant(&root.join("build.log")), None);
        assert_eq!(filter.relevant(&root.join(".git/index")), None);
        assert_eq!(filter.relevant(Path::new("/elsewhere/file")), None);
    }

    #[test]
    fn reads_do_not_count_as_changes() {
        use notify_debouncer_full::notify::event::{AccessKind, CreateKind, DataChange};
        assert!(!is_change(&EventKind::Access(AccessKind::Any)));
        assert!(is_change(&EventKind::Create(CreateKind::File)));
        assert!(is_change(&EventKind::Modify(ModifyKind::Data(
            DataChange::Any
        ))));
    }

    #[test]
    fn a_change_is_reported_once_debounced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let (tx, rx) = std::sync::mpsc::channel();
        // A file holding what Tooltrail wrote is its own change, not the user's.
        let own = |paths: &[String]| {
            paths
                .iter()
                .filter(|path| path.as_str() == "written-by-tooltrail.md")
                .cloned()
                .collect()
        };
        let _watch = watch(&root, own, move |batch| {
            let _ = tx.send(batch);
        })
        .expect("watch");
        std::fs::write(root.join("existing.md"), "old").expect("write");
        let _ = rx.recv_timeout(Duration::from_secs(2));
        let _ = std::fs::read_to_string(root.join("existing.md")).expect("read");
        std::fs::write(root.join("written-by-tooltrail.md"), "hi").expect("write");
        std::fs::write(root.join("notes.md"), "hello").expect("write");
        let batch = rx.recv_timeout(Duration::from_secs(10)).expect("a batch");
        assert_eq!(batch.paths, vec!["notes.md".to_string()]);
        assert_eq!(batch.count, 1);
    }
}
