//! One server's resource notices and subscriptions: what its connection's handler feeds and
//! the server keeps, apart from reading resources (`resources.rs`), so the server and its
//! resources do not need each other.

use std::collections::BTreeSet;
use std::sync::Mutex;

use serde::Serialize;
use tokio::sync::broadcast;

/// Notices kept for a slow listener before the oldest are dropped.
const NOTICES_KEPT: usize = 64;

/// Something a server said about its resources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResourceNotice {
    /// A resource we subscribed to changed (`notifications/resources/updated`).
    Updated { server: String, uri: String },
    /// The list of resources changed (`notifications/resources/list_changed`).
    ListChanged { server: String },
}

/// One server's resource notices and subscriptions, shared with its connection's handler.
pub(crate) struct ResourceHub {
    pub(crate) notices: broadcast::Sender<ResourceNotice>,
    pub(crate) subscribed: Mutex<BTreeSet<String>>,
}

impl Default for ResourceHub {
    fn default() -> Self {
        Self {
            notices: broadcast::channel(NOTICES_KEPT).0,
            subscribed: Mutex::new(BTreeSet::new()),
        }
    }
}

impl ResourceHub {
    /// Called by the handler when the server says a resource changed.
    pub(crate) fn updated(&self, server: &str, uri: String) {
        // Nobody listening is fine.
        let _ = self.notices.send(ResourceNotice::Updated {
            server: server.to_string(),
            uri,
        });
    }

    /// Called by the handler when the server says its resource list changed.
    pub(crate) fn list_changed(&self, server: &str) {
        let _ = self.notices.send(ResourceNotice::ListChanged {
            server: server.to_string(),
        });
    }
}
