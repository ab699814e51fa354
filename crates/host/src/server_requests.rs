//! The MCP servers' requests to the user while their tools run: elicitation (a form to fill in
//! or a page to open) and sampling (a use of the user's model).
//!
//! One [`ServerDesk`] per host answers for every server (it is their
//! [`McpAnswerer`](tooltrail_mcp::McpAnswerer)). A request belongs to the question whose call of
//! that server is running: the desk finds it among the questions under way (each registered by
//! its [`Engine`](crate::Engine) for as long as it lives), puts the request on that question's
//! timeline, under the call, asks the front end's [`RequestUser`] and puts the answer there too.
//! Sampling then runs on the question's own model, with the tokens recorded. A request with no
//! question to belong to, or with a front end that cannot ask anyone, is declined with a
//! sentence saying why.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tooltrail_agent::TurnLine;
use tooltrail_llm::{ChatRequest, FinishReason, LlmClient};
use tooltrail_mcp::{ElicitationAsk, ElicitationReply, McpAnswerer, SamplingAsk, SamplingReply};
use tooltrail_protocol::{ElicitationAction, EventBody, Message};

/// The most tokens a server's sampling request may have the model write, whatever it asks.
const MAX_SAMPLING_TOKENS: u32 = 4096;

/// One request as a front end shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerRequest {
    /// The call whose server asks.
    pub call_id: String,
    /// Names the request (the app answers it by this).
    pub request_id: String,
    pub server: String,
}

/// How a front end puts a server's request to the user.
#[async_trait]
pub trait RequestUser: Send + Sync {
    /// The user's answer to a form or a page to open; `Err` with a sentence when no one can
    /// answer (the server is told the request was declined).
    async fn elicit(
        &self,
        request: &ServerRequest,
        ask: &ElicitationAsk,
    ) -> Result<ElicitationReply, String>;

    /// Whether the user lets the server use the model; `Err` with why not.
    async fn allow_sampling(
        &self,
        request: &ServerRequest,
        ask: &SamplingAsk,
    ) -> Result<(), String>;
}

/// A front end with no one to ask (the HTTP API): every request is declined, saying why.
pub struct DeclineAll(pub String);

#[async_trait]
impl RequestUser for DeclineAll {
    async fn elicit(
        &self,
        _request: &ServerRequest,
        _ask: &ElicitationAsk,
    ) -> Result<ElicitationReply, String> {
        Err(self.0.clone())
    }

    async fn allow_sampling(
        &self,
        _request: &ServerRequest,
        _ask: &SamplingAsk,
    ) -> Result<(), String> {
        Err(self.0.clone())
    }
}

/// A question under way, as the desk reaches it.
struct Route {
    id: u64,
    line: TurnLine,
    user: Arc<dyn RequestUser>,
    llm: LlmClient,
}

/// Answers every server's requests by routing them to the question they belong to.
#[derive(Default)]
pub struct ServerDesk {
    routes: Mutex<Vec<Route>>,
    next: AtomicU64,
}

impl ServerDesk {
    fn routes(&self) -> MutexGuard<'_, Vec<Route>> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends the requests made during the turns on `line` to `user`, sampling with `llm`,
    /// until the guard is dropped.
    pub fn open(
        self: &Arc<Self>,
        line: TurnLine,
        user: Arc<dyn RequestUser>,
        llm: LlmClient,
    ) -> DeskRoute {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.routes().push(Route {
            id,
            line,
            user,
            llm,
        });
        DeskRoute {
            desk: Arc::clone(self),
            id,
        }
    }

    /// The question whose call of `server` runs now, with that call's id and a fresh request
    /// id.
    fn find(
        &self,
        server: &str,
    ) -> Option<(TurnLine, Arc<dyn RequestUser>, LlmClient, ServerRequest)> {
        let routes = self.routes();
        routes.iter().rev().find_map(|route| {
            let call_id = route.line.running_call(server)?;
            let request = ServerRequest {
                call_id,
                request_id: format!("req_{}", self.next.fetch_add(1, Ordering::Relaxed)),
                server: server.to_string(),
            };
            Some((
                route.line.clone(),
                Arc::clone(&route.user),
                route.llm.clone(),
                request,
            ))
        })
    }
}

/// Keeps a question's route open; dropping it closes it.
pub struct DeskRoute {
    desk: Arc<ServerDesk>,
    id: u64,
}

impl Drop for DeskRoute {
    fn drop(&mut self) {
        self.desk.routes().retain(|route| route.id != self.id);
    }
}

/// Why a request that belongs to no question is declined.
const NO_QUESTION: &str = "no question of the user's is running a tool of this server";

#[async_trait]
impl McpAnswerer for ServerDesk {
    async fn elicit(&self, ask: ElicitationAsk) -> ElicitationReply {
        let Some((line, user, _, request)) = self.find(&ask.server) else {
            return ElicitationReply::decline();
        };
        line.announce(EventBody::ElicitationRequested {
            call_id: request.call_id.clone(),
            request_id: request.request_id.clone(),
            server: request.server.clone(),
            message: ask.message.clone(),
            request: ask.request.clone(),
        });
        let (reply, reason) = match user.elicit(&request, &ask).await {
            Ok(reply) => (reply, None),
            Err(reason) => (ElicitationReply::decline(), Some(reason)),
        };
        line.announce(EventBody::ElicitationAnswered {
            call_id: request.call_id,
            request_id: request.request_id,
            server: request.server,
            action: reply.action,
            content: reply.content.clone().map(Value::Object),
            reason,
        });
        reply
    }

    async fn sample(&self, ask: SamplingAsk) -> SamplingReply {
        let Some((line, user, llm, request)) = self.find(&ask.server) else {
            return SamplingReply::Refused(NO_QUESTION.to_string());
        };
        let max_tokens = ask.max_tokens.clamp(1, MAX_SAMPLING_TOKENS);
        line.announce(EventBody::SamplingRequested {
            call_id: request.call_id.clone(),
            request_id: request.request_id.clone(),
            server: request.server.clone(),
            system_prompt: ask.system_prompt.clone(),
            messages: ask.messages.clone(),
            max_tokens,
        });
        let answered =
            |approved: bool,
             text: Option<String>,
             usage: Option<tooltrail_protocol::Usage>,
             reason: Option<String>| EventBody::SamplingAnswered {
                call_id: request.call_id.clone(),
                request_id: request.request_id.clone(),
                server: request.server.clone(),
                approved,
                model: approved.then(|| llm.config().model.clone()),
                text,
                usage,
                reason,
            };
        if let Err(reason) = user.allow_sampling(&request, &ask).await {
            line.announce(answered(false, None, None, Some(reason.clone())));
            return SamplingReply::Refused(reason);
        }
        let chat = sampling_request(&ask, max_tokens);
        match llm.complete(&chat, &CancellationToken::new()).await {
            Ok(response) => {
                line.announce(answered(
                    true,
                    Some(response.content.clone()),
                    response.usage,
                    None,
                ));
                SamplingReply::Answer {
                    text: response.content,
                    model: llm.config().model.clone(),
                    stop_reason: Some(
                        match response.finish_reason {
                            Some(FinishReason::Length) => "maxTokens",
                            _ => "endTurn",
                        }
                        .to_string(),
                    ),
                }
            }
            Err(error) => {
                let reason = format!("the model could not answer: {error}");
                line.announce(answered(false, None, None, Some(reason.clone())));
                SamplingReply::Refused(reason)
            }
        }
    }
}

/// The model request a sampling request makes: its system prompt and messages as they are, no
/// tools.
fn sampling_request(ask: &SamplingAsk, max_tokens: u32) -> ChatRequest {
    let mut messages = Vec::new();
    if let Some(system) = &ask.system_prompt {
        messages.push(Message::system(system.clone()));
    }
    for message in &ask.messages {
        messages.push(match message.role.as_str() {
            "assistant" => Message::assistant(message.text.clone(), Vec::new()),
            _ => Message::user(message.text.clone()),
        });
    }
    ChatRequest {
        messages,
        temperature: ask.temperature,
        max_tokens: Some(max_tokens),
        ..ChatRequest::default()
    }
}

/// An accepted form's values checked against its fields: every required one given, numbers
/// and booleans of their kind. The sentence says what is wrong.
pub fn check_form(
    fields: &[tooltrail_protocol::FormField],
    content: &Map<String, Value>,
) -> Result<(), String> {
    use tooltrail_protocol::FieldKind;
    for field in fields {
        let value = content.get(&field.name).filter(|value| match value {
            Value::Null => false,
            Value::String(text) => !text.trim().is_empty(),
            Value::Array(items) => !items.is_empty(),
            Value::Bool(_) | Value::Number(_) | Value::Object(_) => true,
        });
        let Some(value) = value else {
            if field.required {
                return Err(format!("{} is required", field.title));
            }
            continue;
        };
        let fits = match &field.kind {
            FieldKind::Text { .. } => value.is_string(),
            FieldKind::Number { integer, .. } => {
                if *integer {
                    value.is_i64() || value.is_u64()
                } else {
                    value.is_number()
                }
            }
            FieldKind::Boolean => value.is_boolean(),
            FieldKind::Choice { options, multiple } => {
                let known = |v: &Value| {
                    v.as_str()
                        .is_some_and(|v| options.iter().any(|option| option.value == v))
                };
                if *multiple {
                    value
                        .as_array()
                        .is_some_and(|items| items.iter().all(known))
                } else {
                    known(value)
                }
            }
        };
        if !fits {
            return Err(format!("{} does not hold a value of its kind", field.title));
        }
    }
    Ok(())
}

/// An elicitation answer of `action` with no values.
pub fn reply(action: ElicitationAction) -> ElicitationReply {
    ElicitationReply {
        action,
        content: None,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_form_answer_needs_its_required_fields_in_their_kinds() {
        let fields = tooltrail_protocol::form_fields(&json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name"},
                "age": {"type": "integer", "title": "Age"},
                "pet": {"type": "string", "enum": ["cat", "dog"]}
            },
            "required": ["name"]
        }));
        let answer = |value: Value| value.as_object().cloned().unwrap_or_default();
        assert_eq!(check_form(&fields, &answer(json!({"name": "Ada"}))), Ok(()));
        assert_eq!(
            check_form(&fields, &answer(json!({"name": " "}))),
            Err("Name is required".to_string())
        );
        assert_eq!(
            check_form(&fields, &answer(json!({"name": "Ada", "age": 1.5}))),
            Err("Age does not hold a value of its kind".to_string())
        );
        assert_eq!(
            check_form(&fields, &answer(json!({"name": "Ada", "pet": "fish"}))),
            Err("pet does not hold a value of its kind".to_string())
        );
    }

    #[test]
    fn a_sampling_request_carries_the_servers_system_prompt_and_messages() {
        let ask = SamplingAsk {
            server: "everything".into(),
            system_prompt: Some("You are a helpful test server.".into()),
            messages: vec![tooltrail_protocol::SamplingMessage {
                role: "user".into(),
                text: "Say hi".into(),
            }],
            max_tokens: 100,
            temperature: Some(0.7),
        };
        let request = sampling_request(&ask, 100);
        assert_eq!(
            request.messages,
            vec![
                Message::system("You are a helpful test server."),
                Message::user("Say hi")
            ]
        );
        assert!(request.tools.is_empty());
        assert_eq!(request.max_tokens, Some(100));
    }
}
