//! Closing what a dead process left open: calls still `running` and turns never finished.
//!
//! Several processes may share one database (the desktop app and `tooltrail ask` in a
//! terminal), so "unfinished" alone does not mean "interrupted": the turn may be running right
//! now in another process. Each [`crate::Recorder`] therefore holds an exclusive OS file lock on
//! a file of its own (`<database>-writers/<writer id>.lock`) for as long as it lives, and stamps
//! its id on every turn it writes. The OS drops the lock when the process ends, however it ends,
//! so on open a turn whose writer's lock can be taken belongs to a dead process, and is closed:
//! its running calls and the turn itself become `cancelled`.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, TransactionBehavior, params};
use serde::Serialize;

use crate::codes::EventKind;
use crate::error::{Result, StoreError};

/// Recorded as the error of a call its process did not live to finish.
pub const INTERRUPTED: &str = "Tooltrail stopped before this call finished.";

/// What an open closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Recovered {
    pub turns: u64,
    pub calls: u64,
}

/// The folder of a database's writer locks.
fn locks_dir(db_path: &Path) -> PathBuf {
    let mut name = db_path.file_name().unwrap_or_default().to_os_string();
    name.push("-writers");
    db_path.with_file_name(name)
}

fn lock_path(db_path: &Path, writer: &str) -> PathBuf {
    locks_dir(db_path).join(format!("{writer}.lock"))
}

/// The lock a living recorder holds. Dropping it releases and removes the file.
#[derive(Debug)]
pub(crate) struct WriterLock {
    file: Option<File>,
    path: PathBuf,
}

impl WriterLock {
    /// Creates and locks the file for `writer`.
    pub(crate) fn acquire(db_path: &Path, writer: &str) -> Result<Self> {
        let dir = locks_dir(db_path);
        std::fs::create_dir_all(&dir).map_err(|source| StoreError::CreateDir {
            path: dir.clone(),
            source,
        })?;
        let path = lock_path(db_path, writer);
        let file_error = |source| StoreError::File {
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(file_error)?;
        file.lock().map_err(file_error)?;
        Ok(Self {
            file: Some(file),
            path,
        })
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // Remove first, then unlock by closing: a recovery that opens the file in between
        // would only find the lock still held and leave the (already finished) turns alone.
        let _ = std::fs::remove_file(&self.path);
        drop(self.file.take());
    }
}

/// Whether the recorder `writer` is gone: its lock file is missing or can be locked. When it
/// can, the returned file holds the lock until recovery is done with it.
fn dead_writer(db_path: &Path, writer: &str) -> (bool, Option<File>) {
    let path = lock_path(db_path, writer);
    let file = match OpenOptions::new().write(true).open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == ErrorKind::NotFound => return (true, None),
        // Unreadable: assume it lives rather than cancel someone's running turn.
        Err(_) => return (false, None),
    };
    match file.try_lock() {
        Ok(()) => (true, Some(file)),
        Err(TryLockError::WouldBlock) | Err(TryLockError::Error(_)) => (false, None),
    }
}

/// Closes the turns and calls of every dead writer.
pub(crate) fn recover(conn: &mut Connection, db_path: &Path) -> Result<Recovered> {
    let writers: Vec<Option<String>> = conn
        .prepare("SELECT DISTINCT writer FROM turns WHERE end_reason IS NULL")?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    let mut recovered = Recovered::default();
    for writer in writers {
        // Turns written without a recorder (imports) have no process to wait for.
        let (dead, held) = match &writer {
            Some(writer) => dead_writer(db_path, writer),
            None => (true, None),
        };
        if !dead {
            continue;
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let turns: Vec<(i64, i64)> = tx
            .prepare("SELECT id, started_ms FROM turns WHERE end_reason IS NULL AND writer IS ?1")?
            .query_map([&writer], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (turn, started_ms) in turns {
            recovered.calls += tx.execute(
                "UPDATE tool_calls SET status = 'cancelled', error_code = 'cancelled',
                    error_message = ?2
                 WHERE status = 'running' AND status <> 'success' AND turn_id = ?1",
                params![turn, INTERRUPTED],
            )? as u64;
            // What had streamed of the answer is the turn's text, as when a user stops one.
            let partial: String = tx
                .prepare("SELECT body FROM events WHERE turn_id = ?1 AND kind = ?2 ORDER BY seq")?
                .query_map(params![turn, EventKind::TextDelta.code()], |row| {
                    row.get::<_, String>(0)
                })?
                .filter_map(|body| {
                    let body = body.ok()?;
                    let value: serde_json::Value = serde_json::from_str(&body).ok()?;
                    value.get("text")?.as_str().map(str::to_string)
                })
                .collect();
            let last_event: Option<i64> = tx.query_row(
                "SELECT max(time_ms) FROM events WHERE turn_id = ?1",
                [turn],
                |row| row.get(0),
            )?;
            tx.execute(
                "UPDATE turns SET end_reason = 'cancelled', finished_ms = ?2, text = ?3
                 WHERE id = ?1",
                params![turn, last_event.unwrap_or(started_ms), partial],
            )?;
            recovered.turns += 1;
        }
        tx.commit()?;
        if let (Some(writer), Some(file)) = (&writer, held) {
            let _ = std::fs::remove_file(lock_path(db_path, writer));
            drop(file);
        }
    }
    Ok(recovered)
}
