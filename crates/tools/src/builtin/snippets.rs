//! `snippets(action, …)` keeps named pieces of text (code, a command, a note) for this
//! workspace in Tooltrail's own database ([`crate::snippet_book`]):
//!
//! - `action: "save"`, with `name`, `content`, `language?` and `description?`, keeps one,
//!   replacing the snippet of the same name;
//! - `action: "load"`, with `name`, gives one back whole;
//! - `action: "list"`, with `query?`, lists those saved, or those matching a search.
//!
//! One tool rather than one per action: every request names each tool it offers, and a tool's
//! name and wrapping alone cost about 30 tokens. It is rarely needed, so its parameters are told
//! when it is called, not in every request. It never asks: a snippet goes to Tooltrail's own
//! database, never into the workspace or anywhere else a program reads, and replacing one loses
//! only what an earlier call saved there.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};

use crate::args::{blocking, parse};
use crate::snippet_book::SnippetDraft;
use crate::tool::{Gate, Tool, ToolContext};

pub(crate) const NAME: &str = "snippets";

/// Largest content a snippet holds, in bytes: a snippet is for a function or a recipe, not a
/// file, and every byte of it may go back to the model on load.
const MAX_CONTENT_BYTES: usize = 64 * 1024;

/// What a call does.
#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Action {
    Save,
    Load,
    List,
}

#[derive(Deserialize)]
struct Args {
    action: Action,
    name: Option<String>,
    content: Option<String>,
    language: Option<String>,
    description: Option<String>,
    query: Option<String>,
}

/// The snippet tool.
pub(crate) struct Snippets {
    spec: ToolSpec,
}

impl Snippets {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "Save, load or list the snippets (code, commands, notes) kept for \
                    this folder."
                    .to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "action": {"enum": ["save", "load", "list"]},
                        "name": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": 100,
                            "description": "save and load"
                        },
                        "content": {"type": "string", "description": "save"},
                        "language": {"type": "string", "maxLength": 40, "description": "save"},
                        "description": {
                            "type": "string",
                            "maxLength": 300,
                            "description": "save"
                        },
                        "query": {"type": "string", "description": "list: words to search for"}
                    },
                    "required": ["action"]
                }),
                // Honest: saving writes, if only to Tooltrail's own database.
                read_only: false,
            },
        }
    }
}

#[async_trait]
impl Tool for Snippets {
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
        let args: Args = parse(NAME, args)?;
        match args.action {
            Action::Save => save(args, ctx).await,
            Action::Load => load(args, ctx).await,
            Action::List => list(args, ctx).await,
        }
    }
}

/// The parameter `field` that `action` needs, or the error that says it is missing.
fn needed(value: Option<String>, field: &str, action: &str) -> Result<String, ToolError> {
    value.ok_or_else(|| {
        ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("invalid arguments for {NAME}: `{action}` needs the parameter `{field}`"),
        )
    })
}

async fn save(args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let name = needed(args.name, "name", "save")?.trim().to_string();
    let content = needed(args.content, "content", "save")?;
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            "a snippet name needs at least one visible character and no control characters",
        ));
    }
    let bytes = content.len();
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
        content,
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

async fn load(args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let name = needed(args.name, "name", "load")?.trim().to_string();
    let book = ctx.snippet_book()?;
    let wanted = name.clone();
    let Some(snippet) = blocking(move || book.load(&wanted)).await? else {
        return Err(ToolError::new(
            ToolErrorCode::NotFound,
            format!(
                "no snippet named `{name}` is saved for this folder; the action `list` \
                 shows those that are"
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

async fn list(args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
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
