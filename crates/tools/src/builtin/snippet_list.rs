//! `snippet_list(query?)`: the snippets saved for this workspace, or those matching a search.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tooltrail_protocol::{ToolError, ToolOutput, ToolSpec};

use crate::args::{blocking, parse};
use crate::tool::{Tool, ToolContext};

const NAME: &str = "snippet_list";

pub(crate) struct SnippetList {
    spec: ToolSpec,
}

#[derive(Deserialize)]
struct Args {
    query: Option<String>,
}

impl SnippetList {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "List or search the snippets saved for this folder.".to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {"query": {"type": "string"}}
                }),
                read_only: true,
            },
        }
    }
}

#[async_trait]
impl Tool for SnippetList {
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
        let query = args
            .query
            .map(|query| query.trim().to_string())
            .filter(|query| !query.is_empty());
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
}
