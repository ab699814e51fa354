//! Searching file contents in path order, in parallel, stopping early.
//!
//! Results must be deterministic (the first N matches in sorted path order) and a search with
//! 50,000 hits must not read the whole tree to return its first hundred. So the walk is sorted
//! and lazy (depth first, each folder's entries sorted, an ignored folder never read: see
//! [`walk::SortedWalk`]). The first files are searched on the calling thread, so a search that
//! finds its hits there starts no thread at all; after that the walk goes on one thread, files
//! are handed out in numbered batches as they are found, worker threads search them in
//! parallel, and the collector consumes results strictly in file order. Once the files consumed
//! so far hold enough matches, everything stops: the walker does not read another folder,
//! workers take no new file, and the call returns without waiting for a worker still busy with
//! a large file.

use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use tokio_util::sync::CancellationToken;

use crate::glob::PathGlob;
use crate::walk;

/// Files handed to a searcher at once: one hand-over per batch rather than per file keeps the
/// threads from waking each other tens of thousands of times in a large tree.
const BATCH: usize = 32;
/// Batches the walker may run ahead of the searchers (128 files). Enough to keep them busy;
/// small enough that an early stop does not leave many folders read for nothing.
const LOOKAHEAD: usize = 4;
/// Longest matching line kept in full.
const MAX_LINE_CHARS: usize = 500;

/// What to search.
pub(crate) struct GrepQuery {
    pub matcher: RegexMatcher,
    /// Folder (or single file) to search.
    pub root: PathBuf,
    /// Every file is read through the folder's handle.
    pub workspace: std::sync::Arc<tooltrail_sandbox::Workspace>,
    pub glob: Option<PathGlob>,
    pub include_ignored: bool,
    /// Stop once this many matching lines are known, in order.
    pub limit: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineMatch {
    pub path: PathBuf,
    pub line: u64,
    pub text: String,
}

#[derive(Debug, Default)]
pub(crate) struct GrepOutcome {
    /// At most `limit` matches, in path then line order.
    pub matches: Vec<LineMatch>,
    /// More matches exist than were returned.
    pub truncated: bool,
    pub files_searched: usize,
    pub cancelled: bool,
}

/// The matches of each file of one batch, in order.
struct BatchResult {
    index: usize,
    files: Vec<Vec<LineMatch>>,
}

/// Files searched on the calling thread before any helper thread starts, and the time they may
/// take: a search whose first hits are near the top of the tree returns without starting a
/// thread, and a long one loses at most this long before going parallel.
const INLINE_FILES: usize = 256;
const INLINE_TIME: Duration = Duration::from_millis(3);

/// Runs the search: the first files on the calling thread, the rest on helper threads.
pub(crate) fn search(query: GrepQuery, cancel: &CancellationToken) -> GrepOutcome {
    let query = Arc::new(query);
    let mut files = SortedFiles::new(Arc::clone(&query));
    let mut outcome = GrepOutcome::default();
    let mut searcher = Searchers::new();
    let never = AtomicBool::new(false);
    let started = Instant::now();
    for _ in 0..INLINE_FILES {
        if cancel.is_cancelled() {
            outcome.cancelled = true;
            return outcome;
        }
        let Some(path) = files.next() else {
            return outcome;
        };
        let matches = search_file(&mut searcher, &query, &path, query.limit, &never);
        outcome.files_searched += 1;
        if take(&mut outcome, matches, query.limit) {
            return outcome;
        }
        if started.elapsed() >= INLINE_TIME {
            break;
        }
    }
    search_parallel(&query, files, outcome, cancel)
}

/// Adds one file's matches, in order; true once the outcome is full and known to be truncated.
fn take(outcome: &mut GrepOutcome, matches: Vec<LineMatch>, limit: usize) -> bool {
    for found in matches {
        if outcome.matches.len() == limit {
            outcome.truncated = true;
            return true;
        }
        outcome.matches.push(found);
    }
    false
}

/// The rest of the search: the walk on one thread, the files on one thread per core.
fn search_parallel(
    query: &Arc<GrepQuery>,
    files: SortedFiles,
    mut outcome: GrepOutcome,
    cancel: &CancellationToken,
) -> GrepOutcome {
    let stop = Arc::new(AtomicBool::new(false));
    let (file_tx, file_rx) = sync_channel::<(usize, Vec<PathBuf>)>(LOOKAHEAD);
    let (result_tx, result_rx) = std::sync::mpsc::channel::<BatchResult>();

    {
        let stop = Arc::clone(&stop);
        let cancel = cancel.clone();
        std::thread::spawn(move || walk_sorted(files, &stop, &cancel, file_tx));
    }
    let file_rx = Arc::new(Mutex::new(file_rx));
    for _ in 0..walk::threads() {
        let query = Arc::clone(query);
        let stop = Arc::clone(&stop);
        let file_rx = Arc::clone(&file_rx);
        let result_tx = result_tx.clone();
        std::thread::spawn(move || search_files(&query, &stop, &file_rx, &result_tx));
    }
    drop(result_tx);

    let mut pending: BTreeMap<usize, Vec<Vec<LineMatch>>> = BTreeMap::new();
    let mut next = 0usize;
    'collect: loop {
        // Woken now and then to notice a cancel while every worker is inside a large file.
        let result = match result_rx.recv_timeout(Duration::from_millis(50)) {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) if !cancel.is_cancelled() => continue,
            Err(_) => break,
        };
        if cancel.is_cancelled() {
            break;
        }
        pending.insert(result.index, result.files);
        while let Some(files) = pending.remove(&next) {
            next += 1;
            for matches in files {
                outcome.files_searched += 1;
                if take(&mut outcome, matches, query.limit) {
                    break 'collect;
                }
            }
        }
        if outcome.matches.len() == query.limit {
            // Exactly at the limit: any further match, in any later file, truncates. Let the
            // search go on only as far as needed to know that.
            if pending.values().flatten().any(|m| !m.is_empty()) {
                outcome.truncated = true;
                break;
            }
        }
    }
    if cancel.is_cancelled() {
        outcome.cancelled = true;
    }
    stop.store(true, Ordering::Relaxed);
    outcome
}

/// The files to search, in sorted path order (depth first, each folder's entries sorted), read
/// lazily: a folder is only read when the files before it are used up.
struct SortedFiles {
    walk: walk::SortedWalk,
    query: Arc<GrepQuery>,
}

impl SortedFiles {
    fn new(query: Arc<GrepQuery>) -> Self {
        Self {
            walk: walk::SortedWalk::new(&query.root, query.include_ignored),
            query,
        }
    }
}

impl Iterator for SortedFiles {
    type Item = PathBuf;

    fn next(&mut self) -> Option<PathBuf> {
        loop {
            let entry = self.walk.next()?;
            // Symlinked files are not followed, as ripgrep does unless asked.
            if !entry.file_type().is_file() {
                continue;
            }
            if let Some(glob) = &self.query.glob {
                let path = entry.path();
                let below_root = path.strip_prefix(&self.query.root).unwrap_or(path);
                let below_workspace = path
                    .strip_prefix(self.query.workspace.root())
                    .unwrap_or(path);
                if !glob.is_match(entry.file_name(), below_root, below_workspace) {
                    continue;
                }
            }
            return Some(entry.into_path());
        }
    }
}

fn walk_sorted(
    files: SortedFiles,
    stop: &AtomicBool,
    cancel: &CancellationToken,
    sender: SyncSender<(usize, Vec<PathBuf>)>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut index = 0usize;
    for path in files {
        if stop.load(Ordering::Relaxed) || cancel.is_cancelled() {
            return;
        }
        batch.push(path);
        if batch.len() == BATCH {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
            if sender.send((index, full)).is_err() {
                return;
            }
            index += 1;
        }
    }
    if !batch.is_empty() {
        let _ = sender.send((index, batch));
    }
}

/// A thread's two searchers: one that only learns whether a file matches, and one that reads a
/// matching file again for its lines and their numbers. Most files of a search do not match,
/// and counting the lines of every byte read (which numbering needs) was a tenth of a search's
/// time in user space when nothing matched; a matching file is read twice, from the page
/// cache.
struct Searchers {
    any: Searcher,
    numbered: Searcher,
}

impl Searchers {
    fn new() -> Self {
        let build = |numbered: bool| {
            SearcherBuilder::new()
                .line_number(numbered)
                .binary_detection(BinaryDetection::quit(b'\0'))
                .build()
        };
        Self {
            any: build(false),
            numbered: build(true),
        }
    }
}

fn search_files(
    query: &GrepQuery,
    stop: &AtomicBool,
    batches: &Mutex<Receiver<(usize, Vec<PathBuf>)>>,
    results: &std::sync::mpsc::Sender<BatchResult>,
) {
    let mut searcher = Searchers::new();
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let next = match batches.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        let Ok((index, paths)) = next else { return };
        let mut files = Vec::with_capacity(paths.len());
        for path in &paths {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            files.push(search_file(&mut searcher, query, path, query.limit, stop));
        }
        if results.send(BatchResult { index, files }).is_err() {
            return;
        }
    }
}

/// Matching lines of one file, at most `limit`. Unreadable and binary files have none.
fn search_file(
    searchers: &mut Searchers,
    query: &GrepQuery,
    path: &Path,
    limit: usize,
    stop: &AtomicBool,
) -> Vec<LineMatch> {
    // Opened through the folder's handle: a folder swapped for a link during the walk cannot
    // lead the search out.
    let Ok(mut file) = query.workspace.open_found(path) else {
        return Vec::new();
    };
    let mut any = AnyMatch { found: false };
    if searchers
        .any
        .search_file(&query.matcher, &file, &mut any)
        .is_err()
        || !any.found
    {
        return Vec::new();
    }
    let mut sink = Collect {
        path,
        limit,
        stop,
        matches: Vec::new(),
        binary: false,
    };
    // The same file, from its start, through the handle already open.
    if file.seek(SeekFrom::Start(0)).is_err() {
        return Vec::new();
    }
    if searchers
        .numbered
        .search_file(&query.matcher, &file, &mut sink)
        .is_err()
        || sink.binary
    {
        return Vec::new();
    }
    sink.matches
}

/// Whether a file has a match at all; a binary file (a NUL byte before any match) has none.
struct AnyMatch {
    found: bool,
}

impl Sink for AnyMatch {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &Searcher,
        _found: &SinkMatch<'_>,
    ) -> Result<bool, Self::Error> {
        self.found = true;
        Ok(false)
    }

    fn binary_data(
        &mut self,
        _searcher: &Searcher,
        _binary_byte_offset: u64,
    ) -> Result<bool, Self::Error> {
        Ok(false)
    }
}

struct Collect<'a> {
    path: &'a Path,
    limit: usize,
    stop: &'a AtomicBool,
    matches: Vec<LineMatch>,
    binary: bool,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &Searcher,
        found: &SinkMatch<'_>,
    ) -> Result<bool, Self::Error> {
        self.matches.push(LineMatch {
            path: self.path.to_path_buf(),
            line: found.line_number().unwrap_or(0),
            text: line_text(found.bytes()),
        });
        Ok(self.matches.len() < self.limit && !self.stop.load(Ordering::Relaxed))
    }

    fn binary_data(
        &mut self,
        _searcher: &Searcher,
        _binary_byte_offset: u64,
    ) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

fn line_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}… [line cut]", &text[..cut]),
    }
}
