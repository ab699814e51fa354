//! The TypeScript types of `ui/src/bindings/`, generated from the Rust types the window receives
//! and sends: the protocol's events, the records, the settings, `mcp.json`'s servers and the
//! shell's own payloads. They live in several crates, so they are gathered here, in the one
//! crate that sees them all.
//!
//! [`render`] starts from the types the commands and events carry and follows every type they
//! refer to, so a new field's type is generated without being listed. Integers travel as JSON
//! numbers, so 64-bit ones are `number` in TypeScript (ts-rs would say `bigint`, which
//! `JSON.parse` never produces). The test below fails when the committed files differ;
//! `UPDATE_BINDINGS=1 cargo test -p tooltrail-app bindings` rewrites them.

use std::any::TypeId;
use std::collections::{BTreeMap, HashSet};

use ts_rs::{Config, TS, TypeVisitor};

/// The files of `ui/src/bindings/`, as `(path relative to it, content)`, sorted by path; the
/// last is `index.ts`, which re-exports every type.
pub fn render() -> Result<Vec<(String, String)>, ts_rs::ExportError> {
    let mut files = Files {
        config: Config::new().with_large_int("number"),
        seen: HashSet::new(),
        out: BTreeMap::new(),
        error: None,
    };
    // The protocol: what a turn streams, and the parts the window names on their own.
    files.visit::<tooltrail_protocol::Event>();
    files.visit::<tooltrail_protocol::EventBody>();
    files.visit::<tooltrail_protocol::ApprovalReply>();
    files.visit::<tooltrail_protocol::ToolChoice>();
    files.visit::<tooltrail_protocol::ToolOutput>();
    files.visit::<tooltrail_protocol::ToolProgress>();
    files.visit::<tooltrail_protocol::ToolSpec>();
    files.visit::<tooltrail_protocol::LocalModelStatus>();
    // What the commands return and take, and the events the shell emits.
    files.visit::<crate::commands::AppInfo>();
    files.visit::<crate::workspace::WorkspaceInfo>();
    files.visit::<crate::instructions::InstructionsView>();
    files.visit::<crate::recent::RecentWorkspace>();
    files.visit::<crate::watcher::FilesChanged>();
    files.visit::<crate::records::ConversationSummary>();
    files.visit::<crate::records::LoadedConversation>();
    files.visit::<crate::records::HistoryQuery>();
    files.visit::<crate::records::HistoryPage>();
    files.visit::<crate::records::StatsQuery>();
    files.visit::<tooltrail_store::Stats>();
    files.visit::<crate::records::TokensQuery>();
    files.visit::<tooltrail_store::DayTokens>();
    files.visit::<crate::records::ToolCallDetail>();
    files.visit::<tooltrail_store::Format>();
    files.visit::<crate::records::ExportResult>();
    files.visit::<crate::records::MessageHitView>();
    files.visit::<crate::records::RuleView>();
    files.visit::<tooltrail_host::ReplayPick>();
    files.visit::<crate::replays::ReplayWith>();
    files.visit::<tooltrail_host::ReplayOutcome>();
    files.visit::<crate::replays::ReplayTableView>();
    files.visit::<tooltrail_host::ReplayComparison>();
    files.visit::<tooltrail_store::Snippet>();
    files.visit::<tooltrail_store::SnippetSummary>();
    files.visit::<tooltrail_host::McpOverview>();
    files.visit::<tooltrail_host::TurnChanges>();
    files.visit::<tooltrail_host::UndoReport>();
    files.visit::<tooltrail_host::views::ViewPlan>();
    files.visit::<tooltrail_host::views::ViewStart>();
    files.visit::<tooltrail_host::view_download::ViewFile>();
    files.visit::<tooltrail_host::view_download::SavedFile>();
    files.visit::<tooltrail_protocol::ViewEnd>();
    files.visit::<crate::preferences::AppSettings>();
    files.visit::<crate::preferences::ProviderInput>();
    files.visit::<crate::preferences::ConnectionTest>();
    files.visit::<crate::preferences::SandboxView>();
    files.visit::<crate::telemetry::TelemetryView>();
    files.visit::<crate::updates::UpdateSettings>();
    files.visit::<crate::updates::UpdateInfo>();
    files.visit::<crate::updates::UpdateProgress>();
    files.visit::<crate::telemetry::TelemetryForm>();
    files.visit::<tooltrail_mcp::McpConfigView>();
    files.visit::<crate::guide::GuideView>();
    files.visit::<crate::guide::ChosenServer>();
    files.visit::<crate::models::ModelsView>();
    files.visit::<crate::models::PullUpdate>();
    files.visit::<crate::models::Imported>();
    files.visit::<crate::mcp_content::McpContent>();
    files.visit::<crate::mcp_content::ResourceUpdated>();
    files.visit::<tooltrail_protocol::Attachment>();
    files.visit::<tooltrail_protocol::PromptMessageItem>();
    files.visit::<crate::error::CommandError>();
    if let Some(error) = files.error {
        return Err(error);
    }
    let index: String = files
        .out
        .keys()
        .map(|path| {
            let module = path.trim_end_matches(".ts");
            let name = module.rsplit('/').next().unwrap_or(module);
            format!("export type {{ {name} }} from \"./{module}\";\n")
        })
        .collect();
    let mut out: Vec<(String, String)> = files.out.into_iter().collect();
    out.push(("index.ts".to_string(), index));
    Ok(out)
}

/// Renders each type it visits once, then the types it refers to.
struct Files {
    config: Config,
    seen: HashSet<TypeId>,
    out: BTreeMap<String, String>,
    error: Option<ts_rs::ExportError>,
}

impl TypeVisitor for Files {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        // Primitives and inline types have no file of their own.
        let Some(path) = T::output_path() else {
            return;
        };
        if self.error.is_some() || !self.seen.insert(TypeId::of::<T>()) {
            return;
        }
        match T::export_to_string(&self.config) {
            Ok(text) => {
                self.out
                    .insert(path.to_string_lossy().replace('\\', "/"), text);
            }
            Err(error) => self.error = Some(error),
        }
        T::visit_dependencies(self);
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use pretty_assertions::assert_eq;

    use super::render;

    fn bindings_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ui/src/bindings")
    }

    /// The `.ts` files under `dir`, relative and with `/` separators, sorted.
    fn committed(dir: &Path) -> Vec<String> {
        let mut found = Vec::new();
        let mut folders = vec![dir.to_path_buf()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|ext| ext == "ts") {
                    let relative = path.strip_prefix(dir).unwrap();
                    found.push(relative.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        found.sort();
        found
    }

    #[test]
    fn committed_typescript_bindings_match_the_rust_types() {
        let files = render().unwrap();
        let dir = bindings_dir();
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            for old in committed(&dir) {
                std::fs::remove_file(dir.join(old)).unwrap();
            }
            for (name, text) in &files {
                let path = dir.join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            return;
        }
        let mut names: Vec<String> = files.iter().map(|(name, _)| name.clone()).collect();
        names.sort();
        assert_eq!(
            committed(&dir),
            names,
            "ui/src/bindings/ holds other files than the Rust types give. Run \
             UPDATE_BINDINGS=1 cargo test -p tooltrail-app bindings"
        );
        for (name, text) in &files {
            let on_disk = std::fs::read_to_string(dir.join(name)).unwrap();
            assert_eq!(
                &on_disk, text,
                "ui/src/bindings/{name} differs from its Rust type. Run UPDATE_BINDINGS=1 \
                 cargo test -p tooltrail-app bindings"
            );
        }
    }
}
