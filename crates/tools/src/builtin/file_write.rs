//! `file_write(path, content, mode?)`: creates, replaces or appends to a text file in the
//! workspace.
//!
//! Off until the user turns it on, and every call asks, showing the diff ([`Gate::AskEachTime`]:
//! no rule or "allow for this conversation" lets a write through). The file is written
//! atomically (a temporary file beside it, then a rename), and what it held before goes to the
//! context's [`ChangeJournal`](crate::ChangeJournal) first, so the turn can be undone.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tooltrail_protocol::{FileChange, ToolError, ToolErrorCode, ToolOutput, ToolSpec, WriteMode};
use tooltrail_sandbox::ResolvedPath;

use crate::args::{blocking, parse};
use crate::diff::file_change;
use crate::tool::{Gate, Tool, ToolContext};

pub(crate) const NAME: &str = "file_write";

pub(crate) struct FileWrite {
    spec: ToolSpec,
}

#[derive(Deserialize)]
struct Args {
    path: String,
    content: String,
    #[serde(default)]
    mode: Option<WriteMode>,
}

impl FileWrite {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "Write a text file in the workspace: overwrite (default), create \
                    (fails if it exists) or append. The user sees the diff and approves each \
                    write."
                    .to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "Workspace-relative file path."},
                        "content": {"type": "string"},
                        "mode": {"type": "string", "enum": ["overwrite", "create", "append"]}
                    },
                    "required": ["path", "content"]
                }),
                read_only: false,
            },
        }
    }
}

/// What a write would do, worked out before it is asked about and again before it runs.
struct Planned {
    resolved: ResolvedPath,
    mode: WriteMode,
    /// The file's bytes now, or `None` when it does not exist.
    old: Option<Vec<u8>>,
    /// What the file will hold.
    new: String,
}

impl Planned {
    fn change(&self) -> FileChange {
        let old = self
            .old
            .as_deref()
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned());
        file_change(
            self.resolved.relative(),
            self.mode,
            old.as_deref(),
            &self.new,
        )
    }
}

/// `content` with the line endings of the file it changes: a model writes `\n`, and a file
/// that ends its lines in `\r\n` (written on Windows) keeps doing so, rather than changing
/// every line or mixing the two. The first line's ending says which the file uses.
fn in_line_endings_of(old: &[u8], content: &str) -> String {
    let crlf = memchr::memchr(b'\n', old).is_some_and(|at| at > 0 && old[at - 1] == b'\r');
    if !crlf {
        return content.to_string();
    }
    let mut out = String::with_capacity(content.len() + content.len() / 16);
    let mut previous = None;
    for ch in content.chars() {
        if ch == '\n' && previous != Some('\r') {
            out.push('\r');
        }
        out.push(ch);
        previous = Some(ch);
    }
    out
}

/// Whether a path's part names Git's folder on some system: `.git` in any case (macOS and
/// Windows do not tell `.GIT` from it), with the trailing dots and spaces Windows drops from a
/// name, or as its Windows short name `GIT~1`.
fn names_git_folder(part: &str) -> bool {
    let name = part.trim_end_matches(['.', ' ']);
    name.eq_ignore_ascii_case(".git") || name.eq_ignore_ascii_case("git~1")
}

fn plan(args: &Args, ctx: &ToolContext) -> Result<Planned, ToolError> {
    let mode = args.mode.unwrap_or(WriteMode::Overwrite);
    let resolved = ctx.workspace.resolve_new(&args.path)?;
    let relative = resolved.relative().to_string();
    let is_dir = resolved.exists()
        && ctx
            .workspace
            .metadata(&resolved)
            .is_ok_and(|meta| meta.is_dir());
    if resolved.is_root() || is_dir {
        return Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("`{relative}` is a folder; give a file path"),
        ));
    }
    // Git's folder holds hooks, which run as programs: writing there is running code.
    if relative.split('/').any(names_git_folder) {
        return Err(ToolError::new(
            ToolErrorCode::Denied,
            format!("`{relative}` is inside .git, which file_write does not change"),
        ));
    }
    let old = if resolved.exists() {
        Some(ctx.workspace.read(&resolved)?)
    } else {
        None
    };
    if let Some(bytes) = &old {
        if mode == WriteMode::Create {
            return Err(ToolError::new(
                ToolErrorCode::Failed,
                format!("`{relative}` already exists; use mode overwrite or append"),
            ));
        }
        if std::str::from_utf8(bytes).is_err() || bytes.contains(&0) {
            return Err(ToolError::new(
                ToolErrorCode::BinaryFile,
                format!("`{relative}` is not a text file; file_write changes text files only"),
            ));
        }
    }
    let content = match &old {
        Some(bytes) => in_line_endings_of(bytes, &args.content),
        None => args.content.clone(),
    };
    let new = match (&old, mode) {
        (Some(bytes), WriteMode::Append) => {
            format!("{}{content}", String::from_utf8_lossy(bytes))
        }
        _ => content,
    };
    let cap = ctx.limits.max_read_bytes;
    if new.len() as u64 > cap {
        return Err(ToolError::new(
            ToolErrorCode::TooLarge,
            format!(
                "`{relative}` would hold {} bytes; file_write writes files of at most {cap} bytes",
                new.len()
            ),
        ));
    }
    Ok(Planned {
        resolved,
        mode,
        old,
        new,
    })
}

#[async_trait]
impl Tool for FileWrite {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gate(&self, args: &Value, ctx: &ToolContext) -> Gate {
        let args: Args = match parse(NAME, args.clone()) {
            Ok(args) => args,
            Err(error) => return Gate::Refuse(error),
        };
        match plan(&args, ctx) {
            Ok(planned) => {
                let change = planned.change();
                let verb = match (planned.mode, planned.old.is_some()) {
                    (_, false) => "create",
                    (WriteMode::Append, true) => "append to",
                    (WriteMode::Overwrite | WriteMode::Create, true) => "overwrite",
                };
                Gate::AskEachTime {
                    summary: format!(
                        "{verb} {} (+{} −{} lines)",
                        change.path, change.added, change.removed
                    ),
                    reason: "file_write changes a file in the workspace; each write is \
                        approved on its own"
                        .to_string(),
                    change: Some(change),
                }
            }
            Err(error) => Gate::Refuse(error),
        }
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse(NAME, args)?;
        if !ctx.approved {
            return Err(ToolError::new(
                ToolErrorCode::Denied,
                "file_write runs only once the user approved the call",
            ));
        }
        let ctx = ctx.clone();
        blocking(move || write(&args, &ctx)).await
    }
}

fn write(args: &Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let planned = plan(args, ctx)?;
    let relative = planned.resolved.relative().to_string();
    let change = planned.change();
    let undoable = match (&ctx.changes, &ctx.call) {
        (Some(journal), Some(scope)) => {
            journal.before_write(scope, &relative, planned.old.as_deref())?;
            true
        }
        _ => false,
    };
    // Through the folder's handle: no link on the way or at a temporary name leads it out.
    ctx.workspace
        .write(&planned.resolved, planned.new.as_bytes())?;
    if let (Some(journal), Some(scope)) = (&ctx.changes, &ctx.call) {
        journal.after_write(scope, &relative, planned.new.as_bytes())?;
    }
    let action = match (planned.mode, planned.old.is_some()) {
        (_, false) => "created",
        (WriteMode::Append, true) => "appended to",
        (WriteMode::Overwrite | WriteMode::Create, true) => "overwrote",
    };
    let mut text = format!(
        "{action} {relative}: {} bytes, +{} −{} lines",
        planned.new.len(),
        change.added,
        change.removed
    );
    if !undoable {
        text.push_str(" (this write cannot be undone from Tooltrail)");
    }
    Ok(ToolOutput::new(
        text,
        json!({
            "path": relative,
            "mode": planned.mode.as_str(),
            "created": planned.old.is_none(),
            "bytes": planned.new.len(),
            "added": change.added,
            "removed": change.removed,
            "undoable": undoable,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::{in_line_endings_of, names_git_folder};

    #[test]
    fn a_file_with_windows_line_endings_keeps_them() {
        let windows = b"one\r\ntwo\r\n";
        assert_eq!(in_line_endings_of(windows, "a\nb\n"), "a\r\nb\r\n");
        // Already in its endings, or mixed: no `\r\r\n`.
        assert_eq!(in_line_endings_of(windows, "a\r\nb\n"), "a\r\nb\r\n");
        assert_eq!(in_line_endings_of(windows, "no ending"), "no ending");
        // A file with Unix endings, or with no line yet, takes the content as it is.
        assert_eq!(in_line_endings_of(b"one\ntwo\r\n", "a\nb\n"), "a\nb\n");
        assert_eq!(in_line_endings_of(b"", "a\nb"), "a\nb");
        assert_eq!(in_line_endings_of(b"\n", "a\r\n"), "a\r\n");
    }

    #[test]
    fn attack_approvals_file_write_knows_git_folder_by_every_spelling_a_system_takes() {
        for part in [
            ".git", ".GIT", ".Git", ".git.", ".git ", ".git. .", "GIT~1", "git~1",
        ] {
            assert!(names_git_folder(part), "{part:?}");
        }
        for part in ["git", ".github", ".gitignore", "x.git", ".git2", "GIT~2"] {
            assert!(!names_git_folder(part), "{part:?}");
        }
    }
}
