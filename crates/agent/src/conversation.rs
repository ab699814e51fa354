//! The state a conversation carries from one turn to the next.

use std::collections::HashSet;

use tooltrail_protocol::Message;

/// A conversation: its id, every message the model has seen, and the calls the user allowed
/// for the rest of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    pub id: String,
    pub messages: Vec<Message>,
    allowed_calls: HashSet<String>,
}

impl Conversation {
    /// A new, empty conversation with a fresh id.
    pub fn new() -> Self {
        Self::with_id(format!("conv_{}", uuid::Uuid::new_v4().simple()))
    }

    pub fn with_id(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            messages: Vec::new(),
            allowed_calls: HashSet::new(),
        }
    }

    /// A conversation carried on from stored messages.
    pub fn resume(id: impl Into<String>, messages: Vec<Message>) -> Self {
        Self {
            messages,
            ..Self::with_id(id)
        }
    }

    pub(crate) fn is_allowed(&self, key: &str) -> bool {
        self.allowed_calls.contains(key)
    }

    pub(crate) fn allow(&mut self, key: String) {
        self.allowed_calls.insert(key);
    }
}

/// Identifies "the same call": tool name and arguments with keys in a canonical order.
pub(crate) fn call_key(tool: &str, arguments: &serde_json::Value) -> String {
    // serde_json's map keeps keys sorted, so serialising gives one text per value.
    format!("{tool} {arguments}")
}
