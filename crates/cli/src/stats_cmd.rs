//! `tooltrail stats`: per tool, its calls, success rate, errors, denials and durations, from
//! the audit log (the figures the app's Stats screen shows).

use std::path::PathBuf;
use std::process::ExitCode;

use tooltrail_store::{Stats, StatsFilter};

use crate::history_cmd::{open_store, parse_when, workspace_key};

#[derive(clap::Args, Debug)]
pub struct StatsArgs {
    /// Only calls made in this folder [default: every folder].
    #[arg(long, short = 'w', value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Only calls of this conversation.
    #[arg(long, short = 'c', value_name = "ID")]
    pub conversation: Option<String>,
    /// Only calls since then: a date (2026-11-01), a time (2026-11-01T09:30:00Z) or an age
    /// (30m, 12h, 7d).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Print the figures as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: StatsArgs) -> anyhow::Result<ExitCode> {
    let store = open_store()?;
    let stats = store.stats(&StatsFilter {
        workspace: args.workspace.as_deref().map(workspace_key).transpose()?,
        conversation: args.conversation.clone(),
        since: args.since.as_deref().map(parse_when).transpose()?,
        until: None,
    })?;
    if args.json {
        jsonln!("{}", serde_json::to_string_pretty(&stats)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for line in table(&stats) {
        outln!("{line}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The figures as aligned lines: a header, one line per tool, and the total.
fn table(stats: &Stats) -> Vec<String> {
    if stats.tools.is_empty() {
        return vec!["No tool calls recorded.".to_string()];
    }
    let width = stats
        .tools
        .iter()
        .map(|tool| tool.tool.chars().count())
        .max()
        .unwrap_or(4)
        .max(5);
    let mut lines = vec![format!(
        "{:<width$}  {:>6}  {:>8}  {:>6}  {:>6}  {:>9}  {:>8}  {:>8}",
        "tool", "calls", "success", "errors", "denied", "cancelled", "avg", "p95"
    )];
    for tool in &stats.tools {
        let s = &tool.statuses;
        lines.push(format!(
            "{:<width$}  {:>6}  {:>8}  {:>6}  {:>6}  {:>9}  {:>8}  {:>8}",
            tool.tool,
            tool.calls,
            percent(s.success, tool.calls),
            s.error + s.timeout,
            s.denied,
            s.cancelled,
            tool.avg_ms
                .map_or("-".to_string(), |ms| format!("{ms:.0} ms")),
            tool.p95_ms.map_or("-".to_string(), |ms| format!("{ms} ms")),
        ));
    }
    let s = &stats.statuses;
    lines.push(format!(
        "{:<width$}  {:>6}  {:>8}  {:>6}  {:>6}  {:>9}",
        "total",
        stats.total,
        percent(s.success, stats.total),
        s.error + s.timeout,
        s.denied,
        s.cancelled,
    ));
    lines
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_string();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tooltrail_store::{StatusCounts, ToolStats};

    #[test]
    fn the_table_has_a_line_per_tool_and_a_total() {
        let stats = Stats {
            total: 3,
            statuses: StatusCounts {
                success: 2,
                denied: 1,
                ..StatusCounts::default()
            },
            tools: vec![
                ToolStats {
                    tool: "read_file".into(),
                    calls: 2,
                    statuses: StatusCounts {
                        success: 2,
                        ..StatusCounts::default()
                    },
                    avg_ms: Some(1.5),
                    p95_ms: Some(2),
                },
                ToolStats {
                    tool: "execute_bash".into(),
                    calls: 1,
                    statuses: StatusCounts {
                        denied: 1,
                        ..StatusCounts::default()
                    },
                    avg_ms: None,
                    p95_ms: None,
                },
            ],
        };
        assert_eq!(
            table(&stats),
            vec![
                "tool           calls   success  errors  denied  cancelled       avg       p95",
                "read_file          2    100.0%       0       0          0      2 ms      2 ms",
                "execute_bash       1      0.0%       0       1          0         -         -",
                "total              3     66.7%       0       1          0",
            ]
        );
    }
}
