//! Tokens per day: what the model servers reported for each request (the `usage` rows the
//! recorder keeps from every `usage` event), added up per day and model.
//!
//! A day is a calendar day where the user is: the caller passes its offset from UTC, so a
//! question asked at 00:30 local time counts for the day it was asked on. The sum is one
//! grouped scan of the matching `usage` rows (one per model request).

use rusqlite::params_from_iter;
use rusqlite::types::Value as SqlValue;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::Result;
use crate::store::Store;

const DAY_MS: i64 = 86_400_000;

/// Which requests to count.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TokenFilter {
    /// Only questions asked in this workspace.
    pub workspace: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Minutes to add to UTC to get the local time the days follow (UTC+8: 480).
    pub utc_offset_minutes: i32,
}

/// The tokens of one model's requests on one day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DayTokens {
    /// The local midnight that begins the day, in milliseconds since the epoch.
    pub day_start_ms: i64,
    /// The model the questions were asked of, as the turn named it.
    pub model: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// Requests whose usage the server reported.
    pub requests: u64,
}

impl Store {
    /// Tokens per day and model, oldest day first.
    pub fn tokens_per_day(&self, filter: &TokenFilter) -> Result<Vec<DayTokens>> {
        let offset_ms = i64::from(filter.utc_offset_minutes) * 60_000;
        let mut conditions = Vec::new();
        let mut values = vec![SqlValue::Integer(offset_ms)];
        if let Some(workspace) = &filter.workspace {
            conditions.push("t.workspace_id = (SELECT id FROM workspaces WHERE path = ?)");
            values.push(SqlValue::Text(workspace.clone()));
        }
        if let Some(since) = filter.since {
            conditions.push("u.time_ms >= ?");
            values.push(SqlValue::Integer(since));
        }
        if let Some(until) = filter.until {
            conditions.push("u.time_ms < ?");
            values.push(SqlValue::Integer(until));
        }
        let scope = if conditions.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", conditions.join(" AND "))
        };
        // The offset is the first parameter: the day of a row is (local time) / day.
        let sql = format!(
            "SELECT (u.time_ms + ?1) / {DAY_MS} AS day, t.model,
                    sum(u.prompt_tokens), sum(u.completion_tokens), sum(u.total_tokens), count(*)
             FROM usage u JOIN turns t ON t.id = u.turn_id
             {scope}
             GROUP BY day, t.model
             ORDER BY day, t.model"
        );
        self.with_conn(|conn| {
            let mut statement = conn.prepare_cached(&sql)?;
            let mut rows = statement.query(params_from_iter(values))?;
            let mut days = Vec::new();
            let count = |n: i64| u64::try_from(n).unwrap_or(0);
            while let Some(row) = rows.next()? {
                let day: i64 = row.get(0)?;
                days.push(DayTokens {
                    day_start_ms: day * DAY_MS - offset_ms,
                    model: row.get(1)?,
                    prompt_tokens: count(row.get(2)?),
                    completion_tokens: count(row.get(3)?),
                    total_tokens: count(row.get(4)?),
                    requests: count(row.get(5)?),
                });
            }
            Ok(days)
        })
    }
}
