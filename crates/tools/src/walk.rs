//! The one way the built-in tools walk a folder: ripgrep's `ignore` walker, honouring
//! `.gitignore` and `.ignore` (even outside a git repository), skipping `.git`, and never
//! following symlinks (a symlinked file is reported as such and checked by the caller). The
//! parallel walk is `ignore`'s own; the walk in sorted order is [`SortedWalk`], which applies the
//! same rules.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use ignore::{DirEntry, WalkBuilder, WalkState};
use tokio_util::sync::CancellationToken;

// The walker lists folders by path, as ripgrep's does (crates/tools/clippy.toml); what it
// finds is read through the folder's handle.
#[allow(clippy::disallowed_methods)]
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

/// Walks `walker` on [`threads`] threads. Each thread starts its own state with `start` and
/// hands it every entry it reaches to `visit` (entries the walker could not read are passed
/// over); the states come back once every thread is done, for the caller to merge. `None` when
/// `cancel` stopped the walk.
pub(crate) fn parallel<S: Send>(
    walker: &mut WalkBuilder,
    cancel: &CancellationToken,
    start: impl Fn() -> S + Sync,
    visit: impl Fn(&mut S, &DirEntry) + Sync,
) -> Option<Vec<S>> {
    let done: Mutex<Vec<S>> = Mutex::new(Vec::new());
    walker.threads(threads()).build_parallel().run(|| {
        let mut thread = Thread {
            state: Some(start()),
            done: &done,
        };
        let visit = &visit;
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            if let (Ok(entry), Some(state)) = (entry, thread.state.as_mut()) {
                visit(state, &entry);
            }
            WalkState::Continue
        })
    });
    if cancel.is_cancelled() {
        return None;
    }
    // Every walker thread has finished (and handed its state in) by now.
    Some(done.into_inner().unwrap_or_else(PoisonError::into_inner))
}

/// A walker thread's state, handed in when the walker drops the thread's visitor.
struct Thread<'a, S> {
    state: Option<S>,
    done: &'a Mutex<Vec<S>>,
}

impl<S> Drop for Thread<'_, S> {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            self.done
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(state);
        }
    }
}
