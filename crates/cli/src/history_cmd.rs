//! `tooltrail history`, `conversations`, `export`, `delete` and `vacuum`: the record of past
//! turns, read from the store.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use tooltrail_store::{
    CallStatus, ConversationFilter, Cursor, Format, HistoryFilter, HistoryRow, Store,
};

use crate::render::summarize_arguments;

/// Filters shared by `history` and `export`.
#[derive(clap::Args, Debug, Default)]
pub struct FilterArgs {
    /// Only calls made in this folder.
    #[arg(long, short = 'w', value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Only calls of this conversation.
    #[arg(long, short = 'c', value_name = "ID")]
    pub conversation: Option<String>,
    /// Only calls of this tool.
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,
    /// Only calls that ended so: success, error, denied, cancelled, timeout (or running).
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,
    /// Only calls since then: a date (2026-11-01), a time (2026-11-01T09:30:00Z) or an age
    /// (30m, 12h, 7d).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only calls whose tool, arguments, result or error contain these words.
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// With --search: best matches first instead of newest first.
    #[arg(long)]
    pub ranked: bool,
}

impl FilterArgs {
    pub(crate) fn to_filter(&self) -> anyhow::Result<HistoryFilter> {
        let status = match &self.status {
            Some(text) => Some(text.parse::<CallStatus>().map_err(|_| {
                anyhow::anyhow!(
                    "unknown status {text:?}; use success, error, denied, cancelled, timeout or running"
                )
            })?),
            None => None,
        };
        Ok(HistoryFilter {
            workspace: self.workspace.as_deref().map(workspace_key).transpose()?,
            conversation: self.conversation.clone(),
            tool: self.tool.clone(),
            status,
            since: self.since.as_deref().map(parse_when).transpose()?,
            search: self.search.clone(),
            ranked: self.ranked,
            ..HistoryFilter::default()
        })
    }
}

/// Paging and output options of the listings.
#[derive(clap::Args, Debug)]
pub struct PageArgs {
    /// Rows to show (at most 1000).
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// Show the page after this cursor (printed under the previous page).
    #[arg(long, value_name = "CURSOR")]
    pub before: Option<String>,
    /// Print the page as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(clap::Args, Debug)]
pub struct ConversationsArgs {
    /// Only conversations about this folder.
    #[arg(long, short = 'w', value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// `jsonl` (one event or call per line) or `md` (Markdown).
    #[arg(long, default_value = "md", value_name = "FORMAT")]
    pub format: String,
    /// Write to this file instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Send the questions as OpenTelemetry traces to the collector telemetry is set up for
    /// (OTEL_EXPORTER_OTLP_ENDPOINT or [telemetry] in config.toml), instead of writing a file.
    #[arg(long, conflicts_with_all = ["format", "output"])]
    pub otlp: bool,
}

/// The store at its default place (`TOOLTRAIL_DATA_DIR` overrides it).
pub fn open_store() -> anyhow::Result<Store> {
    Store::open_default().context("could not open the history database")
}

pub fn history(args: HistoryArgs) -> anyhow::Result<ExitCode> {
    let store = open_store()?;
    let filter = HistoryFilter {
        limit: args.page.limit,
        before: args.page.before.as_deref().map(parse_cursor).transpose()?,
        ..args.filter.to_filter()?
    };
    let page = store.history(&filter)?;
    let mut out = crate::terminal::stdout_for(args.page.json);
    if args.page.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&page)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if page.items.is_empty() {
        writeln!(out, "No tool calls match.")?;
    }
    for row in &page.items {
        writeln!(out, "{}", history_line(row))?;
    }
    if let Some(next) = page.next {
        writeln!(out, "… more: tooltrail history --before {next}")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn history_line(row: &HistoryRow) -> String {
    let duration = match row.duration_ms {
        Some(ms) => format!("{ms} ms"),
        None => "—".to_string(),
    };
    let mut line = format!(
        "{}  {:<9} {:>8}  {:<14} {}",
        short_time(row.started_ms),
        row.status.as_str(),
        duration,
        row.tool,
        summarize_arguments(&row.arguments, 60),
    );
    if let Some(error) = &row.error {
        line.push_str(&format!(" — {}", error.message));
    }
    if let Some(parent) = &row.view_of {
        line.push_str(&format!("  ⧉ from the view of {parent}"));
    } else if let Some(view) = &row.view {
        line.push_str(&format!("  ⧉ view {}", view.resource_uri));
    }
    line.push_str(&format!("  [{} {}]", row.conversation_id, row.id));
    line
}

pub fn conversations(args: ConversationsArgs) -> anyhow::Result<ExitCode> {
    let store = open_store()?;
    let page = store.conversations(&ConversationFilter {
        workspace: args.workspace.as_deref().map(workspace_key).transpose()?,
        limit: args.page.limit,
        before: args.page.before.as_deref().map(parse_cursor).transpose()?,
    })?;
    let mut out = crate::terminal::stdout_for(args.page.json);
    if args.page.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&page)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if page.items.is_empty() {
        writeln!(out, "No conversations yet.")?;
    }
    for conversation in &page.items {
        writeln!(
            out,
            "{}  {}  {} turn(s), {} tool call(s){}  {}",
            short_time(conversation.updated_ms),
            conversation.id,
            conversation.turns,
            conversation.tool_calls,
            if conversation.running {
                ", running"
            } else {
                ""
            },
            conversation.title,
        )?;
    }
    if let Some(next) = page.next {
        writeln!(out, "… more: tooltrail conversations --before {next}")?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let format = match args.format.as_str() {
        "md" | "markdown" => Format::Markdown,
        "jsonl" | "json" => Format::Jsonl,
        other => bail!("unknown format {other:?}; use jsonl or md"),
    };
    let jsonl = matches!(format, Format::Jsonl);
    let store = open_store()?;
    let mut buffer = Vec::new();
    let only_conversation = args.filter.conversation.is_some()
        && args.filter.tool.is_none()
        && args.filter.status.is_none()
        && args.filter.since.is_none()
        && args.filter.search.is_none()
        && args.filter.workspace.is_none();
    match (&args.filter.conversation, only_conversation) {
        (Some(id), true) => store.export_conversation(id, format, &mut buffer)?,
        _ => {
            store.export_history(&args.filter.to_filter()?, format, &mut buffer)?;
        }
    }
    match &args.output {
        Some(path) => std::fs::write(path, &buffer)
            .with_context(|| format!("could not write {}", path.display()))?,
        None => crate::terminal::stdout_for(jsonl).write_all(&buffer)?,
    }
    Ok(ExitCode::SUCCESS)
}

pub fn delete(id: &str) -> anyhow::Result<ExitCode> {
    let store = open_store()?;
    store.delete_conversation(id)?;
    outln!("Deleted conversation {id} and its tool calls.")?;
    Ok(ExitCode::SUCCESS)
}

pub fn vacuum() -> anyhow::Result<ExitCode> {
    let store = open_store()?;
    let report = store.vacuum()?;
    outln!(
        "The history database went from {} to {}.",
        human_bytes(report.bytes_before),
        human_bytes(report.bytes_after)
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Workspaces are recorded by their canonical path.
pub fn workspace_key(dir: &Path) -> anyhow::Result<String> {
    let canonical = dir
        .canonicalize()
        .with_context(|| format!("the folder {} does not exist", dir.display()))?;
    Ok(canonical.display().to_string())
}

fn parse_cursor(text: &str) -> anyhow::Result<Cursor> {
    text.parse::<Cursor>()
        .map_err(|_| anyhow::anyhow!("{text:?} is not a cursor printed by tooltrail"))
}

/// A date, a time, or an age such as `12h`, as milliseconds since the epoch.
pub fn parse_when(text: &str) -> anyhow::Result<i64> {
    let text = text.trim();
    let now = OffsetDateTime::now_utc();
    if let Some((number, unit)) = text
        .find(|c: char| !c.is_ascii_digit())
        .filter(|&at| at > 0)
        .map(|at| text.split_at(at))
        && let Ok(amount) = number.parse::<i64>()
    {
        let seconds = match unit {
            "s" => Some(amount),
            "m" | "min" => Some(amount * 60),
            "h" => Some(amount * 3600),
            "d" => Some(amount * 86_400),
            "w" => Some(amount * 7 * 86_400),
            _ => None,
        };
        if let Some(seconds) = seconds {
            let then = now - time::Duration::seconds(seconds);
            return Ok(millis(then));
        }
    }
    if let Ok(moment) = OffsetDateTime::parse(text, &Rfc3339) {
        return Ok(millis(moment));
    }
    let date_format = format_description!("[year]-[month]-[day]");
    if let Ok(date) = time::Date::parse(text, &date_format) {
        return Ok(millis(date.midnight().assume_utc()));
    }
    bail!(
        "{text:?} is not a date (2026-11-01), a time (2026-11-01T09:30:00Z) or an age (30m, 12h, 7d)"
    )
}

fn millis(moment: OffsetDateTime) -> i64 {
    i64::try_from(moment.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

/// `2026-11-22 04:10:03`, in UTC.
fn short_time(ms: i64) -> String {
    let format = format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|moment| moment.format(&format).ok())
        .unwrap_or_else(|| ms.to_string())
}

fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn dates_times_and_ages_parse() {
        assert_eq!(parse_when("2026-11-01").unwrap(), 1_793_491_200_000);
        assert_eq!(
            parse_when("2026-11-01T09:30:00Z").unwrap(),
            1_793_525_400_000
        );
        let now = millis(OffsetDateTime::now_utc());
        let day_ago = parse_when("1d").unwrap();
        assert!((now - day_ago - 86_400_000).abs() < 5_000);
        assert!(
            parse_when("yesterday")
                .unwrap_err()
                .to_string()
                .contains("is not a date")
        );
        assert!(parse_when("5x").is_err());
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KB");
        assert_eq!(human_bytes(5 * 1024 * 1024), "5.0 MB");
    }

    #[test]
    fn a_line_says_which_call_has_a_view_and_which_a_view_made() {
        let row = |view: Option<&str>, view_of: Option<&str>| HistoryRow {
            id: "tc_9".into(),
            conversation_id: "conv_1".into(),
            turn_id: "turn_1".into(),
            workspace: None,
            call_id: "call_1".into(),
            round: 1,
            tool: "basic__get-time".into(),
            source: tooltrail_protocol::ToolSource::Mcp {
                server: "basic".into(),
            },
            description: String::new(),
            arguments: serde_json::json!({}),
            started_ms: 0,
            duration_ms: Some(3),
            status: CallStatus::Success,
            error: None,
            result_preview: String::new(),
            result_size: 0,
            truncated_for_model: false,
            approval: tooltrail_protocol::ApprovalRecord::not_needed(),
            view: view.map(|uri| tooltrail_protocol::ViewLink {
                resource_uri: uri.into(),
            }),
            view_of: view_of.map(str::to_string),
        };
        let opened = history_line(&row(Some("ui://get-time/mcp-app.html"), None));
        assert!(
            opened.contains("  ⧉ view ui://get-time/mcp-app.html  [conv_1 tc_9]"),
            "{opened}"
        );
        let made = history_line(&row(Some("ui://get-time/mcp-app.html"), Some("tc_8")));
        assert!(
            made.contains("  ⧉ from the view of tc_8  [conv_1 tc_9]"),
            "{made}"
        );
        assert!(!history_line(&row(None, None)).contains('⧉'));
    }
}
