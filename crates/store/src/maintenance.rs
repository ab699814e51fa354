//! Retention: deleting a conversation, and giving the space back.

use serde::Serialize;

use crate::conversations::conversation_row;
use crate::error::Result;
use crate::store::Store;

/// The database's size before and after [`Store::vacuum`], in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VacuumReport {
    pub bytes_before: u64,
    pub bytes_after: u64,
}

fn size(conn: &rusqlite::Connection) -> Result<u64> {
    let pages: i64 = conn.pragma_query_value(None, "page_count", |row| row.get(0))?;
    let page_size: i64 = conn.pragma_query_value(None, "page_size", |row| row.get(0))?;
    Ok(u64::try_from(pages * page_size).unwrap_or(0))
}

impl Store {
    /// Deletes conversation `id` with its turns, messages, calls, results and events.
    pub fn delete_conversation(&self, id: &str) -> Result<()> {
        self.with_conn(|conn| {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let conversation = conversation_row(&tx, id)?;
            // Foreign keys cascade to everything the conversation owns; triggers take the
            // calls and messages out of the search indexes and the counters.
            tx.execute("DELETE FROM conversations WHERE id = ?1", [conversation])?;
            tx.commit()?;
            Ok(())
        })
    }

    /// SQLite's `PRAGMA integrity_check`: `"ok"`, or what is damaged.
    pub fn integrity_check(&self) -> Result<String> {
        self.with_conn(|conn| {
            let mut statement = conn.prepare("PRAGMA integrity_check")?;
            let lines = statement.query_map([], |row| row.get::<_, String>(0))?;
            let lines: Vec<String> = lines.collect::<Result<_, _>>()?;
            Ok(lines.join("\n"))
        })
    }

    /// Merges the search indexes, rewrites the file without free pages and empties the WAL.
    /// Waits for a recorder's write in progress; takes as long as copying the database.
    pub fn vacuum(&self) -> Result<VacuumReport> {
        self.with_conn(|conn| {
            let bytes_before = size(conn)?;
            conn.execute_batch(
                "INSERT INTO tool_calls_fts(tool_calls_fts) VALUES ('optimize');
                 INSERT INTO messages_fts(messages_fts) VALUES ('optimize');
                 VACUUM;
                 PRAGMA optimize;",
            )?;
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            Ok(VacuumReport {
                bytes_before,
                bytes_after: size(conn)?,
            })
        })
    }
}
