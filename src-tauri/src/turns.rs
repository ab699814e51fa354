//! The turns running now, by conversation, so `cancel_turn` can stop one.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

#[derive(Default)]
pub struct RunningTurns {
    tokens: Mutex<HashMap<String, CancellationToken>>,
}

impl RunningTurns {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        match self.tokens.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub fn start(&self, conversation_id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        self.lock()
            .insert(conversation_id.to_string(), token.clone());
        token
    }

    /// Stops the turn of `conversation_id`; false when none was running.
    pub fn cancel(&self, conversation_id: &str) -> bool {
        match self.lock().get(conversation_id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    pub fn finish(&self, conversation_id: &str) {
        self.lock().remove(conversation_id);
    }
}
