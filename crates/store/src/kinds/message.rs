//! A message the model saw: kept whole as its JSON in `messages`, in the conversation's order,
//! written by `message_added` and read back as that event (and, by `conversations.rs`, as the
//! conversation carried on).

use rusqlite::{Connection, OptionalExtension, params};
use tooltrail_protocol::{EventBody, Message};

use super::conversation::touch_conversation;
use super::turn::Turn;
use crate::error::{Result, missing};

/// A `message_added` event: the message's row, after the conversation's last.
pub(crate) fn add_message(
    conn: &Connection,
    turn: Turn,
    time_ms: i64,
    message: &Message,
) -> Result<i64> {
    let position: i64 = conn
        .prepare_cached(
            "SELECT coalesce(max(position) + 1, 0) FROM messages WHERE conversation_id = ?1",
        )?
        .query_row([turn.conversation], |row| row.get(0))?;
    let body = serde_json::to_string(message)?;
    let id = conn
        .prepare_cached(
            "INSERT INTO messages(conversation_id, turn_id, position, role, body, time_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
        )?
        .query_row(
            params![
                turn.conversation,
                turn.id,
                position,
                message.role(),
                body,
                time_ms
            ],
            |row| row.get(0),
        )?;
    touch_conversation(conn, turn.conversation, time_ms)?;
    Ok(id)
}

/// The `message_added` event of message row `ref_id`.
pub(crate) fn read_message_added(conn: &Connection, ref_id: Option<i64>) -> Result<EventBody> {
    let body: String = conn
        .prepare_cached("SELECT body FROM messages WHERE id = ?1")?
        .query_row([ref_id], |row| row.get(0))
        .optional()?
        .ok_or_else(|| missing("message", ref_id))?;
    Ok(EventBody::MessageAdded {
        message: serde_json::from_str(&body)?,
    })
}
