//! The W3C `traceparent` each request to the model carries, so that a model server that
//! traces (vLLM, a gateway, a proxy) files its work under the question's trace; and the one each
//! tool call carries to an MCP server (in `_meta`, SEP-414), so the server's work lands under
//! the call's span.
//!
//! The client knows nothing of telemetry: whoever runs a turn may put it inside
//! [`with_trace`] with a [`TraceSlot`] it keeps up to date (the host's telemetry sink sets it
//! to the span of each model request as it begins, and of each tool call as it starts), and
//! every request sent from within carries the slot's header. Outside such a scope, requests
//! carry none.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

tokio::task_local! {
    static CURRENT: TraceSlot;
}

#[derive(Debug, Default)]
struct Spans {
    /// The model request being made.
    request: Option<String>,
    /// The tool calls running, by call id.
    calls: HashMap<String, String>,
}

/// The `traceparent` values requests made now should carry; shared between the one who sets
/// them and the requests that read them.
#[derive(Debug, Clone, Default)]
pub struct TraceSlot(Arc<Mutex<Spans>>);

impl TraceSlot {
    pub fn new() -> Self {
        Self::default()
    }

    fn spans(&self) -> MutexGuard<'_, Spans> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set(&self, traceparent: Option<String>) {
        self.spans().request = traceparent;
    }

    pub fn get(&self) -> Option<String> {
        self.spans().request.clone()
    }

    /// Sets (or with `None` forgets) the `traceparent` of tool call `call_id`.
    pub fn set_call(&self, call_id: &str, traceparent: Option<String>) {
        let mut spans = self.spans();
        match traceparent {
            Some(traceparent) => spans.calls.insert(call_id.to_string(), traceparent),
            None => spans.calls.remove(call_id),
        };
    }

    /// Forgets every call's `traceparent` (the turn is over).
    pub fn clear_calls(&self) {
        self.spans().calls.clear();
    }

    fn call(&self, call_id: &str) -> Option<String> {
        self.spans().calls.get(call_id).cloned()
    }
}

/// Runs `future` with requests to the model carrying `slot`'s `traceparent`. The scope is the
/// task's: calls made from within (MCP tools run in the same task) may read it too.
pub async fn with_trace<F: Future>(slot: TraceSlot, future: F) -> F::Output {
    CURRENT.scope(slot, future).await
}

/// The `traceparent` of the scope this is called in, if any.
pub fn current_traceparent() -> Option<String> {
    CURRENT.try_with(TraceSlot::get).ok().flatten()
}

/// The `traceparent` of tool call `call_id` in the scope this is called in, if any.
pub fn call_traceparent(call_id: &str) -> Option<String> {
    CURRENT.try_with(|slot| slot.call(call_id)).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn the_header_is_the_slots_inside_the_scope_only() {
        let slot = TraceSlot::new();
        assert_eq!(current_traceparent(), None);
        let seen = with_trace(slot.clone(), async {
            let before = current_traceparent();
            slot.set(Some(
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into(),
            ));
            (before, current_traceparent())
        })
        .await;
        assert_eq!(
            seen,
            (
                None,
                Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into())
            )
        );
        assert_eq!(current_traceparent(), None);
    }

    #[tokio::test]
    async fn each_call_has_its_own_header_until_it_is_forgotten() {
        let slot = TraceSlot::new();
        let a = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
        slot.set_call("call_a", Some(a.into()));
        slot.set_call(
            "call_b",
            Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into()),
        );
        let seen = with_trace(slot.clone(), async {
            slot.set_call("call_b", None);
            (
                call_traceparent("call_a"),
                call_traceparent("call_b"),
                current_traceparent(),
            )
        })
        .await;
        assert_eq!(seen, (Some(a.into()), None, None));
        assert_eq!(call_traceparent("call_a"), None);
        slot.clear_calls();
        assert_eq!(slot.call("call_a"), None);
    }
}
