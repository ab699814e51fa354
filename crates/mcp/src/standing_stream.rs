//! The session's standing stream: the GET a Streamable HTTP client opens once the handshake
//! has given it a session, on which the server sends what answers no request of ours (its own
//! requests, such as an elicitation made outside a tool call's stream, and its notifications).
//!
//! The SDK opens that stream in a task of its own and sends our next request at once. A server
//! that sends one of its own requests while the GET has not reached it yet finds no stream to
//! send it on and drops it (the TypeScript SDK's server does, without a word): the request it
//! waits on never reaches us, our tool call waits out its timeout, and the server sees the
//! session closed under its unanswered request. So a session is ready only when its standing
//! stream has been answered (opened, or refused by a server that has none): [`StandingStream`]
//! wraps the HTTP client to notice that, and the connection waits for it, for at most
//! [`STANDING_STREAM_WAIT`], before it sends anything else.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use tokio::sync::watch;

use crate::http_layer::{Get, Headers, HttpLayer, Layered, Post, Posted, Streamed};

/// How long a new session waits for its standing stream to be answered. A server that takes
/// longer is used all the same; it only risks what happened before this wait existed.
pub(crate) const STANDING_STREAM_WAIT: Duration = Duration::from_secs(3);

/// Whether the session still has a standing stream to wait for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Standing {
    /// Nothing known yet.
    Unknown,
    /// The stream was answered, or the handshake gave no session (so none is opened).
    Settled,
}

/// The sending side, shared by the client and its clones (the transport clones it per stream).
#[derive(Clone)]
pub(crate) struct StandingStream<C> {
    inner: C,
    state: Arc<watch::Sender<Standing>>,
}

/// The waiting side, kept by the connection.
pub(crate) struct StandingStreamReady(watch::Receiver<Standing>);

impl<C> StandingStream<C> {
    /// `inner` with the standing stream noticed, as the SDK's client, and the wait for it.
    pub(crate) fn new(inner: C) -> (Layered<Self>, StandingStreamReady) {
        let (state, ready) = watch::channel(Standing::Unknown);
        let client = Self {
            inner,
            state: Arc::new(state),
        };
        (Layered(client), StandingStreamReady(ready))
    }

    fn settle(&self) {
        self.state.send_replace(Standing::Settled);
    }

    /// After a POST: an `initialize` answered without a session means no stream will follow.
    fn after_post<E: std::error::Error + Send + Sync + 'static>(
        &self,
        message_was_initialize: bool,
        response: &Posted<E>,
    ) {
        if !message_was_initialize {
            return;
        }
        let session = match response {
            Ok(StreamableHttpPostResponse::Json(_, session))
            | Ok(StreamableHttpPostResponse::Sse(_, session)) => session.is_some(),
            // A refused handshake is told by the handshake; nothing to wait for here.
            Ok(_) | Err(_) => false,
        };
        if !session {
            self.settle();
        }
    }
}

impl StandingStreamReady {
    /// Waits until the standing stream was answered, for at most `within`.
    pub(crate) async fn wait(mut self, within: Duration) {
        let settled = self.0.wait_for(|state| *state == Standing::Settled);
        // A closed channel (the client is gone) or the time up: go on either way.
        let _ = tokio::time::timeout(within, settled).await;
    }
}

fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Request(request)
            if matches!(request.request, ClientRequest::InitializeRequest(_))
    )
}

/// Every request goes to the wrapped client unchanged; the standing stream's answer and an
/// `initialize` without a session are noticed on the way back.
impl<C: StreamableHttpClient + Sync> HttpLayer for StandingStream<C> {
    type Error = C::Error;

    async fn post(&self, post: Post) -> Posted<C::Error> {
        let initialize = is_initialize(&post.message);
        let response = post.send(&self.inner).await;
        self.after_post(initialize, &response);
        response
    }

    async fn get(&self, get: Get) -> Streamed<C::Error> {
        let stream = get.open(&self.inner).await;
        self.settle();
        stream
    }

    async fn delete(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Result<(), StreamableHttpError<C::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, headers)
            .await
    }
}
