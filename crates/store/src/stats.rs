//! Counts per tool and status, and call durations.
//!
//! Unfiltered, or filtered by workspace only, the counts and averages come from `tool_stats`,
//! which triggers keep current, so they cost a few rows however long the log is. Filtered by
//! conversation or time, they are counted from the matching calls. The 95th percentile is
//! always computed from the calls themselves (nearest rank), one tool at a time.

use std::collections::BTreeMap;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::status::CallStatus;
use crate::store::Store;

/// Which calls to count.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct StatsFilter {
    pub workspace: Option<String>,
    pub conversation: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Also compute each tool's 95th-percentile duration (reads every matching duration).
    pub percentiles: bool,
}

/// Calls per status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCounts {
    pub running: u64,
    pub success: u64,
    pub error: u64,
    pub denied: u64,
    pub cancelled: u64,
    pub timeout: u64,
}

impl StatusCounts {
    fn add(&mut self, status: CallStatus, calls: u64) {
        let slot = match status {
            CallStatus::Running => &mut self.running,
            CallStatus::Success => &mut self.success,
            CallStatus::Error => &mut self.error,
            CallStatus::Denied => &mut self.denied,
            CallStatus::Cancelled => &mut self.cancelled,
            CallStatus::Timeout => &mut self.timeout,
        };
        *slot += calls;
    }
}

/// One tool's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolStats {
    pub tool: String,
    pub calls: u64,
    pub statuses: StatusCounts,
    /// Mean duration of the calls that have one.
    pub avg_ms: Option<f64>,
    /// Only when [`StatsFilter::percentiles`] asked for it.
    pub p95_ms: Option<u64>,
}

/// Figures per tool, most-called first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub total: u64,
    pub statuses: StatusCounts,
    pub tools: Vec<ToolStats>,
}

#[derive(Default)]
struct Tally {
    calls: u64,
    statuses: StatusCounts,
    total_ms: i64,
    timed: u64,
}

/// `(conditions, values)` restricting `tool_calls c` to `filter`.
fn conditions(filter: &StatsFilter) -> (Vec<&'static str>, Vec<SqlValue>) {
    let mut conditions = Vec::new();
    let mut values = Vec::new();
    if let Some(workspace) = &filter.workspace {
        conditions.push("c.workspace_id = (SELECT id FROM workspaces WHERE path = ?)");
        values.push(SqlValue::Text(workspace.clone()));
    }
    if let Some(conversation) = &filter.conversation {
        conditions.push("c.conversation_id = (SELECT id FROM conversations WHERE public_id = ?)");
        values.push(SqlValue::Text(conversation.clone()));
    }
    if let Some(since) = filter.since {
        conditions.push("c.started_ms >= ?");
        values.push(SqlValue::Integer(since));
    }
    if let Some(until) = filter.until {
        conditions.push("c.started_ms < ?");
        values.push(SqlValue::Integer(until));
    }
    (conditions, values)
}

fn tallies(conn: &Connection, filter: &StatsFilter) -> Result<BTreeMap<String, Tally>> {
    let from_counters =
        filter.conversation.is_none() && filter.since.is_none() && filter.until.is_none();
    let (sql, values) = if from_counters {
        let mut values = Vec::new();
        let mut sql = "SELECT tool, status, sum(calls), sum(total_ms), sum(timed) FROM tool_stats"
            .to_string();
        if let Some(workspace) = &filter.workspace {
            sql.push_str(
                " WHERE workspace_id = coalesce((SELECT id FROM workspaces WHERE path = ?), -1)",
            );
            values.push(SqlValue::Text(workspace.clone()));
        }
        sql.push_str(" GROUP BY tool, status");
        (sql, values)
    } else {
        let (conditions, values) = conditions(filter);
        let sql = format!(
            "SELECT c.tool, c.status, count(*), coalesce(sum(c.duration_ms), 0),
                count(c.duration_ms)
             FROM tool_calls c WHERE {} GROUP BY c.tool, c.status",
            conditions.join(" AND ")
        );
        (sql, values)
    };
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params_from_iter(values))?;
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    while let Some(row) = rows.next()? {
        let tool: String = row.get(0)?;
        let status: CallStatus = row.get::<_, String>(1)?.parse()?;
        let calls = u64::try_from(row.get::<_, i64>(2)?).unwrap_or(0);
        let tally = tallies.entry(tool).or_default();
        tally.calls += calls;
        tally.statuses.add(status, calls);
        tally.total_ms += row.get::<_, i64>(3)?;
        tally.timed += u64::try_from(row.get::<_, i64>(4)?).unwrap_or(0);
    }
    Ok(tallies)
}

/// The nearest-rank 95th percentile of `tool`'s `timed` durations.
fn p95(conn: &Connection, filter: &StatsFilter, tool: &str, timed: u64) -> Result<Option<u64>> {
    if timed == 0 {
        return Ok(None);
    }
    let rank = (timed * 95).div_ceil(100).max(1);
    let (mut conditions, mut values) = conditions(filter);
    conditions.push("c.tool = ?");
    values.push(SqlValue::Text(tool.to_string()));
    conditions.push("c.duration_ms IS NOT NULL");
    let sql = format!(
        "SELECT c.duration_ms FROM tool_calls c WHERE {} ORDER BY c.duration_ms LIMIT 1 OFFSET {}",
        conditions.join(" AND "),
        rank - 1
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params_from_iter(values))?;
    Ok(match rows.next()? {
        Some(row) => Some(u64::try_from(row.get::<_, i64>(0)?).unwrap_or(0)),
        None => None,
    })
}

impl Store {
    /// Calls per tool and status, with durations.
    pub fn stats(&self, filter: &StatsFilter) -> Result<Stats> {
        self.with_conn(|conn| {
            let tallies = tallies(conn, filter)?;
            let mut stats = Stats {
                total: 0,
                statuses: StatusCounts::default(),
                tools: Vec::with_capacity(tallies.len()),
            };
            for (tool, tally) in tallies {
                if tally.calls == 0 {
                    continue;
                }
                stats.total += tally.calls;
                for status in CallStatus::ALL {
                    let count = match status {
                        CallStatus::Running => tally.statuses.running,
                        CallStatus::Success => tally.statuses.success,
                        CallStatus::Error => tally.statuses.error,
                        CallStatus::Denied => tally.statuses.denied,
                        CallStatus::Cancelled => tally.statuses.cancelled,
                        CallStatus::Timeout => tally.statuses.timeout,
                    };
                    stats.statuses.add(status, count);
                }
                let p95_ms = if filter.percentiles {
                    p95(conn, filter, &tool, tally.timed)?
                } else {
                    None
                };
                stats.tools.push(ToolStats {
                    avg_ms: (tally.timed > 0).then(|| tally.total_ms as f64 / tally.timed as f64),
                    p95_ms,
                    tool,
                    calls: tally.calls,
                    statuses: tally.statuses,
                });
            }
            stats
                .tools
                .sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.tool.cmp(&b.tool)));
            Ok(stats)
        })
    }
}
