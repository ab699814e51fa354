//! A call whose MCP server runs it as a task (MCP Tasks), while the task is open: its row in
//! `open_tasks` (the server, the tool and the task's id), written from the call's progress
//! reports and gone when the call ends. A process that dies mid-task leaves the row behind, with
//! the call closed as interrupted by recovery; the next start reads it ([`Store::open_tasks`]),
//! follows the task at the server, and writes how it ended over the call's row
//! ([`Store::finish_open_task`]), so the result lands under the call that asked for it.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use tooltrail_protocol::{TaskProgress, ToolError, ToolOutput};

use super::call::{PREVIEW_BYTES, keep_result};
use super::turn::Turn;
use crate::codes::{self, EventKind, to_i64};
use crate::error::Result;
use crate::status::CallStatus;
use crate::store::Store;

/// A progress report that names the call's task: kept while the task is open, forgotten once
/// it ended.
pub(crate) fn note(
    conn: &Connection,
    turn: Turn,
    call_id: &str,
    task: &TaskProgress,
    time_ms: i64,
) -> Result<()> {
    let row: Option<i64> = conn
        .prepare_cached(
            "SELECT id FROM tool_calls WHERE turn_id = ?1 AND call_id = ?2 AND status = 'running'
             ORDER BY id DESC LIMIT 1",
        )?
        .query_row(params![turn.id, call_id], |row| row.get(0))
        .optional()?;
    let Some(row) = row else {
        return Ok(());
    };
    if task.status.is_terminal() {
        return close(conn, row);
    }
    conn.prepare_cached(
        "INSERT INTO open_tasks(call_row, server, tool, task_id, updated_ms)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(call_row) DO UPDATE SET server = ?2, tool = ?3, task_id = ?4,
            updated_ms = ?5",
    )?
    .execute(params![row, task.server, task.tool, task.task_id, time_ms])?;
    Ok(())
}

/// The call `row` ended: its task is no longer open.
pub(crate) fn close(conn: &Connection, row: i64) -> Result<()> {
    conn.prepare_cached("DELETE FROM open_tasks WHERE call_row = ?1")?
        .execute([row])?;
    Ok(())
}

/// A task a call of an earlier run left open at its MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenTask {
    /// The call's row (for [`Store::finish_open_task`]).
    pub row: i64,
    /// The call's id in its turn, and its conversation's public id.
    pub call_id: String,
    pub conversation_id: String,
    /// The tool as the model named it (`server__tool`).
    pub tool: String,
    /// The server as `mcp.json` names it, its own name of the tool, and the task's id there.
    pub server: String,
    pub remote_tool: String,
    pub task_id: String,
    pub started_ms: i64,
}

impl Store {
    /// The tasks calls in `workspace` left open at their servers (oldest first): those of a
    /// process that ended mid-task. A call still running in a live process is not one of them.
    pub fn open_tasks(&self, workspace: &str) -> Result<Vec<OpenTask>> {
        self.with_conn(|conn| {
            let tasks = conn
                .prepare_cached(
                    "SELECT c.id, c.call_id, v.public_id, c.tool, o.server, o.tool, o.task_id,
                        c.started_ms
                     FROM open_tasks o
                     JOIN tool_calls c ON c.id = o.call_row
                     JOIN conversations v ON v.id = c.conversation_id
                     JOIN workspaces w ON w.id = c.workspace_id
                     WHERE w.path = ?1 AND c.status <> 'running'
                     ORDER BY c.id",
                )?
                .query_map([workspace], |row| {
                    Ok(OpenTask {
                        row: row.get(0)?,
                        call_id: row.get(1)?,
                        conversation_id: row.get(2)?,
                        tool: row.get(3)?,
                        server: row.get(4)?,
                        remote_tool: row.get(5)?,
                        task_id: row.get(6)?,
                        started_ms: row.get(7)?,
                    })
                })?
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Ok(tasks)
        })
    }

    /// Writes how `task` ended over its call's row (status, duration to `ended_ms`, result or
    /// error), and forgets the task. Its progress reports go, as when a call finishes.
    pub fn finish_open_task(
        &self,
        task: &OpenTask,
        ended_ms: i64,
        outcome: &std::result::Result<ToolOutput, ToolError>,
    ) -> Result<()> {
        self.with_conn(|conn| {
            let tx = conn.transaction()?;
            let (status, error, result, data): (_, _, &str, Option<&Value>) = match outcome {
                Ok(output) => (CallStatus::Success, None, &output.text, Some(&output.data)),
                Err(error) => (CallStatus::from(error.code.status()), Some(error), "", None),
            };
            let preview = codes::prefix(result, PREVIEW_BYTES);
            tx.prepare_cached(
                "UPDATE tool_calls SET status = ?2, duration_ms = ?3, error_code = ?4,
                    error_message = ?5, preview = ?6, result_size = ?7
                 WHERE id = ?1",
            )?
            .execute(params![
                task.row,
                status.as_str(),
                (ended_ms - task.started_ms).max(0),
                error.map(|error| error.code.as_str()),
                error.map(|error| error.message.as_str()),
                preview,
                to_i64(result.len() as u64),
            ])?;
            keep_result(&tx, task.row, result, data, preview.len())?;
            tx.prepare_cached(
                "DELETE FROM events WHERE kind = ?1 AND json_extract(body, '$.call_id') = ?2
                    AND turn_id = (SELECT turn_id FROM tool_calls WHERE id = ?3)",
            )?
            .execute(params![
                EventKind::ToolCallProgress.code(),
                task.call_id,
                task.row
            ])?;
            close(&tx, task.row)?;
            tx.commit()?;
            Ok(())
        })
    }

    /// Forgets `task` without touching its call (its server no longer holds it, or no server
    /// of that name is configured any more): the call stays as recovery closed it, with
    /// `note` added to its error.
    pub fn drop_open_task(&self, task: &OpenTask, note: &str) -> Result<()> {
        self.with_conn(|conn| {
            conn.prepare_cached(
                "UPDATE tool_calls SET error_message = coalesce(error_message || ' ', '') || ?2
                 WHERE id = ?1",
            )?
            .execute(params![task.row, note])?;
            close(conn, task.row)
        })
    }
}
