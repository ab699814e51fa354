//! `code_query(name, kind?, language?, path?)`: where a function, type or variable is defined,
//! read from syntax trees rather than guessed from text, as `path:line: signature [kind]`.
//!
//! A text search for `fn parse` also finds comments, strings and calls; a syntax tree knows a
//! definition. Parsing is the expensive part, so a file is parsed only when its bytes hold the
//! name as a whole identifier (see [`scan`]); in a large tree that is a handful of files.
//! `name` is exact, or a prefix when it ends with `*`.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};
use tooltrail_sandbox::{ResolvedPath, Workspace};

use crate::args::{blocking, cancelled, parse};
use crate::tool::{Tool, ToolContext};

mod language;
mod scan;

use language::{Kind, Language};

const NAME: &str = "code_query";

pub(crate) struct CodeQuery {
    spec: ToolSpec,
}

#[derive(Deserialize)]
struct Args {
    name: String,
    kind: Option<String>,
    language: Option<String>,
    path: Option<String>,
}

impl CodeQuery {
    pub(crate) fn new() -> Self {
        let languages: Vec<&str> = Language::ALL.iter().map(|lang| lang.name()).collect();
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "Find where functions, types and variables are defined: `name` (or \
                    a prefix ending in `*`)."
                    .to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "name": {
                            "type": "string"
                        },
                        "kind": {"enum": ["function", "type", "variable", "any"]},
                        "language": {"enum": languages},
                        "path": {"type": "string"}
                    },
                    "required": ["name"]
                }),
                read_only: true,
            },
        }
    }
}

#[async_trait]
impl Tool for CodeQuery {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// A definition's kind is in every answer, and each file's language follows from its
    /// name; an answer cut short suggests narrowing by either.
    fn unoffered_parameters(&self) -> &'static [&'static str] {
        &["kind", "language"]
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse(NAME, args)?;
        let (name, prefix) = name_or_prefix(&args.name)?;
        let kind = match args.kind.as_deref() {
            None | Some("any") => None,
            Some("function") => Some(Kind::Function),
            Some("type") => Some(Kind::Type),
            Some("variable") => Some(Kind::Variable),
            Some(other) => return Err(bad_choice("kind", other)),
        };
        let language = match args.language.as_deref() {
            None => None,
            Some(name) => {
                Some(Language::from_name(name).ok_or_else(|| bad_choice("language", name))?)
            }
        };
        let resolved = ctx.workspace.resolve(args.path.as_deref().unwrap_or("."))?;
        let search = scan::Search {
            name,
            prefix,
            kind,
            language,
            root: resolved.path().to_path_buf(),
            workspace: std::sync::Arc::clone(&ctx.workspace),
            max_bytes: ctx.limits.max_read_bytes,
            limit: ctx.limits.max_results.max(1),
        };
        let cancel = ctx.cancel.clone();
        let found = blocking(move || Ok(scan::search(&search, &cancel))).await?;
        let Some(found) = found else {
            return Err(cancelled());
        };
        Ok(answer(&found, &args, &resolved, &ctx.workspace))
    }
}

/// `name` as searched for, and whether it is a prefix (written with a trailing `*`). Only an
/// identifier is accepted: the scan looks for it as a whole word in each file's bytes.
fn name_or_prefix(written: &str) -> Result<(String, bool), ToolError> {
    let (name, prefix) = match written.strip_suffix('*') {
        Some(stem) => (stem.to_string(), true),
        None => (written.to_string(), false),
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    {
        return Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!(
                "invalid arguments for {NAME}: parameter `name`: `{written}` is not an identifier \
                 (letters, digits, `_` or `$`, optionally ending in `*`)"
            ),
        ));
    }
    Ok((name, prefix))
}

/// The definitions found as `path:line: signature [kind]` lines under a heading that repeats
/// the question, and as data.
fn answer(
    found: &scan::Found,
    args: &Args,
    resolved: &ResolvedPath,
    workspace: &Workspace,
) -> ToolOutput {
    let mut lines = String::new();
    let mut definitions = Vec::with_capacity(found.definitions.len());
    for def in &found.definitions {
        let path = workspace.relative(&def.path);
        lines.push_str(&format!(
            "{path}:{}: {}  [{}]\n",
            def.line,
            def.signature,
            def.kind.name()
        ));
        definitions.push(json!({
            "path": path,
            "line": def.line,
            "name": def.name,
            "kind": def.kind.name(),
            "language": def.language.name(),
            "signature": def.signature,
        }));
    }
    let mut what = format!("`{}`", args.name);
    if let Some(kind) = &args.kind {
        what.push_str(&format!(" ({kind})"));
    }
    if let Some(language) = &args.language {
        what.push_str(&format!(" in {language}"));
    }
    if !resolved.is_root() {
        what.push_str(&format!(" under `{}`", resolved.relative()));
    }
    let shown = found.definitions.len();
    let truncated = found.total > shown;
    let mut text = if found.total == 0 {
        format!("No definitions of {what}.\n")
    } else if truncated {
        format!(
            "The first {shown} of {} definitions of {what} (in path order):\n",
            found.total
        )
    } else {
        format!(
            "{} definition{} of {what}:\n",
            found.total,
            if found.total == 1 { "" } else { "s" }
        )
    };
    text.push_str(&lines);
    if truncated {
        text.push_str(&format!(
            "({} more not shown; narrow with kind, language or path)\n",
            found.total - shown
        ));
    }
    if found.too_large > 0 {
        text.push_str(&format!(
            "({} file{} over the read limit not searched)\n",
            found.too_large,
            if found.too_large == 1 { "" } else { "s" }
        ));
    }
    ToolOutput::new(
        text,
        json!({
            "definitions": definitions,
            "total": found.total,
            "truncated": truncated,
            "too_large_skipped": found.too_large,
        }),
    )
}

/// A value outside a parameter's choices; the schema normally refuses it first.
fn bad_choice(parameter: &str, value: &str) -> ToolError {
    ToolError::new(
        ToolErrorCode::InvalidArguments,
        format!(
            "invalid arguments for {NAME}: parameter `{parameter}`: `{value}` is not one of its choices"
        ),
    )
}
