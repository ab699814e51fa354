//! `tooltrail snippets [list|show NAME|delete NAME]`: the snippets the model saved for a
//! workspace (`snippets` with `"action": "save"`), kept in the history database.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::json;
use tooltrail_store::SnippetSummary;

use crate::history_cmd::{open_store, workspace_key};

#[derive(clap::Args)]
pub struct SnippetsArgs {
    #[command(subcommand)]
    pub command: Option<SnippetsCommand>,
    /// The workspace [default: the current folder].
    #[arg(long, short = 'w', value_name = "DIR", global = true)]
    pub workspace: Option<PathBuf>,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(clap::Subcommand)]
pub enum SnippetsCommand {
    /// List the workspace's snippets by name, or those matching every word of QUERY (the
    /// default command).
    List {
        #[arg(num_args = 0.., value_name = "QUERY")]
        query: Vec<String>,
    },
    /// Print a snippet's content.
    Show { name: String },
    /// Delete a snippet.
    Delete { name: String },
}

pub fn run(args: SnippetsArgs) -> anyhow::Result<ExitCode> {
    let dir = match args.workspace {
        Some(dir) => dir,
        None => std::env::current_dir().context("could not read the current folder")?,
    };
    let workspace = workspace_key(&dir)?;
    let store = open_store()?;
    let mut out = crate::terminal::out();
    match args
        .command
        .unwrap_or(SnippetsCommand::List { query: Vec::new() })
    {
        SnippetsCommand::List { query } => {
            let query = query.join(" ");
            let query = Some(query.as_str()).filter(|query| !query.trim().is_empty());
            let snippets = store.snippets(&workspace, query, usize::MAX)?;
            if args.json {
                writeln!(out, "{}", serde_json::to_string_pretty(&snippets)?)?;
            } else if snippets.is_empty() {
                writeln!(out, "No snippets.")?;
            } else {
                for snippet in &snippets {
                    writeln!(out, "{}", line(snippet))?;
                }
            }
        }
        SnippetsCommand::Show { name } => {
            let snippet = store
                .snippet(&workspace, &name)?
                .ok_or(tooltrail_store::StoreError::SnippetNotFound(name))?;
            if args.json {
                writeln!(out, "{}", serde_json::to_string_pretty(&snippet)?)?;
            } else {
                // The content alone, as saved, so that it can be piped or redirected.
                write!(out, "{}", snippet.content)?;
                if !snippet.content.ends_with('\n') {
                    writeln!(out)?;
                }
            }
        }
        SnippetsCommand::Delete { name } => {
            store.delete_snippet(&workspace, &name)?;
            if args.json {
                writeln!(out, "{}", json!({"deleted": name}))?;
            } else {
                writeln!(out, "Deleted snippet {name}.")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn line(snippet: &SnippetSummary) -> String {
    let mut line = format!(
        "{:<24} {:<10} {:>7} B",
        snippet.name,
        snippet.language.as_deref().unwrap_or("-"),
        snippet.bytes
    );
    if let Some(description) = &snippet.description {
        line.push_str(&format!("  {description}"));
    }
    line
}
