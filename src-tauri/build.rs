//! Declares the app's commands so that capabilities can grant them one by one, and points
//! tauri-build at the capabilities folder (the manifest lives at the repository root).
//!
//! `generate_handler!` in lib.rs, capabilities/main.json and ui/src/api.ts name the same
//! commands; a test in commands.rs fails when one of them differs from this list.

const COMMANDS: &[&str] = &[
    "app_info",
    "open_workspace",
    "current_workspace",
    "recent_workspaces",
    "send_message",
    "mcp_content",
    "workspace_files",
    "read_attachment",
    "get_mcp_prompt",
    "complete_prompt_argument",
    "cancel_turn",
    "answer_approval",
    "answer_question",
    "answer_elicitation",
    "answer_sampling",
    "open_elicitation_url",
    "turn_changes",
    "undo_changes",
    "list_conversations",
    "load_conversation",
    "mcp_servers",
    "mcp_sign_in",
    "mcp_sign_out",
    "history_calls",
    "history_stats",
    "history_tokens",
    "tool_call",
    "export_history",
    "rename_conversation",
    "delete_conversation",
    "search_messages",
    "list_rules",
    "add_rule",
    "revoke_rule",
    "list_snippets",
    "get_snippet",
    "delete_snippet",
    "get_settings",
    "save_provider",
    "delete_provider",
    "activate_provider",
    "test_connection",
    "forget_tool_mode",
    "save_limits",
    "set_tool_enabled",
    "sandbox_status",
    "save_read_only_folders",
    "save_network_commands",
    "telemetry_settings",
    "save_telemetry",
    "send_test_trace",
    "mcp_config",
    "save_mcp_server",
    "remove_mcp_server",
    "model_guide",
    "use_server",
    "list_models",
    "pull_model",
    "cancel_pull",
    "downloads",
    "import_model",
    "remove_model",
    "use_model",
    "stop_runtime",
    "project_instructions",
    "set_project_instructions",
];

fn main() {
    let attributes = tauri_build::Attributes::new()
        .capabilities_path_pattern("src-tauri/capabilities/**/*")
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(error) = tauri_build::try_build(attributes) {
        eprintln!("tauri-build failed: {error:#}");
        std::process::exit(1);
    }
}
