//! What `tooltrail ask` says about the context window once the answer is in: how much of the
//! window the last request took, and whether the answer was cut short by it.

use std::sync::{Arc, Mutex};

use tooltrail_agent::EventSink;
use tooltrail_llm::ContextWindow;
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
