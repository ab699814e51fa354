//! "Replay with another model" in the window: recorded questions asked again through the
//! host's replay (no side effects: calls that could change something or ask the person are
//! answered from the record or not run), their events streamed to the window like a
//! question's, each replay set beside its original, and the models tried on the folder.

use serde::{Deserialize, Serialize};
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};
use tauri_plugin_dialog::DialogExt;
use tooltrail_host::{Host, ModelRow, ReplayComparison, ReplayReport, ReplayRequest};
use tooltrail_protocol::{Event, sentence};
use tooltrail_settings::Overrides;
use ts_rs::TS;

use crate::dialog;
use crate::error::{CommandError, CommandResult};
use crate::turn::WindowSink;
use crate::turns::RunningTurns;
use crate::workspace::WorkspaceState;

/// The questions a replay asks again.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReplayPick {
    /// These turns, in this order.
    Turns { turns: Vec<String> },
    /// Every question of a conversation, in order.
    Conversation { id: String },
    /// The last `count` questions asked in the open folder.
    Last { count: u32 },
}

/// The model a replay asks with: a provider of config.toml or `local`, and a model of it.
#[derive(Debug, Clone, Deserialize, TS)]
pub struct ReplayWith {
    pub provider: String,
    /// The provider's own model when absent or blank.
    pub model: Option<String>,
    /// Answer every call that matches a recorded one from the record, read-only ones too.
    pub from_record: bool,
}

/// One question replayed: its report, or why it could not be replayed.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ReplayOutcome {
    /// The question asked again.
    pub turn_id: String,
    pub report: Option<ReplayReport>,
    /// Why the replay could not start, as a sentence.
    pub error: Option<String>,
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

/// The turn ids `pick` names; an error sentence when it names none.
fn questions(host: &Host, folder: Option<&str>, pick: &ReplayPick) -> CommandResult<Vec<String>> {
    let turns = match pick {
        ReplayPick::Turns { turns } => turns.clone(),
        ReplayPick::Conversation { id } => host
            .store()
            .conversation_questions(id)
            .map_err(replay_error)?,
        ReplayPick::Last { count } => {
            let folder = folder.ok_or_else(CommandError::no_workspace)?;
            host.store()
                .last_questions(folder, *count)
                .map_err(replay_error)?
        }
    };
    if turns.is_empty() {
        return Err(CommandError::new(
            "nothing_to_replay",
            "There is no finished question to replay here.",
        ));
    }
    Ok(turns)
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
    let turns = questions(&app.state::<Host>(), folder.as_deref(), &pick)?;
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
        let mut outcomes = Vec::new();
        for turn_id in turns {
            if cancel.is_cancelled() {
                break;
            }
            let request = ReplayRequest {
                turn_id: turn_id.clone(),
                overrides: overrides.clone(),
                from_record: with.from_record,
            };
            let screen = Box::new(WindowSink {
                channel: on_event.clone(),
            });
            outcomes.push(match host.replay(&request, screen, &cancel).await {
                Ok(report) => ReplayOutcome {
                    turn_id,
                    report: Some(report),
                    error: None,
                },
                Err(error) => ReplayOutcome {
                    turn_id,
                    report: None,
                    error: Some(sentence(&error.to_string())),
                },
            });
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
    let is_replay = host
        .store()
        .replays(None)
        .map_err(replay_error)?
        .iter()
        .any(|pair| pair.turn_id == turn_id);
    if !is_replay {
        return Ok(None);
    }
    host.replay_comparison(&turn_id)
        .map(Some)
        .map_err(replay_error)
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
