//! A turn's row: written by `turn_started` (its folder, model and question), by the first event
//! of a turn the store has not seen, by `view_opened` (a view's turn, under the call whose view
//! it is) and by `turn_finished` or `view_closed` (how it ended); read back as the
//! `turn_started` and `turn_finished` events it was recorded from.

use rusqlite::{Connection, OptionalExtension, params};
use tooltrail_protocol::{Event, EventBody, TurnEnd};

use super::conversation::{ensure_conversation, title_from, touch_conversation};
use super::workspace::workspace_id;
use crate::codes;
use crate::error::{Result, missing};

/// Recorded on calls still running when their turn finished.
const ENDED_WITH_TURN: &str = "The turn ended before this call reported back.";

/// The ids of the turn an event belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Turn {
    pub(crate) id: i64,
    pub(crate) conversation: i64,
    pub(crate) workspace: Option<i64>,
    /// For a view's turn: the call whose view it is.
    pub(crate) parent_call: Option<i64>,
}

/// A `turn_started` event: the turn's row (and its conversation's, when new).
pub(crate) fn start_turn(
    conn: &Connection,
    writer: Option<&str>,
    event: &Event,
    workspace: &str,
    model: &str,
    user_message: &str,
    replay_of: Option<&str>,
) -> Result<Turn> {
    let workspace = workspace_id(conn, workspace)?;
    let model_column = (!model.is_empty()).then_some(model);
    let conversation = ensure_conversation(
        conn,
        &event.conversation_id,
        workspace,
        &title_from(user_message),
        model_column,
        None,
        event.time_ms,
    )?;
    let id = conn
        .prepare_cached(
            "INSERT INTO turns(public_id, conversation_id, workspace_id, model, user_message,
                started_ms, writer, replay_of)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT(public_id) DO UPDATE SET workspace_id = excluded.workspace_id,
                model = excluded.model, user_message = excluded.user_message,
                started_ms = excluded.started_ms, replay_of = excluded.replay_of
             RETURNING id",
        )?
        .query_row(
            params![
                event.turn_id,
                conversation,
                workspace,
                model,
                user_message,
                event.time_ms,
                writer,
                replay_of
            ],
            |row| row.get(0),
        )?;
    Ok(Turn {
        id,
        conversation,
        workspace,
        parent_call: None,
    })
}

/// The event's turn, created (with its conversation) when this is the first the store hears of
/// it — a recorder attached mid-turn, or an import that starts part-way.
pub(crate) fn ensure_turn(conn: &Connection, writer: Option<&str>, event: &Event) -> Result<Turn> {
    let existing = conn
        .prepare_cached(
            "SELECT id, conversation_id, workspace_id, parent_call_id FROM turns
             WHERE public_id = ?1",
        )?
        .query_row([&event.turn_id], |row| {
            Ok(Turn {
                id: row.get(0)?,
                conversation: row.get(1)?,
                workspace: row.get(2)?,
                parent_call: row.get(3)?,
            })
        })
        .optional()?;
    if let Some(turn) = existing {
        return Ok(turn);
    }
    let conversation = ensure_conversation(
        conn,
        &event.conversation_id,
        None,
        "",
        None,
        None,
        event.time_ms,
    )?;
    let id = conn
        .prepare_cached(
            "INSERT INTO turns(public_id, conversation_id, started_ms, writer)
             VALUES (?1, ?2, ?3, ?4) RETURNING id",
        )?
        .query_row(
            params![event.turn_id, conversation, event.time_ms, writer],
            |row| row.get(0),
        )?;
    Ok(Turn {
        id,
        conversation,
        workspace: None,
        parent_call: None,
    })
}

/// The turn of a view (see `tooltrail_protocol::view`), under the call whose view it is; that
/// call's folder is the turn's.
pub(crate) fn start_view_turn(
    conn: &Connection,
    writer: Option<&str>,
    event: &Event,
    parent_turn_id: &str,
    parent_call_id: &str,
) -> Result<Turn> {
    let parent: Option<(i64, i64, Option<i64>)> = conn
        .prepare_cached(
            "SELECT c.id, c.conversation_id, c.workspace_id FROM tool_calls c
             JOIN turns t ON t.id = c.turn_id
             WHERE t.public_id = ?1 AND c.call_id = ?2",
        )?
        .query_row(params![parent_turn_id, parent_call_id], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .optional()?;
    let (parent, conversation, workspace) = match parent {
        Some(found) => found,
        // An import may bring a view turn whose call was not kept; the turn is kept unattached.
        None => {
            let turn = ensure_turn(conn, writer, event)?;
            conn.prepare_cached("UPDATE turns SET kind = 'view' WHERE id = ?1")?
                .execute([turn.id])?;
            return Ok(turn);
        }
    };
    let id = conn
        .prepare_cached(
            "INSERT INTO turns(public_id, conversation_id, workspace_id, started_ms, writer, kind,
                parent_call_id)
             VALUES (?1, ?2, ?3, ?4, ?5, 'view', ?6)
             ON CONFLICT(public_id) DO UPDATE SET kind = 'view',
                parent_call_id = excluded.parent_call_id
             RETURNING id",
        )?
        .query_row(
            params![
                event.turn_id,
                conversation,
                workspace,
                event.time_ms,
                writer,
                parent
            ],
            |row| row.get(0),
        )?;
    Ok(Turn {
        id,
        conversation,
        workspace,
        parent_call: Some(parent),
    })
}

/// Closes the turn's row, and cancels its calls that never reported back.
pub(crate) fn finish_turn(
    conn: &Connection,
    turn: Turn,
    time_ms: i64,
    reason: TurnEnd,
    rounds: u32,
    text: &str,
) -> Result<()> {
    conn.prepare_cached(
        "UPDATE turns SET finished_ms = ?2, end_reason = ?3, rounds = ?4, text = ?5
         WHERE id = ?1",
    )?
    .execute(params![
        turn.id,
        time_ms,
        codes::turn_end_to_text(reason),
        rounds,
        text
    ])?;
    conn.prepare_cached(
        "UPDATE tool_calls SET status = 'cancelled', error_code = 'cancelled',
            error_message = ?2
         WHERE status = 'running' AND status <> 'success' AND turn_id = ?1",
    )?
    .execute(params![turn.id, ENDED_WITH_TURN])?;
    touch_conversation(conn, turn.conversation, time_ms)
}

/// The `turn_started` event of turn row `ref_id`.
pub(crate) fn read_turn_started(conn: &Connection, ref_id: Option<i64>) -> Result<EventBody> {
    conn.prepare_cached(
        "SELECT coalesce(w.path, ''), t.model, t.user_message, t.replay_of FROM turns t
         LEFT JOIN workspaces w ON w.id = t.workspace_id WHERE t.id = ?1",
    )?
    .query_row([ref_id], |row| {
        Ok(EventBody::TurnStarted {
            workspace: row.get(0)?,
            model: row.get(1)?,
            user_message: row.get(2)?,
            replay_of: row.get(3)?,
        })
    })
    .optional()?
    .ok_or_else(|| missing("turn", ref_id))
}

/// The `turn_finished` event of turn row `ref_id`.
pub(crate) fn read_turn_finished(conn: &Connection, ref_id: Option<i64>) -> Result<EventBody> {
    let (reason, rounds, text): (Option<String>, u32, String) = conn
        .prepare_cached("SELECT end_reason, rounds, text FROM turns WHERE id = ?1")?
        .query_row([ref_id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .optional()?
        .ok_or_else(|| missing("turn", ref_id))?;
    let reason = reason.ok_or_else(|| missing("the end of turn", ref_id))?;
    Ok(EventBody::TurnFinished {
        reason: codes::turn_end_from_text(&reason)?,
        rounds,
        text,
    })
}
