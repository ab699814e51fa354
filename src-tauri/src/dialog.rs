//! The native file dialogs, awaited: the dialog plugin answers through a callback, and a
//! command waits for that answer without holding a thread.

use std::path::PathBuf;

use tauri_plugin_dialog::FilePath;

use crate::error::{CommandError, CommandResult};

/// What a dialog hands the user's pick to.
pub type Reply = Box<dyn FnOnce(Option<FilePath>) + Send>;

/// `given`, else the path the user picks in the dialog that `show` opens (its `pick_file`,
/// `pick_folder` or `save_file`, handed the reply). `None` when the user closed the dialog;
/// `unusable` when the pick is not a path on this machine.
pub async fn given_or_picked(
    given: Option<String>,
    show: impl FnOnce(Reply),
    unusable: CommandError,
) -> CommandResult<Option<PathBuf>> {
    if let Some(given) = given {
        return Ok(Some(PathBuf::from(given)));
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    show(Box::new(move |picked| {
        let _ = tx.send(picked);
    }));
    let Some(picked) = rx.await.ok().flatten() else {
        return Ok(None);
    };
    picked.into_path().map(Some).map_err(|_| unusable)
}
