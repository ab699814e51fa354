//! One server's resource notices and subscriptions: what its connection's handler feeds and
//! the server keeps, apart from reading resources (`resources.rs`), so the server and its
//! resources do not need each other.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};

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
    /// The MCP App views read so far, by `ui://` address: kept until the server says the page
    /// or its resources changed, or its process is started again.
    views: Mutex<HashMap<String, crate::apps::ViewResource>>,
}

impl Default for ResourceHub {
    fn default() -> Self {
        Self {
            notices: broadcast::channel(NOTICES_KEPT).0,
            subscribed: Mutex::new(BTreeSet::new()),
            views: Mutex::default(),
        }
    }
}

impl ResourceHub {
    /// Called by the handler when the server says a resource changed.
    pub(crate) fn updated(&self, server: &str, uri: String) {
        self.views().remove(&uri);
        // Nobody listening is fine.
        let _ = self.notices.send(ResourceNotice::Updated {
            server: server.to_string(),
            uri,
        });
    }

    /// Called by the handler when the server says its resource list changed.
    pub(crate) fn list_changed(&self, server: &str) {
        self.forget_views();
        let _ = self.notices.send(ResourceNotice::ListChanged {
            server: server.to_string(),
        });
    }

    fn views(&self) -> std::sync::MutexGuard<'_, HashMap<String, crate::apps::ViewResource>> {
        self.views.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The view at `uri` as read before, if it still holds.
    pub(crate) fn view(&self, uri: &str) -> Option<crate::apps::ViewResource> {
        self.views().get(uri).cloned()
    }

    pub(crate) fn keep_view(&self, view: &crate::apps::ViewResource) {
        self.views().insert(view.uri.clone(), view.clone());
    }

    /// Forgets every view read so far (a new process may serve other pages).
    pub(crate) fn forget_views(&self) {
        self.views().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(uri: &str) -> crate::apps::ViewResource {
        crate::apps::ViewResource {
            uri: uri.to_string(),
            html: "<p>hi</p>".to_string(),
            csp: None,
            permissions: None,
            prefers_border: None,
        }
    }

    #[test]
    fn a_view_read_before_holds_until_the_server_says_it_changed() {
        let hub = ResourceHub::default();
        hub.keep_view(&page("ui://a/one.html"));
        hub.keep_view(&page("ui://a/two.html"));
        assert_eq!(hub.view("ui://a/one.html"), Some(page("ui://a/one.html")));
        hub.updated("srv", "ui://a/one.html".to_string());
        assert_eq!(hub.view("ui://a/one.html"), None);
        assert!(
            hub.view("ui://a/two.html").is_some(),
            "only that page changed"
        );
        hub.list_changed("srv");
        assert_eq!(hub.view("ui://a/two.html"), None);
        hub.keep_view(&page("ui://a/two.html"));
        hub.forget_views();
        assert_eq!(
            hub.view("ui://a/two.html"),
            None,
            "a new process forgets them all"
        );
    }
}
