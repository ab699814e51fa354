//! Counts per tool and status, and call durations.
//!
//! Unfiltered, or filtered by workspace only, everything comes from `tool_stats` and
//! `tool_durations`, which triggers keep current: a few hundred rows however long the log is.
//! The 95th percentile then comes from the duration histogram: exact below 100 ms, and above
//! that the upper end of a bucket at most 10% wide. Filtered by conversation or time, the
//! matching calls are read (one pass) and every figure is exact.

use std::collections::BTreeMap;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

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
}

/// Calls per status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct StatusCounts {
    pub running: u64,
    pub success: u64,
    pub error: u64,
    pub denied: u64,
    pub cancelled: u64,
    pub timeout: u64,
}

impl StatusCounts {
    fn merge(&mut self, other: &StatusCounts) {
        for status in CallStatus::ALL {
            self.add(status, other.get(status));
        }
    }

    /// The count of `status`.
    pub fn get(&self, status: CallStatus) -> u64 {
        match status {
            CallStatus::Running => self.running,
            CallStatus::Success => self.success,
            CallStatus::Error => self.error,
            CallStatus::Denied => self.denied,
            CallStatus::Cancelled => self.cancelled,
            CallStatus::Timeout => self.timeout,
        }
    }

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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolStats {
    pub tool: String,
    pub calls: u64,
    pub statuses: StatusCounts,
    /// Mean duration of the calls that have one.
    pub avg_ms: Option<f64>,
    /// The 95th-percentile duration (nearest rank); see the module's notes on precision.
    pub p95_ms: Option<u64>,
}

/// Figures per tool, most-called first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
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
    p95_ms: Option<u64>,
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

/// The nearest rank of the 95th percentile among `count` values, from 1.
fn p95_rank(count: u64) -> u64 {
    (count * 95).div_ceil(100).max(1)
}

/// The largest duration a histogram bucket holds (see `tool_durations` in migrations.rs).
fn bucket_ceiling(bucket: i64) -> u64 {
    let bucket = u64::try_from(bucket).unwrap_or(0);
    if bucket < 100 {
        return bucket;
    }
    let digits = u32::try_from(bucket / 100).unwrap_or(2);
    let lead = bucket % 100;
    (lead + 1) * 10u64.pow(digits.saturating_sub(2)) - 1
}

/// From the counters and histograms: workspace filter at most.
fn from_counters(conn: &Connection, workspace: Option<&str>) -> Result<BTreeMap<String, Tally>> {
    // Workspace -1 holds the totals; an unknown path matches no row (-2).
    let scope = match workspace {
        Some(_) => "WHERE workspace_id = coalesce((SELECT id FROM workspaces WHERE path = ?1), -2)",
        None => "WHERE workspace_id = -1",
    };
    let values: Vec<SqlValue> = workspace
        .map(|path| SqlValue::Text(path.to_string()))
        .into_iter()
        .collect();
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let sql = format!("SELECT tool, status, calls, total_ms, timed FROM tool_stats {scope}");
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params_from_iter(values.iter()))?;
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
    let sql =
        format!("SELECT tool, bucket, calls FROM tool_durations {scope} ORDER BY tool, bucket");
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params_from_iter(values.iter()))?;
    let mut seen: (String, u64) = (String::new(), 0);
    while let Some(row) = rows.next()? {
        let tool: String = row.get(0)?;
        let bucket: i64 = row.get(1)?;
        let calls = u64::try_from(row.get::<_, i64>(2)?).unwrap_or(0);
        if seen.0 != tool {
            seen = (tool.clone(), 0);
        }
        let Some(tally) = tallies.get_mut(&tool) else {
            continue;
        };
        let before = seen.1;
        seen.1 += calls;
        let rank = p95_rank(tally.timed);
        if tally.p95_ms.is_none() && before < rank && seen.1 >= rank {
            tally.p95_ms = Some(bucket_ceiling(bucket));
        }
    }
    Ok(tallies)
}

/// From the matching calls themselves, in one pass.
fn from_calls(conn: &Connection, filter: &StatsFilter) -> Result<BTreeMap<String, Tally>> {
    let (conditions, values) = conditions(filter);
    let sql = format!(
        "SELECT c.tool, c.status, c.duration_ms FROM tool_calls c WHERE {}",
        conditions.join(" AND ")
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params_from_iter(values))?;
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut durations: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    while let Some(row) = rows.next()? {
        let tool: String = row.get(0)?;
        let status: CallStatus = row.get::<_, String>(1)?.parse()?;
        let duration: Option<i64> = row.get(2)?;
        if let Some(ms) = duration {
            durations
                .entry(tool.clone())
                .or_default()
                .push(u64::try_from(ms).unwrap_or(0));
        }
        let tally = tallies.entry(tool).or_default();
        tally.calls += 1;
        tally.statuses.add(status, 1);
        if let Some(ms) = duration {
            tally.total_ms += ms;
            tally.timed += 1;
        }
    }
    for (tool, mut times) in durations {
        let rank = p95_rank(times.len() as u64);
        let index = usize::try_from(rank - 1).unwrap_or(0);
        if let (Some(tally), true) = (tallies.get_mut(&tool), index < times.len()) {
            let (_, nth, _) = times.select_nth_unstable(index);
            tally.p95_ms = Some(*nth);
        }
    }
    Ok(tallies)
}

impl Store {
    /// Calls per tool and status, with durations.
    pub fn stats(&self, filter: &StatsFilter) -> Result<Stats> {
        self.with_conn(|conn| {
            let tallies = if filter.conversation.is_none()
                && filter.since.is_none()
                && filter.until.is_none()
            {
                from_counters(conn, filter.workspace.as_deref())?
            } else {
                from_calls(conn, filter)?
            };
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
                stats.statuses.merge(&tally.statuses);
                stats.tools.push(ToolStats {
                    avg_ms: (tally.timed > 0).then(|| tally.total_ms as f64 / tally.timed as f64),
                    p95_ms: tally.p95_ms,
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The SQL bucket expression of migrations.rs, in Rust, to check the ceilings against.
    fn bucket(ms: u64) -> i64 {
        if ms < 100 {
            return ms as i64;
        }
        let text = ms.to_string();
        (text.len() * 100) as i64 + text[..2].parse::<i64>().unwrap()
    }

    #[test]
    fn bucket_ceilings_bound_their_durations_within_ten_percent() {
        for ms in [
            0, 1, 42, 99, 100, 109, 110, 999, 1000, 1234, 9999, 10_000, 3_600_000,
        ] {
            let ceiling = bucket_ceiling(bucket(ms));
            assert!(ceiling >= ms, "{ms} -> {ceiling}");
            assert!(ceiling as f64 <= ms as f64 * 1.1 + 0.5, "{ms} -> {ceiling}");
        }
        assert_eq!(bucket_ceiling(bucket(1234)), 1299);
        assert_eq!(bucket_ceiling(bucket(57)), 57);
    }

    #[test]
    fn the_rank_is_the_nearest_one() {
        assert_eq!(p95_rank(1), 1);
        assert_eq!(p95_rank(20), 19);
        assert_eq!(p95_rank(100), 95);
    }
}
