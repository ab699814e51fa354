//! A tool call's row in `tool_calls`, the audit log: written by `tool_call_started` (running,
//! with its arguments and approval) and completed by `tool_call_finished` (its status,
//! duration, error, a preview of the result and, in `tool_results`, the whole result
//! compressed); read back by [`read_row`], the one reader of the row (behind History's listings
//! and searches, `tooltrail history`, [`Store::tool_call`] and the exports), and as the two
//! events it was recorded from, which a reopened conversation is shown from.
//!
//! A field added to a call's events is written and read here: both events are taken apart and
//! rebuilt field by field (never with `..`), so the compiler names this file until the field is
//! kept; its column is a step in `migrations.rs`. A `tool_call_started` reads back with its
//! call's arguments and approval as finally recorded (the end's, once the call finished).

use rusqlite::{Connection, OptionalExtension, Params, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tooltrail_protocol::{ApprovalRecord, EventBody, ToolError, ToolSource, ToolStatus, ViewLink};
use ts_rs::TS;

use super::turn::Turn;
use crate::codes::{self, to_i64};
use crate::compress;
use crate::error::{Result, StoreError, missing};
use crate::status::CallStatus;

/// Bytes of a result kept inline with its call. Longer results keep this much as their preview
/// and go whole, compressed, into `tool_results`.
pub const PREVIEW_BYTES: usize = 512;

/// One recorded tool call as a list shows it: everything but the full result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct HistoryRow {
    /// Stable id of this record (`tc_…`), for [`Store::tool_call`].
    // The link's target, for rustdoc alone: the window's bindings copy the words above as they
    // are, and this module does not import the store's handle.
    #[cfg_attr(doc, doc = "")]
    #[cfg_attr(doc, doc = "[`Store::tool_call`]: crate::Store::tool_call")]
    pub id: String,
    pub conversation_id: String,
    pub turn_id: String,
    pub workspace: Option<String>,
    /// The id the model gave the call.
    pub call_id: String,
    pub round: u32,
    pub tool: String,
    pub source: ToolSource,
    /// The tool's description as the model saw it, from the call's start.
    pub description: String,
    pub arguments: Value,
    /// When the call started, in ms since the Unix epoch.
    pub started_ms: i64,
    /// `None` while running, and for calls a crash interrupted.
    pub duration_ms: Option<u64>,
    pub status: CallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ToolError>,
    /// The result's first bytes (all of it when short).
    pub result_preview: String,
    /// The full result's size in bytes.
    pub result_size: u64,
    /// Whether the model got less than the full result.
    pub truncated_for_model: bool,
    pub approval: ApprovalRecord,
    /// The tool's view (MCP Apps), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub view: Option<ViewLink>,
    /// For a call an MCP App view made: the call whose view it was (`tc_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub view_of: Option<String>,
}

impl HistoryRow {
    /// Whether the preview is the whole result.
    pub fn preview_is_complete(&self) -> bool {
        self.result_preview.len() as u64 >= self.result_size
    }
}

/// One call with its full result, as [`crate::Store::tool_call`] returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolCallRecord {
    #[serde(flatten)]
    pub row: HistoryRow,
    /// The full result text.
    pub result: String,
    /// The structured result, where the tool gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub data: Option<Value>,
}

// The write side.

/// What every event of a tool call says of it: which call, and how it was approved.
pub(crate) struct Call<'a> {
    round: u32,
    pub(crate) call_id: &'a str,
    tool: &'a str,
    source: &'a ToolSource,
    description: &'a str,
    arguments: &'a Value,
    approval: &'a ApprovalRecord,
    view: Option<&'a ViewLink>,
}

impl<'a> Call<'a> {
    /// The call a `tool_call_started` event starts.
    pub(crate) fn started(body: &'a EventBody) -> Option<Self> {
        // Every field named: a new one fails to compile here until it is written.
        let EventBody::ToolCallStarted {
            round,
            call_id,
            tool,
            source,
            description,
            arguments,
            approval,
            view,
        } = body
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

/// What a `tool_call_finished` event says: the call, and how it ended.
pub(crate) struct Finished<'a> {
    pub(crate) call: Call<'a>,
    status: ToolStatus,
    duration_ms: u64,
    result: &'a str,
    data: Option<&'a Value>,
    error: Option<&'a ToolError>,
    truncated_for_model: bool,
}

impl<'a> Finished<'a> {
    /// The call a `tool_call_finished` event ends, and how.
    pub(crate) fn of(body: &'a EventBody) -> Option<Self> {
        // Every field named: a new one fails to compile here until it is written.
        let EventBody::ToolCallFinished {
            round,
            call_id,
            tool,
            source,
            description,
            arguments,
            status,
            duration_ms,
            result,
            data,
            error,
            approval,
            truncated_for_model,
            view,
        } = body
        else {
            return None;
        };
        Some(Self {
            call: Call {
                round: *round,
                call_id,
                tool,
                source,
                description,
                arguments,
                approval,
                view: view.as_ref(),
            },
            status: *status,
            duration_ms: *duration_ms,
            result,
            data: data.as_ref(),
            error: error.as_ref(),
            truncated_for_model: *truncated_for_model,
        })
    }
}

/// A `tool_call_started` event: the call's row, running. Returns the row's id.
pub(crate) fn start_call(
    conn: &Connection,
    turn: Turn,
    time_ms: i64,
    call: &Call<'_>,
) -> Result<i64> {
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

/// A `tool_call_finished` event: the call's row (made now if the call never started) completed
/// with how it ended. Returns the row's id.
pub(crate) fn finish_call(
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
        CallStatus::from(finished.status).as_str(),
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
    keep_result(conn, id, finished.result, finished.data, preview_len)
}

/// The same for a result written after the fact (a task picked up again, `task.rs`).
pub(crate) fn keep_result(
    conn: &Connection,
    id: i64,
    result: &str,
    data: Option<&Value>,
    preview_len: usize,
) -> Result<()> {
    let full = (result.len() > preview_len)
        .then(|| compress::deflate(result.as_bytes()))
        .transpose()?;
    let data = match data {
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

/// The row of the tool's spec (its name, source and description), kept once however many calls
/// it had.
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

// The read side.

/// The columns [`read_row`] reads, from `tool_calls c` and the tables joined by [`JOINS`].
pub(crate) const COLUMNS: &str = "c.id, conv.public_id, t.public_id, w.path, c.call_id, c.round,
    c.tool, s.source, s.description, c.arguments, c.started_ms, c.duration_ms, c.status,
    c.error_code, c.error_message, c.preview, c.result_size, c.truncated_for_model,
    c.approval_allowed, c.approval_by, c.approval_rule, c.approval_reason, c.view_uri,
    c.parent_call_id";

/// CROSS JOIN keeps `tool_calls` the outer loop, so the index walk that orders it is the one
/// that runs.
pub(crate) const JOINS: &str = "CROSS JOIN conversations conv ON conv.id = c.conversation_id
    CROSS JOIN turns t ON t.id = c.turn_id
    LEFT JOIN workspaces w ON w.id = c.workspace_id
    LEFT JOIN tool_specs s ON s.id = c.spec_id";

/// The id a call is named by outside the store (`tc_<row id>`).
pub(crate) fn call_ref(id: i64) -> String {
    format!("tc_{id}")
}

fn parse_call_ref(text: &str) -> Result<i64> {
    text.strip_prefix("tc_")
        .and_then(|number| number.parse().ok())
        .ok_or_else(|| StoreError::CallNotFound(text.to_string()))
}

/// Reads one row selected with [`COLUMNS`]; also returns its row id.
pub(crate) fn read_row(row: &Row<'_>) -> Result<(i64, HistoryRow)> {
    let id: i64 = row.get(0)?;
    let arguments: String = row.get(9)?;
    let status: String = row.get(12)?;
    let error_code: Option<String> = row.get(13)?;
    let error_message: Option<String> = row.get(14)?;
    let source: Option<String> = row.get(7)?;
    let duration: Option<i64> = row.get(11)?;
    let size: i64 = row.get(16)?;
    let approval_by: String = row.get(19)?;
    Ok((
        id,
        HistoryRow {
            id: call_ref(id),
            conversation_id: row.get(1)?,
            turn_id: row.get(2)?,
            workspace: row.get(3)?,
            call_id: row.get(4)?,
            round: row.get(5)?,
            tool: row.get(6)?,
            source: source
                .as_deref()
                .map(codes::source_from_text)
                .unwrap_or(ToolSource::Builtin),
            description: row.get::<_, Option<String>>(8)?.unwrap_or_default(),
            arguments: serde_json::from_str(&arguments)?,
            started_ms: row.get(10)?,
            duration_ms: duration.map(|ms| u64::try_from(ms).unwrap_or(0)),
            status: status.parse()?,
            error: error_code.map(|code| {
                ToolError::new(
                    codes::error_code_from_text(&code),
                    error_message.unwrap_or_default(),
                )
            }),
            result_preview: row.get(15)?,
            result_size: u64::try_from(size).unwrap_or(0),
            truncated_for_model: row.get(17)?,
            approval: codes::approval_from_columns(
                row.get(18)?,
                &approval_by,
                row.get(20)?,
                row.get(21)?,
            )?,
            view: row
                .get::<_, Option<String>>(22)?
                .map(|resource_uri| ViewLink { resource_uri }),
            view_of: row.get::<_, Option<i64>>(23)?.map(call_ref),
        },
    ))
}

/// The one call that `condition` (on `tool_calls c` and [`JOINS`]) picks, with its row id.
fn call_where(
    conn: &Connection,
    condition: &str,
    values: impl Params,
) -> Result<Option<(i64, HistoryRow)>> {
    let sql = format!("SELECT {COLUMNS} FROM tool_calls c {JOINS} WHERE {condition}");
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(values)?;
    rows.next()?.map(read_row).transpose()
}

/// Call row `id`, as a list shows it.
pub(crate) fn call_row(conn: &Connection, id: i64) -> Result<Option<HistoryRow>> {
    Ok(call_where(conn, "c.id = ?1", [id])?.map(|(_, row)| row))
}

/// The full result and data of call `id`, whose preview is `preview`.
pub(crate) fn full_result(
    conn: &Connection,
    id: i64,
    preview: &str,
) -> Result<(String, Option<Value>)> {
    let mut statement =
        conn.prepare_cached("SELECT codec, result, data FROM tool_results WHERE call_id = ?1")?;
    let mut rows = statement.query([id])?;
    let Some(row) = rows.next()? else {
        return Ok((preview.to_string(), None));
    };
    let codec: i64 = row.get(0)?;
    let result: Option<Vec<u8>> = row.get(1)?;
    let data: Option<Vec<u8>> = row.get(2)?;
    let result = match result {
        Some(bytes) => compress::inflate_text(codec, &bytes)?,
        None => preview.to_string(),
    };
    let data = match data {
        Some(bytes) => Some(serde_json::from_str(&compress::inflate_text(
            codec, &bytes,
        )?)?),
        None => None,
    };
    Ok((result, data))
}

/// The call `condition` picks, with its full result.
fn record_where(
    conn: &Connection,
    condition: &str,
    values: impl Params,
) -> Result<Option<ToolCallRecord>> {
    let Some((id, row)) = call_where(conn, condition, values)? else {
        return Ok(None);
    };
    let (result, data) = full_result(conn, id, &row.result_preview)?;
    Ok(Some(ToolCallRecord { row, result, data }))
}

/// The call named `id` (a [`HistoryRow::id`]) with its full result; `None` when the record has
/// no such call.
pub(crate) fn call_record(conn: &Connection, id: &str) -> Result<Option<ToolCallRecord>> {
    record_where(conn, "c.id = ?1", [parse_call_ref(id)?])
}

/// The call `call_id` of turn `turn_id` (their ids as the events give them), with its full
/// result.
pub(crate) fn call_record_in_turn(
    conn: &Connection,
    turn_id: &str,
    call_id: &str,
) -> Result<Option<ToolCallRecord>> {
    record_where(
        conn,
        "t.public_id = ?1 AND c.call_id = ?2",
        [turn_id, call_id],
    )
}

/// The `tool_call_started` event of call row `ref_id`.
pub(crate) fn read_call_started(conn: &Connection, ref_id: Option<i64>) -> Result<EventBody> {
    let (_, row) =
        call_where(conn, "c.id = ?1", [ref_id])?.ok_or_else(|| missing("tool call", ref_id))?;
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

/// The `tool_call_finished` event of call row `ref_id`, with the result in full (not the
/// preview the row keeps for listings).
pub(crate) fn read_call_finished(conn: &Connection, ref_id: Option<i64>) -> Result<EventBody> {
    let (id, row) =
        call_where(conn, "c.id = ?1", [ref_id])?.ok_or_else(|| missing("tool call", ref_id))?;
    let status = row
        .status
        .finished()
        .ok_or_else(|| missing("the end of tool call", ref_id))?;
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
