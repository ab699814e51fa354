//! Reading a turn back as the events it was recorded from.
//!
//! `events` keeps each event's order and time; the content comes from the table that owns it
//! (the turn, the message, the call, the usage row) or from the event's own JSON. What comes
//! back equals what was recorded, with three exceptions by design: streaming deltas are gone
//! once the assistant message they built was recorded (the message has their content), a call's
//! progress reports are gone once it finished, and a `tool_call_started` carries its call's
//! arguments and approval as finally recorded.

use rusqlite::{Connection, OptionalExtension};
use tooltrail_protocol::{Event, EventBody, Usage};

use crate::codes::{self, EventKind};
use crate::conversations::conversation_row;
use crate::error::{Result, StoreError};
use crate::history::{COLUMNS, HistoryRow, JOINS, full_result, read_row};
use crate::store::Store;

impl Store {
    /// The events of turn `turn_id`, in order.
    pub fn turn_events(&self, turn_id: &str) -> Result<Vec<Event>> {
        self.with_conn(|conn| {
            let turn = conn
                .prepare_cached(
                    "SELECT t.id, conv.public_id FROM turns t
                     JOIN conversations conv ON conv.id = t.conversation_id
                     WHERE t.public_id = ?1",
                )?
                .query_row([turn_id], |row| {
                    Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
                })
                .optional()?
                .ok_or_else(|| StoreError::TurnNotFound(turn_id.to_string()))?;
            let mut events = Vec::new();
            read_turn(conn, turn.0, &turn.1, turn_id, &mut events)?;
            Ok(events)
        })
    }

    /// The events of every turn of conversation `id`, turn after turn.
    pub fn conversation_events(&self, id: &str) -> Result<Vec<Event>> {
        self.with_conn(|conn| conversation_events(conn, id))
    }
}

pub(crate) fn conversation_events(conn: &Connection, id: &str) -> Result<Vec<Event>> {
    let conversation = conversation_row(conn, id)?;
    let turns: Vec<(i64, String)> = conn
        .prepare_cached(
            "SELECT id, public_id FROM turns WHERE conversation_id = ?1 ORDER BY started_ms, id",
        )?
        .query_map([conversation], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut events = Vec::new();
    for (turn, public_id) in turns {
        read_turn(conn, turn, id, &public_id, &mut events)?;
    }
    Ok(events)
}

fn missing(what: &str, id: Option<i64>) -> StoreError {
    StoreError::Corrupt(format!("an event refers to {what} {id:?}, which is gone"))
}

fn read_turn(
    conn: &Connection,
    turn: i64,
    conversation_id: &str,
    turn_id: &str,
    out: &mut Vec<Event>,
) -> Result<()> {
    let mut statement = conn.prepare_cached(
        "SELECT seq, time_ms, kind, ref_id, body FROM events WHERE turn_id = ?1 ORDER BY seq",
    )?;
    let mut rows = statement.query([turn])?;
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let time_ms: i64 = row.get(1)?;
        let kind = EventKind::from_code(row.get(2)?)?;
        let ref_id: Option<i64> = row.get(3)?;
        let body: Option<String> = row.get(4)?;
        let body = read_body(conn, kind, ref_id, body)?;
        out.push(Event {
            conversation_id: conversation_id.to_string(),
            turn_id: turn_id.to_string(),
            seq: u64::try_from(seq).unwrap_or(0),
            time_ms,
            body,
        });
    }
    Ok(())
}

fn read_body(
    conn: &Connection,
    kind: EventKind,
    ref_id: Option<i64>,
    body: Option<String>,
) -> Result<EventBody> {
    match kind {
        EventKind::TextDelta
        | EventKind::ToolCallDelta
        | EventKind::ToolCallProgress
        | EventKind::PromptProgress
        | EventKind::ApprovalRequested
        | EventKind::ToolModeUsed
        | EventKind::RoundLimitReached
        | EventKind::ContextUsage
        | EventKind::AnswerTruncated
        | EventKind::RepetitionStopped
        | EventKind::UserQuestion
        | EventKind::ElicitationRequested
        | EventKind::ElicitationAnswered
        | EventKind::SamplingRequested
        | EventKind::SamplingAnswered
        | EventKind::ViewOpened
        | EventKind::ViewClosed
        | EventKind::Error => {
            let body = body.ok_or_else(|| missing("the body of an event", ref_id))?;
            Ok(serde_json::from_str(&body)?)
        }
        // The events below are kept once, in the table of their record, and rebuilt from it.
        EventKind::TurnStarted => turn_started(conn, ref_id),
        EventKind::TurnFinished => turn_finished(conn, ref_id),
        EventKind::MessageAdded => message_added(conn, ref_id),
        EventKind::Usage => usage(conn, ref_id),
        EventKind::ToolCallStarted => tool_call_started(conn, ref_id),
        EventKind::ToolCallFinished => tool_call_finished(conn, ref_id),
    }
}

fn turn_started(conn: &Connection, ref_id: Option<i64>) -> Result<EventBody> {
    conn.prepare_cached(
        "SELECT coalesce(w.path, ''), t.model, t.user_message FROM turns t
         LEFT JOIN workspaces w ON w.id = t.workspace_id WHERE t.id = ?1",
    )?
    .query_row([ref_id], |row| {
        Ok(EventBody::TurnStarted {
            workspace: row.get(0)?,
            model: row.get(1)?,
            user_message: row.get(2)?,
        })
    })
    .optional()?
    .ok_or_else(|| missing("turn", ref_id))
}

fn turn_finished(conn: &Connection, ref_id: Option<i64>) -> Result<EventBody> {
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

fn message_added(conn: &Connection, ref_id: Option<i64>) -> Result<EventBody> {
    let body: String = conn
        .prepare_cached("SELECT body FROM messages WHERE id = ?1")?
        .query_row([ref_id], |row| row.get(0))
        .optional()?
        .ok_or_else(|| missing("message", ref_id))?;
    Ok(EventBody::MessageAdded {
        message: serde_json::from_str(&body)?,
    })
}

fn usage(conn: &Connection, ref_id: Option<i64>) -> Result<EventBody> {
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

/// The call's row, as both of its events read it.
fn tool_call_row(conn: &Connection, ref_id: Option<i64>) -> Result<(i64, HistoryRow)> {
    let sql = format!("SELECT {COLUMNS} FROM tool_calls c {JOINS} WHERE c.id = ?1");
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query([ref_id])?;
    let row = rows.next()?.ok_or_else(|| missing("tool call", ref_id))?;
    read_row(row)
}

fn tool_call_started(conn: &Connection, ref_id: Option<i64>) -> Result<EventBody> {
    let (_, row) = tool_call_row(conn, ref_id)?;
    Ok(EventBody::ToolCallStarted {
        round: row.round,
        call_id: row.call_id,
        tool: row.tool,
        source: row.source,
        description: row.description,
        arguments: row.arguments,
        approval: row.approval,
        view: row.view,
    })
}

fn tool_call_finished(conn: &Connection, ref_id: Option<i64>) -> Result<EventBody> {
    let (id, row) = tool_call_row(conn, ref_id)?;
    let status = row
        .status
        .finished()
        .ok_or_else(|| missing("the end of tool call", ref_id))?;
    // The result in full, not the preview the row keeps for listings.
    let (result, data) = full_result(conn, id, &row.result_preview)?;
    Ok(EventBody::ToolCallFinished {
        round: row.round,
        call_id: row.call_id,
        tool: row.tool,
        source: row.source,
        description: row.description,
        arguments: row.arguments,
        status,
        duration_ms: row.duration_ms.unwrap_or(0),
        result,
        data,
        error: row.error,
        approval: row.approval,
        truncated_for_model: row.truncated_for_model,
        view: row.view,
    })
}
