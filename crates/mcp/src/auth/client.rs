//! The HTTP client under a Streamable HTTP session with a server that may ask for sign-in: the
//! SDK's [`AuthClient`] (the kept token on every request, refreshed when near expiry or
//! rejected), plus what to do when that is not enough. A 401 signs in (when the policy lets a
//! browser open) and sends the request again; a 403 `insufficient_scope` signs in again for the
//! granted scopes plus the challenged ones, at most [`MAX_STEP_UPS`] times for one request.
//! The SDK's client does neither: it refreshes a rejected token once and hands the challenge
//! back (why its own step-up helper is not used either is said where the scopes are chosen, in
//! `flow.rs`).

use std::collections::HashMap;
use std::future::Future;
use std::ops::ControlFlow;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, AuthError};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse};
use tokio::sync::RwLock;

use super::dpop::DpopHttp;
use super::{MAX_STEP_UPS, ServerAuth};
use crate::error::SignInError;

type HttpError = StreamableHttpError<reqwest::Error>;

/// See the module docs. Cheap to clone: the transport clones it for its streams.
#[derive(Clone)]
pub(crate) struct SignInClient {
    auth: Arc<ServerAuth>,
    /// The SDK client and the sign-in it was built after; rebuilt after each sign-in.
    inner: Arc<RwLock<(u64, AuthClient<DpopHttp>)>>,
}

impl SignInClient {
    pub async fn new(auth: Arc<ServerAuth>) -> Result<Self, SignInError> {
        let generation = auth.generation().await;
        let client = auth.http_client().await?;
        Ok(Self {
            auth,
            inner: Arc::new(RwLock::new((generation, client))),
        })
    }

    async fn current(&self) -> (u64, AuthClient<DpopHttp>) {
        self.inner.read().await.clone()
    }

    /// Brings the client up to the sign-in `generation`.
    async fn rebuild(&self, generation: u64) -> Result<(), HttpError> {
        let mut inner = self.inner.write().await;
        if inner.0 != generation {
            let client = self.auth.http_client().await.map_err(refused)?;
            *inner = (generation, client);
        }
        Ok(())
    }

    async fn with_sign_in<T, F, Fut>(&self, call: F) -> Result<T, HttpError>
    where
        F: Fn(AuthClient<DpopHttp>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let mut attempts = Attempts::default();
        loop {
            let (generation, client) = self.current().await;
            let (www_authenticate, step_up_scopes) =
                match attempts.next(&self.auth, call(client).await) {
                    ControlFlow::Continue(sign_in) => sign_in,
                    ControlFlow::Break(result) => return result,
                };
            let generation = self
                .auth
                .sign_in_after_refusal(generation, Some(&www_authenticate), &step_up_scopes)
                .await
                .map_err(refused)?;
            self.rebuild(generation).await?;
        }
    }

    /// A post through the SDK client's method for `limits`, signing in as needed.
    async fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        headers: HashMap<HeaderName, HeaderValue>,
        limits: PostLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.with_sign_in(|client| {
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                headers.clone(),
            );
            async move {
                match limits {
                    PostLimits::None => {
                        client
                            .post_message(uri, message, session_id, None, headers)
                            .await
                    }
                    PostLimits::MaxSseEvent(size) => {
                        client
                            .post_message_with_max_sse_event_size(
                                uri, message, session_id, None, headers, size,
                            )
                            .await
                    }
                    PostLimits::Response(limits) => {
                        client
                            .post_message_with_response_limits(
                                uri, message, session_id, None, headers, limits,
                            )
                            .await
                    }
                }
            }
        })
        .await
    }

    /// A stream through the SDK client's method for `max_sse_event_size`, signing in as needed.
    async fn stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: Option<usize>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.with_sign_in(|client| {
            let (uri, session_id, last_event_id, headers) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                headers.clone(),
            );
            async move {
                match max_sse_event_size {
                    None => {
                        client
                            .get_stream(uri, session_id, last_event_id, None, headers)
                            .await
                    }
                    Some(size) => {
                        client
                            .get_stream_with_max_sse_event_size(
                                uri,
                                session_id,
                                last_event_id,
                                None,
                                headers,
                                size,
                            )
                            .await
                    }
                }
            }
        })
        .await
    }
}

/// What one request has been through: whether it signed in after a 401, and how many step-ups
/// it made after a 403 `insufficient_scope`.
#[derive(Default)]
struct Attempts {
    signed_in: bool,
    step_ups: u32,
}

impl Attempts {
    /// What comes after `result`: a sign-in (the server's challenge and the scopes to add to
    /// those granted), or `result` itself, which is the request's answer.
    fn next<T>(
        &mut self,
        auth: &ServerAuth,
        result: Result<T, HttpError>,
    ) -> ControlFlow<Result<T, HttpError>, (String, Vec<String>)> {
        match result {
            Err(StreamableHttpError::AuthRequired(required)) if !self.signed_in => {
                self.signed_in = true;
                ControlFlow::Continue((required.www_authenticate_header, Vec::new()))
            }
            Err(StreamableHttpError::InsufficientScope(insufficient))
                if self.step_ups < MAX_STEP_UPS =>
            {
                self.step_ups += 1;
                let scopes = insufficient
                    .required_scope
                    .as_deref()
                    .map(|scope| scope.split_whitespace().map(str::to_string).collect())
                    .unwrap_or_default();
                ControlFlow::Continue((insufficient.www_authenticate_header, scopes))
            }
            Err(StreamableHttpError::AuthRequired(required)) => {
                // Signed in just now and still refused: say so instead of asking again.
                let _ = auth.failed("the server refused the token it had just given out".into());
                ControlFlow::Break(Err(StreamableHttpError::AuthRequired(required)))
            }
            Err(StreamableHttpError::InsufficientScope(insufficient)) => {
                let _ = auth.failed(format!(
                    "the server still asks for more access ({}) after {MAX_STEP_UPS} sign-ins",
                    insufficient
                        .required_scope
                        .as_deref()
                        .unwrap_or("no scope named")
                ));
                ControlFlow::Break(Err(StreamableHttpError::InsufficientScope(insufficient)))
            }
            result => ControlFlow::Break(result),
        }
    }
}

/// Which of the SDK client's post methods a request goes through: each enforces the transport's
/// limits its own way, so the one the transport called on us is the one called in turn.
#[derive(Clone, Copy)]
enum PostLimits {
    None,
    MaxSseEvent(usize),
    Response(StreamableHttpResponseLimits),
}

/// A sign-in that did not happen, as the transport's error; the sentence is kept by
/// [`ServerAuth`] for the handshake and tool errors to use.
fn refused(err: SignInError) -> HttpError {
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(err.to_string()))
}

/// Each method goes to the SDK client, which puts the kept token on the request (the
/// transport's own `auth_header` is not used), and all but ending a session sign in as needed.
impl StreamableHttpClient for SignInClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let limits = PostLimits::None;
        self.post(uri, message, session_id, custom_headers, limits)
            .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let limits = PostLimits::MaxSseEvent(max_sse_event_size);
        self.post(uri, message, session_id, custom_headers, limits)
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let limits = PostLimits::Response(limits);
        self.post(uri, message, session_id, custom_headers, limits)
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        // Ending a session never opens a browser: with no usable token it just fails.
        let (_, client) = self.current().await;
        client
            .delete_session(uri, session_id, None, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.stream(uri, session_id, last_event_id, custom_headers, None)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let max = Some(max_sse_event_size);
        self.stream(uri, session_id, last_event_id, custom_headers, max)
            .await
    }
}
