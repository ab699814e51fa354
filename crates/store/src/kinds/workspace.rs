//! A workspace: the folder a turn, a rule or a snippet belongs to, one row a path. Written on
//! the way by whatever first names the folder; read back by joining `workspaces`.

use rusqlite::{Connection, OptionalExtension};

use crate::error::Result;

/// The row of the folder `path`, created when new; `None` for an empty path (a turn recorded
/// without a folder).
pub(crate) fn workspace_id(conn: &Connection, path: &str) -> Result<Option<i64>> {
    if path.is_empty() {
        return Ok(None);
    }
    let existing = conn
        .prepare_cached("SELECT id FROM workspaces WHERE path = ?1")?
        .query_row([path], |row| row.get(0))
        .optional()?;
    if existing.is_some() {
        return Ok(existing);
    }
    let id = conn
        .prepare_cached("INSERT INTO workspaces(path) VALUES (?1) RETURNING id")?
        .query_row([path], |row| row.get(0))?;
    Ok(Some(id))
}
