//! A turn running for one request, as the request sees it: the updates it waits for and the
//! guard that cancels the turn when the request goes away. Shared by the whole answer
//! (chat.rs) and the streamed one (stream.rs), so that neither depends on the other.

use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::DropGuard;
use tooltrail_host::TurnOutcome;
use tooltrail_protocol::Event;

use crate::state::RequestTimer;

/// What the turn task sends the request: each event as it is recorded, then the outcome.
pub enum Update {
    Event(Box<Event>),
    Done(TurnOutcome),
}

/// A turn running for a request.
pub struct Running {
    pub updates: UnboundedReceiver<Update>,
    /// Cancels the turn when the request is dropped.
    pub guard: DropGuard,
    pub id: String,
    pub created: u64,
    pub session_id: Option<String>,
    pub conversation_id: String,
    /// Taken when the request is recorded in the metrics.
    pub timer: Option<RequestTimer>,
}
