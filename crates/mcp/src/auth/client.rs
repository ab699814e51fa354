//! The HTTP client under a Streamable HTTP session with a server that may ask for sign-in: the
//! SDK's [`AuthClient`] (the kept token on every request, refreshed when near expiry or
//! rejected), plus what to do when that is not enough. A 401 signs in (when the policy lets a
//! browser open) and sends the request again; a 403 `insufficient_scope` signs in again for the
//! granted scopes plus the challenged ones, at most [`MAX_STEP_UPS`] times for one request.
//! The SDK's client does neither: it refreshes a rejected token once and hands the challenge
//! back (why its own step-up helper is not used either is said where the scopes are chosen, in
//! `flow.rs`).

use std::future::Future;
use std::ops::ControlFlow;
use std::sync::Arc;

use futures::stream::BoxStream;
use rmcp::transport::auth::{AuthClient, AuthError};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::{Error as SseError, Sse};
use tokio::sync::RwLock;

use super::dpop::DpopHttp;
use super::{MAX_STEP_UPS, ServerAuth};
use crate::error::SignInError;
use crate::http_layer::{Get, Headers, HttpLayer, Layered, Post};

type HttpError = StreamableHttpError<reqwest::Error>;

/// See the module docs. Cheap to clone: the transport clones it for its streams.
#[derive(Clone)]
pub(crate) struct SignInClient {
    auth: Arc<ServerAuth>,
    /// The SDK client and the sign-in it was built after; rebuilt after each sign-in.
    inner: Arc<RwLock<(u64, AuthClient<Layered<DpopHttp>>)>>,
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

    async fn current(&self) -> (u64, AuthClient<Layered<DpopHttp>>) {
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
        F: Fn(AuthClient<Layered<DpopHttp>>) -> Fut,
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

/// A sign-in that did not happen, as the transport's error; the sentence is kept by
/// [`ServerAuth`] for the handshake and tool errors to use.
fn refused(err: SignInError) -> HttpError {
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(err.to_string()))
}

/// Each request goes to the SDK client, which puts the kept token on it (the transport's own
/// `auth_header` is not used), signing in as needed; ending a session never signs in.
impl HttpLayer for SignInClient {
    type Error = reqwest::Error;

    async fn post(&self, post: Post) -> Result<StreamableHttpPostResponse, HttpError> {
        let post = Post {
            auth_header: None,
            ..post
        };
        self.with_sign_in(|client| {
            let post = post.clone();
            async move { post.send(&client).await }
        })
        .await
    }

    async fn get(&self, get: Get) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let get = Get {
            auth_header: None,
            ..get
        };
        self.with_sign_in(|client| {
            let get = get.clone();
            async move { get.open(&client).await }
        })
        .await
    }

    async fn delete(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        headers: Headers,
    ) -> Result<(), HttpError> {
        // Ending a session never opens a browser: with no usable token it just fails.
        let (_, client) = self.current().await;
        client.delete_session(uri, session_id, None, headers).await
    }
}
