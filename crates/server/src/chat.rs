//! `POST /v1/chat/completions` (and `/api/chat/completions`): a request becomes one turn of
//! the agent, run by the host like a question from the command line, and its answer goes back
//! whole or as a stream.
//!
//! The turn runs in a task of its own, so that the record is complete whatever the client
//! does; the request holds a guard whose drop cancels it, so a client that goes away stops
//! the turn (the running command is killed and the call recorded as cancelled).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::OwnedSemaphorePermit;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;
use tooltrail_host::{Conversation, EventSink, TurnOptions, TurnOutcome};
use tooltrail_host::{Engine, HostError};
use tooltrail_protocol::{Event, EventBody, Message};
use tooltrail_settings::Overrides;
use tooltrail_store::NewConversation;

use crate::error::ApiError;
use crate::plan;
use crate::running::{Running, Update};
use crate::sessions::Lease;
use crate::state::{AppState, RequestTimer, Unattended};
use crate::stream;
use crate::summary::{Summary, client_calls, end_error, finish_reason};
use crate::wire::ChatCompletionRequest;

/// Marks API conversations in the history (`tooltrail conversations`, the app's sidebar).
pub const TITLE_PREFIX: &str = "API · ";

/// Longest title, in characters, after the prefix (the store's own limit for titles).
const TITLE_CHARS: usize = 80;

/// The screen of an API turn: events go to the request that waits for them, and the calls to
/// the metrics.
struct Screen {
    updates: UnboundedSender<Update>,
    metrics: Arc<crate::metrics::Metrics>,
}

impl EventSink for Screen {
    fn emit(&self, event: Event) {
        if let EventBody::ToolCallFinished {
            tool,
            status,
            duration_ms,
            ..
        } = &event.body
        {
            self.metrics.tool_call(tool, *status, *duration_ms);
        }
        // The request may be gone; the turn goes on to its end and is recorded all the same.
        let _ = self.updates.send(Update::Event(Box::new(event)));
    }
}

pub async fn completions(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let timer = RequestTimer::start(Arc::clone(&app.metrics));
    // The caller's W3C trace context: the question's spans join that trace.
    let traceparent = request
        .headers()
        .get("traceparent")
        .and_then(|value| value.to_str().ok())
        .map(str::to_string);
    let body = match axum::body::to_bytes(request.into_body(), app.body_limit).await {
        Ok(body) => body,
        Err(_) => return failed(timer, ApiError::too_large(app.body_limit)),
    };
    let request = match ChatCompletionRequest::parse(&body) {
        Ok(request) => request,
        Err(error) => return failed(timer, error),
    };
    let streams = request.streams();
    let running = match start(&app, request, timer, traceparent).await {
        Ok(running) => running,
        Err((timer, error)) => return failed(timer, error),
    };
    if streams {
        stream::respond(running)
    } else {
        whole(running).await
    }
}

fn failed(timer: RequestTimer, error: ApiError) -> Response {
    timer.finish(false, Some(&error.code));
    error.into_response()
}

type Refusal = (RequestTimer, ApiError);

/// Checks the request, takes its conversation and starts its turn.
async fn start(
    app: &Arc<AppState>,
    request: ChatCompletionRequest,
    timer: RequestTimer,
    traceparent: Option<String>,
) -> Result<Running, Refusal> {
    macro_rules! check {
        ($result:expr) => {
            match $result {
                Ok(value) => value,
                Err(error) => return Err((timer, ApiError::from(error))),
            }
        };
    }
    if app.draining.is_cancelled() {
        return Err((timer, ApiError::shutting_down()));
    }
    let Ok(permit) = Arc::clone(&app.slots).try_acquire_owned() else {
        return Err((timer, ApiError::busy(app.max_concurrent)));
    };
    let sent = check!(request.messages());
    let declared = check!(request.declared());
    let choice = check!(request.choice());
    let lease = match &request.session_id {
        Some(id) => Some(check!(app.sessions.lease(id))),
        None => None,
    };
    let ctx = lease
        .as_ref()
        .map_or_else(|| app.sessions.shared().clone(), |lease| lease.ctx.clone());
    let workspace = ctx.workspace.root().display().to_string();
    let mut engine = check!(app.host.engine(&overrides(app, &request), ctx).await);
    // Nobody sits at an HTTP client's end to fill in a server's form or allow it the model.
    engine.answer_servers_with(Arc::new(tooltrail_host::DeclineAll(
        "the HTTP API has no one to ask: an MCP server's request for input or for the model \
         is declined there"
            .to_string(),
    )));
    let declared = plan::or_default(declared, app.default_tools, engine.agent.tools());
    let mut options = check!(plan::tools(declared, choice, engine.agent.tools()));
    options.temperature = request.temperature;
    options.max_tokens = request.max_completion_tokens.or(request.max_tokens);

    // The conversation: the session's, or a new one for this request alone.
    let known = lease.as_ref().and_then(|lease| lease.conversation.clone());
    let conversation = match known {
        Some(id) => check!(app.host.begin(Some(&id))),
        None => {
            // Checked before anything is written, so a bad request leaves no trace.
            check!(plan::new_messages(&[], sent.clone()));
            let new = NewConversation {
                workspace: Some(workspace.clone()),
                title: title(&sent),
                model: None,
                provider: Some(engine.settings.base_url.clone()),
            };
            let id = check!(create_conversation(app, &new).await);
            let id = match &lease {
                Some(lease) => app.sessions.adopt(lease, id),
                None => id,
            };
            check!(app.host.begin(Some(&id)))
        }
    };
    let input = match plan::new_messages(&conversation.messages, sent) {
        Ok(input) => input,
        Err(error) => {
            app.host.end(conversation);
            return Err((timer, error));
        }
    };
    Ok(spawn_turn(
        app,
        Turn {
            engine,
            conversation,
            input,
            options,
            lease,
            permit,
            traceparent,
        },
        timer,
    ))
}

/// Creates the conversation ahead of its first turn, to keep its API title and provider.
async fn create_conversation(app: &AppState, new: &NewConversation) -> Result<String, HostError> {
    app.host
        .store()
        .create_conversation(new)
        .map_err(HostError::from)
}

/// The model flags of `tooltrail serve` pin the model; without `--model`, the request's
/// `model` is used as `--model` would be (empty, or `tooltrail`, leaves the configured one).
fn overrides(app: &AppState, request: &ChatCompletionRequest) -> Overrides {
    let asked = request
        .model
        .clone()
        .filter(|model| !model.trim().is_empty() && model != "tooltrail");
    Overrides {
        model: app.overrides.model.clone().or(asked),
        ..app.overrides.clone()
    }
}

/// `API · ` and the first line of the last question.
fn title(sent: &[Message]) -> String {
    let question = sent
        .iter()
        .rev()
        .find_map(|message| match message {
            Message::User { content } => Some(content.as_str()),
            Message::System { .. } | Message::Assistant { .. } | Message::Tool { .. } => None,
        })
        .unwrap_or_default();
    let line = question
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    let mut title: String = line.chars().take(TITLE_CHARS).collect();
    if line.chars().count() > TITLE_CHARS {
        title.push('…');
    }
    format!("{TITLE_PREFIX}{title}")
}

struct Turn {
    engine: Engine,
    conversation: Conversation,
    input: Vec<Message>,
    options: TurnOptions,
    lease: Option<Lease>,
    permit: OwnedSemaphorePermit,
    traceparent: Option<String>,
}

fn spawn_turn(app: &Arc<AppState>, turn: Turn, timer: RequestTimer) -> Running {
    let (updates, receiver) = unbounded_channel();
    let cancel: CancellationToken = app.turns.child_token();
    let guard = cancel.clone().drop_guard();
    let host = Arc::clone(&app.host);
    let sink = host.sink_in_trace(
        Box::new(Screen {
            updates: updates.clone(),
            metrics: Arc::clone(&app.metrics),
        }),
        turn.traceparent.as_deref(),
    );
    let approver = Unattended(app.approve);
    let conversation_id = turn.conversation.id.clone();
    let session_id = turn.lease.as_ref().map(|lease| lease.id.clone());
    tokio::spawn(async move {
        let Turn {
            engine,
            mut conversation,
            input,
            options,
            lease,
            permit,
            traceparent: _,
        } = turn;
        let outcome = sink
            .traced(engine.agent.run(
                &mut conversation,
                input,
                &options,
                &sink,
                &approver,
                &cancel,
            ))
            .await;
        host.end(conversation);
        // The session is idle and the slot free once the turn is over, whether or not the
        // client is still there to read its end.
        drop(lease);
        drop(permit);
        let _ = updates.send(Update::Done(outcome));
    });
    Running {
        updates: receiver,
        guard,
        id: format!("chatcmpl-{}", uuid::Uuid::new_v4().simple()),
        created: now_secs(),
        session_id,
        conversation_id,
        timer: Some(timer),
    }
}

/// Waits for the turn and answers with one `chat.completion`.
async fn whole(mut running: Running) -> Response {
    let mut summary = Summary::default();
    let outcome = loop {
        match running.updates.recv().await {
            Some(Update::Event(event)) => summary.observe(&event),
            Some(Update::Done(outcome)) => break Some(outcome),
            None => break None,
        }
    };
    let timer = running.timer.take();
    let error = match &outcome {
        None => Some(ApiError::internal("The answer stopped unexpectedly.")),
        Some(outcome) => end_error(outcome, &summary),
    };
    let (Some(outcome), None) = (outcome, &error) else {
        let error = error.unwrap_or_else(|| ApiError::internal("The answer stopped unexpectedly."));
        if let Some(timer) = timer {
            timer.finish(false, Some(&error.code));
        }
        return error.into_response();
    };
    let with_tools = !summary.tools_called.is_empty() || !outcome.pending_calls.is_empty();
    let body = completion(&running, &summary, &outcome);
    if let Some(timer) = timer {
        timer.finish(with_tools, None);
    }
    Json(body).into_response()
}

fn completion(running: &Running, summary: &Summary, outcome: &TurnOutcome) -> Value {
    let mut message = json!({
        "role": "assistant",
        "content": if outcome.text.is_empty() && !outcome.pending_calls.is_empty() {
            Value::Null
        } else {
            json!(outcome.text)
        },
    });
    if !outcome.pending_calls.is_empty() {
        message["tool_calls"] = json!(client_calls(&outcome.pending_calls));
    }
    json!({
        "id": running.id,
        "object": "chat.completion",
        "created": running.created,
        "model": summary.model,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": finish_reason(outcome, summary),
        }],
        "usage": summary.usage,
        "tool_execution": summary.execution(running.session_id.clone(), running.conversation_id.clone()),
    })
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0)
}
