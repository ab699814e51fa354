//! The MCP servers of `mcp.json` for the open folder. They are started in the background as soon
//! as a folder opens, so the first question does not wait for their handshakes (the host keeps
//! them, and their tools, for every question; it starts them again when another folder opens
//! or `mcp.json` has changed), and stopped when the app quits.

use std::path::PathBuf;

use tauri::{AppHandle, Emitter, Manager};
use tooltrail_host::Host;

/// Sent (without a payload) when the MCP servers of the open folder have started or failed.
pub const MCP_CHANGED_EVENT: &str = "mcp-changed";

/// Starts (or restarts, when `mcp.json` changed) the servers of `root` in the background, and
/// tells the window when they are up or have failed.
pub fn start_in_background(app: &AppHandle, root: PathBuf) {
    let starter = app.clone();
    tauri::async_runtime::spawn(async move {
        for failure in starter.state::<Host>().warm_up(&root).await {
            eprintln!(
                "tooltrail: going on without MCP server {:?}: {}",
                failure.server, failure.error
            );
        }
        let _ = starter.emit(MCP_CHANGED_EVENT, ());
    });
}
