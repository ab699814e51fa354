//! `snippet_save(name, content, language?, description?)`: keeps a named piece of text for this
//! workspace, replacing the snippet of the same name.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};

use crate::args::{blocking, parse};
use crate::snippet_book::SnippetDraft;
use crate::tool::{Gate, Tool, ToolContext};

const NAME: &str = "snippet_save";
/// Largest content a snippet holds, in bytes: a snippet is for a function or a recipe, not a
/// file, and every byte of it may go back to the model on load.
pub(crate) const MAX_CONTENT_BYTES: usize = 64 * 1024;

pub(crate) struct SnippetSave {
    spec: ToolSpec,
}

#[derive(Deserialize)]
struct Args {
    name: String,
    content: String,
    language: Option<String>,
    description: Option<String>,
}

impl SnippetSave {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "Save a named snippet (code, a command, a note) for this folder."
                    .to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1, "maxLength": 100},
                        "content": {"type": "string"},
                        "language": {"type": "string", "maxLength": 40},
                        "description": {"type": "string", "maxLength": 300}
                    },
                    "required": ["name", "content"]
                }),
                // Honest: it writes, if only to Tooltrail's own database.
                read_only: false,
            },
        }
    }
}

#[async_trait]
impl Tool for SnippetSave {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    // Rarely needed: its parameters are told when it is called, not in every request.
    fn described_on_demand(&self) -> bool {
        true
    }

    /// Runs without asking: a snippet goes to Tooltrail's own database, never into the
    /// workspace or anywhere else a program reads, and replacing one loses only what an earlier
    /// call saved there.
    fn gate(&self, _args: &Value, _ctx: &ToolContext) -> Gate {
        Gate::ReadOnly
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse(NAME, args)?;
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
}

fn nonempty(value: Option<String>) -> Option<String> {
    value
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty())
}
