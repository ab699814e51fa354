//! Conversations: creating one ahead of its first turn, listing them, and loading one's messages
//! to carry it on.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params, params_from_iter};
use serde::{Deserialize, Serialize};
use tooltrail_protocol::{Message, ToolError, ToolErrorCode};

use crate::cursor::{self, Cursor, Key, Page};
use crate::error::{Result, StoreError};
use crate::kinds::conversation::ensure_conversation;
use crate::kinds::workspace::workspace_id;
use crate::store::Store;

/// What [`Store::create_conversation`] needs. Everything may be left empty and filled in by the
/// first turn (workspace, model, and the title from the first question).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NewConversation {
    pub workspace: Option<String>,
    pub title: String,
    pub model: Option<String>,
    /// Where the model is served, such as the endpoint's base URL.
    pub provider: Option<String>,
}

/// Which conversations to list, most recently active first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConversationFilter {
    pub workspace: Option<String>,
    pub limit: usize,
    pub before: Option<Cursor>,
}

/// A conversation as a list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub workspace: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub created_ms: i64,
    /// The last time anything was recorded in it.
    pub updated_ms: i64,
    pub turns: u64,
    pub messages: u64,
    pub tool_calls: u64,
    /// Whether a turn is still open (running now, or its process died and no open has
    /// closed it yet).
    pub running: bool,
}

const SUMMARY_COLUMNS: &str = "conv.id, conv.public_id, conv.title, w.path, conv.model,
    conv.provider, conv.created_ms, conv.updated_ms,
    (SELECT count(*) FROM turns WHERE conversation_id = conv.id AND kind = 'question'),
    (SELECT count(*) FROM messages WHERE conversation_id = conv.id),
    (SELECT count(*) FROM tool_calls WHERE conversation_id = conv.id),
    EXISTS (SELECT 1 FROM turns WHERE conversation_id = conv.id AND end_reason IS NULL
        AND kind = 'question')";

fn count(row: &Row<'_>, index: usize) -> rusqlite::Result<u64> {
    Ok(u64::try_from(row.get::<_, i64>(index)?).unwrap_or(0))
}

fn read_summary(row: &Row<'_>) -> rusqlite::Result<(i64, ConversationSummary)> {
    Ok((
        row.get(0)?,
        ConversationSummary {
            id: row.get(1)?,
            title: row.get(2)?,
            workspace: row.get(3)?,
            model: row.get(4)?,
            provider: row.get(5)?,
            created_ms: row.get(6)?,
            updated_ms: row.get(7)?,
            turns: count(row, 8)?,
            messages: count(row, 9)?,
            tool_calls: count(row, 10)?,
            running: row.get(11)?,
        },
    ))
}

/// The row id of conversation `public_id`.
pub(crate) fn conversation_row(conn: &Connection, public_id: &str) -> Result<i64> {
    conn.prepare_cached("SELECT id FROM conversations WHERE public_id = ?1")?
        .query_row([public_id], |row| row.get(0))
        .optional()?
        .ok_or_else(|| StoreError::ConversationNotFound(public_id.to_string()))
}

pub(crate) fn summary(conn: &Connection, public_id: &str) -> Result<ConversationSummary> {
    let sql = format!(
        "SELECT {SUMMARY_COLUMNS} FROM conversations conv
         LEFT JOIN workspaces w ON w.id = conv.workspace_id WHERE conv.public_id = ?1"
    );
    conn.prepare_cached(&sql)?
        .query_row([public_id], read_summary)
        .optional()?
        .map(|(_, summary)| summary)
        .ok_or_else(|| StoreError::ConversationNotFound(public_id.to_string()))
}

impl Store {
    /// Creates an empty conversation and returns its id (`conv_…`, the shape the engine uses).
    /// Optional: recording a turn for an id the store has never seen creates the conversation
    /// too. Create one first to keep what the events do not carry, such as the provider.
    pub fn create_conversation(&self, new: &NewConversation) -> Result<String> {
        let id = format!("conv_{}", uuid::Uuid::new_v4().simple());
        self.with_conn(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let workspace = match &new.workspace {
                Some(path) => workspace_id(&tx, path)?,
                None => None,
            };
            ensure_conversation(
                &tx,
                &id,
                workspace,
                &new.title,
                new.model.as_deref(),
                new.provider.as_deref(),
                now_ms(),
            )?;
            tx.commit()?;
            Ok(())
        })?;
        Ok(id)
    }

    /// Gives a conversation a new title.
    pub fn rename_conversation(&self, id: &str, title: &str) -> Result<()> {
        self.with_conn(|conn| {
            let changed = conn.execute(
                "UPDATE conversations SET title = ?2 WHERE public_id = ?1",
                params![id, title],
            )?;
            if changed == 0 {
                return Err(StoreError::ConversationNotFound(id.to_string()));
            }
            Ok(())
        })
    }

    /// One conversation's summary.
    pub fn conversation(&self, id: &str) -> Result<ConversationSummary> {
        self.with_conn(|conn| summary(conn, id))
    }

    /// One page of conversations, most recently active first.
    pub fn conversations(&self, filter: &ConversationFilter) -> Result<Page<ConversationSummary>> {
        let limit = cursor::clamp_limit(filter.limit);
        let mut conditions = Vec::new();
        let mut values = Vec::new();
        if let Some(workspace) = &filter.workspace {
            conditions.push("conv.workspace_id = (SELECT id FROM workspaces WHERE path = ?)");
            values.push(SqlValue::Text(workspace.clone()));
        }
        match filter.before.map(|cursor| cursor.0) {
            None => {}
            Some(Key::Time { time_ms, id }) => {
                conditions.push("conv.updated_ms <= ? AND (conv.updated_ms < ? OR conv.id < ?)");
                values.extend([
                    SqlValue::Integer(time_ms),
                    SqlValue::Integer(time_ms),
                    SqlValue::Integer(id),
                ]);
            }
            Some(_) => {
                let text = filter.before.map(|c| c.to_string()).unwrap_or_default();
                return Err(StoreError::BadCursor(text));
            }
        }
        let mut sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM conversations conv
             LEFT JOIN workspaces w ON w.id = conv.workspace_id"
        );
        if !conditions.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&conditions.join(" AND "));
        }
        sql.push_str(&format!(
            " ORDER BY conv.updated_ms DESC, conv.id DESC LIMIT {}",
            limit + 1
        ));
        self.with_conn(|conn| {
            let mut statement = conn.prepare_cached(&sql)?;
            let rows = statement.query_map(params_from_iter(values), read_summary)?;
            let mut items: Vec<ConversationSummary> = Vec::new();
            let mut last_id = 0;
            let mut next = None;
            for row in rows {
                let (id, summary) = row?;
                if items.len() == limit {
                    next = items.last().map(|last| {
                        Cursor(Key::Time {
                            time_ms: last.updated_ms,
                            id: last_id,
                        })
                    });
                    break;
                }
                items.push(summary);
                last_id = id;
            }
            Ok(Page { items, next })
        })
    }

    /// Every message the model saw in conversation `id`, in order, ready to carry it on.
    ///
    /// A turn cut short by a crash can leave an assistant message whose tool calls have no
    /// results; models refuse such a history, so each missing result is supplied here as a
    /// `cancelled` error (the record itself is left as it was).
    pub fn load_messages(&self, id: &str) -> Result<Vec<Message>> {
        self.with_conn(|conn| {
            let conversation = conversation_row(conn, id)?;
            let mut statement = conn.prepare_cached(
                "SELECT body FROM messages WHERE conversation_id = ?1 ORDER BY position",
            )?;
            let bodies = statement.query_map([conversation], |row| row.get::<_, String>(0))?;
            let mut messages = Vec::new();
            for body in bodies {
                messages.push(serde_json::from_str(&body?)?);
            }
            Ok(answer_dangling_calls(messages))
        })
    }
}

/// Adds a `cancelled` tool result for every call that has none before the next non-tool
/// message.
pub(crate) fn answer_dangling_calls(messages: Vec<Message>) -> Vec<Message> {
    let mut out = Vec::with_capacity(messages.len());
    let mut waiting: Vec<(String, String)> = Vec::new();
    let close = |waiting: &mut Vec<(String, String)>, out: &mut Vec<Message>| {
        for (call_id, name) in waiting.drain(..) {
            let error = ToolError::new(
                ToolErrorCode::Cancelled,
                "Tooltrail stopped before this call finished",
            );
            out.push(Message::tool(call_id, name, error.to_model_text()));
        }
    };
    for message in messages {
        match &message {
            Message::Tool { tool_call_id, .. } => {
                waiting.retain(|(call_id, _)| call_id != tool_call_id);
            }
            Message::System { .. } | Message::User { .. } | Message::Assistant { .. } => {
                close(&mut waiting, &mut out);
            }
        }
        if let Message::Assistant { tool_calls, .. } = &message {
            waiting = tool_calls
                .iter()
                .map(|call| (call.id.clone(), call.name.clone()))
                .collect();
        }
        out.push(message);
    }
    close(&mut waiting, &mut out);
    out
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tooltrail_protocol::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: "{}".into(),
        }
    }

    #[test]
    fn calls_without_results_get_a_cancelled_one() {
        let messages = vec![
            Message::user("q"),
            Message::assistant("", vec![call("a"), call("b")]),
            Message::tool("a", "read_file", "ok"),
        ];
        let cancelled = ToolError::new(
            ToolErrorCode::Cancelled,
            "Tooltrail stopped before this call finished",
        )
        .to_model_text();
        assert_eq!(
            answer_dangling_calls(messages),
            vec![
                Message::user("q"),
                Message::assistant("", vec![call("a"), call("b")]),
                Message::tool("a", "read_file", "ok"),
                Message::tool("b", "read_file", cancelled),
            ]
        );
    }

    #[test]
    fn complete_histories_are_unchanged() {
        let messages = vec![
            Message::user("q"),
            Message::assistant("", vec![call("a")]),
            Message::tool("a", "read_file", "ok"),
            Message::assistant("done", vec![]),
            Message::user("again"),
        ];
        assert_eq!(answer_dangling_calls(messages.clone()), messages);
    }
}
