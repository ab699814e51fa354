//! Conversations open in this session: what the model saw and the calls the user allowed (to
//! carry a conversation on), which one is answering now (one turn at a time), and — when the
//! database could not be opened — every event, so the window can still redraw a conversation.
//! With a database, lists and redraws come from it ([`crate::history`]).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::Serialize;
use tooltrail_agent::Conversation;
use tooltrail_protocol::{Event, EventBody, Message};

use crate::error::{CommandError, CommandResult};

/// A line in the conversations list.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ConversationSummary {
    pub id: String,
    /// The first question, shortened.
    pub title: String,
    pub workspace: String,
    pub updated_ms: i64,
    pub turns: usize,
    pub running: bool,
}

/// A conversation as the window redraws it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LoadedConversation {
    pub events: Vec<Event>,
}

struct Entry {
    workspace: PathBuf,
    title: String,
    updated_ms: i64,
    turns: usize,
    /// `None` while a turn holds it.
    conversation: Option<Conversation>,
    events: Vec<Event>,
}

impl Entry {
    fn summary(&self, id: &str) -> ConversationSummary {
        ConversationSummary {
            id: id.to_string(),
            title: self.title.clone(),
            workspace: self.workspace.display().to_string(),
            updated_ms: self.updated_ms,
            turns: self.turns,
            running: self.conversation.is_none(),
        }
    }
}

#[derive(Default)]
pub struct Conversations {
    entries: Mutex<HashMap<String, Entry>>,
}

fn title_of(question: &str) -> String {
    const MAX: usize = 80;
    let line = question.lines().next().unwrap_or_default().trim();
    if line.chars().count() <= MAX {
        line.to_string()
    } else {
        let cut: String = line.chars().take(MAX - 1).collect();
        format!("{cut}…")
    }
}

impl Conversations {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        match self.entries.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Takes the conversation `id` (or a new one when `None`) for a turn. Only one turn runs in
    /// a conversation at a time.
    /// A conversation this session has not seen (one from an earlier run) is carried on from
    /// the messages `stored` finds for it.
    pub fn begin_turn(
        &self,
        id: Option<&str>,
        workspace: PathBuf,
        question: &str,
        stored: impl FnOnce(&str) -> Option<Vec<Message>>,
    ) -> CommandResult<Conversation> {
        let mut entries = self.lock();
        let now = crate::now_ms();
        let Some(id) = id else {
            let conversation = Conversation::new();
            entries.insert(
                conversation.id.clone(),
                Entry {
                    workspace,
                    title: title_of(question),
                    updated_ms: now,
                    turns: 1,
                    conversation: None,
                    events: Vec::new(),
                },
            );
            return Ok(conversation);
        };
        if !entries.contains_key(id) {
            let messages = stored(id).ok_or_else(|| {
                CommandError::new("not_found", "That conversation no longer exists.")
            })?;
            entries.insert(
                id.to_string(),
                Entry {
                    workspace,
                    title: title_of(question),
                    updated_ms: now,
                    turns: 0,
                    conversation: Some(Conversation::resume(id, messages)),
                    events: Vec::new(),
                },
            );
        }
        let entry = entries
            .get_mut(id)
            .ok_or_else(|| CommandError::new("not_found", "That conversation no longer exists."))?;
        let conversation = entry.conversation.take().ok_or_else(|| {
            CommandError::new(
                "busy",
                "This conversation is still answering; stop it or wait for the answer.",
            )
        })?;
        entry.updated_ms = now;
        entry.turns += 1;
        Ok(conversation)
    }

    /// Gives the conversation back after its turn.
    pub fn end_turn(&self, conversation: Conversation) {
        if let Some(entry) = self.lock().get_mut(&conversation.id) {
            entry.updated_ms = crate::now_ms();
            entry.conversation = Some(conversation);
        }
    }

    /// Keeps an event for redrawing. Consecutive text pieces of one round are merged, so a long
    /// answer is a few events, not one per token.
    pub fn record(&self, event: &Event) {
        let mut entries = self.lock();
        let Some(entry) = entries.get_mut(&event.conversation_id) else {
            return;
        };
        if let EventBody::TextDelta { round, text } = &event.body
            && let Some(last) = entry.events.last_mut()
            && last.turn_id == event.turn_id
            && let EventBody::TextDelta {
                round: last_round,
                text: last_text,
            } = &mut last.body
            && last_round == round
        {
            last_text.push_str(text);
            last.seq = event.seq;
            return;
        }
        entry.events.push(event.clone());
    }

    /// Whether a turn of `id` is running in this session.
    pub fn is_running(&self, id: &str) -> bool {
        self.lock()
            .get(id)
            .is_some_and(|entry| entry.conversation.is_none())
    }

    /// Drops a conversation this session holds (it was deleted).
    pub fn forget(&self, id: &str) {
        self.lock().remove(id);
    }

    pub fn list(&self, workspace: &str) -> Vec<ConversationSummary> {
        let entries = self.lock();
        let mut list: Vec<ConversationSummary> = entries
            .iter()
            .filter(|(_, entry)| entry.workspace.display().to_string() == workspace)
            .map(|(id, entry)| entry.summary(id))
            .collect();
        list.sort_by(|a, b| b.updated_ms.cmp(&a.updated_ms).then(a.id.cmp(&b.id)));
        list
    }

    pub fn load(&self, id: &str) -> CommandResult<LoadedConversation> {
        let entries = self.lock();
        let entry = entries
            .get(id)
            .ok_or_else(|| CommandError::new("not_found", "That conversation no longer exists."))?;
        Ok(LoadedConversation {
            events: entry.events.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn delta(conversation_id: &str, seq: u64, text: &str) -> Event {
        Event {
            conversation_id: conversation_id.to_string(),
            turn_id: "t1".to_string(),
            seq,
            time_ms: 0,
            body: EventBody::TextDelta {
                round: 1,
                text: text.to_string(),
            },
        }
    }

    #[test]
    fn a_conversation_runs_one_turn_at_a_time_and_keeps_its_events() {
        let store = Conversations::default();
        let conversation = store
            .begin_turn(None, PathBuf::from("/ws"), "What is this?\nmore", |_| None)
            .expect("new");
        let id = conversation.id.clone();
        let busy = store.begin_turn(Some(&id), PathBuf::from("/ws"), "again", |_| None);
        assert_eq!(busy.map(|_| ()).map_err(|e| e.code), Err("busy"));

        store.record(&delta(&id, 0, "Hel"));
        store.record(&delta(&id, 1, "lo"));
        store.end_turn(conversation);

        let loaded = store.load(&id).expect("load");
        assert_eq!(loaded.events, vec![delta(&id, 1, "Hello")]);
        assert_eq!(store.list("/ws")[0].title, "What is this?");
        assert!(!store.list("/ws")[0].running);
        assert_eq!(store.list("/ws").len(), 1);
        assert_eq!(store.list("/other").len(), 0);
        assert!(
            store
                .begin_turn(Some(&id), PathBuf::from("/ws"), "again", |_| None)
                .is_ok()
        );
    }

    #[test]
    fn a_stored_conversation_is_carried_on_from_its_messages() {
        let store = Conversations::default();
        let missing = store.begin_turn(Some("conv_old"), PathBuf::from("/ws"), "q", |_| None);
        assert_eq!(missing.map(|_| ()).map_err(|e| e.code), Err("not_found"));
        let resumed = store
            .begin_turn(Some("conv_old"), PathBuf::from("/ws"), "q", |_| {
                Some(vec![Message::user("earlier")])
            })
            .expect("resumed");
        assert_eq!(resumed.id, "conv_old");
        assert_eq!(resumed.messages, vec![Message::user("earlier")]);
        assert!(store.is_running("conv_old"));
    }

    #[test]
    fn long_titles_are_shortened() {
        let title = title_of(&"x".repeat(200));
        assert_eq!(title.chars().count(), 80);
        assert!(title.ends_with('…'));
    }
}
