//! `count_lines(path, pattern?, include_ignored?)`: total lines of a file or of every matching
//! file below a folder, and the largest files first.
//!
//! A line is what `wc -l` counts, a newline byte, so the total equals `cat FILES | wc -l`.
//! Binary files (a NUL byte in their first block, as ripgrep decides) are skipped and counted
//! apart. The walk is parallel and order-free; only the largest files are kept per thread.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Read;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};
use tooltrail_sandbox::Workspace;

use crate::args::{WALK_UNOFFERED, blocking, cancelled, io_error, nothing_found_note, parse};
use crate::glob::PathGlob;
use crate::tool::{Tool, ToolContext};
use crate::walk;

const NAME: &str = "count_lines";
/// Files listed by size in the answer.
const MAX_LISTED: usize = 50;
const BUFFER: usize = 64 * 1024;

pub(crate) struct CountLines {
    spec: ToolSpec,
}

#[derive(Deserialize)]
struct Args {
    path: String,
    pattern: Option<String>,
    #[serde(default)]
    include_ignored: bool,
}

impl CountLines {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "Count lines (like `wc -l`) in a file or folder (`.` for all), \
                    largest first; `pattern`: a glob."
                    .to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {
                            "type": "string"
                        },
                        "pattern": {
                            "type": "string"
                        },
                        "include_ignored": {
                            "type": "boolean"
                        }
                    },
                    "required": ["path"]
                }),
                read_only: true,
            },
        }
    }
}

#[async_trait]
impl Tool for CountLines {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn unoffered_parameters(&self) -> &'static [&'static str] {
        WALK_UNOFFERED
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse(NAME, args)?;
        let glob = args.pattern.as_deref().map(PathGlob::new).transpose()?;
        let resolved = ctx.workspace.resolve(&args.path)?;
        let workspace = std::sync::Arc::clone(&ctx.workspace);
        let cancel = ctx.cancel.clone();
        let relative = resolved.relative().to_string();
        let counts = blocking(move || {
            let (file, meta) = workspace.open_read(&resolved)?;
            if meta.is_file() {
                let lines = count_file(file, &mut vec![0; BUFFER])
                    .map_err(|err| io_error(resolved.relative(), &err))?;
                let mut counts = Counts::new(MAX_LISTED);
                match lines {
                    Some(lines) => counts.add(resolved.path(), lines),
                    None => {
                        return Err(ToolError::new(
                            ToolErrorCode::BinaryFile,
                            format!("`{}` is a binary file", resolved.relative()),
                        ));
                    }
                }
                return Ok(counts);
            }
            drop(file);
            count_tree(
                &workspace,
                resolved.path(),
                glob.as_ref(),
                args.include_ignored,
                &cancel,
            )
        })
        .await?;

        let mut largest: Vec<(u64, PathBuf)> = counts
            .largest
            .into_iter()
            .map(|Reverse((lines, Reverse(path)))| (lines, path))
            .collect();
        largest.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let files: Vec<Value> = largest
            .iter()
            .map(|(lines, path)| json!({"path": ctx.workspace.relative(path), "lines": lines}))
            .collect();

        let mut what = format!("`{relative}`");
        if let Some(pattern) = &args.pattern {
            what.push_str(&format!(" (files matching `{pattern}`)"));
        }
        let mut text = format!(
            "{} lines in {} file{} under {what}",
            counts.total,
            counts.files,
            if counts.files == 1 { "" } else { "s" }
        );
        if counts.binary > 0 {
            text.push_str(&format!(
                "; {} binary file{} skipped",
                counts.binary,
                if counts.binary == 1 { "" } else { "s" }
            ));
        }
        text.push_str(".\n");
        if counts.files == 0 {
            text.push_str(nothing_found_note(args.include_ignored));
        }
        if counts.files > 1 {
            if counts.files > largest.len() {
                text.push_str(&format!("The {} largest:\n", largest.len()));
            }
            for (lines, path) in &largest {
                text.push_str(&format!("{lines:>8}  {}\n", ctx.workspace.relative(path)));
            }
        }
        Ok(ToolOutput::new(
            text,
            json!({
                "total": counts.total,
                "file_count": counts.files,
                "binary_skipped": counts.binary,
                "files": files,
                "truncated": counts.files > largest.len(),
            }),
        ))
    }
}

type Ranked = Reverse<(u64, Reverse<PathBuf>)>;

/// Running totals; `largest` is a min-heap holding the `cap` largest files.
struct Counts {
    total: u64,
    files: usize,
    binary: usize,
    largest: BinaryHeap<Ranked>,
    cap: usize,
}

impl Counts {
    fn new(cap: usize) -> Self {
        Self {
            total: 0,
            files: 0,
            binary: 0,
            largest: BinaryHeap::new(),
            cap,
        }
    }

    fn add(&mut self, path: &Path, lines: u64) {
        self.total += lines;
        self.files += 1;
        self.rank(lines, path);
    }

    fn rank(&mut self, lines: u64, path: &Path) {
        if self.largest.len() >= self.cap {
            match self.largest.peek() {
                // Larger, or as large with a smaller path: it belongs in.
                Some(Reverse((smallest, Reverse(smallest_path))))
                    if lines > *smallest
                        || (lines == *smallest && path < smallest_path.as_path()) => {}
                _ => return,
            }
        }
        self.largest
            .push(Reverse((lines, Reverse(path.to_path_buf()))));
        if self.largest.len() > self.cap {
            self.largest.pop();
        }
    }

    fn merge(&mut self, other: Counts) {
        self.total += other.total;
        self.files += other.files;
        self.binary += other.binary;
        for Reverse((lines, Reverse(path))) in other.largest {
            self.rank(lines, &path);
        }
    }
}

/// One walker thread's counts, and the buffer it reads files with.
struct Worker {
    local: Counts,
    buffer: Vec<u8>,
}

fn count_tree(
    workspace: &Workspace,
    root: &Path,
    glob: Option<&PathGlob>,
    include_ignored: bool,
    cancel: &CancellationToken,
) -> Result<Counts, ToolError> {
    let workers = walk::parallel(
        &mut walk::builder(root, include_ignored),
        cancel,
        || Worker {
            local: Counts::new(MAX_LISTED),
            buffer: vec![0; BUFFER],
        },
        |worker, entry| {
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                return;
            }
            let path = entry.path();
            if let Some(glob) = glob {
                let below_root = path.strip_prefix(root).unwrap_or(path);
                let below_workspace = path.strip_prefix(workspace.root()).unwrap_or(path);
                if !glob.is_match(entry.file_name(), below_root, below_workspace) {
                    return;
                }
            }
            // Read through the folder's handle: a folder swapped for a link during the walk
            // cannot lead the read out.
            let Ok(file) = workspace.open_found(path) else {
                return;
            };
            let counted = count_file(file, &mut worker.buffer);
            match counted {
                Ok(Some(lines)) => worker.local.add(path, lines),
                Ok(None) => worker.local.binary += 1,
                // Unreadable files are left out, as a walk would skip them.
                Err(_) => {}
            }
        },
    )
    .ok_or_else(cancelled)?;
    let mut counts = Counts::new(MAX_LISTED);
    for worker in workers {
        counts.merge(worker.local);
    }
    Ok(counts)
}

/// Newline bytes in a file; `None` for a binary file.
fn count_file(mut file: std::fs::File, buffer: &mut [u8]) -> std::io::Result<Option<u64>> {
    let mut lines = 0u64;
    let mut first = true;
    loop {
        let read = match file.read(buffer) {
            Ok(0) => return Ok(Some(lines)),
            Ok(read) => read,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let chunk = &buffer[..read];
        if first && memchr::memchr(0, chunk).is_some() {
            return Ok(None);
        }
        first = false;
        lines += bytecount::count(chunk, b'\n') as u64;
    }
}
