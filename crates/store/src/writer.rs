//! Turning one [`Event`] into rows. Used by the recorder's thread and by [`crate::Store::import`];
//! the caller owns the transaction.
//!
//! Each event goes to the module of its kind of record (`crate::kinds`: the turn, the message,
//! the usage, the call), which writes its rows; what stays here is what every event shares: the
//! turn it belongs to, and its row in `events`, which keeps its place and time for replay (and,
//! for the events no kind keeps, their JSON). Events that say nothing once a later one is
//! written (a message's streamed deltas, a finished call's progress) are dropped from `events`.
//!
//! The writer keeps no state between events: every id it needs (the turn, the conversation, the
//! running call, the last assistant message) is one indexed lookup away, so a failed event
//! rolled back to its savepoint leaves nothing stale behind, and events for a conversation or
//! turn the store has never seen create their rows on the way.

use rusqlite::{Connection, params};
use tooltrail_protocol::{Event, EventBody, Message, TurnEnd};

use crate::codes::{EventKind, to_i64};
use crate::error::Result;
use crate::kinds::call::{self, Call, Finished};
use crate::kinds::message::add_message;
use crate::kinds::turn::{Turn, ensure_turn, finish_turn, start_turn, start_view_turn};
use crate::kinds::usage::add_usage;

/// Writes `event`. `writer` names the recorder that owns the turn (see recovery.rs).
pub(crate) fn apply(conn: &Connection, writer: Option<&str>, event: &Event) -> Result<()> {
    let kind = EventKind::of(&event.body);
    match &event.body {
        EventBody::TurnStarted {
            workspace,
            model,
            user_message,
            replay_of,
        } => {
            let turn = start_turn(
                conn,
                writer,
                event,
                workspace,
                model,
                user_message,
                replay_of.as_deref(),
            )?;
            insert_event(conn, turn.id, event, kind, Some(turn.id), None)
        }
        EventBody::MessageAdded { message } => {
            let turn = ensure_turn(conn, writer, event)?;
            let id = add_message(conn, turn, event.time_ms, message)?;
            if matches!(message, Message::Assistant { .. }) {
                drop_streamed_deltas(conn, turn)?;
            }
            insert_event(conn, turn.id, event, kind, Some(id), None)
        }
        EventBody::ToolCallProgress {
            call_id,
            task: Some(task),
            ..
        } => {
            let turn = ensure_turn(conn, writer, event)?;
            crate::kinds::task::note(conn, turn, call_id, task, event.time_ms)?;
            let body = serde_json::to_string(&event.body)?;
            insert_event(conn, turn.id, event, kind, None, Some(&body))
        }
        EventBody::TextDelta { .. }
        | EventBody::ToolCallDelta { .. }
        | EventBody::ToolCallProgress { .. }
        | EventBody::PromptProgress { .. }
        | EventBody::ApprovalRequested { .. }
        | EventBody::ToolModeUsed { .. }
        | EventBody::RoundLimitReached { .. }
        | EventBody::ContextUsage { .. }
        | EventBody::AnswerTruncated { .. }
        | EventBody::RepetitionStopped { .. }
        | EventBody::UserQuestion { .. }
        | EventBody::ElicitationRequested { .. }
        | EventBody::ElicitationAnswered { .. }
        | EventBody::SamplingRequested { .. }
        | EventBody::SamplingAnswered { .. }
        | EventBody::Error { .. } => {
            let turn = ensure_turn(conn, writer, event)?;
            let body = serde_json::to_string(&event.body)?;
            insert_event(conn, turn.id, event, kind, None, Some(&body))
        }
        EventBody::ToolCallStarted { .. } => call_started(conn, writer, event, kind),
        EventBody::ToolCallFinished { .. } => call_finished(conn, writer, event, kind),
        EventBody::Usage(usage) => {
            let turn = ensure_turn(conn, writer, event)?;
            let id = add_usage(conn, turn, event.time_ms, usage)?;
            insert_event(conn, turn.id, event, kind, Some(id), None)
        }
        EventBody::TurnFinished {
            reason,
            rounds,
            text,
        } => {
            let turn = ensure_turn(conn, writer, event)?;
            finish_turn(conn, turn, event.time_ms, *reason, *rounds, text)?;
            insert_event(conn, turn.id, event, kind, Some(turn.id), None)
        }
        EventBody::ViewOpened {
            parent_turn_id,
            parent_call_id,
            ..
        } => {
            let turn = start_view_turn(conn, writer, event, parent_turn_id, parent_call_id)?;
            let body = serde_json::to_string(&event.body)?;
            insert_event(conn, turn.id, event, kind, None, Some(&body))
        }
        EventBody::ViewClosed { reason } => {
            let turn = ensure_turn(conn, writer, event)?;
            let end = if reason.is_orderly() {
                TurnEnd::Completed
            } else {
                TurnEnd::Cancelled
            };
            finish_turn(conn, turn, event.time_ms, end, 0, "")?;
            let body = serde_json::to_string(&event.body)?;
            insert_event(conn, turn.id, event, kind, None, Some(&body))
        }
    }
}

/// The message holds everything its deltas streamed; keeping both would store each answer
/// twice.
fn drop_streamed_deltas(conn: &Connection, turn: Turn) -> Result<()> {
    conn.prepare_cached("DELETE FROM events WHERE turn_id = ?1 AND kind IN (?2, ?3)")?
        .execute(params![
            turn.id,
            EventKind::TextDelta.code(),
            EventKind::ToolCallDelta.code()
        ])?;
    Ok(())
}

/// A `tool_call_started` event: the call's row, running.
fn call_started(
    conn: &Connection,
    writer: Option<&str>,
    event: &Event,
    kind: EventKind,
) -> Result<()> {
    // `apply` sends only this kind of event here.
    let Some(call) = Call::started(&event.body) else {
        return Ok(());
    };
    let turn = ensure_turn(conn, writer, event)?;
    let id = call::start_call(conn, turn, event.time_ms, &call)?;
    insert_event(conn, turn.id, event, kind, Some(id), None)
}

/// A `tool_call_finished` event: the call's row completed; its progress events go, as its
/// result says how it ended.
fn call_finished(
    conn: &Connection,
    writer: Option<&str>,
    event: &Event,
    kind: EventKind,
) -> Result<()> {
    // `apply` sends only this kind of event here.
    let Some(finished) = Finished::of(&event.body) else {
        return Ok(());
    };
    let turn = ensure_turn(conn, writer, event)?;
    let id = call::finish_call(conn, turn, event.time_ms, &finished)?;
    // However the call ended, its task is no longer this record's to pick up.
    crate::kinds::task::close(conn, id)?;
    conn.prepare_cached(
        "DELETE FROM events WHERE turn_id = ?1 AND kind = ?2
            AND json_extract(body, '$.call_id') = ?3",
    )?
    .execute(params![
        turn.id,
        EventKind::ToolCallProgress.code(),
        finished.call.call_id
    ])?;
    insert_event(conn, turn.id, event, kind, Some(id), None)
}

/// The event's row in `events`: its place and time in the turn, and either the row of its
/// kind's table that holds its content (`ref_id`) or its own JSON (`body`).
fn insert_event(
    conn: &Connection,
    turn: i64,
    event: &Event,
    kind: EventKind,
    ref_id: Option<i64>,
    body: Option<&str>,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO events(turn_id, seq, time_ms, kind, ref_id, body)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        turn,
        to_i64(event.seq),
        event.time_ms,
        kind.code(),
        ref_id,
        body
    ])?;
    Ok(())
}
