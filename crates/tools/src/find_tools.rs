//! `find_tools`: the way to the tools a request left out.
//!
//! When every tool's schema would take too much of a small model's window, a turn offers the
//! built-in tools, the MCP tools used most, and this one. The model asks it for tools by what
//! they do; it answers with the best matches and remembers their names, and the turn then
//! offers those tools, schemas and all, for the rest of the question (see the agent). A tool it
//! names can be called right away: only the offer was held back, never the tool.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde_json::{Value, json};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};

use crate::tool::{Gate, Tool, ToolContext};

/// The tool's name, as the model calls it.
pub const FIND_TOOLS: &str = "find_tools";
/// Tools one search adds, at most.
const MAX_FOUND: usize = 5;

/// Searches the tools a turn did not offer.
pub struct FindTools {
    spec: ToolSpec,
    /// The tools held back, as the registry has them.
    catalog: Vec<ToolSpec>,
    /// Names found so far in this turn, for the turn to offer.
    found: Arc<Mutex<BTreeSet<String>>>,
}

impl FindTools {
    /// A search over `catalog`, the tools held back; its spec names how many there are.
    pub fn new(catalog: Vec<ToolSpec>) -> Self {
        let spec = ToolSpec {
            name: FIND_TOOLS.to_string(),
            description: format!(
                "Finds more tools: {} tools of the connected MCP servers are not listed here, to \
                 keep this request small. Describe what you need in a few words (\"create a \
                 calendar event\", \"jira issue\"); the best matches become callable tools from \
                 your next step on.",
                catalog.len()
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "What the tool should do, in a few words."
                    }
                },
                "required": ["query"]
            }),
            read_only: true,
        };
        Self {
            spec,
            catalog,
            found: Arc::default(),
        }
    }

    /// The names found so far; the turn offers these tools from its next request on.
    pub fn found(&self) -> BTreeSet<String> {
        self.found
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Counts `names` as found already (a search made before the tool list changed).
    pub fn remember(&self, names: BTreeSet<String>) {
        self.found
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(names);
    }

    /// The held-back tools that best match `query`, best first: a tool scores for each word
    /// of the query (of three letters or more in ASCII, so that "a" and "an" match nothing) in
    /// its name (twice) or description.
    pub fn search(&self, query: &str) -> Vec<&ToolSpec> {
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|word| !word.is_ascii() || word.len() > 2)
            .map(str::to_lowercase)
            .collect();
        let mut scored: Vec<(usize, &ToolSpec)> = self
            .catalog
            .iter()
            .map(|spec| {
                let name = spec.name.to_lowercase();
                let description = spec.description.to_lowercase();
                let score = words
                    .iter()
                    .map(|word| {
                        2 * usize::from(name.contains(word.as_str()))
                            + usize::from(description.contains(word.as_str()))
                    })
                    .sum();
                (score, spec)
            })
            .filter(|(score, _)| *score > 0)
            .collect();
        // Best first; ties in name order, so the answer is the same every time.
        scored.sort_by(|(a, left), (b, right)| b.cmp(a).then_with(|| left.name.cmp(&right.name)));
        scored
            .into_iter()
            .take(MAX_FOUND)
            .map(|(_, spec)| spec)
            .collect()
    }
}

#[async_trait]
impl Tool for FindTools {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gate(&self, _args: &Value, _ctx: &ToolContext) -> Gate {
        Gate::ReadOnly
    }

    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let query = args
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_string();
        let matches = self.search(&query);
        if matches.is_empty() {
            return Err(ToolError::new(
                ToolErrorCode::NotFound,
                format!(
                    "no tool matches {query:?}; try other words, or answer with the tools you have"
                ),
            ));
        }
        let names: Vec<String> = matches.iter().map(|spec| spec.name.clone()).collect();
        self.found
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(names.iter().cloned());
        let lines: Vec<String> = matches
            .iter()
            .map(|spec| {
                let first = spec.description.lines().next().unwrap_or_default();
                format!("- {}: {first}", spec.name)
            })
            .collect();
        Ok(ToolOutput::new(
            format!(
                "These tools can now be called (their parameters are in your tool list):\n{}",
                lines.join("\n")
            ),
            json!({ "query": query, "found": names }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: json!({"type": "object"}),
            read_only: false,
        }
    }

    #[tokio::test]
    async fn finds_by_name_and_description_and_remembers_what_it_found() {
        let finder = FindTools::new(vec![
            spec("jira__create_issue", "Creates an issue in a Jira project."),
            spec("jira__list_issues", "Lists the issues of a project."),
            spec("calendar__create_event", "Adds an event to a calendar."),
        ]);
        assert!(finder.spec().description.contains("3 tools"));
        let ctx = ToolContext::open(std::env::temp_dir()).unwrap();
        let output = finder
            .call(json!({"query": "create an issue"}), &ctx)
            .await
            .unwrap();
        assert_eq!(
            output.data["found"],
            json!([
                "jira__create_issue",
                "jira__list_issues",
                "calendar__create_event"
            ])
        );
        assert!(
            output
                .text
                .contains("- jira__create_issue: Creates an issue")
        );
        assert_eq!(finder.found().len(), 3);
        let none = finder
            .call(json!({"query": "weather"}), &ctx)
            .await
            .unwrap_err();
        assert_eq!(none.code, ToolErrorCode::NotFound);
    }
}
