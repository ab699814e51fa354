//! File writes and their undo: [`StoreChanges`] is `file_write`'s
//! [`ChangeJournal`](tooltrail_tools::ChangeJournal) on the record's database, and [`undo`] puts
//! back what a turn (or a whole conversation) wrote.
//!
//! Undo first checks every file, then changes them: a file that no longer holds what the turn
//! wrote (someone edited it since) stops the whole undo with a sentence naming it, and nothing
//! is changed, unless it is forced. Files are restored newest change first, so undoing a whole
//! conversation walks each file back through its turns.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use sha2::{Digest, Sha256};
use tooltrail_sandbox::{PathError, ResolvedPath, Workspace};
use tooltrail_store::{FileChangeRecord, KeptFile, LeftState, Store};
use tooltrail_tools::{CallScope, ChangeJournal, ToolError, ToolErrorCode};
use ts_rs::TS;

/// The file changes of one workspace's turns, kept in `store`.
pub struct StoreChanges {
    store: Arc<Store>,
    /// The workspace root, written as turns record it.
    workspace: String,
}

impl StoreChanges {
    pub fn new(store: Arc<Store>, workspace: &Path) -> Self {
        Self {
            store,
            workspace: workspace.display().to_string(),
        }
    }
}

fn journal_error(error: tooltrail_store::StoreError) -> ToolError {
    ToolError::new(
        ToolErrorCode::Failed,
        format!("the file was not written: its current state could not be kept for undo ({error})"),
    )
}

impl ChangeJournal for StoreChanges {
    fn before_write(
        &self,
        scope: &CallScope,
        path: &str,
        prior: Option<&[u8]>,
    ) -> Result<(), ToolError> {
        self.store
            .keep_file(&KeptFile {
                workspace: self.workspace.clone(),
                conversation_id: scope.conversation_id.clone(),
                turn_id: scope.turn_id.clone(),
                call_id: scope.call_id.clone(),
                path: path.to_string(),
                prior: prior.map(<[u8]>::to_vec),
            })
            .map_err(journal_error)
    }

    fn after_write(&self, scope: &CallScope, path: &str, written: &[u8]) -> Result<(), ToolError> {
        self.store
            .file_written(&scope.turn_id, path, &scope.call_id, &sha256(written))
            .map_err(journal_error)
    }
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct UndoReport {
    /// Files put back to what they held before, workspace-relative.
    pub restored: Vec<String>,
    /// Files the turns created, now removed.
    pub removed: Vec<String>,
}

/// Why an undo did nothing.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UndoError {
    #[error("there is nothing to undo: {0}")]
    Nothing(String),
    #[error(
        "nothing was undone: {} changed since Tooltrail wrote {}; undo anyway (force) to overwrite {}",
        list(.0), if .0.len() == 1 { "it" } else { "them" }, if .0.len() == 1 { "that change" } else { "those changes" }
    )]
    ChangedSince(Vec<String>),
    #[error("the folder {0} can no longer be opened")]
    Folder(String),
    #[error("`{path}` could not be put back: {why}")]
    Io { path: String, why: String },
    #[error("the record could not be read or updated: {0}")]
    Store(String),
}

fn list(paths: &[String]) -> String {
    paths
        .iter()
        .map(|path| format!("`{path}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Puts back every file the conversation's turns (or the one turn `turn_id`) wrote and that
/// is not undone yet. See the module doc for the checks.
pub fn undo(
    store: &Store,
    conversation_id: &str,
    turn_id: Option<&str>,
    force: bool,
) -> Result<UndoReport, UndoError> {
    let changes: Vec<FileChangeRecord> = store
        .file_changes(conversation_id, turn_id)
        .map_err(|error| UndoError::Store(error.to_string()))?
        .into_iter()
        .filter(|change| change.undone_ms.is_none())
        .collect();
    if changes.is_empty() {
        return Err(UndoError::Nothing(match turn_id {
            Some(_) => "this turn wrote no file that is not undone already".to_string(),
            None => "this conversation wrote no file that is not undone already".to_string(),
        }));
    }
    let folders = open_folders(&changes)?;
    let (steps, changed) = check_changes(&changes, &folders)?;
    if !changed.is_empty() && !force {
        return Err(UndoError::ChangedSince(changed));
    }
    put_back(store, &folders, steps)
}

/// Each workspace the changes were made in, opened once.
fn open_folders(changes: &[FileChangeRecord]) -> Result<HashMap<String, Workspace>, UndoError> {
    let mut folders: HashMap<String, Workspace> = HashMap::new();
    for change in changes {
        if !folders.contains_key(&change.workspace) {
            let folder = Workspace::open(&change.workspace)
                .map_err(|_| UndoError::Folder(change.workspace.clone()))?;
            folders.insert(change.workspace.clone(), folder);
        }
    }
    Ok(folders)
}

/// One change to undo, at the file it was made to.
type Step<'a> = (ResolvedPath, &'a FileChangeRecord);

/// Checks every file before any is changed, walking back through the changes as the undo
/// will: a file changed twice must hold the second write now, and the first write once the
/// second is undone. The steps in order, and the files that changed since Tooltrail wrote them.
fn check_changes<'a>(
    changes: &'a [FileChangeRecord],
    folders: &HashMap<String, Workspace>,
) -> Result<(Vec<Step<'a>>, Vec<String>), UndoError> {
    let mut expected_now: HashMap<(String, String), Option<Vec<u8>>> = HashMap::new();
    let mut changed = Vec::new();
    let mut steps = Vec::new();
    for change in changes {
        let folder = &folders[&change.workspace];
        let target = folder
            .resolve_new(&change.path)
            .map_err(|error| UndoError::Io {
                path: change.path.clone(),
                why: error.to_string(),
            })?;
        let key = (change.workspace.clone(), change.path.clone());
        let now = match expected_now.get(&key) {
            Some(state) => state.clone(),
            None => folder.read(&target).ok(),
        };
        let matches = match (&change.written_sha256, &now) {
            (Some(hash), Some(bytes)) => &sha256(bytes) == hash,
            (Some(_), None) => false,
            // The write never finished: the file should still be as it was.
            (None, now) => now == &change.prior,
        };
        if !matches && !changed.contains(&change.path) {
            changed.push(change.path.clone());
        }
        expected_now.insert(key, change.prior.clone());
        steps.push((target, change));
    }
    Ok((steps, changed))
}

/// Writes back what each file held before, or removes what the turns created, and records the
/// changes undone.
fn put_back(
    store: &Store,
    folders: &HashMap<String, Workspace>,
    steps: Vec<Step<'_>>,
) -> Result<UndoReport, UndoError> {
    let mut report = UndoReport {
        restored: Vec::new(),
        removed: Vec::new(),
    };
    let mut done = Vec::new();
    for (target, change) in steps {
        // Through the folder's handle, as the write it undoes went.
        let folder = &folders[&change.workspace];
        let result = match &change.prior {
            Some(bytes) => folder.write(&target, bytes),
            None => match folder.remove_file(&target) {
                Err(PathError::NotFound(_)) => Ok(()),
                other => other,
            },
        };
        if let Err(error) = result {
            // What was put back so far stays put back, and on record.
            let _ = store.mark_undone(&done);
            return Err(UndoError::Io {
                path: change.path.clone(),
                why: match error {
                    PathError::Io { kind, .. } => kind.to_string(),
                    other => other.to_string(),
                },
            });
        }
        done.push(change.id);
        let list = if change.prior.is_some() {
            &mut report.restored
        } else {
            &mut report.removed
        };
        if !list.contains(&change.path) {
            list.push(change.path.clone());
        }
    }
    // A file both created and restored in one conversation-wide undo ends removed.
    report
        .restored
        .retain(|path| !report.removed.contains(path));
    store
        .mark_undone(&done)
        .map_err(|error| UndoError::Store(error.to_string()))?;
    Ok(report)
}

/// Which of `paths` (relative to the workspace `root`) hold just what Tooltrail last left in
/// them, by a write or an undo. The folder's watcher leaves these out: they are not changes
/// the user would need telling about. A record that cannot be read leaves none out.
pub fn left_as_tooltrail_left(store: &Store, root: &Path, paths: &[String]) -> HashSet<String> {
    let Ok(left) = store.left_by_tooltrail(&root.display().to_string(), paths) else {
        return HashSet::new();
    };
    left.into_iter()
        .filter(|(path, state)| {
            let now = std::fs::read(root.join(path)).ok();
            match (state, now) {
                (LeftState::Written(hash), Some(bytes)) => &sha256(&bytes) == hash,
                (LeftState::Written(_), None) => false,
                (LeftState::Restored(prior), now) => prior == &now,
            }
        })
        .map(|(path, _)| path)
        .collect()
}

/// The turns of a conversation that wrote files, and whether each is undone: what the app
/// needs to offer "Undo these changes" on a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct TurnChanges {
    pub turn_id: String,
    /// The files the turn wrote, workspace-relative.
    pub paths: Vec<String>,
    /// True once every one of them is undone.
    pub undone: bool,
}

/// The turns of `conversation_id` that wrote files, oldest first.
pub fn turn_changes(store: &Store, conversation_id: &str) -> Result<Vec<TurnChanges>, UndoError> {
    let mut turns: Vec<TurnChanges> = Vec::new();
    let changes = store
        .file_changes(conversation_id, None)
        .map_err(|error| UndoError::Store(error.to_string()))?;
    for change in changes.into_iter().rev() {
        match turns.iter_mut().find(|turn| turn.turn_id == change.turn_id) {
            Some(turn) => {
                turn.paths.push(change.path);
                turn.undone &= change.undone_ms.is_some();
            }
            None => turns.push(TurnChanges {
                turn_id: change.turn_id,
                paths: vec![change.path],
                undone: change.undone_ms.is_some(),
            }),
        }
    }
    Ok(turns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn scope(turn: &str) -> CallScope {
        CallScope {
            conversation_id: "c1".into(),
            turn_id: turn.into(),
            call_id: format!("call-{turn}"),
        }
    }

    /// Writes as `file_write` does: keep, write, note.
    fn write(journal: &StoreChanges, root: &Path, turn: &str, path: &str, content: &str) {
        let file = root.join(path);
        let prior = std::fs::read(&file).ok();
        journal
            .before_write(&scope(turn), path, prior.as_deref())
            .unwrap();
        std::fs::write(&file, content).unwrap();
        journal
            .after_write(&scope(turn), path, content.as_bytes())
            .unwrap();
    }

    #[test]
    fn undo_puts_back_each_file_and_removes_created_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "original\n").unwrap();
        let store = Arc::new(Store::open_in_memory().unwrap());
        let journal = StoreChanges::new(Arc::clone(&store), &root);
        write(&journal, &root, "t1", "a.txt", "first\n");
        write(&journal, &root, "t1", "a.txt", "second\n");
        write(&journal, &root, "t1", "new.txt", "made\n");

        let report = undo(&store, "c1", Some("t1"), false).unwrap();
        assert_eq!(
            report,
            UndoReport {
                restored: vec!["a.txt".into()],
                removed: vec!["new.txt".into()],
            }
        );
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "original\n"
        );
        assert!(!root.join("new.txt").exists());
        assert_eq!(
            turn_changes(&store, "c1").unwrap(),
            vec![TurnChanges {
                turn_id: "t1".into(),
                paths: vec!["a.txt".into(), "new.txt".into()],
                undone: true,
            }]
        );
        assert!(matches!(
            undo(&store, "c1", Some("t1"), false),
            Err(UndoError::Nothing(_))
        ));
    }

    #[test]
    fn a_file_changed_since_stops_the_undo_and_nothing_changes_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "original\n").unwrap();
        let store = Arc::new(Store::open_in_memory().unwrap());
        let journal = StoreChanges::new(Arc::clone(&store), &root);
        write(&journal, &root, "t1", "a.txt", "by the model\n");
        write(&journal, &root, "t1", "b.txt", "new\n");
        std::fs::write(root.join("a.txt"), "edited by hand\n").unwrap();

        let error = undo(&store, "c1", None, false).unwrap_err();
        assert_eq!(
            error.to_string(),
            "nothing was undone: `a.txt` changed since Tooltrail wrote it; undo anyway (force) to overwrite that change"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "edited by hand\n"
        );
        assert!(root.join("b.txt").exists());

        undo(&store, "c1", None, true).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "original\n"
        );
        assert!(!root.join("b.txt").exists());
    }

    #[test]
    fn files_holding_what_tooltrail_left_are_told_apart_from_the_users_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "v0\n").unwrap();
        std::fs::write(root.join("mine.txt"), "untouched by Tooltrail\n").unwrap();
        let store = Arc::new(Store::open_in_memory().unwrap());
        let journal = StoreChanges::new(Arc::clone(&store), &root);
        let paths: Vec<String> = ["a.txt", "b.txt", "mine.txt"].map(String::from).to_vec();
        let left = |expected: &[&str]| {
            let mut found: Vec<String> = left_as_tooltrail_left(&store, &root, &paths)
                .into_iter()
                .collect();
            found.sort();
            assert_eq!(found, expected);
        };
        left(&[]);

        // Its own writes, in two turns, the second the later one.
        write(&journal, &root, "t1", "a.txt", "v1\n");
        write(&journal, &root, "t1", "b.txt", "made\n");
        write(&journal, &root, "t2", "a.txt", "v2\n");
        left(&["a.txt", "b.txt"]);

        // The user's edit is theirs, even of a file Tooltrail wrote.
        std::fs::write(root.join("a.txt"), "by hand\n").unwrap();
        left(&["b.txt"]);
        std::fs::write(root.join("a.txt"), "v2\n").unwrap();

        // Undoing the whole conversation: a.txt back to v0, b.txt removed.
        undo(&store, "c1", None, false).unwrap();
        left(&["a.txt", "b.txt"]);
        std::fs::write(root.join("b.txt"), "made again by hand\n").unwrap();
        left(&["a.txt"]);
    }

    #[test]
    fn a_whole_conversation_walks_each_file_back_through_its_turns() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "v0\n").unwrap();
        let store = Arc::new(Store::open_in_memory().unwrap());
        let journal = StoreChanges::new(Arc::clone(&store), &root);
        write(&journal, &root, "t1", "a.txt", "v1\n");
        write(&journal, &root, "t2", "a.txt", "v2\n");

        let report = undo(&store, "c1", None, false).unwrap();
        assert_eq!(report.restored, vec!["a.txt".to_string()]);
        assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "v0\n");
    }
}
