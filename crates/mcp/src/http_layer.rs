//! One shape for the HTTP clients Tooltrail puts under a Streamable HTTP session, each a layer
//! over the next: DPoP proofs on each request (`auth/dpop.rs`), signing in when a server asks
//! (`auth/client.rs`), and waiting for the session's standing stream (`standing_stream.rs`).
//!
//! The SDK's client trait has six methods: three ways to post (each with its own size limits),
//! two to open a stream, one to end a session. A layer has three, [`HttpLayer`]: a post and a
//! stream come as one request ([`Post`], [`Get`]) that keeps which of the SDK's methods it came
//! through, and [`Post::send`] / [`Get::open`] hand it to the next client through the same one.
//! [`Layered`] makes a layer the SDK's client.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse};

pub(crate) type Headers = HashMap<HeaderName, HeaderValue>;
pub(crate) type Posted<E> = Result<StreamableHttpPostResponse, StreamableHttpError<E>>;
pub(crate) type Streamed<E> =
    Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<E>>;

/// Which of the SDK's post methods a post came through (each keeps its own limits).
#[derive(Clone, Copy)]
pub(crate) enum PostLimits {
    None,
    MaxSseEvent(usize),
    Response(StreamableHttpResponseLimits),
}

/// One post, as the SDK asked for it.
#[derive(Clone)]
pub(crate) struct Post {
    pub uri: Arc<str>,
    pub message: ClientJsonRpcMessage,
    pub session_id: Option<Arc<str>>,
    pub auth_header: Option<String>,
    pub headers: Headers,
    pub limits: PostLimits,
}

impl Post {
    /// Sends the post through `client`'s method for its limits.
    pub async fn send<C: StreamableHttpClient>(self, client: &C) -> Posted<C::Error> {
        let Self {
            uri,
            message,
            session_id,
            auth_header,
            headers,
            limits,
        } = self;
        match limits {
            PostLimits::None => {
                client
                    .post_message(uri, message, session_id, auth_header, headers)
                    .await
            }
            PostLimits::MaxSseEvent(size) => {
                client
                    .post_message_with_max_sse_event_size(
                        uri,
                        message,
                        session_id,
                        auth_header,
                        headers,
                        size,
                    )
                    .await
            }
            PostLimits::Response(limits) => {
                client
                    .post_message_with_response_limits(
                        uri,
                        message,
                        session_id,
                        auth_header,
                        headers,
                        limits,
                    )
                    .await
            }
        }
    }
}

/// One stream opened, as the SDK asked for it.
#[derive(Clone)]
pub(crate) struct Get {
    pub uri: Arc<str>,
    pub session_id: Option<Arc<str>>,
    pub last_event_id: Option<String>,
    pub auth_header: Option<String>,
    pub headers: Headers,
    pub max_sse_event_size: Option<usize>,
}

impl Get {
    /// Opens the stream through `client`'s method for its limit.
    pub async fn open<C: StreamableHttpClient>(self, client: &C) -> Streamed<C::Error> {
        let Self {
            uri,
            session_id,
            last_event_id,
            auth_header,
            headers,
            max_sse_event_size,
        } = self;
        match max_sse_event_size {
            None => {
                client
                    .get_stream(uri, session_id, last_event_id, auth_header, headers)
                    .await
            }
            Some(size) => {
                client
                    .get_stream_with_max_sse_event_size(
                        uri,
                        session_id,
                        last_event_id,
                        auth_header,
                        headers,
                        size,
                    )
                    .await
            }
        }
    }
}

/// A client layer: what it does to a post, a stream and the end of a session.
pub(crate) trait HttpLayer: Clone + Send + Sync + 'static {
    type Error: std::error::Error + Send + Sync + 'static;

    fn post(&self, post: Post) -> impl Future<Output = Posted<Self::Error>> + Send + '_;

    fn get(&self, get: Get) -> impl Future<Output = Streamed<Self::Error>> + Send + '_;

    fn delete(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        headers: Headers,
    ) -> impl Future<Output = Result<(), StreamableHttpError<Self::Error>>> + Send + '_;
}

/// A layer as the SDK's client.
#[derive(Clone)]
pub(crate) struct Layered<L>(pub L);

impl<L: HttpLayer> StreamableHttpClient for Layered<L> {
    type Error = L::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Posted<L::Error> {
        let limits = PostLimits::None;
        (self.0)
            .post(Post {
                uri,
                message,
                session_id,
                auth_header,
                headers,
                limits,
            })
            .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        headers: Headers,
        max_sse_event_size: usize,
    ) -> Posted<L::Error> {
        let limits = PostLimits::MaxSseEvent(max_sse_event_size);
        (self.0)
            .post(Post {
                uri,
                message,
                session_id,
                auth_header,
                headers,
                limits,
            })
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Posted<L::Error> {
        let limits = PostLimits::Response(limits);
        (self.0)
            .post(Post {
                uri,
                message,
                session_id,
                auth_header,
                headers,
                limits,
            })
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Result<(), StreamableHttpError<L::Error>> {
        self.0.delete(uri, session_id, auth_header, headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Streamed<L::Error> {
        let max_sse_event_size = None;
        (self.0)
            .get(Get {
                uri,
                session_id,
                last_event_id,
                auth_header,
                headers,
                max_sse_event_size,
            })
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        headers: Headers,
        max_sse_event_size: usize,
    ) -> Streamed<L::Error> {
        let max_sse_event_size = Some(max_sse_event_size);
        (self.0)
            .get(Get {
                uri,
                session_id,
                last_event_id,
                auth_header,
                headers,
                max_sse_event_size,
            })
            .await
    }
}
