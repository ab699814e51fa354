//! The diff a `file_write` approval shows: the file as it is, against what the call would
//! leave there, as unified-diff hunks with line numbers on both sides.

use similar::{ChangeTag, TextDiff};
use tooltrail_protocol::{DiffHunk, DiffLine, DiffLineKind, FileChange, WriteMode};

/// Lines of context around each change, as `diff -u`.
const CONTEXT_LINES: usize = 3;
/// Most diff lines shown; a longer diff is cut and says so (the counts stay whole).
const MAX_SHOWN_LINES: usize = 2_000;

/// The change from `old` (`None`: the file does not exist) to `new` at `path`.
pub fn file_change(path: &str, mode: WriteMode, old: Option<&str>, new: &str) -> FileChange {
    let diff = TextDiff::from_lines(old.unwrap_or(""), new);
    let (mut added, mut removed) = (0u32, 0u32);
    let mut hunks = Vec::new();
    let mut shown = 0usize;
    let mut truncated = false;
    for group in diff.grouped_ops(CONTEXT_LINES) {
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let kind = match change.tag() {
                    ChangeTag::Equal => DiffLineKind::Context,
                    ChangeTag::Insert => {
                        added += 1;
                        DiffLineKind::Added
                    }
                    ChangeTag::Delete => {
                        removed += 1;
                        DiffLineKind::Removed
                    }
                };
                if shown >= MAX_SHOWN_LINES {
                    truncated = true;
                    continue;
                }
                shown += 1;
                lines.push(DiffLine {
                    kind,
                    old_line: change.old_index().map(line_number),
                    new_line: change.new_index().map(line_number),
                    text: change.value().trim_end_matches(['\n', '\r']).to_string(),
                });
            }
        }
        if lines.is_empty() {
            continue;
        }
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        hunks.push(DiffHunk {
            old_start: start_number(&old_range),
            new_start: start_number(&new_range),
            old_lines: count(old_range.len()),
            new_lines: count(new_range.len()),
            lines,
        });
    }
    FileChange {
        path: path.to_string(),
        mode,
        existed: old.is_some(),
        added,
        removed,
        hunks,
        truncated,
    }
}

fn line_number(index: usize) -> u32 {
    count(index + 1)
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A hunk's first line as unified diffs number it: 1-based, or 0 for an empty side.
fn start_number(range: &std::ops::Range<usize>) -> u32 {
    if range.is_empty() {
        count(range.start)
    } else {
        line_number(range.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_new_file_is_all_added_lines() {
        let change = file_change("a.txt", WriteMode::Create, None, "one\ntwo\n");
        assert_eq!(
            change.unified(),
            "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,2 @@\n    1 +one\n    2 +two\n"
        );
        assert_eq!(
            (change.added, change.removed, change.existed),
            (2, 0, false)
        );
    }

    #[test]
    fn an_edit_shows_context_and_both_line_numbers() {
        let old: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        let new = old.replace("line 6\n", "line six\n");
        let change = file_change("f.txt", WriteMode::Overwrite, Some(&old), &new);
        assert_eq!(
            change.unified(),
            "--- a/f.txt\n+++ b/f.txt\n@@ -3,7 +3,7 @@\n    3  line 3\n    4  line 4\n    5  line 5\n    6 -line 6\n    6 +line six\n    7  line 7\n    8  line 8\n    9  line 9\n"
        );
    }

    #[test]
    fn the_same_content_is_no_hunk() {
        let change = file_change("f", WriteMode::Overwrite, Some("x\n"), "x\n");
        assert!(change.hunks.is_empty());
        assert_eq!((change.added, change.removed), (0, 0));
    }

    #[test]
    fn a_huge_diff_is_cut_but_counted_whole() {
        let new: String = (0..5_000).map(|n| format!("{n}\n")).collect();
        let change = file_change("big", WriteMode::Create, None, &new);
        assert!(change.truncated);
        assert_eq!(change.added, 5_000);
        let shown: usize = change.hunks.iter().map(|hunk| hunk.lines.len()).sum();
        assert_eq!(shown, MAX_SHOWN_LINES);
    }
}
