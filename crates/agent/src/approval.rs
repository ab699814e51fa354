//! The approval gate's other side: whoever decides whether a call that needs approval may run.

use async_trait::async_trait;
use serde_json::Value;
use tooltrail_protocol::{ApprovalBy, ApprovalReply};

/// A call waiting for a decision.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    pub call_id: String,
    pub tool: String,
    pub arguments: Value,
    /// The exact command, or a one-line summary of the call.
    pub summary: String,
    pub cwd: Option<String>,
    /// Why approval is needed.
    pub reason: String,
    /// The standing rule the user may keep instead of answering once ([`RuleBook::offer`]).
    pub rule: Option<String>,
    /// The diff the user approves, for a file write.
    pub change: Option<tooltrail_protocol::FileChange>,
    /// Only "allow once" or "deny" apply: the approver keeps no rule and the conversation no
    /// allowance for this call.
    pub once_only: bool,
}

/// The answer, and who gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub reply: ApprovalReply,
    pub by: ApprovalBy,
}

/// Decides approval requests: a terminal prompt, the app's approval card, or a fixed setting.
/// The agent stops waiting when the turn is cancelled, so an implementation may wait forever.
#[async_trait]
pub trait Approver: Send + Sync {
    async fn decide(&self, request: &ApprovalRequest) -> Decision;
}

/// What a standing rule says about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleDecision {
    /// The rule's id, recorded with the call (`ApprovalBy::Rule`).
    pub rule_id: String,
    /// Allow without asking, or refuse.
    pub allow: bool,
    /// The rule in words, e.g. `deny rule "git push"`, told to the model when it refuses.
    pub description: String,
}

/// Standing rules the front end keeps (per workspace, in its store). Consulted for every call
/// before the approval gate asks: a deny rule refuses even a read-only call, an allow rule
/// lets a call that would ask run at once. The policy's hard deny list is never overridden.
pub trait RuleBook: Send + Sync {
    fn decide(&self, tool: &str, arguments: &Value) -> Option<RuleDecision>;

    /// The allow rule this call could become ("always allow in this workspace"), in words, or
    /// `None` when it cannot be one. Offered on the approval request; keeping it is the
    /// approver's business.
    fn offer(&self, _tool: &str, _arguments: &Value) -> Option<String> {
        None
    }
}

/// Allows everything (`--approve all`).
#[derive(Debug, Default)]
pub struct AllowAll;

#[async_trait]
impl Approver for AllowAll {
    async fn decide(&self, _request: &ApprovalRequest) -> Decision {
        Decision {
            reply: ApprovalReply::AllowOnce,
            by: ApprovalBy::Setting,
        }
    }
}

/// Denies everything that needs approval (`--approve deny`, and headless runs by default).
#[derive(Debug, Default)]
pub struct DenyAll;

#[async_trait]
impl Approver for DenyAll {
    async fn decide(&self, _request: &ApprovalRequest) -> Decision {
        Decision {
            reply: ApprovalReply::Deny {
                reason: Some(
                    "calls that need approval are turned off for this run; use read-only tools"
                        .to_string(),
                ),
            },
            by: ApprovalBy::Setting,
        }
    }
}
