//! The tokens one model call used, as the server reported them: a row of `usage` a `usage`
//! event, which the tokens-per-day figures (`tokens.rs`) add up, read back as that event.

use rusqlite::{Connection, OptionalExtension, params};
use tooltrail_protocol::{EventBody, Usage};

use super::turn::Turn;
use crate::error::{Result, missing};

/// A `usage` event: its row.
pub(crate) fn add_usage(conn: &Connection, turn: Turn, time_ms: i64, usage: &Usage) -> Result<i64> {
    // Named field by field, so a field added to `Usage` fails to compile here until it has a
    // column (and below, until it is read back).
    let Usage {
        prompt_tokens,
        completion_tokens,
        total_tokens,
    } = usage;
    Ok(conn
        .prepare_cached(
            "INSERT INTO usage(turn_id, time_ms, prompt_tokens, completion_tokens, total_tokens)
             VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
        )?
        .query_row(
            params![
                turn.id,
                time_ms,
                prompt_tokens,
                completion_tokens,
                total_tokens
            ],
            |row| row.get(0),
        )?)
}

/// The `usage` event of usage row `ref_id`.
pub(crate) fn read_usage(conn: &Connection, ref_id: Option<i64>) -> Result<EventBody> {
    conn.prepare_cached(
        "SELECT prompt_tokens, completion_tokens, total_tokens FROM usage WHERE id = ?1",
    )?
    .query_row([ref_id], |row| {
        Ok(EventBody::Usage(Usage {
            prompt_tokens: row.get(0)?,
            completion_tokens: row.get(1)?,
            total_tokens: row.get(2)?,
        }))
    })
    .optional()?
    .ok_or_else(|| missing("usage", ref_id))
}
