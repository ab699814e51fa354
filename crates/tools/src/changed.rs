//! The files of a folder changed since a moment (what a replay says changed since the question
//! it asks again): the tools' walk (ignore files honoured, `.git` skipped, links not followed),
//! each file's time looked up through the folder's handle.

use std::time::SystemTime;

use tooltrail_sandbox::Workspace;

use crate::walk::SortedWalk;

/// Files changed since a moment: how many, and the first of them by path.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ChangedFiles {
    pub count: usize,
    /// Paths relative to the folder, in the walk's (sorted) order.
    pub first: Vec<String>,
}

/// The files of `workspace` modified after `since`, naming at most `named` of them and looking
/// at no more than `look_at_most` entries.
pub fn changed_since(
    workspace: &Workspace,
    since: SystemTime,
    named: usize,
    look_at_most: usize,
) -> ChangedFiles {
    let root = workspace.root();
    let mut changed = ChangedFiles::default();
    for entry in SortedWalk::new(root, false).take(look_at_most) {
        if !entry.file_type().is_file() {
            continue;
        }
        let modified = workspace
            .found_metadata(entry.path(), false)
            .ok()
            .and_then(|meta| meta.modified().ok())
            .map(|time| time.into_std());
        if modified.is_some_and(|time| time > since) {
            changed.count += 1;
            if changed.first.len() < named {
                let path = entry.path();
                changed.first.push(
                    path.strip_prefix(root)
                        .unwrap_or(path)
                        .display()
                        .to_string(),
                );
            }
        }
    }
    changed
}
