//! `list_dir(path?, recursive?, pattern?, include_ignored?)`: a folder's entries with their type,
//! size and modification time, sorted, capped, with the total.

use std::path::Path;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio_util::sync::CancellationToken;
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};
use tooltrail_sandbox::Workspace;

use crate::args::{WALK_UNOFFERED, blocking, cancelled, nothing_found_note, parse};
use crate::builtin::read_file::human_size;
use crate::glob::PathGlob;
use crate::tool::{Tool, ToolContext};
use crate::walk;

const NAME: &str = "list_dir";

pub(crate) struct ListDir {
    spec: ToolSpec,
}

#[derive(Deserialize)]
struct Args {
    path: Option<String>,
    #[serde(default)]
    recursive: bool,
    pattern: Option<String>,
    #[serde(default)]
    include_ignored: bool,
}

impl ListDir {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "List a folder: type, size, time; at most 100.".to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {
                            "type": "string"
                        },
                        "recursive": {
                            "type": "boolean"
                        },
                        "pattern": {
                            "type": "string"
                        },
                        "include_ignored": {
                            "type": "boolean"
                        }
                    }
                }),
                read_only: true,
            },
        }
    }
}

struct Entry {
    path: String,
    kind: &'static str,
    size: Option<u64>,
    modified: Option<String>,
}

#[async_trait]
impl Tool for ListDir {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn unoffered_parameters(&self) -> &'static [&'static str] {
        WALK_UNOFFERED
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse(NAME, args)?;
        let glob = args.pattern.as_deref().map(PathGlob::new).transpose()?;
        let resolved = ctx.workspace.resolve(args.path.as_deref().unwrap_or("."))?;
        if !ctx
            .workspace
            .metadata(&resolved)
            .is_ok_and(|meta| meta.is_dir())
        {
            return Err(ToolError::new(
                ToolErrorCode::NotADirectory,
                format!(
                    "`{}` is a file, not a folder; use read_file",
                    resolved.relative()
                ),
            ));
        }
        let workspace = std::sync::Arc::clone(&ctx.workspace);
        let cancel = ctx.cancel.clone();
        let limit = ctx.limits.max_results;
        let relative = resolved.relative().to_string();
        let (entries, total) = blocking(move || {
            list(
                &workspace,
                resolved.path(),
                args.recursive,
                glob.as_ref(),
                args.include_ignored,
                limit,
                &cancel,
            )
        })
        .await?;

        let truncated = total > entries.len();
        let mut text = if total == 0 {
            format!(
                "`{relative}` has no entries{}.\n{}",
                filtered(&args.pattern),
                nothing_found_note(args.include_ignored)
            )
        } else if truncated {
            format!(
                "`{relative}`: {total} entries{}; the first {}:\n",
                filtered(&args.pattern),
                entries.len()
            )
        } else {
            format!(
                "`{relative}`: {total} entr{}{}:\n",
                if total == 1 { "y" } else { "ies" },
                filtered(&args.pattern)
            )
        };
        for entry in &entries {
            let size = entry
                .size
                .map(human_size)
                .unwrap_or_else(|| "-".to_string());
            let modified = entry.modified.as_deref().unwrap_or("-");
            let modified = modified.get(..16).unwrap_or(modified).replace('T', " ");
            let suffix = if entry.kind == "dir" { "/" } else { "" };
            text.push_str(&format!(
                "{:<7} {:>10}  {modified}  {}{suffix}\n",
                entry.kind, size, entry.path
            ));
        }
        if truncated {
            text.push_str(&format!(
                "({} more not shown; list a sub-folder or use a pattern)\n",
                total - entries.len()
            ));
        }
        let data: Vec<Value> = entries
            .iter()
            .map(|entry| {
                json!({
                    "path": entry.path,
                    "type": entry.kind,
                    "size": entry.size,
                    "modified": entry.modified,
                })
            })
            .collect();
        Ok(ToolOutput::new(
            text,
            json!({"entries": data, "truncated": truncated, "total": total}),
        ))
    }
}

fn filtered(pattern: &Option<String>) -> String {
    pattern
        .as_ref()
        .map(|pattern| format!(" matching `{pattern}`"))
        .unwrap_or_default()
}

/// The first `limit` entries in sorted (depth-first) order, and how many there are in all.
fn list(
    workspace: &Workspace,
    root: &Path,
    recursive: bool,
    glob: Option<&crate::glob::PathGlob>,
    include_ignored: bool,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<(Vec<Entry>, usize), ToolError> {
    let walk = walk::SortedWalk::new(root, include_ignored).max_depth((!recursive).then_some(1));
    let mut entries = Vec::new();
    let mut total = 0usize;
    for entry in walk {
        if cancel.is_cancelled() {
            return Err(cancelled());
        }
        if entry.depth() == 0 {
            continue;
        }
        let path = entry.path();
        if let Some(glob) = glob {
            let below_root = path.strip_prefix(root).unwrap_or(path);
            let below_workspace = path.strip_prefix(workspace.root()).unwrap_or(path);
            if !glob.is_match(entry.file_name(), below_root, below_workspace) {
                continue;
            }
        }
        total += 1;
        if entries.len() >= limit {
            continue;
        }
        // Metadata of the entry itself, through the folder's handle: a symlink is shown as one,
        // not followed, and an entry that no longer lies inside is left out.
        let Ok(meta) = workspace.found_metadata(path, false) else {
            continue;
        };
        let kind = entry.file_type();
        let kind = if kind.is_dir() {
            "dir"
        } else if kind.is_file() {
            "file"
        } else if kind.is_symlink() {
            "symlink"
        } else {
            "other"
        };
        entries.push(Entry {
            path: workspace.relative(path),
            kind,
            size: meta.is_file().then(|| meta.len()),
            modified: meta
                .modified()
                .ok()
                .and_then(|time| OffsetDateTime::from(time.into_std()).format(&Rfc3339).ok()),
        });
    }
    Ok((entries, total))
}
