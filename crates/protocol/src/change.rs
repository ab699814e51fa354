//! A file change as the user approves it: what `file_write` would do to one file, as a diff.
//!
//! The diff is computed before the call runs, from the file as it is then, so the approval card
//! and the terminal prompt show exactly what "yes" lets happen.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How a write treats a file that is already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum WriteMode {
    /// Replace the file's content (create it when missing).
    Overwrite,
    /// Create a new file; refuse when it exists.
    Create,
    /// Add to the end of the file (create it when missing).
    Append,
}

impl WriteMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Overwrite => "overwrite",
            Self::Create => "create",
            Self::Append => "append",
        }
    }
}

/// One proposed change to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FileChange {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    pub mode: WriteMode,
    /// Whether the file exists now (false: the change creates it).
    pub existed: bool,
    /// Lines added and removed.
    pub added: u32,
    pub removed: u32,
    /// The changed lines with a few lines of context around them, in file order.
    pub hunks: Vec<DiffHunk>,
    /// Set when the diff was too long to show whole; `added`/`removed` still count everything.
    pub truncated: bool,
}

/// A run of changed lines with context, as in a unified diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DiffHunk {
    /// First line of the hunk in the old and the new file (1-based; 0 for an empty side).
    pub old_start: u32,
    pub new_start: u32,
    pub old_lines: u32,
    pub new_lines: u32,
    pub lines: Vec<DiffLine>,
}

/// One line of a hunk, with its number on each side where it has one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DiffLine {
    pub kind: DiffLineKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub old_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub new_line: Option<u32>,
    /// The line without its line ending.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum DiffLineKind {
    Context,
    Added,
    Removed,
}

impl FileChange {
    /// The change as a unified diff with line numbers, as the terminal prints it.
    pub fn unified(&self) -> String {
        let mut out = String::new();
        let old = if self.existed {
            format!("a/{}", self.path)
        } else {
            "/dev/null".to_string()
        };
        out.push_str(&format!("--- {old}\n+++ b/{}\n", self.path));
        for hunk in &self.hunks {
            out.push_str(&format!(
                "@@ -{},{} +{},{} @@\n",
                hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines
            ));
            for line in &hunk.lines {
                let (mark, number) = match line.kind {
                    DiffLineKind::Context => (' ', line.new_line),
                    DiffLineKind::Added => ('+', line.new_line),
                    DiffLineKind::Removed => ('-', line.old_line),
                };
                let number = number.map(|n| n.to_string()).unwrap_or_default();
                out.push_str(&format!("{number:>5} {mark}{}\n", line.text));
            }
        }
        if self.truncated {
            out.push_str("… (the rest of the diff is not shown)\n");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_diff_numbers_each_line_on_the_side_it_belongs_to() {
        let change = FileChange {
            path: "src/a.rs".into(),
            mode: WriteMode::Overwrite,
            existed: true,
            added: 1,
            removed: 1,
            hunks: vec![DiffHunk {
                old_start: 1,
                new_start: 1,
                old_lines: 2,
                new_lines: 2,
                lines: vec![
                    DiffLine {
                        kind: DiffLineKind::Context,
                        old_line: Some(1),
                        new_line: Some(1),
                        text: "fn a() {}".into(),
                    },
                    DiffLine {
                        kind: DiffLineKind::Removed,
                        old_line: Some(2),
                        new_line: None,
                        text: "old".into(),
                    },
                    DiffLine {
                        kind: DiffLineKind::Added,
                        old_line: None,
                        new_line: Some(2),
                        text: "new".into(),
                    },
                ],
            }],
            truncated: false,
        };
        assert_eq!(
            change.unified(),
            "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,2 +1,2 @@\n    1  fn a() {}\n    2 -old\n    2 +new\n"
        );
    }
}
