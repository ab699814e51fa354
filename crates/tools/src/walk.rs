//! The one way the built-in tools walk a folder: ripgrep's `ignore` walker, honouring
//! `.gitignore` and `.ignore` (even outside a git repository), skipping `.git`, and never
//! following symlinks (a symlinked file is reported as such and checked by the caller). The
//! parallel walk is `ignore`'s own; the walk in sorted order is [`SortedWalk`], which applies the
//! same rules.

use std::path::Path;

use ignore::WalkBuilder;

mod sorted;

pub(crate) use sorted::SortedWalk;

/// A walker over `root`. `include_ignored` turns off every ignore file; `.git` stays skipped.
pub(crate) fn builder(root: &Path, include_ignored: bool) -> WalkBuilder {
    let respect = !include_ignored;
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .ignore(respect)
        .git_ignore(respect)
        .git_exclude(respect)
        .git_global(respect)
        .parents(respect)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// Threads for parallel walks: one per core, as ripgrep picks, at most 12.
pub(crate) fn threads() -> usize {
    // Asking the OS reads cgroup files each time; once per process is enough.
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .min(12)
    })
}
