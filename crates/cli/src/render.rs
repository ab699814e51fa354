//! Printing a turn: JSON Lines for programs, a terminal timeline for people. Both go through
//! [`crate::terminal`], so nothing the model, a tool or a server says reaches the terminal as a
//! control character; the timeline's colours are [`Style`]s.

use std::io::Write;
use std::sync::Mutex;

use serde_json::Value;
use tooltrail_host::EventSink;
use tooltrail_protocol::{Event, EventBody, ToolMode, ToolStatus, TurnEnd};

use crate::terminal::{Painted, Style};

/// One protocol event per line on stdout.
pub struct JsonLines;

impl EventSink for JsonLines {
    fn emit(&self, event: Event) {
        let mut out = crate::terminal::json();
        // A closed stdout (a pipe to `head`) is not an error worth reporting mid-turn.
        if let Ok(line) = serde_json::to_string(&event) {
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }
}

/// The answer as it streams, with one line per tool call.
pub struct Timeline {
    state: Mutex<LineState>,
}

#[derive(Default)]
struct LineState {
    /// Whether the cursor is at the start of a line.
    at_line_start: bool,
}

impl Timeline {
    pub fn new() -> Self {
        Self {
            state: Mutex::new(LineState {
                at_line_start: true,
            }),
        }
    }

    /// Prints `line` on a line of its own.
    fn line(&self, state: &mut LineState, line: &Painted) {
        let mut out = crate::terminal::out();
        if !state.at_line_start {
            let _ = writeln!(out);
        }
        let _ = out.painted(line);
        let _ = writeln!(out);
        let _ = out.flush();
        state.at_line_start = true;
    }
}

impl EventSink for Timeline {
    fn emit(&self, event: Event) {
        let mut state = match self.state.lock() {
            Ok(state) => state,
            Err(poisoned) => poisoned.into_inner(),
        };
        match event.body {
            EventBody::TextDelta { text, .. } => {
                if text.is_empty() {
                    return;
                }
                let mut out = crate::terminal::out();
                let _ = write!(out, "{text}");
                let _ = out.flush();
                state.at_line_start = text.ends_with('\n');
            }
            EventBody::ToolCallFinished {
                tool,
                arguments,
                status,
                duration_ms,
                error,
                view,
                approval,
                ..
            } => {
                let mut line = finished_call(&tool, &arguments, status, duration_ms, error);
                if approval.by == tooltrail_protocol::ApprovalBy::Replay && approval.allowed {
                    line = line.and(Some(Style::Dim), " · from the record, not run again");
                }
                self.line(&mut state, &line);
                if let Some(view) = view {
                    let line = Painted::styled(
                        Style::Dim,
                        format!(
                            "  ⧉ has a view: {} (open the conversation in the app to use it)",
                            view.resource_uri
                        ),
                    );
                    self.line(&mut state, &line);
                }
            }
            EventBody::PromptProgress {
                processed,
                total,
                cached,
                elapsed_ms,
                ..
            } => crate::waiting::progress(processed, total, cached, elapsed_ms),
            EventBody::TurnFinished { reason, .. } => {
                if reason == TurnEnd::Cancelled {
                    self.line(&mut state, &Painted::styled(Style::Yellow, "· stopped"));
                } else if !state.at_line_start {
                    let mut out = crate::terminal::out();
                    let _ = writeln!(out);
                    let _ = out.flush();
                    state.at_line_start = true;
                }
            }
            body => {
                if let Some((style, text)) = note(body) {
                    self.line(&mut state, &Painted::styled(style, text));
                }
            }
        }
    }
}

/// A finished call's line: its mark, tool, arguments, status, time and error.
fn finished_call(
    tool: &str,
    arguments: &Value,
    status: ToolStatus,
    duration_ms: u64,
    error: Option<tooltrail_protocol::ToolError>,
) -> Painted {
    let (mark, style) = match status {
        ToolStatus::Success => ("✓", Style::Green),
        ToolStatus::Error => ("✗", Style::Red),
        ToolStatus::Denied => ("⊘", Style::Yellow),
        ToolStatus::Cancelled => ("◼", Style::Yellow),
        ToolStatus::Timeout => ("⏱", Style::Red),
    };
    let line = Painted::styled(style, mark)
        .and(None, " ")
        .and(Some(Style::Bold), tool)
        .and(None, format!(" {}", summarize_arguments(arguments, 80)))
        .and(
            Some(Style::Dim),
            format!(" · {} · {}", status.as_str(), duration(duration_ms)),
        );
    match error {
        Some(error) => line.and(Some(style), format!(" — {}", error.message)),
        None => line,
    }
}

/// The line a turn's note prints, with its colour: dim for what is only said, yellow for what
/// changed the answer. `None` for what the timeline does not print.
fn note(body: EventBody) -> Option<(Style, String)> {
    match body {
        // Native calls are the usual case; only say so when tools went another way.
        EventBody::ToolModeUsed { mode, fell_back } => match (mode, fell_back) {
            (ToolMode::Native, _) => None,
            (_, true) => Some((
                Style::Dim,
                format!("· the server refused native tools; offering them in {mode} mode"),
            )),
            (_, false) => Some((Style::Dim, format!("· tools offered in {mode} mode"))),
        },
        EventBody::RoundLimitReached { limit } => Some((
            Style::Yellow,
            format!("· the limit of {limit} tool rounds is reached; asking for a final answer"),
        )),
        EventBody::AnswerTruncated { .. } => Some((
            Style::Yellow,
            "· the answer was cut short: the model reached its token limit or the end of its context window"
                .to_string(),
        )),
        EventBody::RepetitionStopped {
            tool,
            repeats,
            tokens,
            ..
        } => {
            let sentence =
                tooltrail_protocol::repetition_sentence(tool.as_deref(), repeats, tokens);
            Some((Style::Yellow, format!("· {sentence}")))
        }
        EventBody::Error {
            message,
            fatal: false,
            ..
        } => Some((Style::Yellow, format!("· {message}"))),
        EventBody::ToolCallProgress {
            tool,
            task: Some(task),
            ..
        } => Some((Style::Dim, task_line(&tool, task))),
        EventBody::ElicitationAnswered {
            server,
            action,
            reason,
            ..
        } => {
            let why = reason.map(|reason| format!(" ({reason})")).unwrap_or_default();
            let action = match action {
                tooltrail_protocol::ElicitationAction::Accept => "given",
                tooltrail_protocol::ElicitationAction::Decline => "declined",
                tooltrail_protocol::ElicitationAction::Cancel => "cancelled",
            };
            Some((Style::Dim, format!("· {server} asked for input: {action}{why}")))
        }
        EventBody::SamplingAnswered {
            server,
            approved,
            usage,
            reason,
            ..
        } => {
            let text = match (approved, usage, reason) {
                (true, Some(usage), _) => format!(
                    "· {server} used the model ({} tokens)",
                    usage.total_tokens
                ),
                (true, None, _) => format!("· {server} used the model"),
                (false, _, Some(reason)) => {
                    format!("· {server} asked to use the model: declined ({reason})")
                }
                (false, _, None) => format!("· {server} asked to use the model: declined"),
            };
            Some((Style::Dim, text))
        }
        // Printed by `emit` itself.
        EventBody::TextDelta { .. }
        | EventBody::ToolCallFinished { .. }
        | EventBody::TurnFinished { .. }
        // Fatal errors are printed by the command once the turn is over (to stderr).
        | EventBody::Error { fatal: true, .. }
        | EventBody::TurnStarted { .. }
        // Views open only in the app's window.
        | EventBody::ViewOpened { .. }
        | EventBody::ViewClosed { .. }
        | EventBody::MessageAdded { .. }
        | EventBody::ToolCallDelta { .. }
        | EventBody::ApprovalRequested { .. }
        // The question is asked (and shown) by the command line's asker.
        | EventBody::UserQuestion { .. }
        // Shown by the command line's prompt, which asks on a terminal.
        | EventBody::ElicitationRequested { .. }
        | EventBody::SamplingRequested { .. }
        | EventBody::ToolCallStarted { .. }
        | EventBody::ToolCallProgress { task: None, .. }
        | EventBody::PromptProgress { .. }
        | EventBody::ContextUsage { .. }
        | EventBody::Usage(_) => None,
    }
}

/// The line of each change of the state of a call the MCP server runs as a task, with the
/// server's words (a task may run for minutes).
fn task_line(tool: &str, task: tooltrail_protocol::TaskProgress) -> String {
    let state = match task.status {
        tooltrail_protocol::TaskStatus::Working => "working",
        tooltrail_protocol::TaskStatus::InputRequired => "needs your answer",
        tooltrail_protocol::TaskStatus::Completed => "done",
        tooltrail_protocol::TaskStatus::Failed => "failed",
        tooltrail_protocol::TaskStatus::Cancelled => "cancelled",
    };
    let words = task
        .message
        .map(|message| format!(": {message}"))
        .unwrap_or_default();
    format!("· {tool} task {state}{words}")
}

/// A file change as the approval prompt prints it (on stderr): the unified diff with line
/// numbers, coloured where stderr shows colours.
pub fn diff(change: &tooltrail_protocol::FileChange) -> Painted {
    let mut out = Painted::default();
    for line in change.unified().lines() {
        let style = match line.trim_start_matches(|c: char| c.is_ascii_digit() || c == ' ') {
            _ if line.starts_with("---") || line.starts_with("+++") => Some(Style::Bold),
            _ if line.starts_with("@@") => Some(Style::Cyan),
            rest if rest.starts_with('+') && line.starts_with(' ') => Some(Style::Green),
            rest if rest.starts_with('-') && line.starts_with(' ') => Some(Style::Red),
            _ => None,
        };
        out = out.and(None, "    ").and(style, line).and(None, "\n");
    }
    out
}

fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// `key=value` pairs of a call's arguments, shortened to about `max` characters.
pub fn summarize_arguments(arguments: &Value, max: usize) -> String {
    let text = match arguments {
        Value::Object(map) => map
            .iter()
            .map(|(key, value)| format!("{key}={}", short_value(value)))
            .collect::<Vec<_>>()
            .join(" "),
        Value::String(raw) => short_value(&Value::String(raw.clone())),
        other => other.to_string(),
    };
    shorten(&text, max)
}

fn short_value(value: &Value) -> String {
    match value {
        Value::String(text) => {
            let text = shorten(&text.replace('\n', "⏎"), 48);
            if text.is_empty() || text.contains(char::is_whitespace) || text.contains('"') {
                format!("{text:?}")
            } else {
                text
            }
        }
        other => shorten(&other.to_string(), 48),
    }
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn arguments_become_short_pairs() {
        assert_eq!(
            summarize_arguments(&json!({"pattern": "**/*.go", "path": "src"}), 80),
            "path=src pattern=**/*.go"
        );
        assert_eq!(
            summarize_arguments(&json!({"command": "find . -name '*.go' | wc -l"}), 80),
            r#"command="find . -name '*.go' | wc -l""#
        );
        assert_eq!(summarize_arguments(&json!({"limit": 5}), 80), "limit=5");
        assert_eq!(
            summarize_arguments(&json!({"text": "a\nb"}), 80),
            "text=a⏎b"
        );
    }

    #[test]
    fn long_arguments_are_shortened() {
        let summary = summarize_arguments(&json!({"pattern": "x".repeat(200)}), 30);
        assert_eq!(summary.chars().count(), 30);
        assert!(summary.ends_with('…'));
    }
}
