//! Standing approval rules for commands, kept per workspace in the history database: the rule
//! book every front end (the `tooltrail` command line, the app, the HTTP API) hands the agent,
//! so a rule allows or refuses a command the same way wherever the question is asked.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tooltrail_agent::{Decision, RuleBook, RuleDecision};
use tooltrail_protocol::{ApprovalBy, ApprovalReply};
use tooltrail_sandbox::rules::{self as command_rules, CommandRule};
use tooltrail_store::{ApprovalRule, NewRule, RuleKind, Store};

/// The only tool rules apply to.
pub const TOOL: &str = "execute_bash";

/// Checks that `command` can be a rule of `kind`, and stores it.
pub fn add(
    store: &Store,
    workspace: &str,
    kind: RuleKind,
    command: &str,
) -> Result<ApprovalRule, String> {
    let prefix = command_rules::prefix_for(kind, command)
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

/// Words as one would type them: quoted when they hold spaces or quotes.
pub fn shell_words(words: &[String]) -> String {
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

/// The rules of one workspace: consulted before every call, and added to when the
/// user answers "always allow in this workspace".
pub struct WorkspaceRules {
    store: Arc<Store>,
    workspace: String,
    rules: Mutex<Vec<CommandRule>>,
}

impl WorkspaceRules {
    /// The live rules of `workspace` (a canonical root) in the already-open `store`. A store
    /// that cannot be read gives no rules: calls then ask as they would without any.
    pub fn load(store: Arc<Store>, workspace: &str) -> Self {
        let rules = store
            .rules(Some(workspace), false)
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

    /// "Always allow in this workspace" for a call the user approved: stores an allow rule for
    /// exactly this call (the tool and its real arguments, never a display summary) and
    /// returns the decision to record with it (allowed by that rule), or why it cannot be a
    /// rule.
    pub fn keep(&self, tool: &str, arguments: &Value) -> Result<Decision, String> {
        let command = rule_command(tool, arguments)?;
        let rule = add(&self.store, &self.workspace, RuleKind::Allow, command)?;
        self.lock().push(to_command_rule(&rule));
        Ok(Decision {
            reply: ApprovalReply::AllowInWorkspace,
            by: ApprovalBy::Rule { id: rule.id },
        })
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
            allow: rule.kind == RuleKind::Allow,
            description: format!(
                "the {} rule `{}`",
                rule.kind.as_str(),
                shell_words(&rule.prefix)
            ),
        })
    }

    fn offer(&self, tool: &str, arguments: &Value) -> Option<String> {
        let command = rule_command(tool, arguments).ok()?;
        let prefix = command_rules::prefix_for(RuleKind::Allow, command).ok()?;
        Some(shell_words(&prefix))
    }
}

/// The command a call of `tool` would make a rule of: only shell commands can be rules.
fn rule_command<'a>(tool: &str, arguments: &'a Value) -> Result<&'a str, String> {
    if tool != TOOL {
        return Err(format!(
            "only {TOOL} calls can be kept as rules, not {tool} calls"
        ));
    }
    arguments
        .get("command")
        .and_then(Value::as_str)
        .ok_or_else(|| "the call names no command".to_string())
}

fn to_command_rule(rule: &ApprovalRule) -> CommandRule {
    CommandRule {
        id: rule.id.clone(),
        kind: rule.kind,
        prefix: rule.prefix.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn words_are_quoted_only_when_needed() {
        let words = ["git", "commit", "-m", "a b", "it's"].map(str::to_string);
        assert_eq!(shell_words(&words), "git commit -m 'a b' 'it'\\''s'");
    }

    #[test]
    fn rules_decide_calls_and_deny_wins() {
        let store = Arc::new(Store::open_in_memory().unwrap());
        add(&store, "/ws", RuleKind::Allow, "cargo").unwrap();
        add(&store, "/ws", RuleKind::Deny, "cargo publish").unwrap();
        assert!(add(&store, "/ws", RuleKind::Allow, "bash -c 'cargo test'").is_err());
        let book = WorkspaceRules::load(store.clone(), "/ws");
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
        assert_eq!(
            book.offer(TOOL, &json!({ "command": "make  test" }))
                .as_deref(),
            Some("make test")
        );
        assert_eq!(book.offer(TOOL, &json!({ "command": "make > out" })), None);
        assert_eq!(book.offer("read_file", &json!({ "command": "make" })), None);
        let kept = book.keep(TOOL, &json!({ "command": "make test" })).unwrap();
        let ApprovalBy::Rule { id } = &kept.by else {
            panic!("not recorded as the rule: {kept:?}")
        };
        assert!(id.starts_with("rule_"));
        assert_eq!(decide("make test").map(|d| d.0), Some(true));
        assert!(
            book.keep(TOOL, &json!({ "command": "make > out" }))
                .is_err()
        );
        assert!(
            book.keep("read_file", &json!({ "command": "make" }))
                .is_err()
        );
        // The rule is in the store the book was given, for every later question.
        assert_eq!(
            WorkspaceRules::load(store, "/ws")
                .decide(TOOL, &json!({ "command": "make test" }))
                .map(|d| d.allow),
            Some(true)
        );
    }
}
