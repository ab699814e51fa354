//! Reading a turn back as the events it was recorded from: the walk down `events` in order.
//!
//! `events` keeps each event's order and time; the content comes from the module of its kind of
//! record (`crate::kinds`: the turn, the message, the call, the usage row), which rebuilds the
//! event from its table, or from the event's own JSON. What comes back equals what was
//! recorded, with three exceptions by design: streaming deltas are gone once the assistant
//! message they built was recorded (the message has their content), a call's progress reports
//! are gone once it finished, and a `tool_call_started` carries its call's arguments and
//! approval as finally recorded.

use rusqlite::{Connection, OptionalExtension};
use tooltrail_protocol::{Event, EventBody};

use crate::codes::EventKind;
use crate::conversations::conversation_row;
use crate::error::{Result, StoreError, missing};
use crate::kinds::call::{read_call_finished, read_call_started};
use crate::kinds::message::read_message_added;
use crate::kinds::turn::{read_turn_finished, read_turn_started};
use crate::kinds::usage::read_usage;
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
        EventKind::TurnStarted => read_turn_started(conn, ref_id),
        EventKind::TurnFinished => read_turn_finished(conn, ref_id),
        EventKind::MessageAdded => read_message_added(conn, ref_id),
        EventKind::Usage => read_usage(conn, ref_id),
        EventKind::ToolCallStarted => read_call_started(conn, ref_id),
        EventKind::ToolCallFinished => read_call_finished(conn, ref_id),
    }
}
