//! Exports: a conversation or a filtered history, as JSON Lines or Markdown.
//!
//! A conversation in JSON Lines is its events, one [`Event`] per line, exactly as
//! `tooltrail ask --json` prints them; [`crate::Store::import`] reads them back. A history in
//! JSON Lines is one [`HistoryRow`] per line. Markdown is for people: a conversation reads as
//! the exchange with each tool call, its arguments, decision and result; a history as one
//! section per call.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tooltrail_protocol::{
    ApprovalBy, ApprovalRecord, ElicitationAction, ElicitationRequest, Event, EventBody, Message,
    ToolMode, TurnEnd, Usage,
};

use crate::calls_page::history_page;
use crate::conversations::{ConversationSummary, summary};
use crate::cursor::MAX_LIMIT;
use crate::error::{Result, StoreError};
use crate::history::HistoryFilter;
use crate::kinds::call::HistoryRow;
use crate::replay::conversation_events;
use crate::store::Store;

/// Results longer than this are cut in Markdown (the JSON Lines export keeps them whole).
const MARKDOWN_RESULT_BYTES: usize = 16 * 1024;

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "ExportFormat")]
pub enum Format {
    Jsonl,
    Markdown,
}

impl FromStr for Format {
    type Err = StoreError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "jsonl" | "json" | "ndjson" => Ok(Self::Jsonl),
            "md" | "markdown" => Ok(Self::Markdown),
            _ => Err(StoreError::BadFormat(text.to_string())),
        }
    }
}

/// A conversation with everything an export shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationExport {
    pub summary: ConversationSummary,
    pub events: Vec<Event>,
}

/// One JSON value per line.
pub fn render_jsonl<T: Serialize>(items: &[T]) -> Result<String> {
    let mut out = String::new();
    for item in items {
        out.push_str(&serde_json::to_string(item)?);
        out.push('\n');
    }
    Ok(out)
}

/// `ms` since the Unix epoch as `2024-05-01 09:30:00 UTC`.
pub fn format_time(ms: i64) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|at| at.format(format).ok())
        .map(|text| format!("{text} UTC"))
        .unwrap_or_else(|| format!("{ms} ms"))
}

/// A fenced block that no backtick run inside `text` can close early.
fn fenced(out: &mut String, info: &str, text: &str) {
    let mut longest = 0;
    let mut run = 0;
    for ch in text.chars() {
        run = if ch == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let _ = writeln!(out, "{fence}{info}");
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}\n");
}

/// Inline code that survives backticks inside.
fn code(text: &str) -> String {
    let text = text.replace('\n', " ");
    if text.contains('`') {
        format!("`` {text} ``")
    } else {
        format!("`{text}`")
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

fn approval_text(approval: &ApprovalRecord) -> String {
    let by = match &approval.by {
        ApprovalBy::Policy => "policy (no approval needed)".to_string(),
        ApprovalBy::User => "the user".to_string(),
        ApprovalBy::Conversation => "an earlier yes in this conversation".to_string(),
        ApprovalBy::Rule { id } => format!("rule {}", code(id)),
        ApprovalBy::Setting => "a setting for the whole run".to_string(),
        ApprovalBy::Replay => "the replay (from the record, or not run)".to_string(),
    };
    let verdict = if approval.allowed {
        "allowed"
    } else {
        "denied"
    };
    match &approval.reason {
        Some(reason) if !reason.trim().is_empty() => format!("{verdict} by {by} ({reason})"),
        _ => format!("{verdict} by {by}"),
    }
}

fn turn_end_text(end: TurnEnd) -> &'static str {
    match end {
        TurnEnd::Completed => "completed",
        TurnEnd::RoundLimit => "ended at the round limit",
        TurnEnd::Cancelled => "was cancelled",
        TurnEnd::Error => "ended in an error",
    }
}

fn result_block(out: &mut String, result: &str, size: usize) {
    let shown = crate::codes::prefix(result, MARKDOWN_RESULT_BYTES);
    let _ = writeln!(out, "Result ({size} bytes):\n");
    fenced(out, "", shown);
    if shown.len() < result.len() {
        let _ = writeln!(
            out,
            "_{} more bytes are in the JSON Lines export._\n",
            result.len() - shown.len()
        );
    }
}

/// A conversation as Markdown.
pub fn render_conversation_markdown(export: &ConversationExport) -> String {
    let mut markdown = MarkdownExport::default();
    markdown.header(&export.summary);
    for event in &export.events {
        markdown.event(event);
    }
    markdown.close_turn();
    markdown.out
}

/// A conversation's Markdown as its events are read: the text so far, and what the open turn
/// has gathered that is written only when it closes.
#[derive(Default)]
struct MarkdownExport {
    out: String,
    turn_number: u32,
    /// Text streamed since the last assistant message: shown only if the turn stopped before
    /// a message said it whole.
    streamed: String,
    /// Calls started and not yet finished, by turn and call id.
    started: HashMap<(String, String), Event>,
    /// Prompt and completion tokens of the open turn.
    tokens: (u64, u64),
}

impl MarkdownExport {
    /// The title and a list of what the conversation is.
    fn header(&mut self, summary: &ConversationSummary) {
        let title = if summary.title.trim().is_empty() {
            "Untitled conversation"
        } else {
            summary.title.trim()
        };
        let out = &mut self.out;
        let _ = writeln!(out, "# {title}\n");
        let _ = writeln!(out, "- Conversation: {}", code(&summary.id));
        if let Some(workspace) = &summary.workspace {
            let _ = writeln!(out, "- Workspace: {}", code(workspace));
        }
        if let Some(model) = &summary.model {
            match &summary.provider {
                Some(provider) => {
                    let _ = writeln!(out, "- Model: {} at {}", code(model), code(provider));
                }
                None => {
                    let _ = writeln!(out, "- Model: {}", code(model));
                }
            }
        }
        let _ = writeln!(
            out,
            "- Started {}, last active {}; {} turn(s), {} tool call(s)\n",
            format_time(summary.created_ms),
            format_time(summary.updated_ms),
            summary.turns,
            summary.tool_calls
        );
    }

    /// A paragraph in italics.
    fn note(&mut self, text: &str) {
        let _ = writeln!(self.out, "_{text}_\n");
    }

    fn add_tokens(&mut self, usage: &Usage) {
        self.tokens.0 += u64::from(usage.prompt_tokens);
        self.tokens.1 += u64::from(usage.completion_tokens);
    }

    fn event(&mut self, event: &Event) {
        match &event.body {
            EventBody::TurnStarted {
                model, replay_of, ..
            } => self.turn_started(event.time_ms, model, replay_of.as_deref()),
            EventBody::MessageAdded { message } => self.message(message),
            EventBody::TextDelta { text, .. } => self.streamed.push_str(text),
            EventBody::ToolCallDelta { .. }
            | EventBody::ToolCallProgress { .. }
            | EventBody::PromptProgress { .. } => {}
            EventBody::ApprovalRequested {
                tool,
                summary,
                reason,
                ..
            } => self.note(&approval_asked_text(tool, summary, reason)),
            EventBody::UserQuestion {
                question, choices, ..
            } => self.note(&question_text(question, choices)),
            EventBody::ElicitationRequested {
                server,
                message,
                request,
                ..
            } => self.note(&elicitation_text(server, message, request)),
            EventBody::ElicitationAnswered {
                action,
                content,
                reason,
                ..
            } => self.note(&elicitation_answer_text(*action, content.as_ref(), reason.as_deref())),
            EventBody::SamplingRequested {
                server,
                messages,
                max_tokens,
                ..
            } => self.note(&sampling_asked_text(server, messages.len(), *max_tokens)),
            EventBody::SamplingAnswered {
                approved,
                text,
                usage,
                reason,
                ..
            } => self.sampling_answered(*approved, text, usage, reason),
            EventBody::ToolCallStarted { call_id, .. } => self.tool_call_started(event, call_id),
            EventBody::ToolCallFinished { .. } => self.tool_call_finished(event),
            EventBody::ToolModeUsed { mode, fell_back } => self.tool_mode(*mode, *fell_back),
            EventBody::RoundLimitReached { limit } => {
                self.note(&format!("The round limit ({limit}) was reached."));
            }
            EventBody::Usage(usage) => self.add_tokens(usage),
            // The estimate before each request; the usage the server reported says the same
            // in the export, measured.
            EventBody::ContextUsage { .. } => {}
            EventBody::AnswerTruncated { .. } => self.note(
                "The answer was cut short: the model reached its token limit or the end of its context window.",
            ),
            EventBody::RepetitionStopped {
                tool,
                repeats,
                tokens,
                ..
            } => self.note(&repetition_text(tool.as_deref(), *repeats, *tokens)),
            EventBody::Error {
                code: error_code,
                message,
                fatal,
            } => self.error(error_code, message, *fatal),
            EventBody::TurnFinished { reason, rounds, .. } => self.turn_finished(*reason, *rounds),
            EventBody::ViewOpened {
                parent_call_id,
                server,
                resource_uri,
                granted,
                ..
            } => self.note(&view_opened_text(parent_call_id, server, resource_uri, granted)),
            EventBody::ViewClosed { reason } => {
                self.note(&format!("The view was closed ({}).", reason.as_str()));
            }
        }
    }

    fn turn_started(&mut self, time_ms: i64, model: &str, replay_of: Option<&str>) {
        if self.turn_number > 0 {
            self.close_turn();
        }
        self.turn_number += 1;
        let _ = writeln!(
            self.out,
            "## Turn {} — {} ({})\n",
            self.turn_number,
            format_time(time_ms),
            code(model)
        );
        if let Some(original) = replay_of {
            self.note(&format!(
                "A replay of turn {} with another model: calls that could change something were not run again.",
                code(original)
            ));
        }
    }

    fn message(&mut self, message: &Message) {
        match message {
            Message::System { .. } | Message::Tool { .. } => {}
            Message::User { content } => {
                let quoted = content.lines().collect::<Vec<_>>().join("\n> ");
                let _ = writeln!(self.out, "> **You:** {quoted}\n");
            }
            Message::Assistant { content, .. } => {
                self.streamed.clear();
                if !content.trim().is_empty() {
                    let _ = writeln!(self.out, "{}\n", content.trim());
                }
            }
        }
    }

    fn tool_mode(&mut self, mode: ToolMode, fell_back: bool) {
        if fell_back {
            self.note(&format!(
                "The server refused native tools; they were offered in {mode} mode."
            ));
        }
    }

    fn sampling_answered(
        &mut self,
        approved: bool,
        text: &Option<String>,
        usage: &Option<Usage>,
        reason: &Option<String>,
    ) {
        if let Some(usage) = usage {
            self.add_tokens(usage);
        }
        match (approved, text, reason) {
            (true, Some(text), _) => {
                let _ = writeln!(self.out, "_The model answered the server:_ {text}\n");
            }
            (_, _, Some(reason)) => {
                self.note(&format!("The server's request was not run: {reason}"))
            }
            _ => self.note("The server's request was not run."),
        }
    }

    /// Kept until the call finishes; shown as interrupted if the turn closes first.
    fn tool_call_started(&mut self, event: &Event, call_id: &str) {
        let key = (event.turn_id.clone(), call_id.to_string());
        self.started.insert(key, event.clone());
    }

    /// A finished call: its heading, approval, arguments, and its error or result. `event`
    /// calls it only with a finished call; the fields are taken here to keep that match short.
    fn tool_call_finished(&mut self, event: &Event) {
        let EventBody::ToolCallFinished {
            call_id,
            tool,
            source,
            arguments,
            status,
            duration_ms,
            result,
            error,
            approval,
            view,
            ..
        } = &event.body
        else {
            return;
        };
        self.started
            .remove(&(event.turn_id.clone(), call_id.clone()));
        // A view's calls are made by no round of the model's; the note before them says so.
        let from = match source {
            tooltrail_protocol::ToolSource::Builtin => String::new(),
            tooltrail_protocol::ToolSource::Mcp { server } => {
                format!(" from MCP server {}", code(server))
            }
        };
        let out = &mut self.out;
        let _ = writeln!(
            out,
            "### {}{from} — {}, {duration_ms} ms\n",
            code(tool),
            status.as_str()
        );
        let _ = writeln!(out, "Approval: {}.\n", approval_text(approval));
        if let Some(view) = view {
            let _ = writeln!(out, "Has a view: {}.\n", code(&view.resource_uri));
        }
        fenced(out, "json", &pretty(arguments));
        if let Some(error) = error {
            let _ = writeln!(
                out,
                "Error {}: {}\n",
                code(error.code.as_str()),
                error.message
            );
        }
        if !result.is_empty() && error.is_none() {
            result_block(out, result, result.len());
        }
    }

    fn error(&mut self, error_code: &tooltrail_protocol::ErrorCode, message: &str, fatal: bool) {
        let kind = if fatal { "Error" } else { "Warning" };
        let name = serde_json::to_value(error_code)
            .ok()
            .and_then(|value| value.as_str().map(str::to_string))
            .unwrap_or_default();
        let _ = writeln!(self.out, "> **{kind}** ({}): {message}\n", code(&name));
    }

    fn turn_finished(&mut self, reason: TurnEnd, rounds: u32) {
        self.close_turn();
        self.note(&format!(
            "The turn {} after {rounds} model call(s).",
            turn_end_text(reason)
        ));
    }

    /// What the turn left unsaid: text streamed with no message after it, calls that never
    /// finished, and the tokens it used.
    fn close_turn(&mut self) {
        if !self.streamed.trim().is_empty() {
            let _ = writeln!(
                self.out,
                "_Streamed before the turn stopped:_\n\n{}\n",
                self.streamed.trim()
            );
        }
        self.streamed.clear();
        let mut open: Vec<Event> = self.started.drain().map(|(_, event)| event).collect();
        open.sort_by_key(|event| event.seq);
        for event in open {
            if let EventBody::ToolCallStarted {
                tool, arguments, ..
            } = &event.body
            {
                let _ = writeln!(
                    self.out,
                    "### {} — interrupted\n\nStarted {}; no result was recorded.\n",
                    code(tool),
                    format_time(event.time_ms)
                );
                fenced(&mut self.out, "json", &pretty(arguments));
            }
        }
        let (prompt, completion) = self.tokens;
        if prompt + completion > 0 {
            self.note(&format!(
                "Tokens: {prompt} prompt, {completion} completion."
            ));
        }
        self.tokens = (0, 0);
    }
}

fn approval_asked_text(tool: &str, summary: &str, reason: &str) -> String {
    format!(
        "Approval asked for {}: {} — {reason}",
        code(tool),
        code(summary)
    )
}

fn sampling_asked_text(server: &str, messages: usize, max_tokens: u32) -> String {
    format!(
        "The MCP server {} asked to use the model ({messages} message(s), at most {max_tokens} tokens).",
        code(server)
    )
}

fn question_text(question: &str, choices: &[String]) -> String {
    let offered = if choices.is_empty() {
        String::new()
    } else {
        let choices: Vec<String> = choices.iter().map(|c| code(c)).collect();
        format!(" (choices: {})", choices.join(", "))
    };
    format!("Asked the user: {question}{offered}")
}

fn elicitation_text(server: &str, message: &str, request: &ElicitationRequest) -> String {
    let what = match request {
        ElicitationRequest::Form { fields } => {
            let names: Vec<String> = fields.iter().map(|f| code(&f.name)).collect();
            format!("a form ({})", names.join(", "))
        }
        ElicitationRequest::Url { url } => format!("to open {}", code(url)),
    };
    format!(
        "The MCP server {} asked the user for {what}: {message}",
        code(server)
    )
}

fn elicitation_answer_text(
    action: ElicitationAction,
    content: Option<&Value>,
    reason: Option<&str>,
) -> String {
    let given = content
        .map(|content| format!(" with {}", code(&content.to_string())))
        .unwrap_or_default();
    let why = reason
        .map(|reason| format!(" ({reason})"))
        .unwrap_or_default();
    format!("Answered {}{given}{why}.", action.as_str())
}

/// The protocol's sentence, begun with a capital as a paragraph of its own.
fn repetition_text(tool: Option<&str>, repeats: u32, tokens: u32) -> String {
    let sentence = tooltrail_protocol::repetition_sentence(tool, repeats, tokens);
    let mut letters = sentence.chars();
    let capitalised: String = letters
        .next()
        .map(|first| first.to_uppercase().chain(letters).collect())
        .unwrap_or_default();
    format!("{capitalised}.")
}

/// A history of calls as Markdown.
pub fn render_history_markdown(rows: &[HistoryRow]) -> String {
    let mut out = String::from("# Tool calls\n\n");
    if rows.is_empty() {
        out.push_str("No calls matched.\n");
    }
    for row in rows {
        let duration = row
            .duration_ms
            .map(|ms| format!(", {ms} ms"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "## {} — {}{duration} — {}\n",
            code(&row.tool),
            row.status,
            format_time(row.started_ms)
        );
        let _ = writeln!(
            out,
            "- Call {} ({}), round {} of turn {} in conversation {}",
            code(&row.call_id),
            code(&row.id),
            row.round,
            code(&row.turn_id),
            code(&row.conversation_id)
        );
        if let Some(workspace) = &row.workspace {
            let _ = writeln!(out, "- Workspace {}", code(workspace));
        }
        let _ = writeln!(out, "- Approval: {}", approval_text(&row.approval));
        if let Some(error) = &row.error {
            let _ = writeln!(
                out,
                "- Error {}: {}",
                code(error.code.as_str()),
                error.message
            );
        }
        out.push('\n');
        fenced(&mut out, "json", &pretty(&row.arguments));
        if !row.result_preview.is_empty() {
            let complete = row.preview_is_complete();
            let label = if complete {
                "Result"
            } else {
                "Result, first bytes"
            };
            let _ = writeln!(out, "{label} ({} bytes):\n", row.result_size);
            fenced(&mut out, "", &row.result_preview);
        }
    }
    out
}

impl Store {
    /// Writes conversation `id` to `out`.
    pub fn export_conversation(&self, id: &str, format: Format, out: &mut dyn Write) -> Result<()> {
        let export = self.with_conn(|conn| {
            Ok(ConversationExport {
                summary: summary(conn, id)?,
                events: conversation_events(conn, id)?,
            })
        })?;
        let text = match format {
            Format::Jsonl => render_jsonl(&export.events)?,
            Format::Markdown => render_conversation_markdown(&export),
        };
        out.write_all(text.as_bytes()).map_err(StoreError::Write)
    }

    /// Writes every call matching `filter` (from its cursor on, ignoring its page size) to
    /// `out`, page by page. Returns how many.
    pub fn export_history(
        &self,
        filter: &HistoryFilter,
        format: Format,
        out: &mut dyn Write,
    ) -> Result<u64> {
        let mut filter = HistoryFilter {
            limit: MAX_LIMIT,
            ..filter.clone()
        };
        let mut written = 0u64;
        if format == Format::Markdown {
            out.write_all(b"# Tool calls\n\n")
                .map_err(StoreError::Write)?;
        }
        loop {
            let page = self.with_conn(|conn| history_page(conn, &filter))?;
            let text = match format {
                Format::Jsonl => render_jsonl(&page.items)?,
                Format::Markdown => render_history_markdown(&page.items)
                    .trim_start_matches("# Tool calls\n\n")
                    .trim_start_matches("No calls matched.\n")
                    .to_string(),
            };
            out.write_all(text.as_bytes()).map_err(StoreError::Write)?;
            written += page.items.len() as u64;
            match page.next {
                Some(next) => filter.before = Some(next),
                None => break,
            }
        }
        if format == Format::Markdown && written == 0 {
            out.write_all(b"No calls matched.\n")
                .map_err(StoreError::Write)?;
        }
        Ok(written)
    }
}

/// What the export says when a call's view was shown; the calls after it, up to its close,
/// are the view's.
fn view_opened_text(parent: &str, server: &str, resource_uri: &str, granted: &[String]) -> String {
    let mut text = format!(
        "The view {} of MCP server {} was shown for call {}; the calls below up to its close were made by the view.",
        code(resource_uri),
        code(server),
        code(parent)
    );
    if !granted.is_empty() {
        text.push_str(&format!(" Granted: {}.", granted.join(", ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn fences_outgrow_backticks_inside() {
        let mut out = String::new();
        fenced(&mut out, "", "a ```` b");
        assert!(out.starts_with("`````\n"), "{out}");
    }

    #[test]
    fn times_print_in_utc() {
        assert_eq!(format_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_time(1_714_555_800_000), "2024-05-01 09:30:00 UTC");
    }

    #[test]
    fn formats_parse() {
        assert_eq!("md".parse::<Format>().unwrap(), Format::Markdown);
        assert_eq!("JSONL".parse::<Format>().unwrap(), Format::Jsonl);
        assert!("csv".parse::<Format>().is_err());
    }
}
