//! [`UserAsker`]: how `ask_user` reaches a person — the app's question card, a terminal
//! prompt, or answers given ahead on the command line.

use async_trait::async_trait;

/// A question for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub call_id: String,
    pub question: String,
    /// Answers to offer; the user may also write their own.
    pub choices: Vec<String>,
}

/// Why a question got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoAnswer {
    /// The user closed the question without answering.
    Dismissed,
    /// Nobody is there to answer (a headless run); the sentence says what would help.
    NoOneToAsk(String),
}

/// Puts questions to the user. Waiting may be long: the agent stops waiting when the turn is
/// cancelled.
#[async_trait]
pub trait UserAsker: Send + Sync {
    async fn ask(&self, question: &Question) -> Result<String, NoAnswer>;
}
