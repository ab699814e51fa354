//! Turning one [`Event`] into rows. Used by the recorder's thread and by [`crate::Store::import`];
//! the caller owns the transaction.
//!
//! The writer keeps no state between events: every id it needs (the turn, the conversation, the
//! running call, the last assistant message) is one indexed lookup away, so a failed event
//! rolled back to its savepoint leaves nothing stale behind, and events for a conversation or
//! turn the store has never seen create their rows on the way.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use tooltrail_protocol::{
    ApprovalRecord, Event, EventBody, Message, ToolError, ToolSource, ToolStatus, TurnEnd, Usage,
    ViewLink,
};

use crate::codes::{self, EventKind};
use crate::compress;
use crate::error::Result;

/// Bytes of a result kept inline with its call. Longer results keep this much as their preview
/// and go whole, compressed, into `tool_results`.
pub const PREVIEW_BYTES: usize = 512;

/// Longest conversation title made from a first question, in characters.
const TITLE_CHARS: usize = 80;

/// Recorded on calls still running when their turn finished.
const ENDED_WITH_TURN: &str = "The turn ended before this call reported back.";

/// The ids of the turn an event belongs to.
#[derive(Debug, Clone, Copy)]
struct Turn {
    id: i64,
    conversation: i64,
    workspace: Option<i64>,
    /// For a view's turn: the call whose view it is.
    parent_call: Option<i64>,
}

/// Writes `event`. `writer` names the recorder that owns the turn (see recovery.rs).
pub(crate) fn apply(conn: &Connection, writer: Option<&str>, event: &Event) -> Result<()> {
    let kind = EventKind::of(&event.body);
    match &event.body {
        EventBody::TurnStarted {
            workspace,
            model,
            user_message,
        } => {
            let turn = start_turn(conn, writer, event, workspace, model, user_message)?;
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

/// The turn of a view (see `tooltrail_protocol::view`), under the call whose view it is; that
/// call's folder is the turn's.
fn start_view_turn(
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
    let Some(call) = Call::of(&event.body) else {
        return Ok(());
    };
    let turn = ensure_turn(conn, writer, event)?;
    let id = start_call(conn, turn, event.time_ms, &call)?;
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
    let id = finish_call(conn, turn, event.time_ms, &finished)?;
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

/// Closes the turn's row, and cancels its calls that never reported back.
fn finish_turn(
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

/// Finds or creates the conversation, filling in what it lacks.
pub(crate) fn ensure_conversation(
    conn: &Connection,
    public_id: &str,
    workspace: Option<i64>,
    title: &str,
    model: Option<&str>,
    provider: Option<&str>,
    time_ms: i64,
) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "INSERT INTO conversations(public_id, workspace_id, title, model, provider,
                created_ms, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
             ON CONFLICT(public_id) DO UPDATE SET
                workspace_id = coalesce(conversations.workspace_id, excluded.workspace_id),
                title = CASE WHEN conversations.title = '' THEN excluded.title
                        ELSE conversations.title END,
                model = coalesce(excluded.model, conversations.model),
                provider = coalesce(excluded.provider, conversations.provider),
                updated_ms = max(conversations.updated_ms, excluded.updated_ms)
             RETURNING id",
        )?
        .query_row(
            params![public_id, workspace, title, model, provider, time_ms],
            |row| row.get(0),
        )?)
}

fn touch_conversation(conn: &Connection, conversation: i64, time_ms: i64) -> Result<()> {
    conn.prepare_cached("UPDATE conversations SET updated_ms = max(updated_ms, ?2) WHERE id = ?1")?
        .execute(params![conversation, time_ms])?;
    Ok(())
}

/// The first line of the first question, cut to a title's length. Attached files and resources
/// are not the question: the title is what the person typed, or the first attachment's name when
/// they typed nothing.
pub(crate) fn title_from(message: &str) -> String {
    let (attached, question) = tooltrail_protocol::attachment::split_question(message);
    let line = question
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .or(attached.first().map(String::as_str));
    let line = line.unwrap_or_default();
    let mut title: String = line.chars().take(TITLE_CHARS).collect();
    if line.chars().count() > TITLE_CHARS {
        title.push('…');
    }
    title
}

fn start_turn(
    conn: &Connection,
    writer: Option<&str>,
    event: &Event,
    workspace: &str,
    model: &str,
    user_message: &str,
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
                started_ms, writer)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT(public_id) DO UPDATE SET workspace_id = excluded.workspace_id,
                model = excluded.model, user_message = excluded.user_message,
                started_ms = excluded.started_ms
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
                writer
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
fn ensure_turn(conn: &Connection, writer: Option<&str>, event: &Event) -> Result<Turn> {
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

fn add_message(conn: &Connection, turn: Turn, time_ms: i64, message: &Message) -> Result<i64> {
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

fn add_usage(conn: &Connection, turn: Turn, time_ms: i64, usage: &Usage) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "INSERT INTO usage(turn_id, time_ms, prompt_tokens, completion_tokens, total_tokens)
             VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
        )?
        .query_row(
            params![
                turn.id,
                time_ms,
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.total_tokens
            ],
            |row| row.get(0),
        )?)
}

/// The spec a call started under, for a `tool_call_started` without a description (recorded
/// before the event carried one): the newest spec of the same tool, or a bare one.
fn provisional_spec(conn: &Connection, tool: &str, source: &str) -> Result<i64> {
    let newest = conn
        .prepare_cached(
            "SELECT id FROM tool_specs WHERE tool = ?1 AND source = ?2 ORDER BY id DESC LIMIT 1",
        )?
        .query_row([tool, source], |row| row.get(0))
        .optional()?;
    match newest {
        Some(id) => Ok(id),
        None => spec(conn, tool, source, ""),
    }
}

fn spec(conn: &Connection, tool: &str, source: &str, description: &str) -> Result<i64> {
    let existing = conn
        .prepare_cached(
            "SELECT id FROM tool_specs WHERE tool = ?1 AND source = ?2 AND description = ?3",
        )?
        .query_row([tool, source, description], |row| row.get(0))
        .optional()?;
    if let Some(id) = existing {
        return Ok(id);
    }
    Ok(conn
        .prepare_cached(
            "INSERT INTO tool_specs(tool, source, description) VALUES (?1, ?2, ?3) RETURNING id",
        )?
        .query_row([tool, source, description], |row| row.get(0))?)
}

/// The assistant message that asked for the calls now running: the conversation's newest one.
fn asking_message(conn: &Connection, conversation: i64) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM messages WHERE conversation_id = ?1 AND role = 'assistant'
             ORDER BY position DESC LIMIT 1",
        )?
        .query_row([conversation], |row| row.get(0))
        .optional()?)
}

/// What every event of a tool call says of it: which call, and how it was approved.
struct Call<'a> {
    round: u32,
    call_id: &'a str,
    tool: &'a str,
    source: &'a ToolSource,
    description: &'a str,
    arguments: &'a Value,
    approval: &'a ApprovalRecord,
    view: Option<&'a ViewLink>,
}

impl<'a> Call<'a> {
    /// The call a `tool_call_started` or `tool_call_finished` event is about.
    fn of(body: &'a EventBody) -> Option<Self> {
        let (EventBody::ToolCallStarted {
            round,
            call_id,
            tool,
            source,
            description,
            arguments,
            approval,
            view,
        }
        | EventBody::ToolCallFinished {
            round,
            call_id,
            tool,
            source,
            description,
            arguments,
            approval,
            view,
            ..
        }) = body
        else {
            return None;
        };
        Some(Self {
            round: *round,
            call_id,
            tool,
            source,
            description,
            arguments,
            approval,
            view: view.as_ref(),
        })
    }
}

fn start_call(conn: &Connection, turn: Turn, time_ms: i64, call: &Call<'_>) -> Result<i64> {
    let source = codes::source_to_text(call.source);
    // Kept from the start, so a call that never reports back (stopped, or its process gone)
    // still says what its tool does.
    let spec_id = if call.description.is_empty() {
        provisional_spec(conn, call.tool, &source)?
    } else {
        spec(conn, call.tool, &source, call.description)?
    };
    insert_running(conn, turn, call, spec_id, time_ms)
}

/// The call's row, `running` from `started_ms` until its end is written over it.
fn insert_running(
    conn: &Connection,
    turn: Turn,
    call: &Call<'_>,
    spec_id: i64,
    started_ms: i64,
) -> Result<i64> {
    // A view's calls answer no message of the model's: they hang under the call whose view
    // made them.
    let message = match turn.parent_call {
        Some(_) => None,
        None => asking_message(conn, turn.conversation)?,
    };
    let (by, rule) = codes::approval_by_to_columns(&call.approval.by);
    Ok(conn
        .prepare_cached(
            "INSERT INTO tool_calls(conversation_id, workspace_id, turn_id, message_id, call_id,
                round, tool, spec_id, arguments, started_ms, status, approval_allowed,
                approval_by, approval_rule, approval_reason, view_uri, parent_call_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'running', ?11, ?12, ?13, ?14,
                ?15, ?16)
             RETURNING id",
        )?
        .query_row(
            params![
                turn.conversation,
                turn.workspace,
                turn.id,
                message,
                call.call_id,
                call.round,
                call.tool,
                spec_id,
                serde_json::to_string(call.arguments)?,
                started_ms,
                call.approval.allowed,
                by,
                rule,
                call.approval.reason,
                call.view.map(|view| view.resource_uri.as_str()),
                turn.parent_call
            ],
            |row| row.get(0),
        )?)
}

struct Finished<'a> {
    call: Call<'a>,
    status: ToolStatus,
    duration_ms: u64,
    result: &'a str,
    data: Option<&'a Value>,
    error: Option<&'a ToolError>,
    truncated_for_model: bool,
}

impl<'a> Finished<'a> {
    /// The call a `tool_call_finished` event ends, and how.
    fn of(body: &'a EventBody) -> Option<Self> {
        let EventBody::ToolCallFinished {
            status,
            duration_ms,
            result,
            data,
            error,
            truncated_for_model,
            ..
        } = body
        else {
            return None;
        };
        Some(Self {
            call: Call::of(body)?,
            status: *status,
            duration_ms: *duration_ms,
            result,
            data: data.as_ref(),
            error: error.as_ref(),
            truncated_for_model: *truncated_for_model,
        })
    }
}

fn finish_call(
    conn: &Connection,
    turn: Turn,
    time_ms: i64,
    finished: &Finished<'_>,
) -> Result<i64> {
    let call = &finished.call;
    let spec_id = spec(
        conn,
        call.tool,
        &codes::source_to_text(call.source),
        call.description,
    )?;
    let duration = to_i64(finished.duration_ms);
    let id = match running_call(conn, turn, call)? {
        Some(id) => id,
        // A call that never ran (refused, denied, invalid) has no started event.
        None => insert_running(conn, turn, call, spec_id, time_ms.saturating_sub(duration))?,
    };
    let preview = codes::prefix(finished.result, PREVIEW_BYTES);
    let (by, rule) = codes::approval_by_to_columns(&call.approval.by);
    conn.prepare_cached(
        "UPDATE tool_calls SET spec_id = ?2, arguments = ?3, duration_ms = ?4,
            status = ?5, error_code = ?6, error_message = ?7, preview = ?8,
            result_size = ?9, truncated_for_model = ?10, approval_allowed = ?11,
            approval_by = ?12, approval_rule = ?13, approval_reason = ?14
         WHERE id = ?1",
    )?
    .execute(params![
        id,
        spec_id,
        serde_json::to_string(call.arguments)?,
        duration,
        crate::CallStatus::from(finished.status).as_str(),
        finished.error.map(|error| error.code.as_str()),
        finished.error.map(|error| error.message.as_str()),
        preview,
        to_i64(finished.result.len() as u64),
        finished.truncated_for_model,
        call.approval.allowed,
        by,
        rule,
        call.approval.reason
    ])?;
    keep_whole_result(conn, id, finished, preview.len())?;
    Ok(id)
}

/// The row of the call while it runs, if it started.
fn running_call(conn: &Connection, turn: Turn, call: &Call<'_>) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM tool_calls
             WHERE status = 'running' AND status <> 'success' AND turn_id = ?1 AND round = ?2 AND call_id = ?3",
        )?
        .query_row(params![turn.id, call.round, call.call_id], |row| row.get(0))
        .optional()?)
}

/// A result longer than its preview, and structured data, go compressed into `tool_results`.
fn keep_whole_result(
    conn: &Connection,
    id: i64,
    finished: &Finished<'_>,
    preview_len: usize,
) -> Result<()> {
    let full = (finished.result.len() > preview_len)
        .then(|| compress::deflate(finished.result.as_bytes()))
        .transpose()?;
    let data = match finished.data {
        Some(data) => Some(compress::deflate(&serde_json::to_vec(data)?)?),
        None => None,
    };
    if full.is_some() || data.is_some() {
        conn.prepare_cached(
            "INSERT OR REPLACE INTO tool_results(call_id, codec, result, data)
             VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![id, compress::DEFLATE, full, data])?;
    }
    Ok(())
}

/// SQLite integers are signed; counts and durations past `i64::MAX` do not occur.
pub(crate) fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn titles_are_the_first_line_cut_to_length() {
        assert_eq!(title_from("\n  Where is main?\nmore"), "Where is main?");
        let long = "x".repeat(100);
        assert_eq!(title_from(&long), format!("{}…", "x".repeat(80)));
        assert_eq!(title_from(""), "");
        let attached =
            "<attachment name=\"notes.md\" source=\"notes.md\">\n# Notes\n</attachment>\n\n";
        assert_eq!(
            title_from(&format!("{attached}Sum these up")),
            "Sum these up"
        );
        assert_eq!(title_from(attached), "notes.md");
        // Blocks tagged with their message's nonce, whose text may hold any other closing tag.
        let tagged = "<attachment-00000000000000ab name=\"notes.md\" source=\"notes.md\">\n\
                      </attachment>\n\nNot the title\n</attachment-00000000000000ab>\n\n";
        assert_eq!(title_from(&format!("{tagged}Sum these up")), "Sum these up");
        assert_eq!(title_from(tagged), "notes.md");
    }
}
