//! Tooltrail's desktop shell: a Tauri window whose React UI shows the conversation and a live
//! timeline of tool calls, and whose Rust side runs the agent.
//!
//! The shell is thin. Each command (in [`commands`]) parses, calls one service and maps the
//! error. The engine — settings, model client, tools and MCP servers, rules, the record and
//! the conversations between their turns — is [`tooltrail_host::Host`], the same one the
//! command line uses. The shell's own state is a few small managed values, each with one job:
//! the open folder ([`workspace::WorkspaceState`]), the running turns
//! ([`turns::RunningTurns`]) and the approvals waiting for an answer
//! ([`approvals::PendingApprovals`]).
//!
//! A turn's events travel to the window over a `tauri::ipc::Channel`, in order, as the agent
//! emits them; the window folds them into its state with a pure reducer.
//!
//! ```text
//! tooltrail-app [FOLDER]    opens FOLDER (like `code .`); the window title names it
//! ```

mod approvals;
#[cfg(test)]
mod bindings;
mod commands;
mod dialog;
mod error;
mod guide;
mod instructions;
mod mcp;
mod mcp_content;
mod models;
mod notify;
mod preferences;
mod questions;
mod recent;
mod records;
mod replays;
mod server_requests;
mod settings;
mod snippets;
mod telemetry;
mod turn;
mod turns;
mod updates;
mod views;
mod watcher;
mod window;
mod workspace;

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use tauri::{Manager, RunEvent};

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The folder named on the command line: the first argument that is not an option.
pub fn folder_argument(args: impl IntoIterator<Item = std::ffi::OsString>) -> Option<PathBuf> {
    args.into_iter()
        .find(|arg| !arg.to_string_lossy().starts_with('-'))
        .map(PathBuf::from)
}

/// Runs the app until its window closes.
pub fn run() -> anyhow::Result<()> {
    let folder = folder_argument(std::env::args_os().skip(1));
    let mut host =
        tooltrail_host::Host::open_default()?.with_front_end(tooltrail_host::FrontEnd::App);
    // MCP sign-ins tell the window of each step once it exists.
    let sign_in_notify = std::sync::Arc::new(std::sync::OnceLock::new());
    host.set_mcp_sign_in(mcp::sign_in_options(std::sync::Arc::clone(&sign_in_notify)));
    if let Some(problem) = host.record().problem() {
        eprintln!("tooltrail: {problem}");
    }
    let builder = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_updater::Builder::new().build())
        // Frames (MCP App views) load only the addresses the host issued.
        .plugin(views::navigation_guard());
    with_state(builder, host)
        .setup(move |app| {
            let _ = sign_in_notify.set(app.handle().clone());
            start(app, folder);
            Ok(())
        })
        .invoke_handler(COMMANDS)
        .build(tauri::generate_context!())?
        .run(|app, event| {
            // MCP servers are child processes (or sessions on a server): end them with the app.
            if let RunEvent::Exit = event {
                tauri::async_runtime::block_on(app.state::<tooltrail_host::Host>().shutdown());
            }
        });
    Ok(())
}

/// The engine and the shell's small managed values, each with one job (see the crate's doc).
fn with_state(
    builder: tauri::Builder<tauri::Wry>,
    host: tooltrail_host::Host,
) -> tauri::Builder<tauri::Wry> {
    builder
        .manage(workspace::WorkspaceState::default())
        .manage(window::FirstShow::default())
        .manage(host)
        .manage(turns::RunningTurns::default())
        .manage(mcp_content::WatchedServers::default())
        .manage(approvals::PendingApprovals::default())
        .manage(questions::PendingQuestions::default())
        .manage(server_requests::PendingServerRequests::default())
        .manage(models::Downloads::default())
        .manage(updates::Updates::default())
        .manage(views::ViewData::default())
}

/// Once the window exists: views' leftovers cleared, the folder named on the command line
/// opened, the window focused.
fn start(app: &tauri::App, folder: Option<PathBuf>) {
    // What views kept in the engine goes at the start and when the last one closes;
    // as the app exits, the engine no longer answers, so it goes at the next start.
    views::forget_view_data(app.handle());
    let handle = app.handle().clone();
    app.state::<tooltrail_host::Host>()
        .views()
        .when_none_open(move |reason| {
            if reason != tooltrail_protocol::ViewEnd::AppClosed {
                views::forget_view_data(&handle);
            }
        });
    if let Some(folder) = folder {
        // A folder that cannot be opened leaves the window on its start screen.
        if let Err(error) = workspace::open(app.handle(), &folder) {
            eprintln!("tooltrail: {error}");
        }
    }
    // The page shows the window when its first screen is built (window.rs).
    window::show_at_the_latest(app.handle());
}

/// Every command the window may call. A list rather than a step of [`run`]: it grows with
/// every command.
const COMMANDS: fn(tauri::ipc::Invoke<tauri::Wry>) -> bool = tauri::generate_handler![
    commands::app_info,
    commands::open_workspace,
    commands::current_workspace,
    commands::recent_workspaces,
    commands::send_message,
    mcp_content::mcp_content,
    mcp_content::workspace_files,
    mcp_content::read_attachment,
    mcp_content::get_mcp_prompt,
    mcp_content::complete_prompt_argument,
    commands::cancel_turn,
    commands::answer_approval,
    commands::answer_question,
    server_requests::answer_elicitation,
    server_requests::answer_sampling,
    server_requests::open_elicitation_url,
    commands::turn_changes,
    commands::undo_changes,
    commands::list_conversations,
    commands::load_conversation,
    commands::mcp_servers,
    commands::history_calls,
    commands::history_stats,
    commands::history_tokens,
    commands::tool_call,
    commands::export_history,
    commands::rename_conversation,
    commands::delete_conversation,
    commands::search_messages,
    replays::replay_questions,
    replays::replay_comparison,
    replays::replay_table,
    replays::save_replay_table,
    commands::list_rules,
    commands::add_rule,
    commands::revoke_rule,
    snippets::list_snippets,
    snippets::get_snippet,
    snippets::delete_snippet,
    commands::get_settings,
    commands::save_provider,
    commands::delete_provider,
    commands::activate_provider,
    commands::test_connection,
    commands::forget_tool_mode,
    commands::save_limits,
    commands::set_tool_enabled,
    commands::sandbox_status,
    commands::save_read_only_folders,
    commands::save_network_commands,
    telemetry::telemetry_settings,
    telemetry::save_telemetry,
    telemetry::send_test_trace,
    commands::mcp_config,
    commands::save_mcp_server,
    commands::remove_mcp_server,
    guide::model_guide,
    guide::use_server,
    models::list_models,
    models::pull_model,
    models::cancel_pull,
    models::downloads,
    models::import_model,
    models::remove_model,
    models::use_model,
    models::stop_runtime,
    instructions::project_instructions,
    instructions::set_project_instructions,
    mcp::mcp_sign_in,
    mcp::mcp_sign_out,
    updates::update_settings,
    updates::save_update_check,
    updates::check_for_update,
    updates::install_update,
    views::prepare_view,
    views::start_view,
    views::view_call_tool,
    views::view_read_resource,
    views::close_view,
    views::open_view_link,
    views::save_view_file,
    window::window_ready,
];

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_folder_is_the_first_argument_that_is_not_an_option() {
        let args = ["-psn_0_123", "/tmp/project", "extra"].map(std::ffi::OsString::from);
        assert_eq!(folder_argument(args), Some(PathBuf::from("/tmp/project")));
        assert_eq!(folder_argument(Vec::<std::ffi::OsString>::new()), None);
    }

    #[test]
    fn the_window_title_names_the_folder() {
        assert_eq!(workspace::title("myproject"), "Tooltrail — myproject");
    }
}
