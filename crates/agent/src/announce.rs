//! Two ways in from outside a running turn, for what the tools' servers do while it runs.
//!
//! [`TurnLine`]: an MCP server may ask the user something (elicitation) or ask to use the model
//! (sampling) while one of its tools runs. Whoever answers for the front end puts those
//! requests and their answers on the turn's timeline through the line, and asks it which call
//! of that server is running, so the record keeps them under the call that caused them. The
//! events go through the turn itself (so they get its sequence numbers); a line with no turn
//! running takes nothing.
//!
//! [`LiveTools`]: a server may change its tool list mid-turn (`tools/list_changed`); the turn
//! asks for the newest registry before each request to the model, so the change reaches the
//! next request rather than the next question.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tooltrail_protocol::{EventBody, ToolSource};
use tooltrail_tools::ToolRegistry;

/// Puts events on the running turn's timeline from outside it. Cheap to clone; all clones are
/// the same line.
#[derive(Clone, Default)]
pub struct TurnLine {
    inner: Arc<Mutex<LineState>>,
}

#[derive(Default)]
struct LineState {
    /// Set while a turn runs.
    sender: Option<UnboundedSender<EventBody>>,
    /// Calls running now, oldest first, with where their tool comes from.
    running: Vec<(String, ToolSource)>,
}

impl std::fmt::Debug for TurnLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnLine").finish_non_exhaustive()
    }
}

impl TurnLine {
    fn state(&self) -> MutexGuard<'_, LineState> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The call of the MCP server `server` running now (the latest begun, when several are).
    pub fn running_call(&self, server: &str) -> Option<String> {
        self.state()
            .running
            .iter()
            .rev()
            .find(
                |(_, source)| matches!(source, ToolSource::Mcp { server: from } if from == server),
            )
            .map(|(call_id, _)| call_id.clone())
    }

    /// Puts `body` on the running turn's timeline; `false` when no turn runs.
    pub fn announce(&self, body: EventBody) -> bool {
        self.state()
            .sender
            .as_ref()
            .is_some_and(|sender| sender.send(body).is_ok())
    }

    /// Opens the line for a turn; the turn reads what is announced from the receiver.
    pub(crate) fn open(&self) -> UnboundedReceiver<EventBody> {
        let (sender, receiver) = unbounded_channel();
        let mut state = self.state();
        state.sender = Some(sender);
        state.running.clear();
        receiver
    }

    pub(crate) fn close(&self) {
        let mut state = self.state();
        state.sender = None;
        state.running.clear();
    }

    pub(crate) fn started(&self, call_id: &str, source: ToolSource) {
        self.state().running.push((call_id.to_string(), source));
    }

    pub(crate) fn finished(&self, call_id: &str) {
        self.state().running.retain(|(id, _)| id != call_id);
    }
}

/// Closes the line when the turn ends, however it ends.
pub(crate) struct OpenLine<'a> {
    line: &'a TurnLine,
    pub(crate) receiver: tokio::sync::Mutex<UnboundedReceiver<EventBody>>,
}

impl<'a> OpenLine<'a> {
    pub(crate) fn new(line: &'a TurnLine) -> Self {
        Self {
            receiver: tokio::sync::Mutex::new(line.open()),
            line,
        }
    }

    pub(crate) fn line(&self) -> &TurnLine {
        self.line
    }

    /// The next announced event; waits while another call of the round holds the line.
    pub(crate) async fn next(&self) -> Option<EventBody> {
        self.receiver.lock().await.recv().await
    }

    /// What was announced and not yet taken, when no other call holds the line.
    pub(crate) fn drain(&self) -> Vec<EventBody> {
        let mut out = Vec::new();
        if let Ok(mut receiver) = self.receiver.try_lock() {
            while let Ok(body) = receiver.try_recv() {
                out.push(body);
            }
        }
        out
    }
}

impl Drop for OpenLine<'_> {
    fn drop(&mut self) {
        self.line.close();
    }
}

/// The newest tool registry, for a turn that re-reads it before each request to the model.
#[async_trait]
pub trait LiveTools: Send + Sync {
    /// A registry newer than the one last returned (or than the agent's own, the first time),
    /// or `None` when nothing changed.
    async fn refreshed(&self) -> Option<Arc<ToolRegistry>>;
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_line_takes_events_only_while_a_turn_runs_and_knows_the_running_call() {
        let line = TurnLine::default();
        assert!(!line.announce(EventBody::AnswerTruncated { round: 1 }));
        let open = OpenLine::new(&line);
        line.started("c1", ToolSource::Builtin);
        line.started(
            "c2",
            ToolSource::Mcp {
                server: "everything".into(),
            },
        );
        assert_eq!(line.running_call("everything"), Some("c2".to_string()));
        assert_eq!(line.running_call("other"), None);
        assert!(line.announce(EventBody::AnswerTruncated { round: 2 }));
        assert_eq!(open.drain(), vec![EventBody::AnswerTruncated { round: 2 }]);
        line.finished("c2");
        assert_eq!(line.running_call("everything"), None);
        drop(open);
        assert!(!line.announce(EventBody::AnswerTruncated { round: 3 }));
    }
}
