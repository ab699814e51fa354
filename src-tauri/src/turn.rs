//! Starting a turn: the engine from the host, and the sink that commits each event and then
//! sends it to the window's Channel.

use tauri::ipc::Channel;
use tauri::{AppHandle, Manager};
use tooltrail_host::EventSink;
use tooltrail_host::Host;
use tooltrail_protocol::Event;
use tooltrail_settings::Overrides;

use std::sync::Arc;

use crate::approvals::WindowApprover;
use crate::error::{CommandError, CommandResult};
use crate::questions::WindowAsker;
use crate::turns::RunningTurns;
use crate::workspace::WorkspaceState;

/// Sends each event to the window (after the host's sink has committed it).
pub(crate) struct WindowSink {
    pub(crate) channel: Channel<Event>,
}

impl EventSink for WindowSink {
    fn emit(&self, event: Event) {
        // A closed window no longer listens; the turn still finishes and is kept.
        let _ = self.channel.send(event);
    }
}

/// Starts answering `text` in the conversation `conversation_id` (a new one when `None`) and
/// returns the conversation's id at once; the turn's events follow on `channel`.
pub async fn start(
    app: AppHandle,
    conversation_id: Option<String>,
    text: String,
    attachments: Vec<tooltrail_protocol::AttachmentSource>,
    channel: Channel<Event>,
) -> CommandResult<String> {
    if text.trim().is_empty() {
        return Err(CommandError::new("empty", "The question is empty."));
    }
    let (ctx, _) = app.state::<WorkspaceState>().context()?;
    let ctx = ctx.with_user(Arc::new(WindowAsker { app: app.clone() }));
    let host = app.state::<Host>();
    let mut engine = host
        .engine_telling(
            &Overrides::default(),
            ctx,
            &crate::mcp::tell_local_model(&app),
        )
        .await?;
    engine.answer_servers_with(Arc::new(crate::server_requests::WindowRequests {
        app: app.clone(),
    }));
    let mut conversation = host.begin(conversation_id.as_deref())?;
    let input = match crate::mcp_content::question_input(
        &app,
        &engine,
        &conversation.messages,
        &text,
        &attachments,
    )
    .await
    {
        Ok(input) => input,
        Err(error) => {
            host.end(conversation);
            return Err(error);
        }
    };
    let id = conversation.id.clone();
    let cancel = app.state::<RunningTurns>().start(&id);
    let task_app = app.clone();
    tauri::async_runtime::spawn(async move {
        // The whole engine, not only the parts the turn reads: its route for the servers'
        // requests lives as long as it does.
        let engine = engine;
        let host = task_app.state::<Host>();
        let sink = host.sink(Box::new(WindowSink { channel }));
        let approver = WindowApprover {
            app: task_app.clone(),
            rules: engine.rules.clone(),
        };
        engine.warm_for(&conversation).await;
        sink.traced(engine.agent.run(
            &mut conversation,
            input,
            &tooltrail_host::TurnOptions::default(),
            &sink,
            &approver,
            &cancel,
        ))
        .await;
        task_app.state::<RunningTurns>().finish(&conversation.id);
        host.end(conversation);
    });
    Ok(id)
}
