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
