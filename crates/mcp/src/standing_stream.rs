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

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse};
use tokio::sync::watch;

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
    pub(crate) fn new(inner: C) -> (Self, StandingStreamReady) {
        let (state, ready) = watch::channel(Standing::Unknown);
        let client = Self {
            inner,
            state: Arc::new(state),
        };
        (client, StandingStreamReady(ready))
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

type Posted<E> = Result<StreamableHttpPostResponse, StreamableHttpError<E>>;
type Streamed<E> = Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<E>>;

/// Every method goes to the wrapped client unchanged; the standing stream's answer and an
/// `initialize` without a session are noticed on the way back.
impl<C: StreamableHttpClient + Sync> StreamableHttpClient for StandingStream<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Posted<C::Error> {
        let initialize = is_initialize(&message);
        let response = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.after_post(initialize, &response);
        response
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Posted<C::Error> {
        let initialize = is_initialize(&message);
        let response = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.after_post(initialize, &response);
        response
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Posted<C::Error> {
        let initialize = is_initialize(&message);
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.after_post(initialize, &response);
        response
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<C::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Streamed<C::Error> {
        let stream = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.settle();
        stream
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Streamed<C::Error> {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.settle();
        stream
    }
}
