//! The open folder: its tool context, its watcher and the window title that names it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tauri::{AppHandle, Emitter, Manager};
use tooltrail_host::ToolContext;
use tooltrail_host::{Host, left_as_tooltrail_left};
use ts_rs::TS;

use crate::error::{CommandError, CommandResult};
use crate::recent::{self, RecentWorkspace};
use crate::watcher::{self, FolderWatch};

/// The name of the event that carries [`watcher::FilesChanged`] to the window.
pub const FILES_CHANGED_EVENT: &str = "files-changed";

/// What the UI knows about the open folder.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, TS)]
pub struct WorkspaceInfo {
    pub path: String,
    pub name: String,
    /// False when the folder could not be watched; the UI then does not promise to notice
    /// changes.
    pub watched: bool,
}

struct Open {
    info: WorkspaceInfo,
    ctx: ToolContext,
    _watch: Option<FolderWatch>,
}

/// The folder open in the window, if any.
#[derive(Default)]
pub struct WorkspaceState {
    open: Mutex<Option<Open>>,
}

impl WorkspaceState {
    pub fn info(&self) -> Option<WorkspaceInfo> {
        self.lock().as_ref().map(|open| open.info.clone())
    }

    /// The open folder's root, as turns record it.
    pub fn folder(&self) -> CommandResult<String> {
        self.info()
            .map(|info| info.path)
            .ok_or_else(CommandError::no_workspace)
    }

    /// The tool context for a turn, and the folder it belongs to.
    pub fn context(&self) -> CommandResult<(ToolContext, WorkspaceInfo)> {
        self.lock()
            .as_ref()
            .map(|open| (open.ctx.clone(), open.info.clone()))
            .ok_or_else(CommandError::no_workspace)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Open>> {
        match self.open.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

/// The window title for a folder.
pub fn title(name: &str) -> String {
    format!("Tooltrail — {name}")
}

/// Opens `path` in the window: confines the tools to it, watches it, names the window after it
/// and remembers it among the recent folders.
pub fn open(app: &AppHandle, path: &Path) -> CommandResult<WorkspaceInfo> {
    let root: PathBuf = path.canonicalize().map_err(|_| {
        CommandError::new(
            "not_found",
            format!("The folder {} does not exist.", path.display()),
        )
    })?;
    if !root.is_dir() {
        return Err(CommandError::new(
            "not_a_directory",
            format!("{} is not a folder.", root.display()),
        ));
    }
    let ctx = ToolContext::open(&root).map_err(|error| {
        CommandError::new(
            "workspace",
            format!("The folder cannot be opened: {error}."),
        )
    })?;
    let name = root
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| root.display().to_string());
    let emitter = app.clone();
    let store = Arc::clone(app.state::<Host>().store());
    let watched_root = root.clone();
    let own = move |paths: &[String]| left_as_tooltrail_left(&store, &watched_root, paths);
    let watch = watcher::watch(&root, own, move |batch| {
        let _ = emitter.emit(FILES_CHANGED_EVENT, batch);
    })
    .ok();
    let info = WorkspaceInfo {
        path: root.display().to_string(),
        name: name.clone(),
        watched: watch.is_some(),
    };
    let state = app.state::<WorkspaceState>();
    *state.lock() = Some(Open {
        info: info.clone(),
        ctx,
        _watch: watch,
    });
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.set_title(&title(&name));
    }
    recent::remember(RecentWorkspace {
        path: info.path.clone(),
        name,
        opened_ms: crate::now_ms(),
    });
    // Start the folder's MCP servers now, so the first question does not wait for them.
    crate::mcp::start_in_background(app, root);
    Ok(info)
}
