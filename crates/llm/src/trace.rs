//! The W3C `traceparent` each request to the model carries, so that a model server that
//! traces (vLLM, a gateway, a proxy) files its work under the question's trace.
//!
//! The client knows nothing of telemetry: whoever runs a turn may put it inside
//! [`with_trace`] with a [`TraceSlot`] it keeps up to date (the host's telemetry sink sets it
//! to the span of each model request as it begins), and every request sent from within
//! carries the slot's header. Outside such a scope, requests carry none.

use std::future::Future;
use std::sync::{Arc, Mutex};

tokio::task_local! {
    static CURRENT: TraceSlot;
}

/// The `traceparent` value requests made now should carry; shared between the one who sets it
/// and the requests that read it.
#[derive(Debug, Clone, Default)]
pub struct TraceSlot(Arc<Mutex<Option<String>>>);

impl TraceSlot {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(&self, traceparent: Option<String>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = traceparent;
    }

    pub fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
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
}
