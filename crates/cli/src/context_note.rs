//! What `tooltrail ask` says about the context window once the answer is in: how much of the
//! window the last request took, and whether the answer was cut short by it.

use std::sync::{Arc, Mutex};

use tooltrail_host::ContextWindow;
use tooltrail_host::EventSink;
use tooltrail_protocol::{Event, EventBody};

/// Passes every event on to the screen and keeps what the notes need.
pub struct ContextWatch {
    screen: Box<dyn EventSink>,
    seen: Mutex<Seen>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Seen {
    /// The last request's estimated size and the window, in tokens.
    last: Option<(u32, u32)>,
    /// Whether an answer of the turn ended at the token limit or the window.
    truncated: bool,
}

impl ContextWatch {
    pub fn new(screen: Box<dyn EventSink>) -> Self {
        Self {
            screen,
            seen: Mutex::new(Seen::default()),
        }
    }

    fn seen(&self) -> Seen {
        match self.seen.lock() {
            Ok(seen) => *seen,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }

    /// Whether an answer was cut short.
    pub fn truncated(&self) -> bool {
        self.seen().truncated
    }

    /// One line on how much of the window the last request took, and where the window's size
    /// came from; `None` when no request was made.
    pub fn usage_line(&self, window: ContextWindow) -> Option<String> {
        let (used, tokens) = self.seen().last?;
        let percent = u64::from(used) * 100 / u64::from(tokens.max(1));
        Some(format!(
            "· context: about {used} of {tokens} tokens ({percent}%) at the last request; the window was {}",
            window.source.describe()
        ))
    }

    /// The notice for an answer cut short.
    pub fn truncated_notice(&self, window: ContextWindow) -> String {
        format!(
            "notice: the answer was cut short: the model reached its token limit or the end of its {}-token context window. Ask for less, or use a model with a larger window (--context-window sets it when the server's is larger than Tooltrail was told).",
            window.tokens
        )
    }
}

impl EventSink for ContextWatch {
    fn emit(&self, event: Event) {
        {
            let mut seen = match self.seen.lock() {
                Ok(seen) => seen,
                Err(poisoned) => poisoned.into_inner(),
            };
            if let EventBody::ContextUsage {
                used_tokens,
                window_tokens,
                ..
            } = &event.body
            {
                seen.last = Some((*used_tokens, *window_tokens));
            }
            if let EventBody::AnswerTruncated { .. } = &event.body {
                seen.truncated = true;
            }
        }
        self.screen.emit(event);
    }
}

/// A [`ContextWatch`] shared with the command, which reads it once the turn is over.
pub struct SharedSink(pub Arc<ContextWatch>);

impl EventSink for SharedSink {
    fn emit(&self, event: Event) {
        self.0.emit(event);
    }
}

/// What `tooltrail ask` says on stderr, where a new conversation starts, about the project
/// instructions: each file left out and why (always, since a link out of the folder may be
/// someone's attempt to reach a secret), then the file followed (not with `--json`, whose
/// reader has the record).
pub fn instructions_lines(report: &tooltrail_host::InstructionsReport, json: bool) -> Vec<String> {
    let mut lines: Vec<String> = report
        .left_out
        .iter()
        .map(|left_out| format!("warning: {}", left_out.sentence()))
        .collect();
    if let Some(used) = &report.used
        && !json
    {
        let cut = if used.truncated {
            ", shortened to fit the model's context window"
        } else {
            ""
        };
        lines.push(format!(
            "note: following the project instructions in {}{cut} (--no-project-instructions leaves them out)",
            used.file
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use tooltrail_host::{InstructionsLeftOut, InstructionsReport, InstructionsUse, LeftOutReason};

    use super::instructions_lines;

    #[test]
    fn a_file_left_out_is_said_with_why_before_the_one_followed() {
        let report = InstructionsReport {
            used: Some(InstructionsUse {
                file: "CLAUDE.md".into(),
                truncated: true,
            }),
            left_out: vec![InstructionsLeftOut {
                file: "AGENTS.md".into(),
                reason: LeftOutReason::LinkOutside,
            }],
        };
        assert_eq!(
            instructions_lines(&report, false),
            vec![
                "warning: AGENTS.md was left out: it is a link to a file outside the folder."
                    .to_string(),
                "note: following the project instructions in CLAUDE.md, shortened to fit the model's context window (--no-project-instructions leaves them out)".to_string(),
            ]
        );
        assert_eq!(
            instructions_lines(&report, true),
            vec![
                "warning: AGENTS.md was left out: it is a link to a file outside the folder."
                    .to_string()
            ]
        );
    }
}
