//! The tool-call log: filters, rows and pages, newest first.
//!
//! Every filtered listing is a walk down one index, newest first, that stops after one page:
//! `(conversation, started)`, `(workspace, started)`, `(tool, started)`, `(status, started)` for
//! the statuses other than success, or `(started)` alone; SQLite picks among them. A search walks
//! the full-text index by row id instead (newest first as well); a search inside one conversation
//! walks that conversation's calls and checks each against the full-text index. Ranked searches
//! are rank.rs's; calls_page.rs chooses between the two. A row is read by the call's own reader
//! (`kinds/call.rs`), as everywhere a call is read.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use serde::{Deserialize, Serialize};

use crate::cursor::{self, Cursor, Key, Page};
use crate::error::{Result, StoreError};
use crate::kinds::call::{
    COLUMNS, HistoryRow, JOINS, ToolCallRecord, call_record, call_record_in_turn, read_row,
};
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

/// The WHERE term of the partial index `tool_calls_by_status`. A query must contain it verbatim
/// for SQLite to use that index.
pub(crate) const NOT_SUCCESS: &str = "c.status <> 'success'";

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
        self.with_conn(|conn| {
            call_record(conn, id)?.ok_or_else(|| StoreError::CallNotFound(id.to_string()))
        })
    }

    /// The call `call_id` of turn `turn_id` (their ids as the events give them), with its full
    /// result; `None` when the record has no such call.
    pub fn call_in_turn(&self, turn_id: &str, call_id: &str) -> Result<Option<ToolCallRecord>> {
        self.with_conn(|conn| call_record_in_turn(conn, turn_id, call_id))
    }
}
