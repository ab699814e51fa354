//! MCP Apps: a tool's interactive view, and what the record keeps of it.
//!
//! An MCP server may give a tool a view (a `ui://` page of type `text/html;profile=mcp-app`)
//! that renders the tool's result. A call of such a tool says so ([`ViewLink`] on its started
//! and finished events). When the window shows the view, a **view turn** begins in the same
//! conversation: its `turn_id` is the view's id, its first event is [`crate::EventBody::ViewOpened`]
//! (which names the call that opened it), then come the calls the view makes, each approved
//! like the model's, and its last event is [`crate::EventBody::ViewClosed`]. A view turn adds
//! no message to the conversation the model sees.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The view a tool has: the `ui://` page its server renders the tool's results with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ViewLink {
    pub resource_uri: String,
}

/// Why a view was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ViewEnd {
    /// The user closed it, the card was folded or scrolled away, or the conversation changed.
    Closed,
    /// The view tried to load another page in its frame.
    Navigated,
    /// The view sent more messages or requests than a view may.
    Flooded,
    /// The view did not start (no `ui/initialize`) in time, or stopped answering.
    Unresponsive,
    /// Its MCP server stopped or could not give the page.
    ServerGone,
    /// The app closed while the view was open (or a crash ended it).
    AppClosed,
}

impl ViewEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::Navigated => "navigated",
            Self::Flooded => "flooded",
            Self::Unresponsive => "unresponsive",
            Self::ServerGone => "server_gone",
            Self::AppClosed => "app_closed",
        }
    }

    /// Whether the view ended as it should (the user, or the app, closed it).
    pub fn is_orderly(self) -> bool {
        matches!(self, Self::Closed | Self::AppClosed)
    }
}
