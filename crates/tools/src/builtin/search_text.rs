//! `search_text(pattern, path?, glob?, ignore_case?, fixed_strings?, include_ignored?)`: lines
//! matching a regex, as `path:line: text`, in path order.

use async_trait::async_trait;
use grep_regex::RegexMatcherBuilder;
use serde::Deserialize;
use serde_json::{Value, json};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};

use crate::args::{blocking, cancelled, nothing_found_note, parse};
use crate::glob::PathGlob;
use crate::grep::{self, GrepQuery};
use crate::tool::{Tool, ToolContext};

const NAME: &str = "search_text";

pub(crate) struct SearchText {
    spec: ToolSpec,
}

#[derive(Deserialize)]
struct Args {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    #[serde(default)]
    ignore_case: bool,
    #[serde(default)]
    fixed_strings: bool,
    #[serde(default)]
    include_ignored: bool,
}

impl SearchText {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "Search file contents by regex (`glob` e.g. `*.go`): `path:line: \
                    text`, at most 100."
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
                        "glob": {
                            "type": "string"
                        },
                        "ignore_case": {
                            "type": "boolean"
                        },
                        "fixed_strings": {
                            "type": "boolean"
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
impl Tool for SearchText {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// A pattern that is not a valid regex is searched for as plain text anyway (and the
    /// result says so), which is what `fixed_strings` is mostly wanted for.
    fn unoffered_parameters(&self) -> &'static [&'static str] {
        &["fixed_strings", "include_ignored"]
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse(NAME, args)?;
        if args.pattern.is_empty() {
            return Err(ToolError::new(
                ToolErrorCode::InvalidPattern,
                "the search pattern is empty",
            ));
        }
        let glob = args.glob.as_deref().map(PathGlob::new).transpose()?;
        let resolved = ctx.workspace.resolve(args.path.as_deref().unwrap_or("."))?;
        let (matcher, literal_fallback) =
            build_matcher(&args.pattern, args.ignore_case, args.fixed_strings)?;
        let query = GrepQuery {
            matcher,
            root: resolved.path().to_path_buf(),
            workspace: std::sync::Arc::clone(&ctx.workspace),
            glob,
            include_ignored: args.include_ignored,
            limit: ctx.limits.max_results.max(1),
        };
        let cancel = ctx.cancel.clone();
        let outcome = blocking(move || Ok(grep::search(query, &cancel))).await?;
        if outcome.cancelled {
            return Err(cancelled());
        }

        let mut text = String::new();
        let mut files: Vec<String> = Vec::new();
        let mut matches = Vec::with_capacity(outcome.matches.len());
        for found in &outcome.matches {
            let path = ctx.workspace.relative(&found.path);
            text.push_str(&format!("{path}:{}: {}\n", found.line, found.text));
            if files.last() != Some(&path) {
                files.push(path.clone());
            }
            matches.push(json!({"path": path, "line": found.line, "text": found.text}));
        }
        let mut what = format!("`{}`", args.pattern);
        if let Some(glob) = &args.glob {
            what.push_str(&format!(" in files matching `{glob}`"));
        }
        if !resolved.is_root() {
            what.push_str(&format!(" under `{}`", resolved.relative()));
        }
        let header = if outcome.matches.is_empty() {
            format!(
                "No matches for {what}.\n{}",
                nothing_found_note(args.include_ignored)
            )
        } else if outcome.truncated {
            format!(
                "The first {} matching lines for {what} (in path order; more exist):\n",
                outcome.matches.len()
            )
        } else {
            format!(
                "{} matching line{} in {} file{} for {what}:\n",
                outcome.matches.len(),
                plural(outcome.matches.len()),
                files.len(),
                plural(files.len())
            )
        };
        text.insert_str(0, &header);
        if literal_fallback {
            text.insert_str(
                0,
                &format!(
                    "(`{}` is not a valid regex; searched for it as plain text)\n",
                    args.pattern
                ),
            );
        }
        if outcome.truncated {
            text.push_str("(more matches not shown; narrow the pattern, the path or the glob)\n");
        }
        let total = if outcome.truncated {
            Value::Null
        } else {
            json!(outcome.matches.len())
        };
        Ok(ToolOutput::new(
            text,
            json!({
                "matches": matches,
                "files": files,
                "truncated": outcome.truncated,
                "total": total,
                "literal": args.fixed_strings || literal_fallback,
            }),
        ))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The matcher, and whether the pattern had to be taken literally because it is not a regex.
fn build_matcher(
    pattern: &str,
    ignore_case: bool,
    fixed_strings: bool,
) -> Result<(grep_regex::RegexMatcher, bool), ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(ignore_case)
        // Lines end in `\n` or `\r\n` (a file written on Windows): `^` and `$` are line anchors
        // that take either for a line's end, and no match takes the `\r` in. The searcher
        // splits lines at `\n` (`grep.rs`), so that stays the matcher's terminator.
        .multi_line(true)
        .crlf(true)
        .line_terminator(Some(b'\n'))
        .fixed_strings(fixed_strings);
    match builder.build(pattern) {
        Ok(matcher) => Ok((matcher, false)),
        Err(_) if !fixed_strings => builder
            .fixed_strings(true)
            .build(pattern)
            .map(|matcher| (matcher, true))
            .map_err(|err| invalid(pattern, &err)),
        Err(err) => Err(invalid(pattern, &err)),
    }
}

fn invalid(pattern: &str, err: &grep_regex::Error) -> ToolError {
    let detail = err.to_string();
    let last = detail.lines().last().unwrap_or_default().trim();
    ToolError::new(
        ToolErrorCode::InvalidPattern,
        format!("invalid pattern `{pattern}`: {last}"),
    )
}
