//! The open folder's project instructions (`AGENTS.md` and the like) as the welcome screen shows
//! them, and the folder's switch that leaves them out. The switch is kept with the per-folder
//! preferences the command line reads too (`tooltrail_host::FolderPreferences`).

use serde::Serialize;
use tauri::State;
use tooltrail_host::{FolderPreferences, InstructionsLeftOut, instructions};
use ts_rs::TS;

use crate::error::{CommandError, CommandResult, sentence};
use crate::workspace::WorkspaceState;

/// The project instructions of the open folder.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, TS)]
pub struct InstructionsView {
    /// The file new conversations follow, relative to the folder (`AGENTS.md`,
    /// `../AGENTS.md`); `None` when the folder has none.
    pub file: Option<String>,
    /// Whether new conversations follow it (turned off per folder).
    pub on: bool,
    /// The file is longer than new conversations take of it (`limit_kib`): they get
    /// its beginning.
    pub cut: bool,
    /// The most of the file a conversation takes, in KiB.
    pub limit_kib: u32,
    /// The files found before it (or instead of one) and left out, with why: a link out of
    /// the folder, or no ordinary file.
    pub left_out: Vec<InstructionsLeftOut>,
}

fn view(workspace: &WorkspaceState) -> CommandResult<InstructionsView> {
    let (ctx, _) = workspace.context()?;
    let root = ctx.workspace.root();
    let lookup = instructions::look(root);
    let limit = instructions::MAX_BYTES;
    Ok(InstructionsView {
        cut: lookup
            .found
            .as_ref()
            .is_some_and(|found| found.bytes > limit as u64),
        file: lookup.found.map(|found| found.shown),
        on: FolderPreferences::load_default().project_instructions(root),
        limit_kib: u32::try_from(limit / 1024).unwrap_or(u32::MAX),
        left_out: lookup.left_out,
    })
}

/// The open folder's project instructions, looked for anew (the file may have appeared).
#[tauri::command]
pub fn project_instructions(
    workspace: State<'_, WorkspaceState>,
) -> CommandResult<InstructionsView> {
    view(&workspace)
}

/// Turns the open folder's project instructions on or off for its new conversations.
#[tauri::command]
pub fn set_project_instructions(
    workspace: State<'_, WorkspaceState>,
    on: bool,
) -> CommandResult<InstructionsView> {
    let (ctx, _) = workspace.context()?;
    let config_dir = crate::settings::config_dir()?;
    FolderPreferences::set_project_instructions(&config_dir, ctx.workspace.root(), on)
        .map_err(|error| CommandError::new("settings", sentence(&error.to_string())))?;
    view(&workspace)
}
