//! The commands the window may call. Each parses its arguments, calls one service and maps the
//! error; the work lives in the modules they call.

use std::path::PathBuf;

use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;
use tooltrail_protocol::{ApprovalReply, Event};

use crate::approvals::PendingApprovals;
use crate::conversations::{ConversationSummary, Conversations, LoadedConversation};
use crate::error::{CommandError, CommandResult};
use crate::history::History;
use crate::mcp::{McpOverview, McpTools};
use crate::recent::{self, RecentWorkspace};
use crate::settings::{self, EndpointInfo};
use crate::turns::RunningTurns;
use crate::workspace::{self, WorkspaceInfo, WorkspaceState};

/// What the first-run screen shows.
#[derive(Debug, Clone, Serialize)]
pub struct AppInfo {
    pub version: &'static str,
    pub endpoint: EndpointInfo,
}

#[tauri::command]
pub fn app_info() -> AppInfo {
    AppInfo {
        version: env!("CARGO_PKG_VERSION"),
        endpoint: settings::endpoint_info(),
    }
}

/// Opens `path`, or the folder the user picks in the native dialog when `path` is absent.
/// `None` when the user closed the dialog.
#[tauri::command]
pub async fn open_workspace(
    app: AppHandle,
    path: Option<String>,
) -> CommandResult<Option<WorkspaceInfo>> {
    let path = match path {
        Some(path) => PathBuf::from(path),
        None => {
            let (tx, rx) = tokio::sync::oneshot::channel();
            app.dialog()
                .file()
                .set_title("Open a project folder")
                .pick_folder(move |picked| {
                    let _ = tx.send(picked);
                });
            let picked = rx.await.ok().flatten();
            let Some(picked) = picked else {
                return Ok(None);
            };
            picked
                .into_path()
                .map_err(|_| CommandError::new("not_found", "That folder cannot be opened."))?
        }
    };
    workspace::open(&app, &path).map(Some)
}

#[tauri::command]
pub fn current_workspace(state: State<'_, WorkspaceState>) -> Option<WorkspaceInfo> {
    state.info()
}

#[tauri::command]
pub fn recent_workspaces() -> Vec<RecentWorkspace> {
    recent::load()
}

/// Starts a turn and returns its conversation's id; the events stream over `on_event`.
#[tauri::command]
pub async fn send_message(
    app: AppHandle,
    conversation_id: Option<String>,
    text: String,
    on_event: Channel<Event>,
) -> CommandResult<String> {
    crate::turn::start(app, conversation_id, text, on_event).await
}

/// Stops the running turn of a conversation; false when none was running.
#[tauri::command]
pub fn cancel_turn(turns: State<'_, RunningTurns>, conversation_id: String) -> bool {
    turns.cancel(&conversation_id)
}

#[tauri::command]
pub fn answer_approval(
    pending: State<'_, PendingApprovals>,
    call_id: String,
    reply: ApprovalReply,
) -> CommandResult<()> {
    pending.answer(&call_id, reply)
}

/// The conversations of the open folder, newest first.
#[tauri::command]
pub fn list_conversations(
    workspace: State<'_, WorkspaceState>,
    history: State<'_, History>,
    conversations: State<'_, Conversations>,
) -> Vec<ConversationSummary> {
    let Some(info) = workspace.info() else {
        return Vec::new();
    };
    match history.list(&info.path) {
        Some(mut list) => {
            for summary in &mut list {
                summary.running |= conversations.is_running(&summary.id);
            }
            list
        }
        None => conversations.list(&info.path),
    }
}

/// A conversation's events, for the window to redraw it.
#[tauri::command]
pub fn load_conversation(
    history: State<'_, History>,
    conversations: State<'_, Conversations>,
    conversation_id: String,
) -> CommandResult<LoadedConversation> {
    match history.events(&conversation_id) {
        Some(events) => Ok(LoadedConversation { events }),
        None => conversations.load(&conversation_id),
    }
}

/// The MCP servers of `mcp.json` for the open folder, with their state and tool counts.
#[tauri::command]
pub async fn mcp_servers(state: State<'_, McpTools>) -> CommandResult<McpOverview> {
    Ok(state.overview().await)
}
