//! Approval requests waiting for the user's answer on the window's approval card.
//!
//! The agent emits `approval_requested` itself, then asks the [`WindowApprover`], which parks a
//! one-shot channel under the call id until `answer_approval` fills it. Nothing answers on a
//! timer: a request waits until the user decides or the turn is cancelled (the agent then drops
//! the wait, and the guard below forgets the request).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use tauri::{AppHandle, Manager};
use tokio::sync::oneshot;
use tooltrail_host::WorkspaceRules;
use tooltrail_host::{ApprovalRequest, Approver, Decision};
use tooltrail_protocol::{ApprovalBy, ApprovalReply, sentence};

use crate::error::{CommandError, CommandResult};

/// A request waiting for its answer, and the rule "always allow in this folder" would keep.
struct Waiting {
    answer: oneshot::Sender<Decision>,
    offer: Option<Offer>,
}

/// Where an offered rule is kept, and the call it is made of.
pub struct Offer {
    pub rules: Arc<WorkspaceRules>,
    pub tool: String,
    pub arguments: Value,
}

#[derive(Default)]
pub struct PendingApprovals {
    waiting: Mutex<HashMap<String, Waiting>>,
}

impl PendingApprovals {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        match self.waiting.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn park(&self, call_id: &str, offer: Option<Offer>) -> oneshot::Receiver<Decision> {
        let (answer, rx) = oneshot::channel();
        self.lock()
            .insert(call_id.to_string(), Waiting { answer, offer });
        rx
    }

    fn forget(&self, call_id: &str) {
        self.lock().remove(call_id);
    }

    /// Delivers the user's answer to the call waiting for it. "Always allow in this folder"
    /// keeps its rule first; if that fails the request keeps waiting and the card says why.
    pub fn answer(&self, call_id: &str, reply: ApprovalReply) -> CommandResult<()> {
        let not_waiting = || {
            CommandError::new(
                "not_waiting",
                "That call is no longer waiting for an answer.",
            )
        };
        let mut waiting = self.lock();
        let request = waiting.get(call_id).ok_or_else(not_waiting)?;
        let decision = match reply {
            ApprovalReply::AllowInWorkspace => {
                let offer = request.offer.as_ref().ok_or_else(|| {
                    CommandError::new(
                        "no_rule",
                        "This call cannot be kept as a rule; allow it once or for this conversation.",
                    )
                })?;
                offer
                    .rules
                    .keep(&offer.tool, &offer.arguments)
                    .map_err(|reason| CommandError::new("rule", sentence(&reason)))?
            }
            reply => Decision {
                reply,
                by: ApprovalBy::User,
            },
        };
        let request = waiting.remove(call_id).ok_or_else(not_waiting)?;
        request.answer.send(decision).map_err(|_| not_waiting())
    }

    /// Waits for the answer to `call_id`. A request nobody can answer any more is denied.
    pub async fn wait(&self, call_id: &str, offer: Option<Offer>) -> Decision {
        let receiver = self.park(call_id, offer);
        let _forget = Forget {
            pending: self,
            call_id,
        };
        receiver.await.unwrap_or(Decision {
            reply: ApprovalReply::Deny {
                reason: Some("the approval request was dropped".to_string()),
            },
            by: ApprovalBy::User,
        })
    }
}

/// Forgets a request when its wait ends, including when the turn is cancelled mid-wait.
struct Forget<'a> {
    pending: &'a PendingApprovals,
    call_id: &'a str,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.pending.forget(self.call_id);
    }
}

/// Asks the user through the window's approval card, with an OS notification when the window
/// is in the background.
pub struct WindowApprover {
    pub app: AppHandle,
    /// The folder's standing rules, where "always allow in this folder" keeps its rule.
    pub rules: Arc<WorkspaceRules>,
}

#[async_trait]
impl Approver for WindowApprover {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        crate::notify::when_in_background(
            &self.app,
            "Tooltrail: approval needed",
            &format!("{}: {}", request.tool, request.summary),
        );
        let offer = request.rule.as_ref().map(|_| Offer {
            rules: Arc::clone(&self.rules),
            tool: request.tool.clone(),
            arguments: request.arguments.clone(),
        });
        self.app
            .state::<PendingApprovals>()
            .wait(&request.call_id, offer)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tooltrail_host::RuleBook;

    async fn parked(
        pending: &Arc<PendingApprovals>,
        call_id: &'static str,
        offer: Option<Offer>,
    ) -> tokio::task::JoinHandle<Decision> {
        let waiter = {
            let pending = pending.clone();
            tokio::spawn(async move { pending.wait(call_id, offer).await })
        };
        // Let the waiter park its request.
        while !pending.lock().contains_key(call_id) {
            tokio::task::yield_now().await;
        }
        waiter
    }

    #[tokio::test]
    async fn an_answer_reaches_the_waiting_call_once() {
        let pending = Arc::new(PendingApprovals::default());
        let waiter = parked(&pending, "call_1", None).await;
        pending
            .answer("call_1", ApprovalReply::AllowOnce)
            .expect("answered");
        let decision = waiter.await.expect("joined");
        assert_eq!(decision.reply, ApprovalReply::AllowOnce);
        assert_eq!(decision.by, ApprovalBy::User);
        let again = pending.answer("call_1", ApprovalReply::AllowOnce);
        assert_eq!(again.map_err(|e| e.code), Err("not_waiting"));
    }

    #[tokio::test]
    async fn always_allow_keeps_the_rule_and_records_the_call_as_allowed_by_it() {
        let store = Arc::new(tooltrail_store::Store::open_in_memory().unwrap());
        let rules = Arc::new(WorkspaceRules::load(store, "/ws"));
        let pending = Arc::new(PendingApprovals::default());

        // A call that offers no rule cannot be answered with one; it keeps waiting.
        let waiter = parked(&pending, "call_a", None).await;
        let refused = pending.answer("call_a", ApprovalReply::AllowInWorkspace);
        assert_eq!(refused.map_err(|e| e.code), Err("no_rule"));
        pending
            .answer("call_a", ApprovalReply::AllowOnce)
            .expect("still waiting");
        waiter.await.expect("joined");

        let offer = Offer {
            rules: rules.clone(),
            tool: "execute_bash".to_string(),
            arguments: json!({ "command": "cargo fmt --check" }),
        };
        let waiter = parked(&pending, "call_b", Some(offer)).await;
        pending
            .answer("call_b", ApprovalReply::AllowInWorkspace)
            .expect("answered");
        let decision = waiter.await.expect("joined");
        let ApprovalBy::Rule { id } = decision.by else {
            panic!("not allowed by the rule: {decision:?}")
        };
        let next = rules
            .decide("execute_bash", &json!({ "command": "cargo fmt --check" }))
            .expect("the rule decides the same command next time");
        assert!(next.allow);
        assert_eq!(next.rule_id, id);
    }

    #[tokio::test]
    async fn a_dropped_wait_forgets_its_request() {
        let pending = PendingApprovals::default();
        {
            let wait = pending.wait("call_2", None);
            let _ = tokio::time::timeout(std::time::Duration::from_millis(10), wait).await;
        }
        assert!(pending.lock().is_empty());
    }
}
