//! What file writes replaced, per turn and file, so that a turn (or a whole conversation) can
//! be undone; and when it was. See `V5_FILE_CHANGES` in migrations.rs.

use std::collections::{HashMap, HashSet};

use rusqlite::{Row, TransactionBehavior, params};

use crate::conversations::now_ms;
use crate::error::Result;
use crate::store::Store;

/// A file's state before a turn first writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptFile {
    /// The workspace root.
    pub workspace: String,
    pub conversation_id: String,
    pub turn_id: String,
    pub call_id: String,
    /// Workspace-relative, `/`-separated.
    pub path: String,
    /// The file's bytes, or `None` when it did not exist.
    pub prior: Option<Vec<u8>>,
}

/// One turn's change to one file, as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChangeRecord {
    pub id: i64,
    pub workspace: String,
    pub conversation_id: String,
    pub turn_id: String,
    pub path: String,
    /// What the file held before the turn; `None`: it did not exist.
    pub prior: Option<Vec<u8>>,
    /// SHA-256 (hex) of what the turn's last write left; `None` when no write finished.
    pub written_sha256: Option<String>,
    pub created_ms: i64,
    pub undone_ms: Option<i64>,
}

/// What Tooltrail last left in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftState {
    /// A write, by the SHA-256 (hex) of what it wrote.
    Written(String),
    /// An undo, by what it put back (`None`: it removed the file).
    Restored(Option<Vec<u8>>),
}

impl Store {
    /// Keeps a file's state before a write, unless its turn already kept that file's (the
    /// turn's first write is what undo goes back to).
    pub fn keep_file(&self, kept: &KeptFile) -> Result<()> {
        self.with_conn(|conn| {
            conn.execute(
                "INSERT INTO file_changes(workspace, conversation_id, turn_id, path, existed, \
                 prior, first_call_id, last_call_id, created_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8) \
                 ON CONFLICT(turn_id, path) DO NOTHING",
                params![
                    kept.workspace,
                    kept.conversation_id,
                    kept.turn_id,
                    kept.path,
                    kept.prior.is_some(),
                    kept.prior,
                    kept.call_id,
                    now_ms()
                ],
            )?;
            Ok(())
        })
    }

    /// Notes what a write of `turn_id` left in `path`.
    pub fn file_written(
        &self,
        turn_id: &str,
        path: &str,
        call_id: &str,
        written_sha256: &str,
    ) -> Result<()> {
        self.with_conn(|conn| {
            conn.execute(
                "UPDATE file_changes SET written_sha256 = ?3, last_call_id = ?4, written_ms = ?5 \
                 WHERE turn_id = ?1 AND path = ?2",
                params![turn_id, path, written_sha256, call_id, now_ms()],
            )?;
            Ok(())
        })
    }

    /// The file changes of a conversation (of one of its turns, with `turn_id`), newest
    /// first, undone ones included.
    pub fn file_changes(
        &self,
        conversation_id: &str,
        turn_id: Option<&str>,
    ) -> Result<Vec<FileChangeRecord>> {
        self.with_conn(|conn| {
            let mut statement = conn.prepare(
                "SELECT id, workspace, conversation_id, turn_id, path, existed, prior, \
                 written_sha256, created_ms, undone_ms FROM file_changes \
                 WHERE conversation_id = ?1 AND (?2 IS NULL OR turn_id = ?2) \
                 ORDER BY id DESC",
            )?;
            let rows = statement.query_map(params![conversation_id, turn_id], record)?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    /// What Tooltrail last left in each of `paths` (workspace-relative) of `workspace`: the
    /// hash of its last finished write, or what an undo put back. Paths Tooltrail never wrote
    /// are absent from the answer.
    pub fn left_by_tooltrail(
        &self,
        workspace: &str,
        paths: &[String],
    ) -> Result<HashMap<String, LeftState>> {
        let wanted: HashSet<&str> = paths.iter().map(String::as_str).collect();
        self.with_conn(|conn| {
            // The latest thing Tooltrail did to each file. Within one millisecond an undo comes
            // after a write, a later write after an earlier one, and an undo of several turns
            // restores the newest first (the oldest row's restore is the last).
            struct Latest {
                when: (i64, u8, i64),
                id: i64,
                /// The write's hash; `None` for a restore.
                hash: Option<String>,
            }
            let mut latest: HashMap<String, Latest> = HashMap::new();
            let mut statement = conn.prepare(
                "SELECT id, path, written_sha256, written_ms, undone_ms FROM file_changes \
                 WHERE workspace = ?1",
            )?;
            let mut rows = statement.query(params![workspace])?;
            while let Some(row) = rows.next()? {
                let path: String = row.get(1)?;
                if !wanted.contains(path.as_str()) {
                    continue;
                }
                let id: i64 = row.get(0)?;
                let mut events = Vec::new();
                if let (Some(hash), Some(at)) = (
                    row.get::<_, Option<String>>(2)?,
                    row.get::<_, Option<i64>>(3)?,
                ) {
                    events.push(((at, 0, id), Some(hash)));
                }
                if let Some(at) = row.get::<_, Option<i64>>(4)? {
                    events.push(((at, 1, -id), None));
                }
                for (when, hash) in events {
                    if latest.get(&path).is_none_or(|seen| when > seen.when) {
                        latest.insert(path.clone(), Latest { when, id, hash });
                    }
                }
            }
            // Only a restore that is the latest needs what it put back read.
            let mut prior =
                conn.prepare("SELECT existed, prior FROM file_changes WHERE id = ?1")?;
            let mut left = HashMap::with_capacity(latest.len());
            for (path, Latest { id, hash, .. }) in latest {
                let state = match hash {
                    Some(hash) => LeftState::Written(hash),
                    None => LeftState::Restored(prior.query_row(params![id], |row| {
                        let existed: bool = row.get(0)?;
                        let bytes: Option<Vec<u8>> = row.get(1)?;
                        Ok(existed.then(|| bytes.unwrap_or_default()))
                    })?),
                };
                left.insert(path, state);
            }
            Ok(left)
        })
    }

    /// Marks changes as undone, all at once.
    pub fn mark_undone(&self, ids: &[i64]) -> Result<()> {
        self.with_conn(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let now = now_ms();
            for id in ids {
                tx.execute(
                    "UPDATE file_changes SET undone_ms = ?2 WHERE id = ?1",
                    params![id, now],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
    }
}

fn record(row: &Row<'_>) -> rusqlite::Result<FileChangeRecord> {
    let existed: bool = row.get(5)?;
    let prior: Option<Vec<u8>> = row.get(6)?;
    Ok(FileChangeRecord {
        id: row.get(0)?,
        workspace: row.get(1)?,
        conversation_id: row.get(2)?,
        turn_id: row.get(3)?,
        path: row.get(4)?,
        // An empty file's bytes may come back as NULL: `existed` says which it was.
        prior: existed.then(|| prior.unwrap_or_default()),
        written_sha256: row.get(7)?,
        created_ms: row.get(8)?,
        undone_ms: row.get(9)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn kept(turn: &str, path: &str, prior: Option<&[u8]>) -> KeptFile {
        KeptFile {
            workspace: "/ws".into(),
            conversation_id: "c1".into(),
            turn_id: turn.into(),
            call_id: "call".into(),
            path: path.into(),
            prior: prior.map(<[u8]>::to_vec),
        }
    }

    #[test]
    fn a_turn_keeps_the_state_before_its_first_write_only() {
        let store = Store::open_in_memory().unwrap();
        store
            .keep_file(&kept("t1", "a.txt", Some(b"before")))
            .unwrap();
        store.file_written("t1", "a.txt", "call", "h1").unwrap();
        store
            .keep_file(&kept("t1", "a.txt", Some(b"after first write")))
            .unwrap();
        store.file_written("t1", "a.txt", "call", "h2").unwrap();
        store.keep_file(&kept("t2", "new.txt", None)).unwrap();
        store
            .keep_file(&kept("t2", "empty.txt", Some(b"")))
            .unwrap();

        let changes = store.file_changes("c1", None).unwrap();
        let seen: Vec<_> = changes
            .iter()
            .map(|c| {
                (
                    c.turn_id.as_str(),
                    c.path.as_str(),
                    c.prior.clone(),
                    c.written_sha256.clone(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                ("t2", "empty.txt", Some(Vec::new()), None),
                ("t2", "new.txt", None, None),
                (
                    "t1",
                    "a.txt",
                    Some(b"before".to_vec()),
                    Some("h2".to_string())
                ),
            ]
        );
        assert_eq!(store.file_changes("c1", Some("t1")).unwrap().len(), 1);

        store.mark_undone(&[changes[2].id]).unwrap();
        let t1 = store.file_changes("c1", Some("t1")).unwrap();
        assert!(t1[0].undone_ms.is_some());
    }
}
