//! Declares the app's commands so that capabilities can grant them one by one, and points
//! tauri-build at the capabilities folder (the manifest lives at the repository root).

const COMMANDS: &[&str] = &[
    "app_info",
    "open_workspace",
    "current_workspace",
    "recent_workspaces",
    "send_message",
    "cancel_turn",
    "answer_approval",
    "list_conversations",
    "load_conversation",
    "mcp_servers",
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
