//! `tooltrail rules list|add|revoke`, and the rule book `ask` consults: standing approval
//! rules for commands, kept per workspace in the history database.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::Context;
use serde_json::{Value, json};
use tooltrail_agent::{RuleBook, RuleDecision};
use tooltrail_sandbox::rules::{self as command_rules, CommandRule};
use tooltrail_store::{ApprovalRule, NewRule, RuleKind, Store};

use crate::history_cmd::{open_store, workspace_key};

/// The only tool rules apply to.
const TOOL: &str = "execute_bash";

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
    let mut out = std::io::stdout().lock();
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

/// Checks that `command` can be a rule of `kind`, and stores it.
fn add(
    store: &Store,
    workspace: &str,
    kind: RuleKind,
    command: &str,
) -> Result<ApprovalRule, String> {
    let sandbox_kind = match kind {
        RuleKind::Allow => command_rules::RuleKind::Allow,
        RuleKind::Deny => command_rules::RuleKind::Deny,
    };
    let prefix = command_rules::prefix_for(sandbox_kind, command)
        .map_err(|reason| format!("`{command}` cannot be a rule: {reason}"))?;
    store
        .add_rule(&NewRule {
            workspace: workspace.to_string(),
            kind,
            tool: TOOL.to_string(),
            prefix,
        })
        .map_err(|error| error.to_string())
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

/// Words as one would type them: quoted when they hold spaces or quotes.
fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|word| {
            if !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                word.clone()
            } else {
                format!("'{}'", word.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The rules of one workspace, for `ask`: consulted before every call, and added to when the
/// user answers "always allow in this workspace".
pub struct WorkspaceRules {
    store: Option<Store>,
    workspace: String,
    rules: Mutex<Vec<CommandRule>>,
}

impl WorkspaceRules {
    /// Loads the live rules of `workspace` (a canonical root) from the store at `db`.
    pub fn load(db: Option<&std::path::Path>, workspace: &str) -> Self {
        let store = db.and_then(|path| Store::open(path).ok());
        let rules = store
            .as_ref()
            .and_then(|store| store.rules(Some(workspace), false).ok())
            .unwrap_or_default()
            .iter()
            .filter(|rule| rule.tool == TOOL)
            .map(to_command_rule)
            .collect();
        Self {
            store,
            workspace: workspace.to_string(),
            rules: Mutex::new(rules),
        }
    }

    /// Stores an allow rule for exactly `command`; returns its id, or why it cannot be one.
    pub fn always_allow(&self, command: &str) -> Result<String, String> {
        let Some(store) = &self.store else {
            return Err(
                "the history database is not available, so no rule can be kept".to_string(),
            );
        };
        let rule = add(store, &self.workspace, RuleKind::Allow, command)?;
        let id = rule.id.clone();
        self.lock().push(to_command_rule(&rule));
        Ok(id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<CommandRule>> {
        match self.rules.lock() {
            Ok(rules) => rules,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

impl RuleBook for WorkspaceRules {
    fn decide(&self, tool: &str, arguments: &Value) -> Option<RuleDecision> {
        if tool != TOOL {
            return None;
        }
        let command = arguments.get("command")?.as_str()?;
        let rules = self.lock();
        let rule = command_rules::decide(&rules, command)?;
        Some(RuleDecision {
            rule_id: rule.id.clone(),
            allow: rule.kind == command_rules::RuleKind::Allow,
            description: format!(
                "the {} rule `{}`",
                rule.kind.as_str(),
                shell_words(&rule.prefix)
            ),
        })
    }
}

fn to_command_rule(rule: &ApprovalRule) -> CommandRule {
    CommandRule {
        id: rule.id.clone(),
        kind: match rule.kind {
            RuleKind::Allow => command_rules::RuleKind::Allow,
            RuleKind::Deny => command_rules::RuleKind::Deny,
        },
        prefix: rule.prefix.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn words_are_quoted_only_when_needed() {
        let words = ["git", "commit", "-m", "a b", "it's"].map(str::to_string);
        assert_eq!(shell_words(&words), "git commit -m 'a b' 'it'\\''s'");
    }

    #[test]
    fn rules_decide_calls_and_deny_wins() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db.sqlite3");
        let store = Store::open(&db).unwrap();
        add(&store, "/ws", RuleKind::Allow, "cargo").unwrap();
        add(&store, "/ws", RuleKind::Deny, "cargo publish").unwrap();
        assert!(add(&store, "/ws", RuleKind::Allow, "bash -c 'cargo test'").is_err());
        let book = WorkspaceRules::load(Some(&db), "/ws");
        let decide = |command: &str| {
            book.decide(TOOL, &json!({ "command": command }))
                .map(|decision| (decision.allow, decision.description))
        };
        assert_eq!(
            decide("cargo test"),
            Some((true, "the allow rule `cargo`".to_string()))
        );
        assert_eq!(
            decide("cargo publish --dry-run"),
            Some((false, "the deny rule `cargo publish`".to_string()))
        );
        assert_eq!(decide("make"), None);
        assert_eq!(book.decide("read_file", &json!({"path": "cargo"})), None);
        let id = book.always_allow("make test").unwrap();
        assert!(id.starts_with("rule_"));
        assert_eq!(decide("make test").map(|d| d.0), Some(true));
        assert!(book.always_allow("make > out").is_err());
    }
}
