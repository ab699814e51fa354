//! One page of the tool-call log: a ranked search's best-first page (rank.rs) or a walk down
//! an index (history.rs). The choice lives here, so that ranking builds on the log's rows and
//! filters while the walk knows nothing of ranking.

use rusqlite::Connection;

use crate::cursor::Page;
use crate::error::Result;
use crate::history::{self, HistoryFilter};
use crate::kinds::call::HistoryRow;
use crate::rank;
use crate::store::Store;

/// One page of `filter`'s calls: ranked when it asks for a ranked search.
pub(crate) fn history_page(conn: &Connection, filter: &HistoryFilter) -> Result<Page<HistoryRow>> {
    if filter.ranked && filter.search.is_some() {
        return rank::ranked_page(conn, filter);
    }
    history::walk_page(conn, filter)
}

impl Store {
    /// One page of recorded tool calls matching `filter`.
    pub fn history(&self, filter: &HistoryFilter) -> Result<Page<HistoryRow>> {
        self.with_conn(|conn| history_page(conn, filter))
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::params_from_iter;
    use rusqlite::types::Value as SqlValue;

    use super::*;
    use crate::cursor::{Cursor, Key};
    use crate::history::page_query;
    use crate::search;
    use crate::status::CallStatus;

    fn plan(conn: &Connection, sql: &str, values: Vec<SqlValue>) -> String {
        let mut statement = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let rows = statement
            .query_map(params_from_iter(values), |row| row.get::<_, String>(3))
            .unwrap();
        rows.map(Result::unwrap).collect::<Vec<_>>().join("\n")
    }

    /// Every history query walks an index and stops: no full scans of the log, no sorting.
    #[test]
    fn every_filter_walks_an_index() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("db.sqlite3")).unwrap();
        let before = |key| Some(Cursor(key));
        let time_key = Key::Time { time_ms: 5, id: 9 };
        let filters = [
            HistoryFilter::default(),
            HistoryFilter {
                before: before(time_key),
                ..Default::default()
            },
            HistoryFilter {
                conversation: Some("c".into()),
                before: before(time_key),
                ..Default::default()
            },
            HistoryFilter {
                workspace: Some("/w".into()),
                ..Default::default()
            },
            HistoryFilter {
                tool: Some("grep".into()),
                since: Some(1),
                until: Some(2),
                ..Default::default()
            },
            HistoryFilter {
                status: Some(CallStatus::Error),
                ..Default::default()
            },
            HistoryFilter {
                status: Some(CallStatus::Running),
                workspace: Some("/w".into()),
                ..Default::default()
            },
            HistoryFilter {
                status: Some(CallStatus::Success),
                ..Default::default()
            },
            HistoryFilter {
                since: Some(1),
                ..Default::default()
            },
            HistoryFilter {
                search: Some("parser".into()),
                before: before(Key::Id(7)),
                status: Some(CallStatus::Error),
                ..Default::default()
            },
            HistoryFilter {
                search: Some("parser".into()),
                conversation: Some("c".into()),
                ..Default::default()
            },
            HistoryFilter {
                search: Some("parser".into()),
                ranked: true,
                ..Default::default()
            },
            HistoryFilter {
                search: Some("parser".into()),
                ranked: true,
                conversation: Some("c".into()),
                before: before(Key::Offset(50)),
                ..Default::default()
            },
        ];
        store
            .with_conn(|conn| {
                for filter in &filters {
                    let (sql, values) = if filter.ranked {
                        let fts = search::fts_query(filter.search.as_deref().unwrap_or("x"))?;
                        rank::candidates_query(filter, &fts)
                    } else {
                        let (sql, values, _) = page_query(filter)?;
                        (sql, values)
                    };
                    let plan = plan(conn, &sql, values);
                    let scans_log = plan.lines().any(|line| {
                        line.trim() == "SCAN c"
                            || line.contains("SCAN c USING INDEX tool_calls_by_status")
                    });
                    assert!(!scans_log, "{filter:?} scans the log:\n{plan}");
                    assert!(!plan.contains("TEMP B-TREE"), "{filter:?} sorts:\n{plan}");

                    assert!(
                        plan.contains("SEARCH c USING")
                            || plan.contains("SCAN c USING INDEX tool_calls_by_time")
                            || plan.contains("VIRTUAL TABLE"),
                        "{filter:?}:\n{plan}"
                    );
                    if filter.status == Some(CallStatus::Error) && filter.search.is_none() {
                        assert!(plan.contains("tool_calls_by_status"), "{plan}");
                    }
                }
                let running = plan(
                    conn,
                    "SELECT id FROM tool_calls WHERE status = 'running' AND status <> 'success'
                     AND turn_id = 1 AND round = 1 AND call_id = 'x'",
                    Vec::new(),
                );
                assert!(running.contains("tool_calls_by_status"), "{running}");
                Ok(())
            })
            .unwrap();
    }
}
