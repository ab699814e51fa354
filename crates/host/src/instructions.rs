//! Project instructions: the notes people keep in a project for coding agents (`AGENTS.md`;
//! also `CLAUDE.md`, `.github/copilot-instructions.md` and `.cursorrules`, which Codex, Zed,
//! Cursor and Claude read), passed on to the model in the system prompt of a new conversation.
//!
//! **Which file.** `AGENTS.md` nearest to the workspace root: the root itself, then each
//! folder above it up to the repository's root (the first folder with `.git`); a folder that
//! is no repository's looks only in itself. Only when there is no `AGENTS.md` are the others
//! looked for, the same way, in the order above. An empty file counts as none.
//!
//! **How much.** The file goes whole into the system prompt when it fits in an eighth of the
//! model's context window (about four bytes a token), at most 16 KiB; a longer one is cut at a
//! line's end and says so, so that a small local model keeps room for the question.
//!
//! **Off per folder.** The user can turn them off for a folder ([`FolderPreferences`], kept
//! beside `config.toml` and read by the app and the command line alike), or for one question
//! (`tooltrail ask --no-project-instructions`).

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tooltrail_llm::LlmClient;
use tooltrail_settings::Overrides;

use crate::error::HostError;

/// The files looked for, in order of preference.
pub const FILES: [&str; 4] = [
    "AGENTS.md",
    "CLAUDE.md",
    ".github/copilot-instructions.md",
    ".cursorrules",
];

/// The most bytes the instructions take in the system prompt, whatever the window.
const MAX_BYTES: usize = 16 * 1024;

/// The most bytes read of a file; more could never fit.
const READ_LIMIT: u64 = 4 * MAX_BYTES as u64;

/// How the section of the system prompt that holds the instructions begins; the app reads
/// which file a conversation follows from it (`ui/src/state/instructions.ts`).
pub const SECTION_HEAD: &str = "The project's instructions for agents, from";

/// A file of project instructions, as found for a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectInstructions {
    pub path: PathBuf,
    /// The file as the user knows it: relative to the workspace (`AGENTS.md`,
    /// `../AGENTS.md`, `.github/copilot-instructions.md`).
    pub shown: String,
    pub text: String,
}

/// What a question's system prompt carries of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionsUse {
    /// The file, relative to the workspace.
    pub file: String,
    /// Cut to fit the context window.
    pub truncated: bool,
}

/// The project instructions of `workspace`, when it has some.
pub fn find(workspace: &Path) -> Option<ProjectInstructions> {
    let folders = search_folders(workspace);
    for name in FILES {
        for (depth, folder) in folders.iter().enumerate() {
            let path = folder.join(name);
            let Some(text) = read(&path) else {
                continue;
            };
            let shown = format!("{}{name}", "../".repeat(depth));
            return Some(ProjectInstructions { path, shown, text });
        }
    }
    None
}

/// The workspace, then each folder above it up to the repository's root.
fn search_folders(workspace: &Path) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    for folder in workspace.ancestors() {
        folders.push(folder.to_path_buf());
        if folder.join(".git").exists() {
            return folders;
        }
    }
    // Not inside a repository: the workspace alone.
    folders.truncate(1);
    folders
}

/// The file's text, when it is a file with something in it.
fn read(path: &Path) -> Option<String> {
    if !path.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(READ_LIMIT)
        .read_to_end(&mut bytes)
        .ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    (!text.trim().is_empty()).then_some(text)
}

/// How many bytes the instructions may take with a window of `window_tokens`.
pub fn room(window_tokens: u32) -> usize {
    let eighth = usize::try_from(window_tokens / 8).unwrap_or(usize::MAX);
    eighth.saturating_mul(4).min(MAX_BYTES)
}

/// The section of the system prompt that holds `found`, within `room` bytes.
pub fn section(found: &ProjectInstructions, room: usize) -> (String, InstructionsUse) {
    let text = found.text.trim();
    let (kept, truncated) = if text.len() <= room {
        (text, false)
    } else {
        let mut end = room;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let cut = &text[..end];
        let cut = cut.rfind('\n').map_or(cut, |at| &cut[..at]);
        (cut.trim_end(), true)
    };
    let mut out = format!(
        "\n\n{SECTION_HEAD} {} (follow them where they apply to the question):\n\n{kept}",
        found.shown
    );
    if truncated {
        out.push_str(&format!(
            "\n[the rest of {} is left out for room]",
            found.shown
        ));
    }
    (
        out,
        InstructionsUse {
            file: found.shown.clone(),
            truncated,
        },
    )
}

/// The system prompt of a question in `workspace`: the built-in one with the project
/// instructions, unless they are turned off (`overrides`, then the folder's preference) or
/// there are none (`None`: the agent's own prompt).
pub(crate) async fn system_prompt(
    workspace: &Path,
    overrides: &Overrides,
    llm: &LlmClient,
) -> (Option<String>, Option<InstructionsUse>) {
    let on = overrides
        .project_instructions
        .unwrap_or_else(|| FolderPreferences::load_default().project_instructions(workspace));
    let Some(found) = on.then(|| find(workspace)).flatten() else {
        return (None, None);
    };
    // Asked once per client and kept: the turn asks for it again at no cost.
    let window = llm.context_window(&CancellationToken::new()).await;
    let (section, used) = section(&found, room(window.tokens));
    let name = workspace
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| workspace.display().to_string());
    let mut prompt = tooltrail_agent::system_prompt(&name);
    prompt.push_str(&section);
    (Some(prompt), Some(used))
}

/// What the user chose for each folder, kept in `folders.json` beside `config.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FolderPreferences {
    #[serde(default)]
    folders: BTreeMap<String, FolderPreference>,
}

/// One folder's choices; what is not set is the default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct FolderPreference {
    /// `false`: the project instructions are left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    project_instructions: Option<bool>,
}

impl FolderPreferences {
    /// The file in `config_dir`.
    pub fn path(config_dir: &Path) -> PathBuf {
        config_dir.join("folders.json")
    }

    /// The preferences in `config_dir`; a missing or damaged file is no preferences.
    pub fn load(config_dir: &Path) -> Self {
        std::fs::read_to_string(Self::path(config_dir))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// The preferences in the config folder.
    pub fn load_default() -> Self {
        tooltrail_settings::config_dir()
            .map(|dir| Self::load(&dir))
            .unwrap_or_default()
    }

    /// Whether `folder`'s questions follow its project instructions (yes unless turned off).
    pub fn project_instructions(&self, folder: &Path) -> bool {
        self.folders
            .get(&key(folder))
            .and_then(|preference| preference.project_instructions)
            .unwrap_or(true)
    }

    /// Turns `folder`'s project instructions on or off, and saves the file.
    pub fn set_project_instructions(
        config_dir: &Path,
        folder: &Path,
        on: bool,
    ) -> Result<(), HostError> {
        let mut preferences = Self::load(config_dir);
        let entry = preferences.folders.entry(key(folder)).or_default();
        // On is the default: the entry goes rather than saying so.
        entry.project_instructions = (!on).then_some(false);
        preferences
            .folders
            .retain(|_, preference| preference.project_instructions.is_some());
        let path = Self::path(config_dir);
        let text = serde_json::to_string_pretty(&preferences)
            .map_err(|error| HostError::Preferences(error.to_string()))?;
        std::fs::create_dir_all(config_dir)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|error| {
                HostError::Preferences(format!("{} could not be written: {error}", path.display()))
            })
    }
}

/// A folder as the preferences know it: its full path, with links resolved when it exists.
fn key(folder: &Path) -> String {
    std::fs::canonicalize(folder)
        .unwrap_or_else(|_| folder.to_path_buf())
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pretty_assertions::assert_eq;

    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn agents_md_nearest_to_the_workspace_wins_and_the_others_are_fallbacks() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join(".git")).unwrap();
        let workspace = repo.path().join("services/api");
        std::fs::create_dir_all(&workspace).unwrap();
        assert_eq!(find(&workspace), None);

        write(&repo.path().join(".cursorrules"), "cursor rules");
        assert_eq!(find(&workspace).unwrap().shown, "../../.cursorrules");
        write(
            &workspace.join(".github/copilot-instructions.md"),
            "copilot",
        );
        assert_eq!(
            find(&workspace).unwrap().shown,
            ".github/copilot-instructions.md"
        );
        write(&repo.path().join("CLAUDE.md"), "claude");
        assert_eq!(find(&workspace).unwrap().shown, "../../CLAUDE.md");
        write(&repo.path().join("AGENTS.md"), "root agents");
        assert_eq!(find(&workspace).unwrap().shown, "../../AGENTS.md");
        // An empty file is none.
        write(&workspace.join("AGENTS.md"), "  \n");
        assert_eq!(find(&workspace).unwrap().text, "root agents");
        write(&workspace.join("AGENTS.md"), "Run make test.");
        let found = find(&workspace).unwrap();
        assert_eq!(
            (found.shown.as_str(), found.text.as_str()),
            ("AGENTS.md", "Run make test.")
        );
    }

    #[test]
    fn outside_a_repository_only_the_workspace_is_looked_in() {
        let above = tempfile::tempdir().unwrap();
        write(&above.path().join("AGENTS.md"), "not this project's");
        let workspace = above.path().join("project");
        std::fs::create_dir(&workspace).unwrap();
        assert_eq!(find(&workspace), None);
    }

    #[test]
    fn a_long_file_is_cut_at_a_line_end_within_its_share_of_the_window() {
        assert_eq!(room(8192), 4096);
        assert_eq!(room(1_000_000), MAX_BYTES);
        let found = ProjectInstructions {
            path: PathBuf::from("/p/AGENTS.md"),
            shown: "AGENTS.md".into(),
            text: "line one\nline two\nline three\n".into(),
        };
        let (whole, used) = section(&found, 1000);
        assert_eq!(
            whole,
            "\n\nThe project's instructions for agents, from AGENTS.md (follow them where they apply to the question):\n\nline one\nline two\nline three"
        );
        assert!(!used.truncated);
        let (cut, used) = section(&found, 14);
        assert!(
            cut.ends_with("line one\n[the rest of AGENTS.md is left out for room]"),
            "{cut}"
        );
        assert!(used.truncated);
    }

    #[test]
    fn a_folder_turned_off_stays_off_and_turning_it_on_forgets_it() {
        let config = tempfile::tempdir().unwrap();
        let folder = tempfile::tempdir().unwrap();
        assert!(FolderPreferences::load(config.path()).project_instructions(folder.path()));
        FolderPreferences::set_project_instructions(config.path(), folder.path(), false).unwrap();
        assert!(!FolderPreferences::load(config.path()).project_instructions(folder.path()));
        FolderPreferences::set_project_instructions(config.path(), folder.path(), true).unwrap();
        assert!(FolderPreferences::load(config.path()).project_instructions(folder.path()));
        assert_eq!(
            std::fs::read_to_string(FolderPreferences::path(config.path())).unwrap(),
            "{\n  \"folders\": {}\n}"
        );
    }
}
