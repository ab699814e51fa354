//! Starting a turn: the model settings, the agent for the open folder, and the sink that
//! forwards each event to the window's Channel (and keeps it for redrawing).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tauri::ipc::Channel;
use tauri::{AppHandle, Manager};
use tooltrail_agent::{Agent, AgentConfig, EventSink};
use tooltrail_llm::{LlmClient, LlmConfig};
use tooltrail_protocol::Event;

use crate::approvals::WindowApprover;
use crate::conversations::Conversations;
use crate::error::{CommandError, CommandResult, sentence};
use crate::history::History;
use crate::mcp::McpTools;
use crate::settings;
use crate::turns::RunningTurns;
use crate::workspace::WorkspaceState;

/// Records each event (committed before it is shown, so nothing shown is ever lost), then sends
/// it to the window.
struct WindowSink {
    app: AppHandle,
    channel: Channel<Event>,
}

impl EventSink for WindowSink {
    fn emit(&self, event: Event) {
        let history = self.app.state::<History>();
        if history.is_stored() {
            history.record(&event);
        } else {
            self.app.state::<Conversations>().record(&event);
        }
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
    channel: Channel<Event>,
) -> CommandResult<String> {
    if text.trim().is_empty() {
        return Err(CommandError::new("empty", "The question is empty."));
    }
    let (mut ctx, workspace) = app.state::<WorkspaceState>().context()?;
    let settings = settings::resolve()?;
    ctx.limits.default_timeout_secs = settings.command_timeout_secs;
    let llm = client_for(&settings).await?;
    let mut tools = app.state::<McpTools>().registry(ctx.workspace.root()).await;
    if !settings.disabled_tools.is_empty() {
        tools = Arc::new(tools.without(&settings.disabled_tools));
    }
    let history = app.state::<History>();
    // The same standing rules as `tooltrail rules` lists: a deny rule refuses here too.
    let rules = Arc::new(history.rules(&workspace.path));
    let agent = Agent::new(
        llm,
        tools,
        ctx,
        AgentConfig {
            max_rounds: settings.max_rounds,
            max_result_bytes: settings.max_result_bytes,
            temperature: settings.temperature,
            ..AgentConfig::default()
        },
    )
    .with_rules(rules.clone());
    let mut conversation = app.state::<Conversations>().begin_turn(
        conversation_id.as_deref(),
        PathBuf::from(&workspace.path),
        &text,
        |id| history.messages(id),
    )?;
    let id = conversation.id.clone();
    let cancel = app.state::<RunningTurns>().start(&id);
    let task_app = app.clone();
    tauri::async_runtime::spawn(async move {
        let sink = WindowSink {
            app: task_app.clone(),
            channel,
        };
        let approver = WindowApprover {
            app: task_app.clone(),
            rules,
        };
        agent
            .run_turn(&mut conversation, &text, &sink, &approver, &cancel)
            .await;
        task_app.state::<RunningTurns>().finish(&conversation.id);
        task_app.state::<Conversations>().end_turn(conversation);
    });
    Ok(id)
}

/// A client for the configured model, or the endpoint's first model when none is configured.
async fn client_for(settings: &settings::Settings) -> CommandResult<LlmClient> {
    let mut config = LlmConfig::new(settings.base_url.clone(), String::new());
    config.api_key = settings.api_key.clone();
    config.idle_timeout = Duration::from_secs(settings.request_timeout_secs);
    let unreachable =
        |error: tooltrail_llm::LlmError| CommandError::new("model", sentence(&error.to_string()));
    let model = match &settings.model {
        Some(model) => model.clone(),
        None => {
            let lister = LlmClient::new(config.clone()).map_err(unreachable)?;
            let models = lister.list_models().await.map_err(unreachable)?;
            models.into_iter().next().ok_or_else(|| {
                CommandError::new(
                    "model",
                    format!(
                        "No model is set and {} lists none; set `model` in {} or TOOLTRAIL_MODEL.",
                        settings.base_url,
                        settings.config_path.display()
                    ),
                )
            })?
        }
    };
    config.model = model;
    LlmClient::new(config).map_err(unreachable)
}
