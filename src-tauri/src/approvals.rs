//! Approval requests waiting for the user's answer on the window's approval card.
//!
//! The agent emits `approval_requested` itself, then asks the [`WindowApprover`], which parks a
//! one-shot channel under the call id until `answer_approval` fills it. Nothing answers on a
//! timer: a request waits until the user decides or the turn is cancelled (the agent then drops
//! the wait, and the guard below forgets the request).

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use tauri::{AppHandle, Manager};
use tauri_plugin_notification::NotificationExt;
use tokio::sync::oneshot;
use tooltrail_agent::{ApprovalRequest, Approver, Decision};
use tooltrail_protocol::{ApprovalBy, ApprovalReply};

use crate::error::{CommandError, CommandResult};

#[derive(Default)]
pub struct PendingApprovals {
    waiting: Mutex<HashMap<String, oneshot::Sender<ApprovalReply>>>,
}

impl PendingApprovals {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<ApprovalReply>>> {
        match self.waiting.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    fn park(&self, call_id: &str) -> oneshot::Receiver<ApprovalReply> {
        let (tx, rx) = oneshot::channel();
        self.lock().insert(call_id.to_string(), tx);
        rx
    }

    fn forget(&self, call_id: &str) {
        self.lock().remove(call_id);
    }

    /// Delivers the user's answer to the call waiting for it.
    pub fn answer(&self, call_id: &str, reply: ApprovalReply) -> CommandResult<()> {
        let sender = self.lock().remove(call_id).ok_or_else(|| {
            CommandError::new(
                "not_waiting",
                "That call is no longer waiting for an answer.",
            )
        })?;
        sender.send(reply).map_err(|_| {
            CommandError::new(
                "not_waiting",
                "That call is no longer waiting for an answer.",
            )
        })
    }

    /// Waits for the answer to `call_id`. A request nobody can answer any more is denied.
    pub async fn wait(&self, call_id: &str) -> ApprovalReply {
        let receiver = self.park(call_id);
        let _forget = Forget {
            pending: self,
            call_id,
        };
        receiver.await.unwrap_or(ApprovalReply::Deny {
            reason: Some("the approval request was dropped".to_string()),
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
}

#[async_trait]
impl Approver for WindowApprover {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        notify_if_unfocused(&self.app, request);
        let reply = self
            .app
            .state::<PendingApprovals>()
            .wait(&request.call_id)
            .await;
        Decision {
            reply,
            by: ApprovalBy::User,
        }
    }
}

fn notify_if_unfocused(app: &AppHandle, request: &ApprovalRequest) {
    let focused = app
        .get_webview_window("main")
        .and_then(|window| window.is_focused().ok())
        .unwrap_or(true);
    if focused {
        return;
    }
    // Without a notification daemon (a bare X server, say) this fails; the card is still there.
    let _ = app
        .notification()
        .builder()
        .title("Tooltrail: approval needed")
        .body(format!("{}: {}", request.tool, request.summary))
        .show();
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn an_answer_reaches_the_waiting_call_once() {
        let pending = std::sync::Arc::new(PendingApprovals::default());
        let waiter = {
            let pending = pending.clone();
            tokio::spawn(async move { pending.wait("call_1").await })
        };
        // Let the waiter park its request.
        while pending.lock().is_empty() {
            tokio::task::yield_now().await;
        }
        pending
            .answer("call_1", ApprovalReply::AllowOnce)
            .expect("answered");
        assert_eq!(waiter.await.expect("joined"), ApprovalReply::AllowOnce);
        let again = pending.answer("call_1", ApprovalReply::AllowOnce);
        assert_eq!(again.map_err(|e| e.code), Err("not_waiting"));
    }

    #[tokio::test]
    async fn a_dropped_wait_forgets_its_request() {
        let pending = PendingApprovals::default();
        {
            let wait = pending.wait("call_2");
            let _ = tokio::time::timeout(std::time::Duration::from_millis(10), wait).await;
        }
        assert!(pending.lock().is_empty());
    }
}
