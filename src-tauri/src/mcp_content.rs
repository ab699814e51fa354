//! What the composer offers besides text: the open folder's files and its MCP servers'
//! resources to attach (`@`), and the servers' prompts (`/`) with their arguments' completions.
//!
//! An attached resource is read when it is attached, so the chip shows its size, and read
//! again when the question is sent, so the model gets it as it is then. Where the server
//! offers subscriptions, attaching subscribes; each `notifications/resources/updated` is sent
//! to the window as [`RESOURCE_UPDATED_EVENT`], and the chip reads the resource again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Mutex;

use serde::Serialize;
use tauri::{AppHandle, Emitter, Manager, State};
use tooltrail_host::{Host, mcp_content};
use tooltrail_mcp::ResourceNotice;
use tooltrail_protocol::{
    Attachment, AttachmentSource, Message, PromptItem, PromptMessageItem, ResourceItem,
};
use ts_rs::TS;

use crate::error::{CommandError, CommandResult};
use crate::workspace::WorkspaceState;

/// Sent with a [`ResourceUpdated`] when a server says an attached resource changed.
pub const RESOURCE_UPDATED_EVENT: &str = "resource-updated";
/// Files the `@` picker lists at most.
const MAX_FILES: usize = 50;

/// The payload of [`RESOURCE_UPDATED_EVENT`].
#[derive(Debug, Clone, Serialize, PartialEq, Eq, TS)]
pub struct ResourceUpdated {
    pub server: String,
    pub uri: String,
}

/// The open folder's servers' resources and prompts.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, TS)]
pub struct McpContent {
    pub resources: Vec<ResourceItem>,
    pub prompts: Vec<PromptItem>,
    /// One sentence per server that could not list them.
    pub problems: Vec<String>,
}

/// The servers whose resource notices are already forwarded to the window.
#[derive(Default)]
pub struct WatchedServers(Mutex<BTreeSet<String>>);

fn root(app: &AppHandle) -> CommandResult<std::path::PathBuf> {
    let (_, info) = app.state::<WorkspaceState>().context()?;
    Ok(std::path::PathBuf::from(info.path))
}

fn content_error(error: tooltrail_host::HostError) -> CommandError {
    CommandError::new("content", tooltrail_protocol::sentence(&error.to_string()))
}

/// The resources and prompts of the open folder's MCP servers.
#[tauri::command]
pub async fn mcp_content(app: AppHandle) -> CommandResult<McpContent> {
    let root = root(&app)?;
    let host = app.state::<Host>();
    let resources = host.mcp_resources(&root).await;
    let prompts = host.mcp_prompts(&root).await;
    let mut problems = resources.problems;
    for problem in prompts.problems {
        if !problems.contains(&problem) {
            problems.push(problem);
        }
    }
    Ok(McpContent {
        resources: resources.items,
        prompts: prompts.items,
        problems,
    })
}

/// Files of the open folder whose path contains `query` (any case), as paths relative to it,
/// at most [`MAX_FILES`]; the files ignore rules hide are left out.
#[tauri::command]
pub async fn workspace_files(app: AppHandle, query: String) -> CommandResult<Vec<String>> {
    let root = root(&app)?;
    tauri::async_runtime::spawn_blocking(move || files_matching(&root, &query))
        .await
        .map_err(|error| CommandError::new("files", error.to_string()))
}

fn files_matching(root: &Path, query: &str) -> Vec<String> {
    let needle = query.to_lowercase();
    let mut found = Vec::new();
    for entry in ignore::WalkBuilder::new(root).build().flatten() {
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let path = relative
            .components()
            .map(|part| part.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if path.to_lowercase().contains(&needle) {
            found.push(path);
            if found.len() >= MAX_FILES {
                break;
            }
        }
    }
    found.sort();
    found
}

/// Reads an attachment (and, for a resource, subscribes to its updates where the server can).
#[tauri::command]
pub async fn read_attachment(
    app: AppHandle,
    watched: State<'_, WatchedServers>,
    source: AttachmentSource,
) -> CommandResult<Attachment> {
    let root = root(&app)?;
    let host = app.state::<Host>();
    let attachment = host.attach(&root, &source).await.map_err(content_error)?;
    if let AttachmentSource::Resource { server, .. } = &source {
        let fresh = watched
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(server.clone());
        if fresh {
            forward_notices(&app, &root, server).await;
        }
    }
    Ok(attachment)
}

/// Sends the window each update of `server`'s subscribed resources, for the app's life.
async fn forward_notices(app: &AppHandle, root: &Path, server: &str) {
    let host = app.state::<Host>();
    for mut notices in host.resource_notices(root).await {
        let app = app.clone();
        let server = server.to_string();
        tauri::async_runtime::spawn(async move {
            loop {
                match notices.recv().await {
                    Ok(ResourceNotice::Updated { server: from, uri }) if from == server => {
                        let _ = app.emit(
                            RESOURCE_UPDATED_EVENT,
                            ResourceUpdated { server: from, uri },
                        );
                    }
                    Ok(ResourceNotice::Updated { .. } | ResourceNotice::ListChanged { .. }) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }
}

/// The messages of a prompt for the arguments the user gave.
#[tauri::command]
pub async fn get_mcp_prompt(
    app: AppHandle,
    server: String,
    prompt: String,
    arguments: BTreeMap<String, String>,
) -> CommandResult<Vec<PromptMessageItem>> {
    let root = root(&app)?;
    let host = app.state::<Host>();
    let text = host
        .mcp_prompt(&root, &server, &prompt, &arguments)
        .await
        .map_err(content_error)?;
    Ok(text.messages)
}

/// The server's suggestions for a prompt's argument as typed so far, knowing the arguments
/// already filled.
#[tauri::command]
pub async fn complete_prompt_argument(
    app: AppHandle,
    server: String,
    prompt: String,
    argument: String,
    value: String,
    arguments: BTreeMap<String, String>,
) -> CommandResult<Vec<String>> {
    let root = root(&app)?;
    let host = app.state::<Host>();
    host.complete_prompt_argument(&root, &server, &prompt, &argument, &value, &arguments)
        .await
        .map_err(content_error)
}

/// The messages a question from the window adds: its text, with the attachments read now and
/// cut to the room the window leaves (see `tooltrail_host::mcp_content`).
pub async fn question_input(
    app: &AppHandle,
    engine: &tooltrail_host::Engine,
    history: &[Message],
    text: &str,
    attachments: &[AttachmentSource],
) -> CommandResult<Vec<Message>> {
    if attachments.is_empty() {
        return Ok(vec![Message::user(text)]);
    }
    let root = root(app)?;
    let host = app.state::<Host>();
    let mut read = Vec::new();
    for source in attachments {
        read.push(host.attach(&root, source).await.map_err(content_error)?);
    }
    let window = engine
        .agent
        .context_window(&tokio_util::sync::CancellationToken::new())
        .await;
    let taken = mcp_content::tokens_taken(&engine.agent, history);
    let room = mcp_content::attachment_room(window.tokens, engine.agent.config().max_tokens, taken);
    mcp_content::question_messages(None, text, read, room).map_err(content_error)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn files_match_any_part_of_their_path_and_ignored_ones_are_left_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
        std::fs::write(dir.path().join("src/deep/Main.rs"), "").unwrap();
        std::fs::write(dir.path().join("README.md"), "").unwrap();
        std::fs::write(dir.path().join("main.log"), "").unwrap();
        std::fs::write(dir.path().join(".ignore"), "*.log\n").unwrap();
        assert_eq!(files_matching(dir.path(), "main"), vec!["src/deep/Main.rs"]);
        assert_eq!(
            files_matching(dir.path(), ""),
            vec!["README.md", "src/deep/Main.rs"]
        );
    }
}
