//! Asking the person at the terminal whether a call may run.

use std::io::{BufRead, Write};
use std::sync::Arc;

use async_trait::async_trait;
use tooltrail_host::{ApprovalRequest, Approver, Decision};
use tooltrail_protocol::{ApprovalBy, ApprovalReply};

use crate::render::summarize_arguments;
use tooltrail_host::WorkspaceRules;

/// Prompts on stderr and reads the answer from stdin. "Always allow in this workspace" keeps
/// a rule in `rules`.
pub struct TerminalApprover {
    rules: Arc<WorkspaceRules>,
}

impl TerminalApprover {
    pub fn new(rules: Arc<WorkspaceRules>) -> Self {
        Self { rules }
    }
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        let request = request.clone();
        let rules = self.rules.clone();
        tokio::task::spawn_blocking(move || prompt(&request, &rules))
            .await
            .unwrap_or(Decision {
                reply: ApprovalReply::Deny {
                    reason: Some("the approval prompt failed".to_string()),
                },
                by: ApprovalBy::User,
            })
    }
}

fn by_user(reply: ApprovalReply) -> Decision {
    Decision {
        reply,
        by: ApprovalBy::User,
    }
}

fn prompt(request: &ApprovalRequest, rules: &WorkspaceRules) -> Decision {
    let mut err = crate::terminal::err();
    let what = if request.tool == "execute_bash" {
        request.summary.clone()
    } else {
        format!(
            "{} {}",
            request.tool,
            summarize_arguments(&request.arguments, 120)
        )
    };
    let _ = writeln!(
        err,
        "\n? {} needs your approval: {}",
        request.tool, request.reason
    );
    let _ = writeln!(err, "    {what}");
    if let Some(cwd) = &request.cwd {
        let _ = writeln!(err, "    in {cwd}");
    }
    if let Some(change) = &request.change {
        let _ = err.painted(&crate::render::diff(change));
    }
    if request.once_only {
        let _ = writeln!(
            err,
            "    (asked for each call: no rule or conversation allows it)"
        );
    }
    let stdin = std::io::stdin();
    if let Some(rule) = &request.rule {
        let _ = writeln!(
            err,
            "    [w] keeps a rule: commands starting with `{rule}` run here without asking"
        );
    }
    let offered = request.rule.is_some() && !request.once_only;
    loop {
        let _ = write!(
            err,
            "  [y] allow once  {}{}[n] deny  > ",
            if request.once_only {
                ""
            } else {
                "[a] allow for this conversation  "
            },
            if offered {
                "[w] always allow in this workspace  "
            } else {
                ""
            }
        );
        let _ = err.flush();
        let mut answer = String::new();
        match stdin.lock().read_line(&mut answer) {
            Ok(0) | Err(_) => {
                return by_user(ApprovalReply::Deny {
                    reason: Some("no answer was given".to_string()),
                });
            }
            Ok(_) => {}
        }
        match answer.trim().to_lowercase().as_str() {
            "y" | "yes" => return by_user(ApprovalReply::AllowOnce),
            "a" | "always" if !request.once_only => {
                return by_user(ApprovalReply::AllowForConversation);
            }
            "w" | "workspace" if offered => match rules.keep(&request.tool, &request.arguments) {
                Ok(decision) => {
                    if let ApprovalBy::Rule { id } = &decision.by {
                        let _ = writeln!(err, "  kept as rule {id} (see `tooltrail rules list`)");
                    }
                    return decision;
                }
                Err(reason) => {
                    let _ = writeln!(err, "  {reason}");
                }
            },
            "n" | "no" => {
                let _ = write!(err, "  reason for the model (optional) > ");
                let _ = err.flush();
                let mut reason = String::new();
                let _ = stdin.lock().read_line(&mut reason);
                let reason = reason.trim();
                return by_user(ApprovalReply::Deny {
                    reason: (!reason.is_empty()).then(|| reason.to_string()),
                });
            }
            _ => {}
        }
    }
}
