//! `ask_user`'s questions waiting for the user's answer on the chat's question card.
//!
//! The agent records the question (`user_question`), then asks the [`WindowAsker`], which
//! parks a one-shot channel under the call id until `answer_question` fills it with the
//! answer, or with nothing when the user dismisses the card. A cancelled turn drops the wait,
//! and the guard forgets the question.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use tauri::{AppHandle, Manager};
use tokio::sync::oneshot;
use tooltrail_host::{NoAnswer, Question, UserAsker};

use crate::error::{CommandError, CommandResult};

#[derive(Default)]
pub struct PendingQuestions {
    waiting: Mutex<HashMap<String, oneshot::Sender<Option<String>>>>,
}

impl PendingQuestions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Option<String>>>> {
        match self.waiting.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Delivers the user's answer (`None`: dismissed) to the question waiting for it.
    pub fn answer(&self, call_id: &str, answer: Option<String>) -> CommandResult<()> {
        let not_waiting = || {
            CommandError::new(
                "not_waiting",
                "That question is no longer waiting for an answer.",
            )
        };
        let answer = answer.map(|text| text.trim().to_string());
        if answer.as_deref() == Some("") {
            return Err(CommandError::new(
                "empty",
                "Write an answer or pick one, or dismiss the question.",
            ));
        }
        let sender = self.lock().remove(call_id).ok_or_else(not_waiting)?;
        sender.send(answer).map_err(|_| not_waiting())
    }

    /// Waits for the answer to the question of `call_id`.
    pub async fn wait(&self, call_id: &str) -> Option<String> {
        let (sender, receiver) = oneshot::channel();
        self.lock().insert(call_id.to_string(), sender);
        let _forget = Forget {
            pending: self,
            call_id,
        };
        receiver.await.ok().flatten()
    }
}

/// Forgets a question when its wait ends, including when the turn is cancelled mid-wait.
struct Forget<'a> {
    pending: &'a PendingQuestions,
    call_id: &'a str,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.pending.lock().remove(self.call_id);
    }
}

/// Asks through the chat's question card, with an OS notification when the window is in the
/// background.
pub struct WindowAsker {
    pub app: AppHandle,
}

#[async_trait]
impl UserAsker for WindowAsker {
    async fn ask(&self, question: &Question) -> Result<String, NoAnswer> {
        crate::notify::when_in_background(
            &self.app,
            "Tooltrail: a question for you",
            &question.question,
        );
        self.app
            .state::<PendingQuestions>()
            .wait(&question.call_id)
            .await
            .ok_or(NoAnswer::Dismissed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn an_answer_reaches_the_waiting_question_once() {
        let pending = Arc::new(PendingQuestions::default());
        let waiter = Arc::clone(&pending);
        let wait = tokio::spawn(async move { waiter.wait("call-1").await });
        while pending.lock().is_empty() {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            pending
                .answer("call-1", Some("  ".into()))
                .unwrap_err()
                .code,
            "empty"
        );
        pending.answer("call-1", Some(" dev ".into())).unwrap();
        assert_eq!(wait.await.unwrap(), Some("dev".to_string()));
        assert_eq!(
            pending.answer("call-1", None).unwrap_err().code,
            "not_waiting"
        );
    }

    #[tokio::test]
    async fn a_dismissed_question_has_no_answer() {
        let pending = Arc::new(PendingQuestions::default());
        let waiter = Arc::clone(&pending);
        let wait = tokio::spawn(async move { waiter.wait("call-2").await });
        while pending.lock().is_empty() {
            tokio::task::yield_now().await;
        }
        pending.answer("call-2", None).unwrap();
        assert_eq!(wait.await.unwrap(), None);
    }
}
