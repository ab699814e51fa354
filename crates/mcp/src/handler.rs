//! Our side of an MCP connection: what we tell a server about ourselves, and how we answer its
//! requests (`roots/list`, elicitation, sampling) and notifications (progress, logs, tool list
//! changes). Elicitation and sampling go to the host's [`McpAnswerer`](crate::McpAnswerer); they
//! are announced in the handshake only when there is one.

// Roots and logging are deprecated by a draft protocol revision (SEP-2577), but they are what
// servers speak today.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ErrorCode,
    ErrorData, FormElicitationCapability, Implementation, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, Role, RootsCapabilities,
    SamplingCapability, SamplingMessageContentBlock, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::{Notify, broadcast};
use tooltrail_protocol::ToolProgress;

use crate::answerer::{AnswererSlot, ElicitationAsk, SamplingAsk, SamplingReply};
use crate::redact::Redactor;
use crate::stderr::StderrLog;

/// Progress tokens remembered at most; beyond this the oldest are forgotten, so a server that
/// sends progress for tokens nobody waits on cannot grow memory.
const MAX_TRACKED_TOKENS: usize = 256;
/// Progress notifications kept per call.
const MAX_PROGRESS_PER_CALL: usize = 1000;

/// What to answer when a server asks the user for input (`elicitation/create`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ElicitationPolicy {
    /// Decline (the capability is not announced, so servers should not ask).
    #[default]
    Decline,
    /// Accept, answering every field with its schema's default. Used by the conformance client.
    AcceptDefaults,
}

/// One progress notification of a running call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpProgress {
    pub server: String,
    /// The server's own name of the tool being called, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub progress: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Progress notifications by token, collected for the call that owns the token and sent live
/// to anyone listening.
#[derive(Default)]
pub(crate) struct ProgressBoard {
    state: Mutex<ProgressState>,
}

#[derive(Default)]
struct ProgressState {
    /// Tool name per token of a call in flight, and where its caller wants progress.
    calls: HashMap<ProgressToken, (String, Option<UnboundedSender<ToolProgress>>)>,
    received: HashMap<ProgressToken, Vec<McpProgress>>,
    order: Vec<ProgressToken>,
}

impl ProgressBoard {
    /// Collects progress for a call; `forward` also gets each notification as it arrives.
    pub(crate) fn watch(
        &self,
        token: &ProgressToken,
        tool: &str,
        forward: Option<UnboundedSender<ToolProgress>>,
    ) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state
            .calls
            .insert(token.clone(), (tool.to_string(), forward));
        // Progress that arrived before the call was watched belongs to it too.
        if let Some(early) = state.received.get_mut(token) {
            for progress in early {
                progress.tool = Some(tool.to_string());
            }
        }
    }

    /// Everything received for `token`, oldest first; forgets the token.
    pub(crate) fn finish(&self, token: &ProgressToken) -> Vec<McpProgress> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.calls.remove(token);
        state.order.retain(|known| known != token);
        state.received.remove(token).unwrap_or_default()
    }

    fn record(&self, server: &str, param: ProgressNotificationParam) -> McpProgress {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let call = state.calls.get(&param.progress_token);
        let progress = McpProgress {
            server: server.to_string(),
            tool: call.map(|(tool, _)| tool.clone()),
            progress: param.progress,
            total: param.total,
            message: param.message,
        };
        if let Some((_, Some(forward))) = call {
            let _ = forward.send(ToolProgress {
                progress: progress.progress,
                total: progress.total,
                message: progress.message.clone(),
                task: None,
            });
        }
        if !state.received.contains_key(&param.progress_token) {
            if state.order.len() >= MAX_TRACKED_TOKENS {
                let oldest = state.order.remove(0);
                state.received.remove(&oldest);
            }
            state.order.push(param.progress_token.clone());
        }
        let list = state.received.entry(param.progress_token).or_default();
        if list.len() < MAX_PROGRESS_PER_CALL {
            list.push(progress.clone());
        }
        progress
    }
}

/// Shared between a server and the handler of its current connection.
pub(crate) struct Shared {
    pub server: String,
    /// The server's own secrets (see `redact.rs`), scrubbed from what it asks the user and the
    /// model, as from its log.
    pub redactor: Redactor,
    pub log: StderrLog,
    pub progress: ProgressBoard,
    pub live_progress: broadcast::Sender<McpProgress>,
    /// Woken when the server says its tool list changed.
    pub tools_changed: Notify,
    /// How many times the server said so, counted as the notice arrives (before the list is
    /// read again), so that a question can wait for a change it knows is coming.
    pub tool_notices: std::sync::atomic::AtomicU64,
    /// Who answers the server's elicitation and sampling requests, if anyone.
    pub answerer: AnswererSlot,
    /// Resource updates and list changes, for whoever listens (see `resources.rs`).
    pub resources: crate::resource_hub::ResourceHub,
}

/// The [`rmcp::ClientHandler`] of one connection.
pub(crate) struct Handler {
    info: ClientConfig,
    roots: Vec<rmcp::model::Root>,
    elicitation: ElicitationPolicy,
    shared: Arc<Shared>,
}

impl Handler {
    pub(crate) fn new(
        workspace_uri: Option<String>,
        elicitation: ElicitationPolicy,
        shared: Arc<Shared>,
    ) -> Self {
        let mut capabilities = ClientCapabilities::default();
        if workspace_uri.is_some() {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        if elicitation == ElicitationPolicy::AcceptDefaults {
            let mut elicit = ElicitationCapability::new();
            elicit.form = Some(FormElicitationCapability::new());
            capabilities.elicitation = Some(elicit);
        } else if shared.answerer.get().is_some() {
            capabilities.elicitation = Some(
                ElicitationCapability::new()
                    .with_form(FormElicitationCapability::new())
                    .with_url(UrlElicitationCapability::new()),
            );
            capabilities.sampling = Some(SamplingCapability::default());
        }
        // MCP Apps: Tooltrail shows a tool's view in its call's card (the app), or says the
        // call has one (the command line). Servers give meaningful text either way.
        let mut extensions = crate::apps::extension_capability();
        // MCP Tasks: Tooltrail follows a call the server runs as a task (`task.rs`).
        extensions.insert(
            rmcp::model::TASKS_EXTENSION_ID.to_string(),
            rmcp::model::JsonObject::new(),
        );
        capabilities.extensions = Some(extensions);
        let mut implementation = Implementation::new("tooltrail", env!("CARGO_PKG_VERSION"));
        implementation.title = Some("Tooltrail".to_string());
        // The newest version that still has the `initialize` handshake: what servers and the
        // conformance suite of today speak. Older servers answer with their own and rmcp follows.
        let info = ClientConfig::new(capabilities, implementation)
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let roots = workspace_uri
            .map(|uri| vec![rmcp::model::Root::new(uri).with_name("workspace")])
            .unwrap_or_default();
        Self {
            info,
            roots,
            elicitation,
            shared,
        }
    }
}

impl rmcp::ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, ErrorData> {
        Ok(rmcp::model::ListRootsResult::new(self.roots.clone()))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(elicit(self.elicitation, &self.shared, request).await)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(answerer) = self.shared.answerer.get() else {
            return Err(refused("no one is there to approve the use of the model"));
        };
        let redactor = &self.shared.redactor;
        let messages = params
            .messages
            .into_iter()
            .map(|message| tooltrail_protocol::SamplingMessage {
                role: match message.role {
                    Role::User => "user".to_string(),
                    Role::Assistant => "assistant".to_string(),
                },
                // What the server asks of the model goes to the user's card, the provider and
                // the record: none of its own secrets.
                text: redactor
                    .redact(
                        &message
                            .content
                            .into_vec()
                            .iter()
                            .map(describe_sampling_part)
                            .collect::<Vec<_>>()
                            .join("\n"),
                    )
                    .into_owned(),
            })
            .collect();
        let reply = answerer
            .sample(SamplingAsk {
                server: self.shared.server.clone(),
                system_prompt: params
                    .system_prompt
                    .map(|prompt| redactor.redact(&prompt).into_owned()),
                messages,
                max_tokens: params.max_tokens,
                temperature: params.temperature,
            })
            .await;
        match reply {
            SamplingReply::Answer {
                text,
                model,
                stop_reason,
            } => {
                let message = rmcp::model::SamplingMessage::new(
                    Role::Assistant,
                    SamplingMessageContentBlock::text(text),
                );
                let result = CreateMessageResult::new(message, model);
                Ok(match stop_reason {
                    Some(reason) => result.with_stop_reason(reason),
                    None => result,
                })
            }
            SamplingReply::Refused(reason) => Err(refused(&reason)),
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let progress = self.shared.progress.record(&self.shared.server, params);
        // Nobody listening is fine.
        let _ = self.shared.live_progress.send(progress);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let text = match &params.data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|level| level.as_str().map(str::to_string))
            .unwrap_or_else(|| "log".to_string());
        self.shared.log.push(&format!("[{level}] {text}"));
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // Counted already, as it came off the wire (`noticing.rs`): this runs on a task of its
        // own, possibly after the answer that followed the notice.
        self.shared.tools_changed.notify_one();
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.shared
            .resources
            .updated(&self.shared.server, params.uri);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared.resources.list_changed(&self.shared.server);
    }
}

/// The error a server gets for a sampling request that was not run. MCP's examples use code -1
/// for a user's refusal.
/// A server's question to the user (elicitation), asked through the answerer: for a request
/// the server sends, and for a question a task asks (MCP Tasks).
pub(crate) async fn elicit(
    elicitation: ElicitationPolicy,
    shared: &Shared,
    request: ElicitRequestParams,
) -> ElicitResult {
    if let (
        ElicitationPolicy::AcceptDefaults,
        ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        },
    ) = (elicitation, &request)
    {
        let schema = serde_json::to_value(requested_schema).unwrap_or(Value::Null);
        return ElicitResult::new(ElicitationAction::Accept)
            .with_content(Value::Object(schema_defaults(&schema)));
    }
    let Some(answerer) = shared.answerer.get() else {
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let (message, request) = match request {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => {
            let schema = serde_json::to_value(&requested_schema).unwrap_or(Value::Null);
            let fields = tooltrail_protocol::form_fields(&schema);
            (
                message,
                tooltrail_protocol::ElicitationRequest::Form { fields },
            )
        }
        ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
            (message, tooltrail_protocol::ElicitationRequest::Url { url })
        }
        // A mode newer than rmcp's of today: we could not show it.
        _ => return ElicitResult::new(ElicitationAction::Decline),
    };
    // What the server asks goes on a card and into the record: none of its secrets.
    let clean = |text: &str| shared.redactor.redact(text).into_owned();
    let request = match request {
        tooltrail_protocol::ElicitationRequest::Url { url } => {
            tooltrail_protocol::ElicitationRequest::Url { url: clean(&url) }
        }
        form @ tooltrail_protocol::ElicitationRequest::Form { .. } => form,
    };
    let reply = answerer
        .elicit(ElicitationAsk {
            server: shared.server.clone(),
            message: clean(&message),
            request,
        })
        .await;
    let action = match reply.action {
        tooltrail_protocol::ElicitationAction::Accept => ElicitationAction::Accept,
        tooltrail_protocol::ElicitationAction::Decline => ElicitationAction::Decline,
        tooltrail_protocol::ElicitationAction::Cancel => ElicitationAction::Cancel,
    };
    let accepted = action == ElicitationAction::Accept;
    let result = ElicitResult::new(action);
    match reply.content {
        Some(content) if accepted => result.with_content(Value::Object(content)),
        Some(_) | None => result,
    }
}

/// A task's questions, asked as the server's own would be.
pub(crate) struct TaskAsker<'a> {
    pub elicitation: ElicitationPolicy,
    pub shared: &'a Shared,
}

#[async_trait::async_trait]
impl crate::task::TaskQuestions for TaskAsker<'_> {
    async fn elicit(&self, request: ElicitRequestParams) -> Value {
        serde_json::to_value(elicit(self.elicitation, self.shared, request).await)
            .unwrap_or_else(|_| serde_json::json!({"action": "decline"}))
    }
}

fn refused(reason: &str) -> ErrorData {
    ErrorData::new(ErrorCode(-1), tooltrail_protocol::sentence(reason), None)
}

/// A sampling message's part as the user reads it and the model gets it: text as it is, other
/// parts named.
fn describe_sampling_part(part: &SamplingMessageContentBlock) -> String {
    match part {
        SamplingMessageContentBlock::Text(text) => text.text.clone(),
        SamplingMessageContentBlock::Image(image) => format!("[an image, {}]", image.mime_type),
        SamplingMessageContentBlock::Audio(audio) => format!("[audio, {}]", audio.mime_type),
        SamplingMessageContentBlock::ToolUse(call) => format!("[a call to {}]", call.name),
        SamplingMessageContentBlock::ToolResult(_) => "[a tool result]".to_string(),
        // rmcp's enum is open to new kinds of content.
        _ => "[a part of a kind Tooltrail does not know]".to_string(),
    }
}

/// `{field: default}` for every property of an object schema that has a default.
pub(crate) fn schema_defaults(schema: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if let Some(default) = property.get("default") {
                out.insert(name.clone(), default.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use rmcp::model::NumberOrString;
    use serde_json::json;

    use super::*;

    #[test]
    fn defaults_come_from_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John"},
            "age": {"type": "integer", "default": 30},
            "free": {"type": "string"}
        }});
        assert_eq!(
            Value::Object(schema_defaults(&schema)),
            json!({"name": "John", "age": 30})
        );
    }

    #[test]
    fn progress_is_collected_per_token_even_before_the_call_watches_it() {
        let board = ProgressBoard::default();
        let token = ProgressToken(NumberOrString::Number(7));
        let param = |progress: f64| {
            let mut param = ProgressNotificationParam::new(token.clone(), progress);
            param.total = Some(2.0);
            param
        };
        board.record("s", param(1.0));
        board.watch(&token, "slow", None);
        board.record("s", param(2.0));
        let got = board.finish(&token);
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|p| p.tool.as_deref() == Some("slow")));
        assert_eq!(got[1].progress, 2.0);
        assert!(board.finish(&token).is_empty());
    }
}
