//! Asking the person at the terminal whether a call may run.

use std::io::{BufRead, Write};

use async_trait::async_trait;
use tooltrail_agent::{ApprovalRequest, Approver, Decision};
use tooltrail_protocol::{ApprovalBy, ApprovalReply};

use crate::render::summarize_arguments;

/// Prompts on stderr and reads the answer from stdin.
pub struct TerminalApprover;

#[async_trait]
impl Approver for TerminalApprover {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        let request = request.clone();
        let reply = tokio::task::spawn_blocking(move || prompt(&request))
            .await
            .unwrap_or(ApprovalReply::Deny {
                reason: Some("the approval prompt failed".to_string()),
            });
        Decision {
            reply,
            by: ApprovalBy::User,
        }
    }
}

fn prompt(request: &ApprovalRequest) -> ApprovalReply {
    let mut err = std::io::stderr().lock();
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
    let stdin = std::io::stdin();
    loop {
        let _ = write!(
            err,
            "  [y] allow once  [a] allow for this conversation  [n] deny  > "
        );
        let _ = err.flush();
        let mut answer = String::new();
        match stdin.lock().read_line(&mut answer) {
            Ok(0) | Err(_) => {
                return ApprovalReply::Deny {
                    reason: Some("no answer was given".to_string()),
                };
            }
            Ok(_) => {}
        }
        match answer.trim().to_lowercase().as_str() {
            "y" | "yes" => return ApprovalReply::AllowOnce,
            "a" | "always" => return ApprovalReply::AllowForConversation,
            "n" | "no" => {
                let _ = write!(err, "  reason for the model (optional) > ");
                let _ = err.flush();
                let mut reason = String::new();
                let _ = stdin.lock().read_line(&mut reason);
                let reason = reason.trim();
                return ApprovalReply::Deny {
                    reason: (!reason.is_empty()).then(|| reason.to_string()),
                };
            }
            _ => {}
        }
    }
}
