//! `tooltrail rules list|add|revoke`: standing approval rules for commands, kept per workspace
//! in the history database (`tooltrail_host::rules` holds the rule book `ask` consults).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::{Value, json};
use tooltrail_host::rules::{add, shell_words};
use tooltrail_store::{ApprovalRule, RuleKind};

use crate::history_cmd::{open_store, workspace_key};

#[derive(clap::Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    pub command: RulesCommand,
}

#[derive(clap::Subcommand)]
pub enum RulesCommand {
    /// List the rules of a workspace.
    List {
        /// The workspace [default: the current folder].
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Rules of every workspace.
        #[arg(long, conflicts_with = "workspace")]
        all: bool,
        /// Include revoked rules.
        #[arg(long)]
        revoked: bool,
        /// Print the rules as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Always allow, or always refuse, commands that start with these words in a workspace.
    Add {
        /// `allow` or `deny`.
        #[arg(value_parser = ["allow", "deny"])]
        kind: String,
        /// The command's first words, e.g. "cargo test".
        #[arg(required = true, num_args = 1.., value_name = "COMMAND")]
        command: Vec<String>,
        /// The workspace [default: the current folder].
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
    /// Revoke a rule by its id (see `tooltrail rules list`).
    Revoke { id: String },
}

pub fn run(args: RulesArgs) -> anyhow::Result<ExitCode> {
    let store = open_store()?;
    let mut out = crate::terminal::out();
    match args.command {
        RulesCommand::List {
            workspace,
            all,
            revoked,
            json: as_json,
        } => {
            let workspace = if all {
                None
            } else {
                Some(current_workspace(workspace)?)
            };
            let rules = store.rules(workspace.as_deref(), revoked)?;
            if as_json {
                let rows: Vec<Value> = rules.iter().map(rule_json).collect();
                writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
            } else if rules.is_empty() {
                writeln!(out, "No rules.")?;
            } else {
                for rule in &rules {
                    writeln!(out, "{}", rule_line(rule, workspace.is_none()))?;
                }
            }
        }
        RulesCommand::Add {
            kind,
            command,
            workspace,
        } => {
            let workspace = current_workspace(workspace)?;
            let kind = if kind == "deny" {
                RuleKind::Deny
            } else {
                RuleKind::Allow
            };
            let rule = add(&store, &workspace, kind, &command.join(" "))
                .map_err(|reason| anyhow::anyhow!("{reason}"))?;
            writeln!(out, "Added {}", rule_line(&rule, false))?;
        }
        RulesCommand::Revoke { id } => {
            let rule = store.revoke_rule(&id)?;
            writeln!(out, "Revoked {}", rule_line(&rule, true))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn current_workspace(dir: Option<PathBuf>) -> anyhow::Result<String> {
    let dir = match dir {
        Some(dir) => dir,
        None => std::env::current_dir().context("could not read the current folder")?,
    };
    workspace_key(&dir)
}

fn rule_line(rule: &ApprovalRule, with_workspace: bool) -> String {
    let mut line = format!(
        "{}  {:<5}  {}",
        rule.id,
        rule.kind.as_str(),
        shell_words(&rule.prefix)
    );
    if with_workspace {
        line.push_str(&format!("  in {}", rule.workspace));
    }
    if rule.revoked_ms.is_some() {
        line.push_str("  (revoked)");
    }
    line
}

fn rule_json(rule: &ApprovalRule) -> Value {
    json!({
        "id": rule.id,
        "workspace": rule.workspace,
        "kind": rule.kind.as_str(),
        "tool": rule.tool,
        "prefix": rule.prefix,
        "created_ms": rule.created_ms,
        "revoked_ms": rule.revoked_ms,
    })
}
