//! The snippet tools keep named pieces of text (code, a command, a note) for this workspace in
//! Tooltrail's own database ([`crate::snippet_book`]):
//!
//! - `snippet_save(name, content, language?, description?)` keeps one, replacing the snippet of
//!   the same name;
//! - `snippet_load(name)` gives one back whole;
//! - `snippet_list(query?)` lists those saved, or those matching a search.
//!
//! They are rarely needed, so their parameters are told when they are called, not in every
//! request. None of them asks: a snippet goes to Tooltrail's own database, never into the
//! workspace or anywhere else a program reads, and replacing one loses only what an earlier
//! call saved there.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};

use crate::args::{blocking, parse};
use crate::snippet_book::SnippetDraft;
use crate::tool::{Gate, Tool, ToolContext};

/// Largest content a snippet holds, in bytes: a snippet is for a function or a recipe, not a
/// file, and every byte of it may go back to the model on load.
const MAX_CONTENT_BYTES: usize = 64 * 1024;

/// What a snippet tool does.
#[derive(Clone, Copy)]
enum Action {
    Save,
    Load,
    List,
}

/// One of the three snippet tools.
pub(crate) struct SnippetTool {
    spec: ToolSpec,
    action: Action,
}

impl SnippetTool {
    pub(crate) fn save() -> Self {
        Self::new(
            Action::Save,
            "snippet_save",
            "Save a named snippet (code, a command, a note) for this folder.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 100},
                    "content": {"type": "string"},
                    "language": {"type": "string", "maxLength": 40},
                    "description": {"type": "string", "maxLength": 300}
                },
                "required": ["name", "content"]
            }),
        )
    }

    pub(crate) fn load() -> Self {
        Self::new(
            Action::Load,
            "snippet_load",
            "Load a saved snippet by name.",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"]
            }),
        )
    }

    pub(crate) fn list() -> Self {
        Self::new(
            Action::List,
            "snippet_list",
            "List or search the snippets saved for this folder.",
            json!({
                "type": "object",
                "properties": {"query": {"type": "string"}}
            }),
        )
    }

    fn new(action: Action, name: &str, description: &str, parameters: Value) -> Self {
        Self {
            spec: ToolSpec {
                name: name.to_string(),
                description: description.to_string(),
                parameters,
                // Honest: saving writes, if only to Tooltrail's own database.
                read_only: !matches!(action, Action::Save),
            },
            action,
        }
    }
}

#[async_trait]
impl Tool for SnippetTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn described_on_demand(&self) -> bool {
        true
    }

    /// Runs without asking (see the module's comment), saving too.
    fn gate(&self, _args: &Value, _ctx: &ToolContext) -> Gate {
        Gate::ReadOnly
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let name = self.spec.name.as_str();
        match self.action {
            Action::Save => save(parse(name, args)?, ctx).await,
            Action::Load => load(parse(name, args)?, ctx).await,
            Action::List => list(parse(name, args)?, ctx).await,
        }
    }
}

#[derive(Deserialize)]
struct SaveArgs {
    name: String,
    content: String,
    language: Option<String>,
    description: Option<String>,
}

async fn save(args: SaveArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let name = args.name.trim().to_string();
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            "a snippet name needs at least one visible character and no control characters",
        ));
    }
    let bytes = args.content.len();
    if bytes > MAX_CONTENT_BYTES {
        return Err(ToolError::new(
            ToolErrorCode::TooLarge,
            format!(
                "the content is {bytes} bytes; a snippet holds at most {MAX_CONTENT_BYTES} \
                 bytes (64 KiB)"
            ),
        ));
    }
    let book = ctx.snippet_book()?;
    let draft = SnippetDraft {
        name: name.clone(),
        content: args.content,
        language: nonempty(args.language),
        description: nonempty(args.description),
    };
    let replaced = blocking(move || book.save(&draft)).await?;
    let text = if replaced {
        format!("Replaced snippet `{name}` ({bytes} bytes); its earlier content is gone.")
    } else {
        format!("Saved snippet `{name}` ({bytes} bytes).")
    };
    Ok(ToolOutput::new(
        text,
        json!({"name": name, "bytes": bytes, "replaced": replaced}),
    ))
}

#[derive(Deserialize)]
struct LoadArgs {
    name: String,
}

async fn load(args: LoadArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let book = ctx.snippet_book()?;
    let name = args.name.trim().to_string();
    let wanted = name.clone();
    let Some(snippet) = blocking(move || book.load(&wanted)).await? else {
        return Err(ToolError::new(
            ToolErrorCode::NotFound,
            format!(
                "no snippet named `{name}` is saved for this folder; snippet_list shows \
                 those that are"
            ),
        ));
    };
    // One header line, then the content as saved, so the model can use it verbatim.
    let mut header = format!("snippet `{}`", snippet.name);
    if let Some(language) = &snippet.language {
        header.push_str(&format!(" ({language})"));
    }
    if let Some(description) = &snippet.description {
        header.push_str(&format!(": {description}"));
    }
    let text = format!("{header}\n{}", snippet.content);
    Ok(ToolOutput::new(text, json!(snippet)))
}

#[derive(Deserialize)]
struct ListArgs {
    query: Option<String>,
}

async fn list(args: ListArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let book = ctx.snippet_book()?;
    let query = nonempty(args.query);
    let limit = ctx.limits.max_results;
    let asked = query.clone();
    // One more than shown, to tell whether the list was cut.
    let mut found = blocking(move || book.list(asked.as_deref(), limit + 1)).await?;
    let truncated = found.len() > limit;
    found.truncate(limit);
    let mut lines: Vec<String> = found
        .iter()
        .map(|snippet| {
            let mut line = snippet.name.clone();
            if let Some(language) = &snippet.language {
                line.push_str(&format!(" [{language}]"));
            }
            if let Some(description) = &snippet.description {
                line.push_str(&format!(": {description}"));
            }
            line
        })
        .collect();
    if lines.is_empty() {
        lines.push(match &query {
            Some(query) => format!("no snippet of this folder matches `{query}`"),
            None => "no snippets are saved for this folder".to_string(),
        });
    }
    if truncated {
        lines.push(format!("(first {limit} shown; narrow the query)"));
    }
    Ok(ToolOutput::new(
        lines.join("\n"),
        json!({"snippets": found, "truncated": truncated}),
    ))
}

fn nonempty(value: Option<String>) -> Option<String> {
    value
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty())
}
