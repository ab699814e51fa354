//! "Replay with another model" in the window: recorded questions asked again through the
//! host's replay (no side effects: calls that could change something or ask the person are
//! answered from the record or not run), their events streamed to the window like a
//! question's, each replay set beside its original, and the models tried on the folder.

use serde::{Deserialize, Serialize};
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};
use tauri_plugin_dialog::DialogExt;
use tooltrail_host::{EventSink, Host, ModelRow, ReplayComparison, ReplayOutcome, ReplayPick};
use tooltrail_protocol::{Event, sentence};
use tooltrail_settings::Overrides;
use ts_rs::TS;

use crate::dialog;
use crate::error::{CommandError, CommandResult};
use crate::turn::WindowSink;
use crate::turns::RunningTurns;
use crate::workspace::WorkspaceState;

/// The model a replay asks with: a provider of config.toml or `local`, and a model of it.
#[derive(Debug, Clone, Deserialize, TS)]
pub struct ReplayWith {
    pub provider: String,
    /// The provider's own model when absent or blank.
    pub model: Option<String>,
    /// Answer every call that matches a recorded one from the record, read-only ones too.
    pub from_record: bool,
}

/// The models tried on the open folder's questions, ranked, and the same as Markdown.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ReplayTableView {
    pub rows: Vec<ModelRow>,
    pub markdown: String,
}

fn replay_error(error: impl std::fmt::Display) -> CommandError {
    CommandError::new("replay", sentence(&error.to_string()))
}

/// Asks the questions `pick` names again with `with`, one after the other; their events
/// stream over `on_event` as a question's do, and `cancel_turn(run_id)` stops the run. Resolves
/// when the last one has ended, with each one's comparison.
#[tauri::command]
pub async fn replay_questions(
    app: AppHandle,
    pick: ReplayPick,
    with: ReplayWith,
    run_id: String,
    on_event: Channel<Event>,
) -> CommandResult<Vec<ReplayOutcome>> {
    if with.provider.trim().is_empty() {
        return Err(CommandError::new(
            "replay",
            "Choose the provider to replay with.",
        ));
    }
    let folder = app.state::<WorkspaceState>().info().map(|info| info.path);
    let turns = app
        .state::<Host>()
        .replay_questions(&pick, folder.as_deref())
        .map_err(replay_error)?;
    let overrides = Overrides {
        provider: Some(with.provider.trim().to_string()),
        model: with
            .model
            .map(|model| model.trim().to_string())
            .filter(|model| !model.is_empty()),
        ..Overrides::default()
    };
    let cancel = app.state::<RunningTurns>().start(&run_id);
    let task_app = app.clone();
    // Replays run on the async runtime like a question, so the window's commands stay free
    // while one waits for the model.
    let run = tauri::async_runtime::spawn(async move {
        let host = task_app.state::<Host>();
        let screen = move || -> Box<dyn EventSink> {
            Box::new(WindowSink {
                channel: on_event.clone(),
            })
        };
        let mut outcomes = host
            .replay_each(
                turns,
                &overrides,
                with.from_record,
                &screen,
                &mut |_| {},
                &cancel,
            )
            .await;
        for outcome in &mut outcomes {
            outcome.error = outcome.error.as_deref().map(sentence);
        }
        task_app.state::<RunningTurns>().finish(&run_id);
        outcomes
    });
    run.await
        .map_err(|_| CommandError::new("replay", "The replay stopped unexpectedly."))
}

/// The replay `turn_id` set beside the question it asked again; `None` when the turn is not a
/// replay.
#[tauri::command]
pub fn replay_comparison(
    host: State<'_, Host>,
    turn_id: String,
) -> CommandResult<Option<ReplayComparison>> {
    host.replay_comparison(&turn_id).map_err(replay_error)
}

/// The models tried on the open folder's questions, ranked.
#[tauri::command]
pub fn replay_table(
    workspace: State<'_, WorkspaceState>,
    host: State<'_, Host>,
) -> CommandResult<ReplayTableView> {
    let rows = host
        .replay_table(Some(&workspace.folder()?))
        .map_err(replay_error)?;
    let markdown = tooltrail_host::replay_table::markdown(&rows);
    Ok(ReplayTableView { rows, markdown })
}

/// Writes the open folder's table as JSON to `path`, or where the native save dialog says;
/// the path written, or `None` when the user closed the dialog.
#[tauri::command]
pub async fn save_replay_table(
    app: AppHandle,
    path: Option<String>,
) -> CommandResult<Option<String>> {
    let folder = app.state::<WorkspaceState>().folder()?;
    let rows = app
        .state::<Host>()
        .replay_table(Some(&folder))
        .map_err(replay_error)?;
    let Some(path) = dialog::given_or_picked(
        path,
        |reply| {
            app.dialog()
                .file()
                .set_title("Save the models tried")
                .set_file_name("models-tried.json")
                .save_file(reply);
        },
        CommandError::new("replay", "That file cannot be written."),
    )
    .await?
    else {
        return Ok(None);
    };
    let text = serde_json::to_string_pretty(&rows).map_err(replay_error)?;
    crate::commands::off_main(
        move || {
            tooltrail_atomic_write::write_atomically(&path, (text + "\n").as_bytes())
                .map_err(|_| CommandError::new("replay", "That file cannot be written."))?;
            Ok(Some(path.display().to_string()))
        },
        "replay",
        "The table could not be saved.",
    )
    .await
}
