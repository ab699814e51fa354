//! Conversations between their turns. What the model saw is in the store; what is not —
//! the calls the user allowed "for this conversation" — lives here while the process does, and
//! so does the rule that a conversation answers one question at a time.

use std::collections::HashMap;
use std::sync::Mutex;

use tooltrail_agent::Conversation;
use tooltrail_store::Store;

use crate::error::HostError;

enum Slot {
    /// Between turns, with what it carries.
    Idle(Conversation),
    /// A turn holds it.
    Running,
}

/// The conversations this process has run turns in.
#[derive(Default)]
pub struct Conversations {
    slots: Mutex<HashMap<String, Slot>>,
}

impl Conversations {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        match self.slots.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Takes the conversation `id` for a turn, or a new one when `id` is `None`. One this
    /// process has not held is carried on from its messages in `store`. Give it back with
    /// [`Self::end`].
    pub fn begin(&self, id: Option<&str>, store: &Store) -> Result<Conversation, HostError> {
        let mut slots = self.lock();
        let Some(id) = id else {
            let conversation = Conversation::new();
            slots.insert(conversation.id.clone(), Slot::Running);
            return Ok(conversation);
        };
        let conversation = match slots.remove(id) {
            Some(Slot::Idle(conversation)) => conversation,
            Some(Slot::Running) => {
                slots.insert(id.to_string(), Slot::Running);
                return Err(HostError::Busy);
            }
            None => {
                // Known to the store (its summary) even when it has no message yet.
                store
                    .conversation(id)
                    .map_err(|_| HostError::ConversationNotFound)?;
                let messages = store
                    .load_messages(id)
                    .map_err(|_| HostError::ConversationNotFound)?;
                Conversation::resume(id, messages)
            }
        };
        slots.insert(id.to_string(), Slot::Running);
        Ok(conversation)
    }

    /// Gives a conversation back after its turn.
    pub fn end(&self, conversation: Conversation) {
        self.lock()
            .insert(conversation.id.clone(), Slot::Idle(conversation));
    }

    /// Whether a turn of `id` runs in this process now.
    pub fn is_running(&self, id: &str) -> bool {
        matches!(self.lock().get(id), Some(Slot::Running))
    }

    /// Forgets a conversation (it was deleted).
    pub fn forget(&self, id: &str) {
        self.lock().remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tooltrail_protocol::{Event, EventBody, Message};

    #[test]
    fn a_conversation_answers_one_question_at_a_time() {
        let store = Store::open_in_memory().unwrap();
        let conversations = Conversations::default();
        let conversation = conversations.begin(None, &store).unwrap();
        let id = conversation.id.clone();
        assert!(conversations.is_running(&id));
        assert!(matches!(
            conversations.begin(Some(&id), &store),
            Err(HostError::Busy)
        ));
        conversations.end(conversation);
        assert!(!conversations.is_running(&id));
        assert_eq!(conversations.begin(Some(&id), &store).unwrap().id, id);
    }

    #[test]
    fn a_stored_conversation_is_carried_on_from_its_messages() {
        let store = Store::open_in_memory().unwrap();
        let conversations = Conversations::default();
        assert!(matches!(
            conversations.begin(Some("conv_old"), &store),
            Err(HostError::ConversationNotFound)
        ));
        let recorder = store.recorder().unwrap();
        let event = |seq, body| Event {
            conversation_id: "conv_old".into(),
            turn_id: "turn_1".into(),
            seq,
            time_ms: 1,
            body,
        };
        recorder.record(event(
            0,
            EventBody::TurnStarted {
                replay_of: None,
                workspace: "/ws".into(),
                model: "m".into(),
                user_message: "earlier".into(),
            },
        ));
        recorder.record(event(
            1,
            EventBody::MessageAdded {
                message: Message::user("earlier"),
            },
        ));
        recorder.flush().unwrap();
        let resumed = conversations.begin(Some("conv_old"), &store).unwrap();
        assert_eq!(resumed.messages, vec![Message::user("earlier")]);
        assert!(conversations.is_running("conv_old"));
    }
}
