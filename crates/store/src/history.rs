//! The tool-call log: filters, rows and pages, newest first.
//!
//! Every filtered listing is a walk down one index, newest first, that stops after one page:
//! `(conversation, started)`, `(workspace, started)`, `(tool, started)`, `(status, started)` for
//! the statuses other than success, or `(started)` alone; SQLite picks among them. A search walks
//! the full-text index by row id instead (newest first as well); a search inside one conversation
//! walks that conversation's calls and checks each against the full-text index. Ranked searches
//! are rank.rs's; calls_page.rs chooses between the two.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, Row, params_from_iter};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tooltrail_protocol::{ApprovalRecord, ToolError, ToolSource, ViewLink};
use ts_rs::TS;

use crate::codes;
use crate::compress;
use crate::cursor::{self, Cursor, Key, Page};
use crate::error::{Result, StoreError};
use crate::search;
use crate::status::CallStatus;
use crate::store::Store;

/// Which calls to list. Every field narrows; the default lists all, newest first, one page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HistoryFilter {
    /// A workspace folder, exactly as the turn recorded it (the engine records the canonical
    /// path of the workspace root).
    pub workspace: Option<String>,
    pub conversation: Option<String>,
    pub tool: Option<String>,
    pub status: Option<CallStatus>,
    /// Calls started at or after this time (ms since the Unix epoch).
    pub since: Option<i64>,
    /// Calls started before this time.
    pub until: Option<i64>,
    /// Words to find in the tool name, arguments, result preview and error. Each word must
    /// occur; `word*` matches words starting with `word`; no other syntax.
    pub search: Option<String>,
    /// With `search`: best matches first (BM25) instead of newest first. Outside one
    /// conversation, the newest [`crate::RANK_WINDOW`] matches are the ones ranked.
    pub ranked: bool,
    /// Rows per page: 0 means [`cursor::DEFAULT_LIMIT`], at most [`cursor::MAX_LIMIT`].
    pub limit: usize,
    /// The `next` of the previous page.
    pub before: Option<Cursor>,
}

/// One recorded tool call as a list shows it: everything but the full result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct HistoryRow {
    /// Stable id of this record (`tc_…`), for [`Store::tool_call`].
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

/// One call with its full result, as [`Store::tool_call`] returns it.
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

/// The WHERE term of the partial index `tool_calls_by_status`. A query must contain it verbatim
/// for SQLite to use that index.
pub(crate) const NOT_SUCCESS: &str = "c.status <> 'success'";

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

/// How a history query walks, which decides the cursor it gives out. (Ranked searches are
/// rank.rs's.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    Time,
    MatchesNewest,
}

/// The conditions `filter` puts on `tool_calls c`, with their parameters.
pub(crate) fn call_filters(filter: &HistoryFilter) -> (Vec<String>, Vec<SqlValue>) {
    let mut conditions: Vec<String> = Vec::new();
    let mut values: Vec<SqlValue> = Vec::new();
    if let Some(conversation) = &filter.conversation {
        conditions
            .push("c.conversation_id = (SELECT id FROM conversations WHERE public_id = ?)".into());
        values.push(SqlValue::Text(conversation.clone()));
    }
    if let Some(workspace) = &filter.workspace {
        conditions.push("c.workspace_id = (SELECT id FROM workspaces WHERE path = ?)".into());
        values.push(SqlValue::Text(workspace.clone()));
    }
    if let Some(tool) = &filter.tool {
        conditions.push("c.tool = ?".into());
        values.push(SqlValue::Text(tool.clone()));
    }
    if let Some(status) = filter.status {
        // A literal, not a parameter (the text comes from the enum, never from input). SQLite
        // uses a partial index only for queries that repeat its WHERE term word for word.
        conditions.push(format!("c.status = '{}'", status.as_str()));
        if status != CallStatus::Success {
            conditions.push(NOT_SUCCESS.to_string());
        }
    }
    if let Some(since) = filter.since {
        conditions.push("c.started_ms >= ?".into());
        values.push(SqlValue::Integer(since));
    }
    if let Some(until) = filter.until {
        conditions.push("c.started_ms < ?".into());
        values.push(SqlValue::Integer(until));
    }
    (conditions, values)
}

fn where_clause(conditions: &[String]) -> String {
    if conditions.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conditions.join(" AND "))
    }
}

/// The SQL and parameters of one page of `filter` (one row more than the page, to tell whether
/// another page follows).
pub(crate) fn page_query(filter: &HistoryFilter) -> Result<(String, Vec<SqlValue>, usize)> {
    let limit = cursor::clamp_limit(filter.limit);
    let fetch = limit + 1;
    let query = filter
        .search
        .as_deref()
        .map(search::fts_query)
        .transpose()?;
    let walk = match (&query, &filter.conversation) {
        (None, _) | (Some(_), Some(_)) => Walk::Time,
        (Some(_), None) => Walk::MatchesNewest,
    };
    let (mut conditions, mut values) = call_filters(filter);
    match (walk, filter.before.map(|cursor| cursor.0)) {
        (_, None) => {}
        (Walk::Time, Some(Key::Time { time_ms, id })) => {
            conditions.push("c.started_ms <= ? AND (c.started_ms < ? OR c.id < ?)".into());
            values.extend([
                SqlValue::Integer(time_ms),
                SqlValue::Integer(time_ms),
                SqlValue::Integer(id),
            ]);
        }
        (Walk::MatchesNewest, Some(Key::Id(id))) => {
            conditions.push("tool_calls_fts.rowid < ?".into());
            values.push(SqlValue::Integer(id));
        }
        (_, Some(_)) => {
            let text = filter
                .before
                .map(|cursor| cursor.to_string())
                .unwrap_or_default();
            return Err(StoreError::BadCursor(text));
        }
    }
    let matches = |conditions: &mut Vec<String>, values: &mut Vec<SqlValue>| {
        if let Some(query) = &query {
            conditions.insert(0, "tool_calls_fts MATCH ?".into());
            values.insert(0, SqlValue::Text(query.clone()));
        }
    };
    const FROM_MATCHES: &str =
        "tool_calls_fts CROSS JOIN tool_calls c ON c.id = tool_calls_fts.rowid";
    let sql = match walk {
        Walk::Time => {
            if let Some(query) = &query {
                // One conversation's calls are few: check each against the index.
                conditions.push(
                    "EXISTS (SELECT 1 FROM tool_calls_fts
                        WHERE tool_calls_fts MATCH ? AND rowid = c.id)"
                        .into(),
                );
                values.push(SqlValue::Text(query.clone()));
            }
            format!(
                "SELECT {COLUMNS} FROM tool_calls c {JOINS} {} \
                 ORDER BY c.started_ms DESC, c.id DESC LIMIT {fetch}",
                where_clause(&conditions)
            )
        }
        Walk::MatchesNewest => {
            matches(&mut conditions, &mut values);
            format!(
                "SELECT {COLUMNS} FROM {FROM_MATCHES} {JOINS} {} \
                 ORDER BY tool_calls_fts.rowid DESC LIMIT {fetch}",
                where_clause(&conditions)
            )
        }
    };
    Ok((sql, values, limit))
}

/// The cursor after `row` in a walk of `filter`.
fn walk_cursor(filter: &HistoryFilter, id: i64, started_ms: i64) -> Cursor {
    let searching = filter.search.is_some();
    let key = if searching && filter.conversation.is_none() {
        Key::Id(id)
    } else {
        Key::Time {
            time_ms: started_ms,
            id,
        }
    };
    Cursor(key)
}

/// One page of a walk down an index (every listing but a ranked search).
pub(crate) fn walk_page(conn: &Connection, filter: &HistoryFilter) -> Result<Page<HistoryRow>> {
    let (sql, values, limit) = page_query(filter)?;
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params_from_iter(values))?;
    let mut items = Vec::with_capacity(limit.min(64));
    let mut last = None;
    let mut more = false;
    while let Some(row) = rows.next()? {
        if items.len() == limit {
            more = true;
            break;
        }
        let (id, item) = read_row(row)?;
        last = Some((id, item.started_ms));
        items.push(item);
    }
    let next = match (more, last) {
        (true, Some((id, started_ms))) => Some(walk_cursor(filter, id, started_ms)),
        _ => None,
    };
    Ok(Page { items, next })
}

impl Store {
    /// One call, with its full result and structured data. `id` is a [`HistoryRow::id`].
    pub fn tool_call(&self, id: &str) -> Result<ToolCallRecord> {
        let row_id = parse_call_ref(id)?;
        self.with_conn(|conn| {
            let sql = format!("SELECT {COLUMNS} FROM tool_calls c {JOINS} WHERE c.id = ?1");
            let mut statement = conn.prepare_cached(&sql)?;
            let mut rows = statement.query([row_id])?;
            let Some(row) = rows.next()? else {
                return Err(StoreError::CallNotFound(id.to_string()));
            };
            let (_, row) = read_row(row)?;
            let (result, data) = full_result(conn, row_id, &row.result_preview)?;
            Ok(ToolCallRecord { row, result, data })
        })
    }

    /// The call `call_id` of turn `turn_id` (their ids as the events give them), with its full
    /// result; `None` when the record has no such call.
    pub fn call_in_turn(&self, turn_id: &str, call_id: &str) -> Result<Option<ToolCallRecord>> {
        self.with_conn(|conn| {
            let sql = format!(
                "SELECT {COLUMNS} FROM tool_calls c {JOINS} WHERE t.public_id = ?1 AND c.call_id = ?2"
            );
            let mut statement = conn.prepare_cached(&sql)?;
            let mut rows = statement.query([turn_id, call_id])?;
            let Some(row) = rows.next()? else {
                return Ok(None);
            };
            let (row_id, row) = read_row(row)?;
            let (result, data) = full_result(conn, row_id, &row.result_preview)?;
            Ok(Some(ToolCallRecord { row, result, data }))
        })
    }
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
