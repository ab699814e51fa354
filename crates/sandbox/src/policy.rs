//! The command policy: whether a shell command may run without asking, must be approved by the
//! user first, or is refused outright.
//!
//! A regex blacklist over the command text is easy to slip past (`rm${IFS}-rf ~`, a newline, a
//! quote in the middle of a word). So the command is parsed with tree-sitter-bash, the grammar
//! editors use, and judged on its syntax tree:
//!
//! - **Read-only**: every command is a plain word from a read-only allowlist, with plain
//!   (unexpanded) arguments that do not turn it into a writer (`find` without `-exec`/`-delete`,
//!   `sed` without `-i`, `git` with a reading subcommand), joined only by `|`, `&&`, `||`, `;`
//!   or newlines, redirected nowhere but `/dev/null`.
//! - **Ask**: anything else — redirections, variables, command substitution, unknown programs,
//!   interpreters, programs that run other programs (`xargs`, `env`). The reason is one sentence
//!   the user reads on the approval card.
//! - **Deny**: a short list refused even when the user would approve: `rm -r` of the root or
//!   home folder, `mkfs`, `dd` onto a device, fork bombs, `sudo` and friends, shutting the
//!   machine down. This check looks through quotes, `${IFS}`, wrappers (`env`, `xargs`,
//!   `timeout` ...) and `bash -c` strings, and runs before the read-only check.

mod allowlist;
mod deny;
mod readonly;
pub(crate) mod syntax;

/// What the policy decided for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Only reads: runs without asking.
    ReadOnly,
    /// Needs the user's approval; `reason` says why, in one sentence.
    Ask { reason: String },
    /// Never runs, whatever the user says.
    Deny { reason: String },
}

impl Verdict {
    pub fn is_read_only(&self) -> bool {
        matches!(self, Self::ReadOnly)
    }

    pub fn is_denied(&self) -> bool {
        matches!(self, Self::Deny { .. })
    }
}

/// Classifies a shell command (bash syntax).
pub fn classify(command: &str) -> Verdict {
    if command.trim().is_empty() {
        return Verdict::Ask {
            reason: "the command is empty".to_string(),
        };
    }
    let tree = syntax::parse(command);
    if let Some(reason) = deny::check(command, tree.as_ref(), 0) {
        return Verdict::Deny { reason };
    }
    let Some(tree) = tree else {
        return ask("the command could not be parsed");
    };
    let root = tree.root_node();
    if root.has_error() {
        return ask("the command could not be parsed as plain shell syntax");
    }
    match readonly::check(root, command.as_bytes()) {
        Ok(()) => Verdict::ReadOnly,
        Err(reason) => Verdict::Ask { reason },
    }
}

fn ask(reason: &str) -> Verdict {
    Verdict::Ask {
        reason: reason.to_string(),
    }
}
