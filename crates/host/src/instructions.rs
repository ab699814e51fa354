//! Project instructions: the notes people keep in a project for coding agents (`AGENTS.md`;
//! also `CLAUDE.md`, `.github/copilot-instructions.md` and `.cursorrules`, which Codex, Zed,
//! Cursor and Claude read), passed on to the model in the system prompt of a new conversation.
//!
//! **Which file.** `AGENTS.md` nearest to the workspace root: the root itself, then each
//! folder above it up to the repository's root (the first folder with `.git`); a folder that
//! is no repository's looks only in itself. Only when there is no `AGENTS.md` are the others
//! looked for, the same way, in the order above. An empty file counts as none.
//!
//! **Only what the folder holds.** They are read the way the file tools read: each name is
//! resolved link by link against the folder it is looked for in (the workspace, or the folder
//! above it where it was found), and a link that leads out of that folder (to `~/.ssh/id_ed25519`,
//! by an absolute path, `../..`, a chain of links or a linked `.github`) is not followed. The
//! folder it was found in is the bound, not the repository's root: a folder without `.git` of
//! its own inside a home folder kept in git would otherwise reach the whole home. A link to
//! another file inside is followed. Only ordinary files are opened, and without waiting (a pipe
//! named `AGENTS.md` never holds the question up). A file left out is said, with why
//! ([`InstructionsLeftOut`]), and the next file in order is looked for.
//!
//! **How much.** The file goes whole into the system prompt when it fits in an eighth of the
//! model's context window (about four bytes a token), at most 16 KiB; a longer one is cut at a
//! line's end and says so, so that a small local model keeps room for the question. No more
//! than four times that is ever read.
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
pub use tooltrail_protocol::{InstructionsLeftOut, LeftOutReason};
use tooltrail_sandbox::{PathError, Workspace};
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
pub const MAX_BYTES: usize = 16 * 1024;

/// The most bytes read of a file; more could never fit.
const READ_LIMIT: u64 = 4 * MAX_BYTES as u64;

/// How the section of the system prompt that holds the instructions begins; the app reads
/// which file a conversation follows from it (`ui/src/state/instructions.ts`).
pub const SECTION_HEAD: &str = "The project's instructions for agents, from";

/// A file of project instructions, as found for a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectInstructions {
    /// Where it was read, every link resolved.
    pub path: PathBuf,
    /// The file as the user knows it: relative to the workspace (`AGENTS.md`,
    /// `../AGENTS.md`, `.github/copilot-instructions.md`).
    pub shown: String,
    /// Its text, at most the first [`READ_LIMIT`] bytes.
    pub text: String,
    /// Its size on disk: over [`MAX_BYTES`], it is cut whatever the window.
    pub bytes: u64,
}

/// What looking for a workspace's project instructions found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lookup {
    /// The file new conversations follow.
    pub found: Option<ProjectInstructions>,
    /// The files that would have come before it (or instead of none), left out, in order.
    pub left_out: Vec<InstructionsLeftOut>,
}

/// What a question's system prompt carries of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionsUse {
    /// The file, relative to the workspace.
    pub file: String,
    /// Cut to fit the context window.
    pub truncated: bool,
}

/// What a question's engine did with the project instructions: the file used, and those left
/// out and why (both empty when they are turned off).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstructionsReport {
    pub used: Option<InstructionsUse>,
    pub left_out: Vec<InstructionsLeftOut>,
}

/// The project instructions of `workspace`, when it has some.
pub fn find(workspace: &Path) -> Option<ProjectInstructions> {
    look(workspace).found
}

/// The project instructions of `workspace`, with the files left out on the way.
pub fn look(workspace: &Path) -> Lookup {
    let folders = search_folders(workspace);
    let mut left_out = Vec::new();
    for name in FILES {
        for (depth, folder) in folders.iter().enumerate() {
            let shown = format!("{}{name}", "../".repeat(depth));
            match read(folder, name) {
                Ok(None) => {}
                Ok(Some((path, text, bytes))) => {
                    let found = ProjectInstructions {
                        path,
                        shown,
                        text,
                        bytes,
                    };
                    return Lookup {
                        found: Some(found),
                        left_out,
                    };
                }
                Err(reason) => left_out.push(InstructionsLeftOut {
                    file: shown,
                    reason,
                }),
            }
        }
    }
    Lookup {
        found: None,
        left_out,
    }
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

/// `name` in `folder`, resolved inside it: its path, text and size when it is an ordinary file
/// with something in it; `Ok(None)` when there is none; why it is left out otherwise.
fn read(folder: &Path, name: &str) -> Result<Option<(PathBuf, String, u64)>, LeftOutReason> {
    // A folder that cannot be opened holds nothing to look at.
    let Ok(bound) = Workspace::open(folder) else {
        return Ok(None);
    };
    let resolved = match bound.resolve(name) {
        Ok(resolved) => resolved,
        // No such file, or `.github` is a file.
        Err(PathError::NotFound(_) | PathError::NotADirectory(_)) => return Ok(None),
        Err(PathError::Outside(_) | PathError::AbsoluteOutside) => {
            return Err(LeftOutReason::LinkOutside);
        }
        Err(
            PathError::Refused(_)
            | PathError::TooManyLinks(_)
            | PathError::NotAFile(_)
            | PathError::Io { .. },
        ) => {
            return Err(LeftOutReason::Unreadable);
        }
    };
    let path = resolved.path().to_path_buf();
    // What it names must be an ordinary file before it is opened, since opening a device may
    // do anything. Both the look and the open go through the folder's handle, which the system
    // confines beneath the folder: a folder on the way swapped for a link since it was resolved
    // leads nowhere outside.
    match bound.metadata(&resolved) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err(LeftOutReason::NotAFile),
        Err(PathError::NotFound(_)) => return Ok(None),
        Err(PathError::Outside(_)) => return Err(LeftOutReason::LinkOutside),
        Err(_) => return Err(LeftOutReason::Unreadable),
    }
    // Opened without waiting (a pipe put there since it was checked), then checked again on
    // what was opened.
    let (file, meta) = bound.open_read(&resolved).map_err(|error| match error {
        PathError::Outside(_) => LeftOutReason::LinkOutside,
        _ => LeftOutReason::Unreadable,
    })?;
    if !meta.is_file() {
        return Err(LeftOutReason::NotAFile);
    }
    let mut bytes = Vec::new();
    file.take(READ_LIMIT)
        .read_to_end(&mut bytes)
        .map_err(|_| LeftOutReason::Unreadable)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok((!text.trim().is_empty()).then_some((path, text, meta.len())))
}

/// How many bytes the project instructions may take in a window of `window_tokens`: their
/// share of the system prompt, at most [`MAX_BYTES`].
pub fn byte_budget(window_tokens: u32) -> usize {
    tooltrail_agent::prompt_share_bytes(window_tokens, MAX_BYTES)
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

/// The project instructions of a question in `workspace`, as a section of the folder's
/// context (see `tooltrail_agent::folder_context`): `None` when they are turned off
/// (`overrides`, then the folder's preference) or there are none; and what was used or left
/// out.
pub(crate) async fn project_section(
    workspace: &Path,
    overrides: &Overrides,
    llm: &LlmClient,
) -> (Option<String>, InstructionsReport) {
    let on = overrides
        .project_instructions
        .unwrap_or_else(|| FolderPreferences::load_default().project_instructions(workspace));
    if !on {
        return (None, InstructionsReport::default());
    }
    let Lookup { found, left_out } = look(workspace);
    let Some(found) = found else {
        let report = InstructionsReport {
            used: None,
            left_out,
        };
        return (None, report);
    };
    // Asked once per client and kept: the turn asks for it again at no cost.
    let window = llm.context_window(&CancellationToken::new()).await;
    let (section, used) = section(&found, byte_budget(window.tokens));
    let report = InstructionsReport {
        used: Some(used),
        left_out,
    };
    (Some(section), report)
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
        assert_eq!(byte_budget(8192), 4096);
        assert_eq!(byte_budget(1_000_000), MAX_BYTES);
        let found = ProjectInstructions {
            path: PathBuf::from("/p/AGENTS.md"),
            shown: "AGENTS.md".into(),
            text: "line one\nline two\nline three\n".into(),
            bytes: 29,
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

    /// A home folder holding a secret, beside the folder that is opened.
    const CANARY: &str = "CANARY-4f1d PRIVATE KEY";

    struct Scene {
        _dir: tempfile::TempDir,
        home: PathBuf,
        secret: PathBuf,
        ws: PathBuf,
    }

    fn scene() -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home");
        let secret = home.join(".ssh/id_ed25519");
        write(&secret, CANARY);
        write(&home.join(".aws/credentials"), CANARY);
        let ws = root.join("clone");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        Scene {
            _dir: dir,
            home,
            secret,
            ws,
        }
    }

    #[cfg(unix)]
    fn link(target: impl AsRef<Path>, at: &Path) {
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, at).unwrap();
    }

    /// The system prompt section the lookup gives, or nothing; never the canary.
    fn assert_no_canary(lookup: &Lookup) {
        if let Some(found) = &lookup.found {
            let (section, _) = section(found, MAX_BYTES);
            assert!(!section.contains("CANARY"), "{section}");
        }
    }

    /// The lookup in `folder`, after checking that its section holds no canary.
    #[cfg(unix)]
    fn look_without_canary(folder: &Path) -> Lookup {
        let lookup = look(folder);
        assert_no_canary(&lookup);
        lookup
    }

    fn left(file: &str, reason: LeftOutReason) -> InstructionsLeftOut {
        InstructionsLeftOut {
            file: file.into(),
            reason,
        }
    }

    /// `files`, each left out as a link to outside the folder.
    #[cfg(unix)]
    fn links_outside(files: &[&str]) -> Vec<InstructionsLeftOut> {
        files
            .iter()
            .map(|file| left(file, LeftOutReason::LinkOutside))
            .collect()
    }

    #[cfg(unix)]
    fn make_fifo(at: &Path) {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            at,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn attack_links_agents_md_symlink_to_home_is_not_read() {
        let s = scene();
        link(&s.secret, &s.ws.join("AGENTS.md"));
        let lookup = look_without_canary(&s.ws);
        assert_eq!(
            lookup,
            Lookup {
                found: None,
                left_out: links_outside(&["AGENTS.md"]),
            }
        );
        assert_eq!(
            lookup.left_out[0].sentence(),
            "AGENTS.md was left out: it is a link to a file outside the folder."
        );
    }

    #[cfg(unix)]
    #[test]
    fn attack_links_a_file_left_out_gives_way_to_the_next_one_inside() {
        let s = scene();
        link(s.home.join(".aws/credentials"), &s.ws.join("AGENTS.md"));
        write(&s.ws.join("CLAUDE.md"), "Use tabs.");
        let lookup = look_without_canary(&s.ws);
        assert_eq!(lookup.found.as_ref().unwrap().shown, "CLAUDE.md");
        assert_eq!(lookup.found.as_ref().unwrap().text, "Use tabs.");
        assert_eq!(lookup.left_out, links_outside(&["AGENTS.md"]));
    }

    #[cfg(unix)]
    #[test]
    fn attack_links_relative_climb_out_of_the_folder_is_not_followed() {
        let s = scene();
        link("../home/.ssh/id_ed25519", &s.ws.join("AGENTS.md"));
        link(
            "../../home/.ssh/id_ed25519",
            &s.ws.join(".github/copilot-instructions.md"),
        );
        let lookup = look_without_canary(&s.ws);
        assert_eq!(
            lookup.left_out,
            links_outside(&["AGENTS.md", ".github/copilot-instructions.md"])
        );
    }

    #[cfg(unix)]
    #[test]
    fn attack_links_a_chain_of_links_that_ends_outside_is_not_followed() {
        let s = scene();
        // AGENTS.md -> docs/one -> docs/two -> the secret: each step but the last stays inside.
        link("docs/one", &s.ws.join("AGENTS.md"));
        link("two", &s.ws.join("docs/one"));
        link(&s.secret, &s.ws.join("docs/two"));
        let lookup = look_without_canary(&s.ws);
        assert_eq!(lookup.left_out, links_outside(&["AGENTS.md"]));
    }

    #[cfg(unix)]
    #[test]
    fn attack_links_a_linked_github_folder_outside_is_not_followed() {
        let s = scene();
        write(&s.home.join("copilot-instructions.md"), CANARY);
        link(&s.home, &s.ws.join(".github"));
        let lookup = look_without_canary(&s.ws);
        assert_eq!(
            lookup.left_out,
            links_outside(&[".github/copilot-instructions.md"])
        );
    }

    #[cfg(unix)]
    #[test]
    fn attack_links_claude_md_and_cursorrules_links_out_are_not_followed() {
        let s = scene();
        link(&s.secret, &s.ws.join("CLAUDE.md"));
        link(s.home.join(".aws/credentials"), &s.ws.join(".cursorrules"));
        let lookup = look_without_canary(&s.ws);
        assert_eq!(
            lookup.left_out,
            links_outside(&["CLAUDE.md", ".cursorrules"])
        );
    }

    #[cfg(unix)]
    #[test]
    fn attack_links_a_parent_folders_file_may_not_leave_that_folder() {
        // The opened folder sits in a repository whose root AGENTS.md links out of it.
        let s = scene();
        let sub = s.ws.join("services/api");
        std::fs::create_dir_all(&sub).unwrap();
        link(&s.secret, &s.ws.join("AGENTS.md"));
        // The opened folder's own file may not reach the repository around it either.
        link("../../../home/.aws/credentials", &sub.join("CLAUDE.md"));
        let lookup = look_without_canary(&sub);
        assert_eq!(
            lookup.left_out,
            links_outside(&["../../AGENTS.md", "CLAUDE.md"])
        );
    }

    #[cfg(unix)]
    #[test]
    fn attack_links_a_link_inside_the_folder_to_another_file_inside_is_followed() {
        let s = scene();
        write(&s.ws.join("docs/agents.md"), "Run make test.");
        link("docs/agents.md", &s.ws.join("AGENTS.md"));
        link(s.ws.join("docs/agents.md"), &s.ws.join("CLAUDE.md"));
        let lookup = look(&s.ws);
        let found = lookup.found.unwrap();
        assert_eq!(
            (found.shown.as_str(), found.text.as_str()),
            ("AGENTS.md", "Run make test.")
        );
        assert_eq!(found.path, s.ws.join("docs/agents.md"));
        assert_eq!(lookup.left_out, vec![]);
    }

    #[cfg(unix)]
    #[test]
    fn attack_links_a_fifo_named_agents_md_is_left_out_without_waiting() {
        let s = scene();
        let fifo = s.ws.join("AGENTS.md");
        make_fifo(&fifo);
        // No writer ever opens it: a lookup that opened it to read would wait for ever. The
        // lookup runs on a thread of its own so that such a wait fails the test (after a bound
        // far beyond any lookup's time) instead of holding the run up.
        let ws = s.ws.clone();
        let (done, result) = std::sync::mpsc::channel();
        std::thread::spawn(move || done.send(look(&ws)));
        let lookup = result
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the lookup waited on the pipe");
        assert_eq!(
            lookup.left_out,
            vec![left("AGENTS.md", LeftOutReason::NotAFile)]
        );
        // Opening it through the folder's handle does not wait either, and finds it is no file,
        // should it be swapped in after the check.
        let folder = Workspace::open(&s.ws).unwrap();
        let (_, meta) = folder
            .open_read(&folder.resolve("AGENTS.md").unwrap())
            .unwrap();
        assert!(!meta.is_file());
    }

    #[cfg(unix)]
    #[test]
    fn attack_links_a_fifo_outside_behind_a_link_is_not_opened() {
        let s = scene();
        let fifo = s.home.join("pipe");
        make_fifo(&fifo);
        link(&fifo, &s.ws.join("AGENTS.md"));
        assert_eq!(look(&s.ws).left_out, links_outside(&["AGENTS.md"]));
    }

    #[cfg(unix)]
    #[test]
    fn attack_links_a_link_to_a_device_is_not_followed() {
        let s = scene();
        // /dev/zero is outside, so the link is refused before the device is looked at (making a
        // device inside the folder takes root).
        link("/dev/zero", &s.ws.join("AGENTS.md"));
        assert_eq!(look(&s.ws).left_out, links_outside(&["AGENTS.md"]));
    }

    #[test]
    fn attack_links_a_folder_named_agents_md_is_left_out() {
        let s = scene();
        std::fs::create_dir_all(s.ws.join("AGENTS.md")).unwrap();
        write(&s.ws.join("CLAUDE.md"), "Claude's notes.");
        let lookup = look(&s.ws);
        assert_eq!(lookup.found.unwrap().shown, "CLAUDE.md");
        assert_eq!(
            lookup.left_out,
            vec![left("AGENTS.md", LeftOutReason::NotAFile)]
        );
    }

    #[test]
    fn attack_links_a_huge_file_is_read_only_up_to_the_cap_and_cut() {
        let s = scene();
        let line = "Keep functions short.\n";
        let mut text = line.repeat((4 * 1024 * 1024) / line.len());
        text.push_str(CANARY);
        write(&s.ws.join("AGENTS.md"), &text);
        let found = look(&s.ws).found.unwrap();
        assert_eq!(found.bytes, text.len() as u64);
        assert_eq!(found.text.len() as u64, READ_LIMIT);
        let (section, used) = section(&found, byte_budget(1_000_000));
        assert!(used.truncated);
        assert!(!section.contains("CANARY"));
        assert!(section.len() < MAX_BYTES + 300, "{}", section.len());
        assert!(
            section
                .ends_with("Keep functions short.\n[the rest of AGENTS.md is left out for room]"),
            "{}",
            &section[section.len() - 80..]
        );
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
