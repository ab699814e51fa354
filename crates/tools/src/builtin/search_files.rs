//! `search_files(pattern, path?, include_ignored?)`: files whose name or path matches a glob.
//!
//! The walk is ripgrep's parallel one; each thread keeps only the first `max_results` paths in
//! sorted order (a bounded heap) and counts the rest, so a pattern matching half a million files
//! costs no more memory than one matching a hundred, and the total is still known.

use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use ignore::DirEntry;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tooltrail_protocol::{ToolError, ToolOutput, ToolSpec};
use tooltrail_sandbox::Workspace;

use crate::args::{WALK_UNOFFERED, blocking, cancelled, nothing_found_note, parse};
use crate::glob::PathGlob;
use crate::tool::{Tool, ToolContext};
use crate::walk;

const NAME: &str = "search_files";

pub(crate) struct SearchFiles {
    spec: ToolSpec,
}

#[derive(Deserialize)]
struct Args {
    pattern: String,
    path: Option<String>,
    #[serde(default)]
    include_ignored: bool,
}

impl SearchFiles {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "Find files by glob (`*.go` matches at any depth). At most 100."
                    .to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "pattern": {
                            "type": "string"
                        },
                        "path": {
                            "type": "string"
                        },
                        "include_ignored": {
                            "type": "boolean"
                        }
                    },
                    "required": ["pattern"]
                }),
                read_only: true,
            },
        }
    }
}

#[async_trait]
impl Tool for SearchFiles {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn unoffered_parameters(&self) -> &'static [&'static str] {
        WALK_UNOFFERED
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse(NAME, args)?;
        let glob = PathGlob::new(&args.pattern)?;
        let path = args.path.as_deref().unwrap_or(".");
        let resolved = ctx.workspace.resolve(path)?;
        let workspace = Arc::clone(&ctx.workspace);
        let cancel = ctx.cancel.clone();
        let limit = ctx.limits.max_results;
        let found = blocking(move || {
            find(
                &workspace,
                resolved.path(),
                &glob,
                args.include_ignored,
                limit,
                &cancel,
            )
        })
        .await?;

        let files: Vec<String> = found
            .paths
            .iter()
            .map(|path| ctx.workspace.relative(path))
            .collect();
        let truncated = found.total > files.len();
        let where_ = if resolved_is_root(path) {
            String::new()
        } else {
            format!(" under `{}`", ctx.workspace.relative(&found.root))
        };
        let mut text = if files.is_empty() {
            format!(
                "No files match `{}`{where_}.\n{}",
                args.pattern,
                nothing_found_note(args.include_ignored)
            )
        } else if truncated {
            format!(
                "{} files match `{}`{where_}; the first {} (sorted):\n",
                found.total,
                args.pattern,
                files.len()
            )
        } else {
            format!(
                "{} file{} match `{}`{where_}:\n",
                found.total,
                if found.total == 1 { "" } else { "s" },
                args.pattern
            )
        };
        for file in &files {
            text.push_str(file);
            text.push('\n');
        }
        if truncated {
            text.push_str(&format!(
                "({} more not shown; narrow the pattern or the path)\n",
                found.total - files.len()
            ));
        }
        Ok(ToolOutput::new(
            text,
            json!({"files": files, "truncated": truncated, "total": found.total}),
        ))
    }
}

fn resolved_is_root(path: &str) -> bool {
    matches!(path.trim(), "" | "." | "./")
}

struct Found {
    root: PathBuf,
    /// The first matches in path order (component-wise, as `Path` sorts).
    paths: Vec<PathBuf>,
    total: usize,
}

/// The smallest `cap` paths seen, and how many were seen in all.
struct TopPaths {
    heap: BinaryHeap<PathBuf>,
    cap: usize,
    total: usize,
}

impl TopPaths {
    fn new(cap: usize) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(cap + 1),
            cap,
            total: 0,
        }
    }

    fn offer(&mut self, path: &Path) {
        self.total += 1;
        if self.heap.len() >= self.cap {
            match self.heap.peek() {
                Some(largest) if path < largest.as_path() => {}
                _ => return,
            }
        }
        self.heap.push(path.to_path_buf());
        if self.heap.len() > self.cap {
            self.heap.pop();
        }
    }

    fn merge(&mut self, other: TopPaths) {
        let total = self.total + other.total;
        for path in other.heap {
            self.offer(&path);
        }
        self.total = total;
    }
}

fn find(
    workspace: &Workspace,
    root: &Path,
    glob: &PathGlob,
    include_ignored: bool,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<Found, ToolError> {
    let shares = walk::parallel(
        &mut walk::builder(root, include_ignored),
        cancel,
        || TopPaths::new(limit),
        |share, entry| {
            if is_matching_file(workspace, root, glob, entry) {
                share.offer(entry.path());
            }
        },
    )
    .ok_or_else(cancelled)?;
    let mut top = TopPaths::new(limit);
    for share in shares {
        top.merge(share);
    }
    let mut paths = top.heap.into_sorted_vec();
    // The walk lists folders by path; each name it reports is looked up once more through the
    // folder's handle, so a folder swapped for a link out during the walk names nothing.
    paths.retain(|path| workspace.found_metadata(path, false).is_ok());
    Ok(Found {
        root: root.to_path_buf(),
        total: top.total,
        paths,
    })
}

fn is_matching_file(workspace: &Workspace, root: &Path, glob: &PathGlob, entry: &DirEntry) -> bool {
    let Some(kind) = entry.file_type() else {
        return false;
    };
    let path = entry.path();
    let below_root = path.strip_prefix(root).unwrap_or(path);
    let below_workspace = path.strip_prefix(workspace.root()).unwrap_or(path);
    if !glob.is_match(entry.file_name(), below_root, below_workspace) {
        return false;
    }
    if kind.is_file() {
        return true;
    }
    // A symlink counts when it leads to a file inside the workspace.
    kind.is_symlink()
        && workspace
            .found_metadata(path, true)
            .is_ok_and(|meta| meta.is_file())
}
