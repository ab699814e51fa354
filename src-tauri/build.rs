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
    "replay_questions",
    "replay_comparison",
    "replay_table",
    "save_replay_table",
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
    "update_settings",
    "save_update_check",
    "check_for_update",
    "install_update",
    "prepare_view",
    "start_view",
    "view_call_tool",
    "view_read_resource",
    "close_view",
    "open_view_link",
    "save_view_file",
    "window_ready",
];

fn main() {
    let attributes = tauri_build::Attributes::new()
        .capabilities_path_pattern("src-tauri/capabilities/**/*")
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(error) = tauri_build::try_build(attributes) {
        eprintln!("tauri-build failed: {error:#}");
        std::process::exit(1);
    }
    lay_out_release_binary();
}

/// The window's idle memory is mostly what it maps, and a release binary's pages are read and
/// mapped in blocks (fault-around, large folios): code that start-up runs, spread over a 36 MB
/// `.text`, maps most of it. Release builds for Linux therefore
/// - place first the functions that start-up and an idle window run
///   (`src-tauri/startup-order.txt`, written by `scripts/startup-order`), so they share pages;
///   names that no longer match (after a dependency or compiler update) only lose their place;
/// - pack the relative relocations (`DT_RELR`) when the C library building it reads them
///   (glibc 2.36 on): 1.4 MiB of `.rela.dyn` that the loader reads at every start becomes a
///   few kB.
///
/// Both are linker options of LLD, rustc's default linker for this target since Rust 1.90; a
/// build with an older rustc, or that picks its own linker (`-C linker`, `-fuse-ld`), is left
/// as it is.
fn lay_out_release_binary() {
    const ORDER: &str = "src-tauri/startup-order.txt";
    println!("cargo:rerun-if-changed={ORDER}");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    let own_linker = !env("RUSTC_LINKER").is_empty()
        || env("CARGO_ENCODED_RUSTFLAGS").split('\x1f').any(|flag| {
            flag.contains("linker=") || flag.contains("linker-flavor") || flag.contains("fuse-ld")
        });
    if env("PROFILE") != "release"
        || env("TARGET") != "x86_64-unknown-linux-gnu"
        || own_linker
        || !links_with_lld(&env("RUSTC"))
    {
        return;
    }
    let order = format!("{}/{ORDER}", env("CARGO_MANIFEST_DIR"));
    println!("cargo:rustc-link-arg-bin=tooltrail-app=-Wl,--symbol-ordering-file={order}");
    println!("cargo:rustc-link-arg-bin=tooltrail-app=-Wl,--no-warn-symbol-ordering");
    if glibc_reads_relr() {
        println!("cargo:rustc-link-arg-bin=tooltrail-app=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether `rustc` links with its own LLD by default (1.90 on, for this target).
fn links_with_lld(rustc: &str) -> bool {
    let rustc = if rustc.is_empty() { "rustc" } else { rustc };
    let Ok(out) = std::process::Command::new(rustc).arg("-vV").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(release) = text.lines().find_map(|line| line.strip_prefix("release: ")) else {
        return false;
    };
    version_at_least(release, (1, 90))
}

/// Whether a version such as "1.95.0" or "2.36" is `least` or later.
fn version_at_least(version: &str, least: (u32, u32)) -> bool {
    let mut parts = version.trim().split(['.', '-']);
    let major = parts.next().and_then(|part| part.parse().ok()).unwrap_or(0);
    let minor = parts.next().and_then(|part| part.parse().ok()).unwrap_or(0);
    (major, minor) >= least
}

/// Whether the C library that the binary links against reads packed relocations (2.36 on).
fn glibc_reads_relr() -> bool {
    let Ok(out) = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
    else {
        return false;
    };
    let version = String::from_utf8_lossy(&out.stdout);
    version_at_least(version.trim().trim_start_matches("glibc "), (2, 36))
}
