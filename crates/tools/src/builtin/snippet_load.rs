//! `snippet_load(name)`: a saved snippet of this workspace, whole.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};

use crate::args::{blocking, parse};
use crate::tool::{Tool, ToolContext};

const NAME: &str = "snippet_load";

pub(crate) struct SnippetLoad {
    spec: ToolSpec,
}

#[derive(Deserialize)]
struct Args {
    name: String,
}

impl SnippetLoad {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "Load a saved snippet by name.".to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                }),
                read_only: true,
            },
        }
    }
}

#[async_trait]
impl Tool for SnippetLoad {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    // Rarely needed: its parameters are told when it is called, not in every request.
    fn described_on_demand(&self) -> bool {
        true
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse(NAME, args)?;
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
}
