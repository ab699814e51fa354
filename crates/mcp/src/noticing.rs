//! A server's `notifications/tools/list_changed`, counted as it comes off the wire; and every
//! message it sends scrubbed of its own secrets there, before anything reads it.
//!
//! A server that adds a tool while a call runs says so before it answers the call. rmcp hands
//! every notification to a task of its own, so its handler can run after the answer behind it
//! has already reached the caller, and the next request to the model would go out with the old
//! tool list. Counting the notice here, as the transport gives messages up in the order they
//! arrived, means that whoever got a call's answer has also seen every notice sent before it,
//! and waits for the list to be read again (`McpServer::tools_pending`).

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::handler::Shared;

/// `inner`, with the tool-list notices it receives counted in `shared.tool_notices`.
pub(crate) struct Noticing<T> {
    inner: T,
    shared: Arc<Shared>,
}

impl<T> Noticing<T> {
    pub(crate) fn new(inner: T, shared: Arc<Shared>) -> Self {
        Self { inner, shared }
    }
}

/// Whether `message` says the server's tool list changed.
fn says_tools_changed(message: &RxJsonRpcMessage<RoleClient>) -> bool {
    matches!(
        message,
        JsonRpcMessage::Notification(notification)
            if matches!(notification.notification, ServerNotification::ToolListChangedNotification(_))
    )
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Noticing<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            if says_tools_changed(&message) {
                self.shared.tool_notices.fetch_add(1, Ordering::SeqCst);
            }
            // Every message of every transport comes through here, so this is where the
            // server's own secrets are taken out of all it says (see `redact.rs`).
            match self.shared.redactor.redact_message(message) {
                Some(message) => return Some(message),
                None => self.shared.log.push(
                    "Tooltrail dropped a message of this server that held one of its secrets \
                     and could not be read once they were masked",
                ),
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_tool_list_notice_counts() {
        let notice: RxJsonRpcMessage<RoleClient> = serde_json::from_value(serde_json::json!(
            {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        ))
        .unwrap();
        let other: RxJsonRpcMessage<RoleClient> = serde_json::from_value(serde_json::json!(
            {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}
        ))
        .unwrap();
        let answer: RxJsonRpcMessage<RoleClient> = serde_json::from_value(serde_json::json!(
            {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
        ))
        .unwrap();
        assert!(says_tools_changed(&notice));
        assert!(!says_tools_changed(&other));
        assert!(!says_tools_changed(&answer));
    }
}
