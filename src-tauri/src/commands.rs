//! The commands the window may call. Each parses its arguments, calls one service and maps the
//! error; the work lives in the modules they call.

use std::path::PathBuf;

use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};
use tauri_plugin_dialog::DialogExt;
use tooltrail_host::{Host, McpOverview, TurnChanges, UndoError, UndoReport};
use tooltrail_protocol::{ApprovalReply, Event, RuleKind, sentence};
use tooltrail_settings::Limits;
use tooltrail_store::{ConversationFilter, DayTokens, Format, Stats};
use ts_rs::TS;

use crate::approvals::PendingApprovals;
use crate::dialog;
use crate::error::{CommandError, CommandResult};
use crate::preferences::{
    self, AppSettings, ConnectionTest, McpConfigView, McpServerConfig, ProviderInput, ProviderView,
    SandboxView,
};
use crate::questions::PendingQuestions;
use crate::recent::{self, RecentWorkspace};
use crate::records::TokensQuery;
use crate::records::{
    self, ConversationSummary, ExportResult, HistoryPage, HistoryQuery, LoadedConversation,
    MessageHitView, RuleView, StatsQuery, ToolCallDetail,
};
use crate::settings::{self, EndpointInfo};
use crate::turns::RunningTurns;
use crate::workspace::{self, WorkspaceInfo, WorkspaceState};

/// What the first-run screen shows.
#[derive(Debug, Clone, Serialize, TS)]
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
    let Some(path) = dialog::given_or_picked(
        path,
        |reply| {
            app.dialog()
                .file()
                .set_title("Open a project folder")
                .pick_folder(reply);
        },
        CommandError::new("not_found", "That folder cannot be opened."),
    )
    .await?
    else {
        return Ok(None);
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
    attachments: Option<Vec<tooltrail_protocol::AttachmentSource>>,
    on_event: Channel<Event>,
) -> CommandResult<String> {
    crate::turn::start(
        app,
        conversation_id,
        text,
        attachments.unwrap_or_default(),
        on_event,
    )
    .await
}

/// Stops the running turn of a conversation; false when none was running.
#[tauri::command]
pub fn cancel_turn(turns: State<'_, RunningTurns>, conversation_id: String) -> bool {
    turns.cancel(&conversation_id)
}

/// The user's answer to an `ask_user` question; `None` dismisses it.
#[tauri::command]
pub fn answer_question(
    pending: State<'_, PendingQuestions>,
    call_id: String,
    answer: Option<String>,
) -> CommandResult<()> {
    pending.answer(&call_id, answer)
}

/// The turns of a conversation that wrote files, for "Undo these changes".
#[tauri::command]
pub fn turn_changes(
    host: State<'_, Host>,
    conversation_id: String,
) -> CommandResult<Vec<TurnChanges>> {
    tooltrail_host::turn_changes(host.store(), &conversation_id).map_err(undo_error)
}

/// Puts back the files a turn (or the whole conversation) wrote. A file changed since stops
/// it, changing nothing, unless `force`.
#[tauri::command]
pub fn undo_changes(
    host: State<'_, Host>,
    conversation_id: String,
    turn_id: Option<String>,
    force: bool,
) -> CommandResult<UndoReport> {
    tooltrail_host::undo(host.store(), &conversation_id, turn_id.as_deref(), force)
        .map_err(undo_error)
}

fn undo_error(error: UndoError) -> CommandError {
    let code = match &error {
        UndoError::ChangedSince(_) => "changed_since",
        UndoError::Nothing(_) => "nothing_to_undo",
        UndoError::Folder(_) | UndoError::Io { .. } | UndoError::Store(_) => "undo",
    };
    CommandError::new(code, sentence(&error.to_string()))
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
    host: State<'_, Host>,
) -> CommandResult<Vec<ConversationSummary>> {
    let Some(info) = workspace.info() else {
        return Ok(Vec::new());
    };
    let page = host.store().conversations(&ConversationFilter {
        workspace: Some(info.path),
        limit: records::CONVERSATIONS_LISTED,
        before: None,
    })?;
    Ok(page
        .items
        .into_iter()
        .map(|summary| {
            let running = host.conversations().is_running(&summary.id);
            ConversationSummary::of(summary, running)
        })
        .collect())
}

/// A conversation's events, for the window to redraw it.
#[tauri::command]
pub fn load_conversation(
    host: State<'_, Host>,
    conversation_id: String,
) -> CommandResult<LoadedConversation> {
    Ok(LoadedConversation {
        events: host.store().conversation_events(&conversation_id)?,
    })
}

/// The MCP servers of `mcp.json` for the open folder, with their state and tool counts.
#[tauri::command]
pub async fn mcp_servers(host: State<'_, Host>) -> CommandResult<McpOverview> {
    Ok(host.mcp_overview().await)
}

// ---- History, stats and conversations ----

/// One page of the recorded calls, newest first.
#[tauri::command]
pub fn history_calls(
    workspace: State<'_, WorkspaceState>,
    host: State<'_, Host>,
    query: HistoryQuery,
) -> CommandResult<HistoryPage> {
    records::calls(host.store(), &workspace.folder()?, &query)
}

/// Calls per tool and status, with durations.
#[tauri::command]
pub fn history_stats(
    workspace: State<'_, WorkspaceState>,
    host: State<'_, Host>,
    query: StatsQuery,
) -> CommandResult<Stats> {
    records::stats(host.store(), &workspace.folder()?, &query)
}

/// Tokens per day and model, from the usage the model servers reported.
#[tauri::command]
pub fn history_tokens(
    workspace: State<'_, WorkspaceState>,
    host: State<'_, Host>,
    query: TokensQuery,
) -> CommandResult<Vec<DayTokens>> {
    records::tokens(host.store(), &workspace.folder()?, &query)
}

/// One call with its full result and the rule that decided it.
#[tauri::command]
pub fn tool_call(host: State<'_, Host>, id: String) -> CommandResult<ToolCallDetail> {
    records::call(host.store(), &id)
}

/// Writes the calls matching `query` to `path`, or where the native save dialog says; `None`
/// when the user closed the dialog.
#[tauri::command]
pub async fn export_history(
    app: AppHandle,
    query: HistoryQuery,
    format: String,
    path: Option<String>,
) -> CommandResult<Option<ExportResult>> {
    let format: Format = format
        .parse()
        .map_err(|error: tooltrail_store::StoreError| CommandError::from(error))?;
    let Some(path) = dialog::given_or_picked(
        path,
        |reply| {
            let name = match format {
                Format::Jsonl => "tool-calls.jsonl",
                Format::Markdown => "tool-calls.md",
            };
            app.dialog()
                .file()
                .set_title("Export tool calls")
                .set_file_name(name)
                .save_file(reply);
        },
        CommandError::new("export", "That file cannot be written."),
    )
    .await?
    else {
        return Ok(None);
    };
    let folder = app.state::<WorkspaceState>().folder()?;
    let task_app = app.clone();
    tauri::async_runtime::spawn_blocking(move || {
        records::export(
            task_app.state::<Host>().store(),
            &folder,
            &query,
            format,
            &path,
        )
    })
    .await
    .map_err(|_| CommandError::new("export", "The export stopped unexpectedly."))?
    .map(Some)
}

#[tauri::command]
pub fn rename_conversation(
    host: State<'_, Host>,
    conversation_id: String,
    title: String,
) -> CommandResult<()> {
    records::rename(host.store(), &conversation_id, &title)
}

/// Deletes a conversation with every call and message in it. A running one is refused.
#[tauri::command]
pub fn delete_conversation(host: State<'_, Host>, conversation_id: String) -> CommandResult<()> {
    if host.conversations().is_running(&conversation_id) {
        return Err(CommandError::new(
            "running",
            "This conversation is still answering; stop it first.",
        ));
    }
    host.store().delete_conversation(&conversation_id)?;
    host.conversations().forget(&conversation_id);
    Ok(())
}

/// Messages of the open folder's conversations that hold every word of `text`.
#[tauri::command]
pub fn search_messages(
    workspace: State<'_, WorkspaceState>,
    host: State<'_, Host>,
    text: String,
) -> CommandResult<Vec<MessageHitView>> {
    records::search_messages(host.store(), &workspace.folder()?, &text)
}

// ---- Approval rules of the open folder ----

#[tauri::command]
pub fn list_rules(
    workspace: State<'_, WorkspaceState>,
    host: State<'_, Host>,
) -> CommandResult<Vec<RuleView>> {
    records::rules(host.store(), &workspace.folder()?)
}

#[tauri::command]
pub fn add_rule(
    workspace: State<'_, WorkspaceState>,
    host: State<'_, Host>,
    kind: RuleKind,
    command: String,
) -> CommandResult<RuleView> {
    records::add_rule(host.store(), &workspace.folder()?, kind, &command)
}

#[tauri::command]
pub fn revoke_rule(host: State<'_, Host>, id: String) -> CommandResult<RuleView> {
    records::revoke_rule(host.store(), &id)
}

// ---- Settings ----

/// Runs a settings change off the main thread: the keychain may take a moment to answer.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> CommandResult<T> + Send + 'static,
) -> CommandResult<T> {
    off_main(work, "settings", "The settings could not be changed.").await
}

/// Runs blocking work off the async threads; `area` and `failed` say what went wrong when the
/// work could not finish.
pub(crate) async fn off_main<T: Send + 'static>(
    work: impl FnOnce() -> CommandResult<T> + Send + 'static,
    area: &'static str,
    failed: &'static str,
) -> CommandResult<T> {
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(|_| CommandError::new(area, failed))?
}

#[tauri::command]
pub async fn get_settings() -> CommandResult<AppSettings> {
    blocking(preferences::load).await
}

#[tauri::command]
pub async fn save_provider(provider: ProviderInput, activate: bool) -> CommandResult<ProviderView> {
    blocking(move || preferences::save_provider(provider, activate)).await
}

#[tauri::command]
pub async fn delete_provider(id: String) -> CommandResult<()> {
    blocking(move || preferences::delete_provider(&id)).await
}

#[tauri::command]
pub async fn activate_provider(id: String) -> CommandResult<()> {
    blocking(move || preferences::activate_provider(&id)).await
}

#[tauri::command]
pub async fn test_connection(provider: ProviderInput) -> ConnectionTest {
    preferences::test_connection(provider).await
}

/// Forgets that a model needed prompt mode (Settings lists what was learned).
#[tauri::command]
pub async fn forget_tool_mode(base_url: String, model: String) -> CommandResult<()> {
    blocking(move || preferences::forget_tool_mode(&base_url, &model)).await
}

#[tauri::command]
pub fn save_limits(limits: Limits) -> CommandResult<Limits> {
    preferences::save_limits(limits)
}

#[tauri::command]
pub fn set_tool_enabled(name: String, enabled: bool) -> CommandResult<()> {
    preferences::set_tool_enabled(&name, enabled)
}

/// What the OS sandbox enforces on this machine and what a command in the open folder sees,
/// as `tooltrail doctor` says it.
#[tauri::command]
pub async fn sandbox_status(workspace: State<'_, WorkspaceState>) -> CommandResult<SandboxView> {
    let ctx = workspace.context().ok().map(|(ctx, _)| ctx);
    blocking(move || {
        let (report, root) = match ctx {
            Some(ctx) => (
                ctx.sandbox().status().clone(),
                Some(ctx.workspace.root().to_path_buf()),
            ),
            None => (tooltrail_host::Sandbox::detect().status().clone(), None),
        };
        Ok(SandboxView::of(&report, root.as_deref()))
    })
    .await
}

/// Sets the extra folders commands may read, then says what commands see now.
#[tauri::command]
pub async fn save_read_only_folders(
    workspace: State<'_, WorkspaceState>,
    folders: Vec<String>,
) -> CommandResult<SandboxView> {
    blocking(move || preferences::save_read_only_folders(&folders)).await?;
    sandbox_status(workspace).await
}

/// Sets the commands that get the network once approved, then says what commands see now.
#[tauri::command]
pub async fn save_network_commands(
    workspace: State<'_, WorkspaceState>,
    commands: Vec<String>,
) -> CommandResult<SandboxView> {
    blocking(move || preferences::save_network_commands(&commands)).await?;
    sandbox_status(workspace).await
}

#[tauri::command]
pub fn mcp_config() -> CommandResult<McpConfigView> {
    preferences::mcp_config()
}

/// Adds a server to `mcp.json` or changes one, then restarts the folder's servers.
#[tauri::command]
pub fn save_mcp_server(
    app: AppHandle,
    previous_name: Option<String>,
    server: McpServerConfig,
) -> CommandResult<()> {
    preferences::save_mcp_server(previous_name.as_deref(), server)?;
    restart_servers(&app);
    Ok(())
}

#[tauri::command]
pub fn remove_mcp_server(app: AppHandle, name: String) -> CommandResult<()> {
    preferences::remove_mcp_server(&name)?;
    restart_servers(&app);
    Ok(())
}

fn restart_servers(app: &AppHandle) {
    if let Some(info) = app.state::<WorkspaceState>().info() {
        crate::mcp::start_in_background(app, PathBuf::from(info.path));
    }
}

#[cfg(test)]
mod tests {
    //! The commands are named in four files that no compiler compares: `build.rs` declares them
    //! (so capabilities can grant them), `lib.rs` registers them with `generate_handler!`, the
    //! capability file grants them to the window, and `ui/src/api.ts` invokes them.

    use std::collections::BTreeSet;
    use std::path::Path;

    use pretty_assertions::assert_eq;

    fn read(relative: &str) -> String {
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)).unwrap()
    }

    /// The text between `start` and the first `end` after it.
    fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
        let from = text.find(start).unwrap_or_else(|| panic!("no {start:?}")) + start.len();
        let to = text[from..]
            .find(end)
            .unwrap_or_else(|| panic!("no {end:?}"))
            + from;
        &text[from..to]
    }

    /// Every `"..."` string in `text`.
    fn quoted(text: &str) -> BTreeSet<String> {
        text.split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    fn declared_in_build_rs() -> BTreeSet<String> {
        quoted(between(
            &read("src-tauri/build.rs"),
            "const COMMANDS: &[&str] = &[",
            "];",
        ))
    }

    fn registered_in_lib_rs() -> BTreeSet<String> {
        between(&read("src-tauri/src/lib.rs"), "generate_handler![", "]")
            .split(',')
            .map(|path| path.trim().rsplit("::").next().unwrap_or_default())
            .filter(|name| !name.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// The app's own permissions (`allow-open-workspace`), as command names; the plugins' ones
    /// (`core:event:allow-listen`) are not commands of ours.
    fn granted_in_capabilities() -> BTreeSet<String> {
        let file: serde_json::Value =
            serde_json::from_str(&read("src-tauri/capabilities/main.json")).unwrap();
        file["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(serde_json::Value::as_str)
            .filter(|permission| !permission.contains(':'))
            .map(|permission| {
                permission
                    .strip_prefix("allow-")
                    .unwrap_or_else(|| panic!("{permission:?} is not an allow- permission"))
                    .replace('-', "_")
            })
            .collect()
    }

    /// The names api.ts passes to `invoke`.
    fn invoked_in_api_ts() -> BTreeSet<String> {
        read("ui/src/api.ts")
            .split("invoke")
            .skip(1)
            .filter_map(|after| {
                // `invoke<Type>("name", ...)` or `invoke("name", ...)`; anything else (the
                // import) has no opening bracket and a quote right after it.
                let call = after.strip_prefix('<').map_or(Some(after), |generic| {
                    generic.find(">(\"").map(|end| &generic[end + 1..])
                })?;
                let name = call.strip_prefix("(\"")?;
                Some(name[..name.find('"')?].to_string())
            })
            .collect()
    }

    /// The commands the browser specs' mock backend answers (`case "name":` in ui/tests/mock-*.ts),
    /// without Tauri's own plugin commands.
    fn answered_by_the_mocks() -> BTreeSet<String> {
        [
            "mock-backend.ts",
            "mock-history.ts",
            "mock-models.ts",
            "mock-settings.ts",
            "mock-snippets.ts",
            "mock-telemetry.ts",
            "mock-updates.ts",
        ]
        .iter()
        .flat_map(|file| {
            read(&format!("ui/tests/{file}"))
                .split("case \"")
                .skip(1)
                .filter_map(|after| after.find('"').map(|end| after[..end].to_string()))
                .collect::<Vec<_>>()
        })
        .filter(|name| !name.starts_with("plugin:"))
        .collect()
    }

    #[test]
    fn every_file_that_names_the_commands_names_the_same_ones() {
        let declared = declared_in_build_rs();
        assert!(declared.len() > 20, "build.rs declares {declared:?}");
        assert_eq!(
            registered_in_lib_rs(),
            declared,
            "generate_handler! in lib.rs"
        );
        assert_eq!(
            granted_in_capabilities(),
            declared,
            "capabilities/main.json"
        );
        assert_eq!(invoked_in_api_ts(), declared, "ui/src/api.ts");
        assert_eq!(answered_by_the_mocks(), declared, "ui/tests/mock-*.ts");
    }
}
