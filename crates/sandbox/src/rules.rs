//! Standing approval rules for commands, kept per workspace by the front end.
//!
//! A rule is an exact prefix of a command's words (`cargo test`, `git commit -m`): an **allow**
//! rule lets a command made of one plain simple command starting with those words run without
//! asking, in that workspace; a **deny** rule refuses any command that contains a simple
//! command starting with them. Deny rules win over allow rules, and the policy's hard deny
//! list wins over both: a rule can never let `rm -rf ~` run.
//!
//! Only what a plain prefix can express safely may be allowed: no redirections, substitutions,
//! variables, globs or paths as the program, and no interpreters or wrappers that would run
//! anything at all (`bash`, `python3`, `env`, `xargs`, `sudo` ...).
//!
//! ```
//! use tooltrail_sandbox::rules::{CommandRule, RuleKind, decide, prefix_for};
//! let allow = CommandRule {
//!     id: "r1".to_string(),
//!     kind: RuleKind::Allow,
//!     prefix: prefix_for(RuleKind::Allow, "cargo test").unwrap(),
//! };
//! let rules = [allow];
//! assert_eq!(decide(&rules, "cargo test -p core").map(|r| r.id.as_str()), Some("r1"));
//! assert_eq!(decide(&rules, "cargo test > out.txt"), None);
//! assert!(prefix_for(RuleKind::Allow, "python3 -c 'print(1)'").is_err());
//! ```

use tree_sitter::Node;

use crate::policy::syntax::{literal, loose, parse, text};
use crate::policy::{Verdict, classify};

pub use tooltrail_protocol::RuleKind;

/// One stored rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRule {
    pub id: String,
    pub kind: RuleKind,
    /// The command's first words, exactly.
    pub prefix: Vec<String>,
}

/// Programs that run other programs or code given to them: an allow rule for them would allow
/// anything.
const RUNS_ANYTHING: &[&str] = &[
    "bash",
    "sh",
    "dash",
    "zsh",
    "ksh",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "osascript",
    "pwsh",
    "powershell",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "env",
    "xargs",
    "eval",
    "exec",
    "command",
    "builtin",
    "source",
    ".",
    "sudo",
    "su",
    "doas",
    "pkexec",
    "nohup",
    "timeout",
    "nice",
    "ionice",
    "setsid",
    "stdbuf",
    "strace",
    "ltrace",
    "gdb",
    "watch",
    "flock",
    "chroot",
    "unshare",
    "nsenter",
    "script",
    "expect",
    "ssh",
    "time",
];

/// The words a rule of `kind` would store for `command`, or why it cannot be a rule (one
/// sentence).
pub fn prefix_for(kind: RuleKind, command: &str) -> Result<Vec<String>, String> {
    let words = plain_words(command)?;
    let Some(program) = words.first() else {
        return Err("the command is empty".to_string());
    };
    if kind == RuleKind::Allow {
        if let Verdict::Deny { reason } = classify(command) {
            return Err(format!("{reason}, so it cannot be allowed"));
        }
        if program.contains('/') {
            return Err(format!(
                "`{program}` is a path; an allow rule names a program from PATH"
            ));
        }
        if is_interpreter(program) {
            return Err(format!(
                "`{program}` runs other programs or code, so it cannot be always allowed"
            ));
        }
        if let Some(word) = words.iter().find(|word| has_glob(word)) {
            return Err(format!(
                "`{word}` is a pattern; an allow rule holds plain words only"
            ));
        }
    }
    Ok(words)
}

/// The rule that decides `command`: a matching deny rule first, else a matching allow rule.
pub fn decide<'a>(rules: &'a [CommandRule], command: &str) -> Option<&'a CommandRule> {
    let commands = all_commands(command);
    let denied = rules
        .iter()
        .filter(|rule| rule.kind == RuleKind::Deny)
        .find(|rule| {
            commands.iter().any(|words| {
                starts_with(words, &rule.prefix)
                    || (words.first().map(|p| basename(p))
                        == rule.prefix.first().map(|p| basename(p))
                        && words
                            .get(1..)
                            .is_some_and(|rest| rest.starts_with(&rule.prefix[1..])))
            })
        });
    if denied.is_some() {
        return denied;
    }
    if classify(command).is_denied() {
        return None;
    }
    let words = plain_words(command).ok()?;
    if words.first().is_some_and(|program| is_interpreter(program)) {
        return None;
    }
    rules
        .iter()
        .filter(|rule| rule.kind == RuleKind::Allow)
        .find(|rule| !rule.prefix.is_empty() && starts_with(&words, &rule.prefix))
}

/// The words a network rule (`[sandbox] network_commands` in `config.toml`) stores for
/// `command`, or why it cannot be one (one sentence): plain words of one simple command.
pub fn network_prefix(command: &str) -> Result<Vec<String>, String> {
    let words = plain_words(command)?;
    if words.is_empty() {
        return Err("the command is empty".to_string());
    }
    Ok(words)
}

/// The network rule that opens the network for `command`: found only when every simple
/// command in it starts with the words of some rule (so `npm install && curl ...` gets none
/// unless `curl` has a rule too). The rule returned is the one the first command matched.
pub fn network_rule<'a>(rules: &'a [Vec<String>], command: &str) -> Option<&'a [String]> {
    if rules.is_empty() || command.trim().is_empty() {
        return None;
    }
    let mut first = None;
    for words in all_commands(command) {
        let rule = rules.iter().find(|prefix| starts_with(&words, prefix))?;
        first.get_or_insert(rule.as_slice());
    }
    first
}

fn starts_with(words: &[String], prefix: &[String]) -> bool {
    !prefix.is_empty() && words.len() >= prefix.len() && words[..prefix.len()] == *prefix
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

fn is_interpreter(program: &str) -> bool {
    let name = basename(program);
    RUNS_ANYTHING.contains(&name)
        || name.starts_with("python")
        || name.starts_with("perl")
        || name.starts_with("ruby")
        || name.starts_with("php")
}

fn has_glob(word: &str) -> bool {
    word.contains(['*', '?', '[', '{'])
}

/// The words of a command that is exactly one simple command of plain words.
fn plain_words(command: &str) -> Result<Vec<String>, String> {
    let tree = parse(command).ok_or_else(|| "the command could not be parsed".to_string())?;
    let root = tree.root_node();
    if root.has_error() {
        return Err("the command could not be parsed as plain shell syntax".to_string());
    }
    let source = command.as_bytes();
    let mut cursor = root.walk();
    let statements: Vec<Node<'_>> = root
        .named_children(&mut cursor)
        .filter(|node| node.kind() != "comment")
        .collect();
    let [statement] = statements.as_slice() else {
        return Err(
            "a rule covers one simple command, without `;`, `&&`, `|` or newlines".to_string(),
        );
    };
    if statement.kind() != "command" {
        return Err(match statement.kind() {
            "redirected_statement" => "a rule cannot cover a command with redirections".to_string(),
            "pipeline" | "list" => {
                "a rule covers one simple command, without `;`, `&&`, `|` or newlines".to_string()
            }
            other => format!("a rule cannot cover shell syntax such as `{other}`"),
        });
    }
    let mut words = Vec::new();
    let mut cursor = statement.walk();
    for (index, child) in statement.children(&mut cursor).enumerate() {
        match (statement.field_name_for_child(index as u32), child.kind()) {
            (Some("name"), _) => {
                let word = child.named_child(0).unwrap_or(child);
                words.push(literal(word, source).map_err(rule_reason)?);
            }
            (Some("argument"), _) => words.push(literal(child, source).map_err(rule_reason)?),
            (Some("redirect"), _) => {
                return Err("a rule cannot cover a command with redirections".to_string());
            }
            (_, "variable_assignment") => {
                return Err("a rule cannot cover a command that sets variables".to_string());
            }
            (_, kind) if child.is_named() => {
                return Err(format!("a rule cannot cover shell syntax such as `{kind}`"));
            }
            _ => {}
        }
    }
    Ok(words)
}

fn rule_reason(reason: String) -> String {
    format!("a rule holds plain words only, and {reason}")
}

/// The words of every simple command anywhere in `command`, read loosely where they are not
/// plain (deny rules must see through quotes and substitutions).
fn all_commands(command: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    if let Some(tree) = parse(command) {
        collect(tree.root_node(), command.as_bytes(), &mut found);
    }
    if found.is_empty() {
        found.push(command.split_whitespace().map(loose).collect());
    }
    found
}

fn collect(node: Node<'_>, source: &[u8], found: &mut Vec<Vec<String>>) {
    if node.kind() == "command" {
        let mut words = Vec::new();
        let mut cursor = node.walk();
        for (index, child) in node.children(&mut cursor).enumerate() {
            match node.field_name_for_child(index as u32) {
                Some("name") => {
                    let word = child.named_child(0).unwrap_or(child);
                    words.push(literal(word, source).unwrap_or_else(|_| loose(text(word, source))));
                }
                Some("argument") => words
                    .push(literal(child, source).unwrap_or_else(|_| loose(text(child, source)))),
                _ => {}
            }
        }
        if !words.is_empty() {
            found.push(words);
        }
    }
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        collect(child, source, found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn rule(id: &str, kind: RuleKind, command: &str) -> CommandRule {
        CommandRule {
            id: id.to_string(),
            kind,
            prefix: command.split(' ').map(str::to_string).collect(),
        }
    }

    #[test]
    fn the_network_opens_only_when_every_command_matches_a_rule() {
        let rules = vec![
            network_prefix("npm install").unwrap(),
            network_prefix("cargo fetch").unwrap(),
        ];
        let matched = |command: &str| network_rule(&rules, command).map(|rule| rule.join(" "));
        assert_eq!(
            matched("npm install left-pad"),
            Some("npm install".to_string())
        );
        assert_eq!(
            matched("cargo fetch && npm install"),
            Some("cargo fetch".to_string())
        );
        assert_eq!(matched("npm install && curl https://example.com"), None);
        assert_eq!(matched("npm install $(curl https://example.com)"), None);
        assert_eq!(matched("npm ci"), None);
        assert_eq!(matched("npm"), None);
        assert_eq!(matched(""), None);
        assert_eq!(network_rule(&[], "npm install"), None);
        assert!(network_prefix("npm install && curl x").is_err());
        assert!(network_prefix("  ").is_err());
    }

    #[test]
    fn allow_prefixes_are_plain_single_commands() {
        assert_eq!(
            prefix_for(RuleKind::Allow, "git commit -m"),
            Ok(vec![
                "git".to_string(),
                "commit".to_string(),
                "-m".to_string()
            ])
        );
        assert_eq!(
            prefix_for(RuleKind::Allow, "'cargo' \"test\""),
            Ok(vec!["cargo".to_string(), "test".to_string()])
        );
        for refused in [
            "cargo test > out.txt",
            "cargo test $FLAGS",
            "cargo test $(cat flags)",
            "make && make install",
            "ls | wc -l",
            "FOO=1 make",
            "bash -c 'make'",
            "python3 -m pytest",
            "env make",
            "xargs rm",
            "sudo make",
            "./build.sh",
            "rm -rf /",
            "rm *.o",
            "",
        ] {
            let result = prefix_for(RuleKind::Allow, refused);
            assert!(result.is_err(), "{refused:?} was accepted: {result:?}");
            let message = result.err().unwrap_or_default();
            assert!(
                !message.contains("Error") && !message.contains('{'),
                "{message}"
            );
        }
    }

    #[test]
    fn deny_rules_win_and_see_inside_compound_commands() {
        let rules = [
            rule("a", RuleKind::Allow, "git"),
            rule("d", RuleKind::Deny, "git push"),
        ];
        let id = |command: &str| decide(&rules, command).map(|rule| rule.id.clone());
        assert_eq!(id("git status"), Some("a".to_string()));
        assert_eq!(id("git push origin main"), Some("d".to_string()));
        assert_eq!(id("ls && git push"), Some("d".to_string()));
        assert_eq!(id("echo $(git push)"), Some("d".to_string()));
        assert_eq!(id("/usr/bin/git push"), Some("d".to_string()));
        assert_eq!(id("'git' \"push\""), Some("d".to_string()));
        assert_eq!(id("git status > out"), None);
        assert_eq!(id("gitk"), None);
    }

    #[test]
    fn hard_denied_commands_are_never_allowed_by_a_rule() {
        let rules = [rule("a", RuleKind::Allow, "rm")];
        assert_eq!(decide(&rules, "rm -rf /"), None);
        assert_eq!(decide(&rules, "rm -rf ~"), None);
        assert_eq!(
            decide(&rules, "rm build.log").map(|r| r.id.as_str()),
            Some("a")
        );
    }

    #[test]
    fn kinds_round_trip() {
        for kind in [RuleKind::Allow, RuleKind::Deny] {
            assert_eq!(RuleKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(RuleKind::parse("maybe"), None);
    }
}
