//! The turns a replay starts from and the replays already made: the last questions asked in a
//! folder, the questions of a conversation, and each replay with the turn it asked again.

use rusqlite::params;

use crate::error::Result;
use crate::store::Store;

/// A replay and the turn it asked again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayPair {
    /// The replay's turn.
    pub turn_id: String,
    /// The turn it asked again.
    pub replay_of: String,
}

impl Store {
    /// The last `limit` questions asked in the folder `workspace` that have ended, newest
    /// last: a person's questions only (no replay, no view's turn).
    pub fn last_questions(&self, workspace: &str, limit: u32) -> Result<Vec<String>> {
        self.with_conn(|conn| {
            let mut ids: Vec<String> = conn
                .prepare_cached(
                    "SELECT t.public_id FROM turns t JOIN workspaces w ON w.id = t.workspace_id
                     WHERE w.path = ?1 AND t.kind = 'question' AND t.replay_of IS NULL
                       AND t.end_reason IS NOT NULL
                     ORDER BY t.started_ms DESC, t.id DESC LIMIT ?2",
                )?
                .query_map(params![workspace, limit], |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            ids.reverse();
            Ok(ids)
        })
    }

    /// The questions of conversation `id` that have ended, in order (no replay, no view's
    /// turn).
    pub fn conversation_questions(&self, id: &str) -> Result<Vec<String>> {
        self.with_conn(|conn| {
            let conversation = crate::conversations::conversation_row(conn, id)?;
            conn.prepare_cached(
                "SELECT public_id FROM turns WHERE conversation_id = ?1 AND kind = 'question'
                   AND replay_of IS NULL AND end_reason IS NOT NULL
                 ORDER BY started_ms, id",
            )?
            .query_map([conversation], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()
            .map_err(Into::into)
        })
    }

    /// Every replay made of a question asked in the folder `workspace` (every folder when
    /// `None`), oldest first.
    pub fn replays(&self, workspace: Option<&str>) -> Result<Vec<ReplayPair>> {
        self.with_conn(|conn| {
            conn.prepare_cached(
                "SELECT t.public_id, t.replay_of FROM turns t
                 LEFT JOIN workspaces w ON w.id = t.workspace_id
                 WHERE t.replay_of IS NOT NULL AND (?1 IS NULL OR w.path = ?1)
                 ORDER BY t.started_ms, t.id",
            )?
            .query_map([workspace], |row| {
                Ok(ReplayPair {
                    turn_id: row.get(0)?,
                    replay_of: row.get(1)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()
            .map_err(Into::into)
        })
    }
}
