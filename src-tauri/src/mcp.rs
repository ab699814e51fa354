//! The MCP servers of `mcp.json` for the open folder. They are started in the background as soon
//! as a folder opens, so the first question does not wait for their handshakes (the host keeps
//! them, and their tools, for every question; it starts them again when another folder opens
//! or `mcp.json` has changed), and stopped when the app quits. A server that asks for sign-in
//! opens the browser (from a question, or the Sign in button of the sidebar and Settings → MCP).

use std::path::PathBuf;

use tauri::{AppHandle, Emitter, Manager};
use tooltrail_host::Host;

use crate::error::CommandResult;

/// Sent (without a payload) when the MCP servers of the open folder have started or failed.
pub const MCP_CHANGED_EVENT: &str = "mcp-changed";

/// Sent (without a payload) each time an MCP task an earlier run left open has ended and its
/// result was written under its call (History reads its calls again).
pub const TASKS_PICKED_UP_EVENT: &str = "tasks-picked-up";

/// Sent with a `LocalModelStatus` while Tooltrail's own model server starts for the folder or
/// a question.
pub const LOCAL_MODEL_EVENT: &str = "local-model";

/// What tells the window of the local model's start.
pub fn tell_local_model(
    app: &AppHandle,
) -> impl Fn(tooltrail_protocol::LocalModelStatus) + Send + Sync + use<> {
    let app = app.clone();
    move |status| {
        let _ = app.emit(LOCAL_MODEL_EVENT, status);
    }
}

/// Starts (or restarts, when `mcp.json` changed) the servers of `root` in the background, and
/// tells the window when they are up or have failed. When questions go to Tooltrail's own
/// model server, it starts too and reads the prefix every question begins with.
pub fn start_in_background(app: &AppHandle, root: PathBuf) {
    let starter = app.clone();
    tauri::async_runtime::spawn(async move {
        let tell = tell_local_model(&starter);
        for failure in starter.state::<Host>().warm_up_folder(&root, &tell).await {
            eprintln!(
                "tooltrail: going on without MCP server {:?}: {}",
                failure.server, failure.error
            );
        }
        let _ = starter.emit(MCP_CHANGED_EVENT, ());
        // Tasks calls of an earlier run left open at the folder's servers are followed to
        // their ends, for as long as the app runs (see `tooltrail_host::open_tasks`).
        let cancel = tokio_util::sync::CancellationToken::new();
        let tell = starter.clone();
        let ended = move |_: &tooltrail_host::open_tasks::PickedUp| {
            let _ = tell.emit(TASKS_PICKED_UP_EVENT, ());
        };
        starter
            .state::<Host>()
            .pick_up_tasks(&root, &cancel, &ended)
            .await;
    });
}

/// Signs in to `server` of the open folder: the browser opens on its sign-in page, and the
/// window hears `mcp-changed` as the sign-in moves (waiting, signed in, failed). Returns when
/// it is over; the reason of a failure is in the server's state too.
#[tauri::command]
pub async fn mcp_sign_in(app: AppHandle, server: String) -> CommandResult<()> {
    let result = app.state::<Host>().toolbox().sign_in(&server).await;
    finish(&app, result).await
}

/// Signs out of `server` of the open folder: its tokens are revoked where the server supports
/// it and forgotten.
#[tauri::command]
pub async fn mcp_sign_out(app: AppHandle, server: String) -> CommandResult<()> {
    let result = app.state::<Host>().toolbox().sign_out(&server).await;
    finish(&app, result).await
}

/// After a sign-in or out: the folder's servers start again (their tools change with it) and
/// the window hears of it.
async fn finish(
    app: &AppHandle,
    result: Result<PathBuf, tooltrail_mcp::McpError>,
) -> CommandResult<()> {
    if let Ok(root) = &result {
        let _ = app.state::<Host>().warm_up(root).await;
    }
    let _ = app.emit(MCP_CHANGED_EVENT, ());
    result.map(|_| ()).map_err(Into::into)
}

/// Sign-ins for the app, kept in the keychain: a sign-in the user made is renewed through the
/// browser when it runs out (a question asks again instead of failing); a server never signed
/// in to shows Sign in instead of opening a browser unasked. Each change of a sign-in's state
/// is announced to the window once `notify` holds its handle (set when the app has started).
pub fn sign_in_options(
    notify: std::sync::Arc<std::sync::OnceLock<AppHandle>>,
) -> tooltrail_mcp::SignInOptions {
    let mut options = tooltrail_host::mcp_sign_in::with_policy(tooltrail_mcp::SignInPolicy::Renew(
        tooltrail_mcp::Browser::System,
    ));
    options.observer = Some(std::sync::Arc::new(move |_server: &str, _state: &_| {
        if let Some(app) = notify.get() {
            let _ = app.emit(MCP_CHANGED_EVENT, ());
        }
    }));
    options
}
