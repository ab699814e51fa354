//! What a server asks of us while its tool runs — the user's input (elicitation) or the user's
//! model (sampling) — and the [`McpAnswerer`] a front end's host gives to answer it.
//!
//! This crate knows neither the agent nor any window: it turns the server's request into the
//! protocol's plain form, hands it to the answerer, and turns the answer back into MCP. With no
//! answerer the capabilities are not announced, and a server that asks all the same is
//! declined with a sentence saying no one can answer.

use std::sync::{Arc, PoisonError, RwLock};

use async_trait::async_trait;
use serde_json::{Map, Value};
use tooltrail_protocol::{ElicitationAction, ElicitationRequest, SamplingMessage};

/// A server asks the user for input.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationAsk {
    pub server: String,
    /// The server's words to the user.
    pub message: String,
    pub request: ElicitationRequest,
}

/// The user's answer to an [`ElicitationAsk`].
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationReply {
    pub action: ElicitationAction,
    /// The form's values, when accepted.
    pub content: Option<Map<String, Value>>,
}

impl ElicitationReply {
    pub fn decline() -> Self {
        Self {
            action: ElicitationAction::Decline,
            content: None,
        }
    }
}

/// A server asks to use the user's model.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingAsk {
    pub server: String,
    pub system_prompt: Option<String>,
    pub messages: Vec<SamplingMessage>,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
}

/// How a [`SamplingAsk`] ended.
#[derive(Debug, Clone, PartialEq)]
pub enum SamplingReply {
    /// The model's answer.
    Answer {
        text: String,
        model: String,
        /// MCP's stop reason (`endTurn`, `maxTokens`), when known.
        stop_reason: Option<String>,
    },
    /// Not run: the user said no, no one could be asked, or the model failed; one sentence.
    Refused(String),
}

/// Answers servers' requests on the user's behalf. Waiting may be long (a person decides).
#[async_trait]
pub trait McpAnswerer: Send + Sync {
    async fn elicit(&self, ask: ElicitationAsk) -> ElicitationReply;
    async fn sample(&self, ask: SamplingAsk) -> SamplingReply;
}

/// Where a server's handler finds the answerer; set before the server starts, so that the
/// handshake announces what it can answer.
#[derive(Default)]
pub(crate) struct AnswererSlot(RwLock<Option<Arc<dyn McpAnswerer>>>);

impl AnswererSlot {
    pub(crate) fn set(&self, answerer: Arc<dyn McpAnswerer>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Some(answerer);
    }

    pub(crate) fn get(&self) -> Option<Arc<dyn McpAnswerer>> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
