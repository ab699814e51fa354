//! DPoP (RFC 9449): tokens bound to a key of this client, so a token that leaks is of no use
//! without the key. Used when the authorization server's metadata offers it for ES256
//! (`dpop_signing_alg_values_supported`); a token it hands out as `DPoP` is then sent as
//! `Authorization: DPoP <token>` with a fresh proof (`DPoP` header: a JWT signed by the key,
//! naming the method, the address, the time, a unique id, the token's hash and the server's
//! nonce when it asked for one) on every request.
//!
//! The key is a P-256 key made for the sign-in, kept in the record beside the token it is bound
//! to (the keychain), never shown. The token request carries a proof through [`DpopOAuthHttp`],
//! the SDK's HTTP client for that sign-in; the MCP requests through [`DpopHttp`], under the
//! SDK's `AuthClient`. A server's `use_dpop_nonce` is answered once per request: the token
//! endpoint's nonce comes with its refusal; the MCP server's, which the transport does not pass
//! on, is asked for with a `ping` carrying a proof.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::digest::{SHA256, digest};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, OAuthHttpClient, OAuthHttpClientFuture,
    OAuthHttpRedirectPolicy, OAuthHttpRequest,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use serde_json::{Value, json};

use crate::http_layer::{Get, Headers, HttpLayer, Post};
use sse_stream::{Error as SseError, Sse};

type HttpError = StreamableHttpError<reqwest::Error>;

/// The largest answer the token request reads.
const MAX_OAUTH_RESPONSE: usize = 1024 * 1024;

/// Whether the authorization server takes DPoP proofs signed with ES256.
pub(crate) fn offered(metadata: &AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("dpop_signing_alg_values_supported")
        .and_then(Value::as_array)
        .is_some_and(|algs| algs.iter().any(|alg| alg.as_str() == Some("ES256")))
}

/// Whether a token response's `token_type` binds the token to the key.
pub(crate) fn is_dpop_type(token_type: &str) -> bool {
    token_type.eq_ignore_ascii_case("dpop")
}

/// The key proofs are signed with.
pub(crate) struct DpopKey {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
    jwk: Value,
}

impl DpopKey {
    /// A new key.
    pub fn generate() -> Result<Self, String> {
        let document =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .map_err(|_| "no key could be made for DPoP".to_string())?;
        Self::from_pkcs8(document.as_ref()).ok_or_else(|| "no key could be made for DPoP".into())
    }

    /// The key kept in a record ([`Self::kept`]).
    pub fn from_kept(text: &str) -> Option<Self> {
        Self::from_pkcs8(&STANDARD.decode(text).ok()?)
    }

    /// The key as the record keeps it.
    pub fn kept(&self) -> String {
        STANDARD.encode(&self.pkcs8)
    }

    fn from_pkcs8(pkcs8: &[u8]) -> Option<Self> {
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8).ok()?;
        // An uncompressed point: 0x04, then x and y.
        let point = pair.public_key().as_ref();
        if point.len() != 65 || point[0] != 4 {
            return None;
        }
        let jwk = json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
            "y": URL_SAFE_NO_PAD.encode(&point[33..]),
        });
        Some(Self {
            pair,
            pkcs8: pkcs8.to_vec(),
            jwk,
        })
    }

    /// A proof for one request: `method` to `url` (its query and fragment left out), with the
    /// hash of the `token` it carries and the server's `nonce`, if any.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, String> {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let iat = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|elapsed| elapsed.as_secs())
            .unwrap_or_default();
        let mut claims = json!({
            "jti": uuid::Uuid::new_v4().to_string(),
            "htm": method,
            "htu": htu,
            "iat": iat,
        });
        if let Some(token) = token {
            claims["ath"] = URL_SAFE_NO_PAD
                .encode(digest(&SHA256, token.as_bytes()))
                .into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(|_| "a DPoP proof could not be signed".to_string())?;
        Ok(format!(
            "{input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }
}

/// The `DPoP-Nonce` a server last asked for.
#[derive(Clone, Default)]
struct Nonce(Arc<Mutex<Option<String>>>);

impl Nonce {
    fn get(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, nonce: Option<String>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = nonce;
    }
}

fn nonce_of(headers: &reqwest::header::HeaderMap) -> Option<String> {
    headers
        .get("dpop-nonce")
        .and_then(|value| value.to_str().ok())
        .filter(|nonce| !nonce.is_empty() && nonce.len() <= 1024)
        .map(str::to_string)
}

/// The SDK's HTTP client for a sign-in whose token is to be bound: requests go out as asked,
/// and the token request (a POST to `token_endpoint`) carries a proof, once more with the
/// server's nonce when it answers `use_dpop_nonce`.
pub(crate) struct DpopOAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    key: Arc<DpopKey>,
    token_endpoint: String,
    nonce: Nonce,
}

impl DpopOAuthHttp {
    pub fn new(key: Arc<DpopKey>, token_endpoint: &str) -> Result<Self, String> {
        let build = |policy| {
            reqwest::Client::builder()
                .redirect(policy)
                .build()
                .map_err(|_| "no HTTP client could be made for the sign-in".to_string())
        };
        Ok(Self {
            follow: build(reqwest::redirect::Policy::limited(5))?,
            stop: build(reqwest::redirect::Policy::none())?,
            key,
            token_endpoint: token_endpoint.to_string(),
            nonce: Nonce::default(),
        })
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl OAuthHttpClient for DpopOAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let client = match request.redirect_policy {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let timeout = request.timeout;
            let (parts, body) = request.request.into_parts();
            let url = parts.uri.to_string();
            let to_token_endpoint = parts.method == reqwest::Method::POST
                && url.split(['?', '#']).next() == Some(self.token_endpoint.as_str());
            let mut attempts = 0;
            loop {
                attempts += 1;
                let mut builder = client
                    .request(parts.method.clone(), url.as_str())
                    .headers(parts.headers.clone())
                    .body(body.clone());
                if let Some(timeout) = timeout {
                    builder = builder.timeout(timeout);
                }
                if to_token_endpoint {
                    let nonce = self.nonce.get();
                    let proof = self
                        .key
                        .proof("POST", &self.token_endpoint, None, nonce.as_deref())
                        .map_err(BoxError::from)?;
                    builder = builder.header("DPoP", proof);
                }
                let mut response = builder.send().await?;
                let status = response.status();
                let headers = response.headers().clone();
                let mut bytes = Vec::new();
                while let Some(chunk) = response.chunk().await? {
                    if bytes.len() + chunk.len() > MAX_OAUTH_RESPONSE {
                        return Err(BoxError::from("the answer is too large"));
                    }
                    bytes.extend_from_slice(&chunk);
                }
                if to_token_endpoint && let Some(nonce) = nonce_of(&headers) {
                    let asked_again = status == reqwest::StatusCode::BAD_REQUEST
                        && serde_json::from_slice::<Value>(&bytes).is_ok_and(|answer| {
                            answer.get("error").and_then(Value::as_str) == Some("use_dpop_nonce")
                        });
                    self.nonce.set(Some(nonce));
                    if asked_again && attempts < 2 {
                        continue;
                    }
                }
                let mut answer = oauth2::http::Response::builder().status(status);
                for (name, value) in &headers {
                    answer = answer.header(name, value);
                }
                return answer.body(bytes).map_err(BoxError::from);
            }
        })
    }
}

/// The HTTP client under the SDK's `AuthClient` for one server: with a key, a token goes out as
/// `Authorization: DPoP` with a fresh proof on every request; without, as it came (Bearer).
#[derive(Clone)]
pub(crate) struct DpopHttp {
    client: reqwest::Client,
    key: Option<Arc<DpopKey>>,
    nonce: Nonce,
}

impl DpopHttp {
    pub fn new(key: Option<DpopKey>) -> Self {
        Self {
            client: reqwest::Client::new(),
            key: key.map(Arc::new),
            nonce: Nonce::default(),
        }
    }

    /// The token and headers a request of `method` to `uri` goes with.
    fn sign(
        &self,
        method: &str,
        uri: &str,
        token: Option<String>,
        mut headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(Option<String>, HashMap<HeaderName, HeaderValue>), HttpError> {
        let (Some(key), Some(token)) = (&self.key, &token) else {
            return Ok((token, headers));
        };
        let failed =
            |reason: String| StreamableHttpError::Auth(AuthError::AuthorizationFailed(reason));
        let proof = key
            .proof(method, uri, Some(token), self.nonce.get().as_deref())
            .map_err(failed)?;
        let value = |text: String| {
            HeaderValue::from_str(&text).map_err(|_| failed("the token is not a header".into()))
        };
        let mut authorization = value(format!("DPoP {token}"))?;
        authorization.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, authorization);
        headers.insert(HeaderName::from_static("dpop"), value(proof)?);
        Ok((None, headers))
    }

    /// Whether `result` is the server asking for a nonce; if so, asks it for the nonce (the
    /// transport does not pass on its headers) and keeps it.
    async fn asked_for_nonce(
        &self,
        challenge: Option<String>,
        uri: &str,
        session_id: Option<&str>,
        token: Option<&str>,
    ) -> bool {
        let (Some(key), Some(token), Some(challenge)) = (&self.key, token, challenge) else {
            return false;
        };
        if !challenge.contains("use_dpop_nonce") {
            return false;
        }
        let Ok(proof) = key.proof("POST", uri, Some(token), None) else {
            return false;
        };
        let mut request = self
            .client
            .post(uri)
            .header(reqwest::header::AUTHORIZATION, format!("DPoP {token}"))
            .header("DPoP", proof)
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(json!({"jsonrpc": "2.0", "id": "dpop-nonce", "method": "ping"}).to_string());
        if let Some(session_id) = session_id {
            request = request.header("Mcp-Session-Id", session_id);
        }
        let nonce = match request.send().await {
            Ok(response) => nonce_of(response.headers()),
            Err(_) => None,
        };
        let found = nonce.is_some();
        if found {
            self.nonce.set(nonce);
        }
        found
    }
}

/// The `WWW-Authenticate` of a 401.
fn challenge_of<T>(result: &Result<T, HttpError>) -> Option<String> {
    match result {
        Err(StreamableHttpError::AuthRequired(required)) => {
            Some(required.www_authenticate_header.clone())
        }
        _ => None,
    }
}

/// A token goes out with a fresh proof on every request; a request the server refuses for want
/// of its nonce is sent once more with it.
impl HttpLayer for DpopHttp {
    type Error = reqwest::Error;

    async fn post(&self, post: Post) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (auth_header, headers) = self.sign(
                "POST",
                &post.uri,
                post.auth_header.clone(),
                post.headers.clone(),
            )?;
            let signed = Post {
                auth_header,
                headers,
                ..post.clone()
            };
            let result = signed.send(&self.client).await;
            let challenge = challenge_of(&result);
            let (session, token) = (post.session_id.as_deref(), post.auth_header.as_deref());
            if attempt < 2
                && self
                    .asked_for_nonce(challenge, &post.uri, session, token)
                    .await
            {
                continue;
            }
            return result;
        }
    }

    async fn get(&self, get: Get) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (auth_header, headers) = self.sign(
                "GET",
                &get.uri,
                get.auth_header.clone(),
                get.headers.clone(),
            )?;
            let signed = Get {
                auth_header,
                headers,
                ..get.clone()
            };
            let result = signed.open(&self.client).await;
            let challenge = challenge_of(&result);
            let (session, token) = (get.session_id.as_deref(), get.auth_header.as_deref());
            if attempt < 2
                && self
                    .asked_for_nonce(challenge, &get.uri, session, token)
                    .await
            {
                continue;
            }
            return result;
        }
    }

    async fn delete(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        headers: Headers,
    ) -> Result<(), HttpError> {
        let (token, headers) = self.sign("DELETE", &uri, auth_token, headers)?;
        self.client
            .delete_session(uri, session_id, token, headers)
            .await
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_proof_names_the_request_and_the_token_and_is_signed_by_the_kept_key() {
        let key = DpopKey::generate().unwrap();
        let again = DpopKey::from_kept(&key.kept()).unwrap();
        assert_eq!(key.jwk, again.jwk);
        let proof = again
            .proof(
                "POST",
                "https://mcp.example.com/mcp?x=1",
                Some("tok"),
                Some("n-1"),
            )
            .unwrap();
        let parts: Vec<&str> = proof.split('.').collect();
        let decode = |part: &str| -> Value {
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
        };
        let (header, claims) = (decode(parts[0]), decode(parts[1]));
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["jwk"], key.jwk);
        assert!(header["jwk"].get("d").is_none());
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example.com/mcp");
        assert_eq!(claims["nonce"], "n-1");
        assert_eq!(
            claims["ath"],
            URL_SAFE_NO_PAD.encode(digest(&SHA256, b"tok")).as_str()
        );
        // Verifiable with the public key in the header.
        let public = aws_lc_rs::signature::UnparsedPublicKey::new(
            &aws_lc_rs::signature::ECDSA_P256_SHA256_FIXED,
            again.pair.public_key().as_ref(),
        );
        let input = format!("{}.{}", parts[0], parts[1]);
        public
            .verify(input.as_bytes(), &URL_SAFE_NO_PAD.decode(parts[2]).unwrap())
            .unwrap();
        // Each proof is fresh.
        let other = again.proof("POST", "https://mcp.example.com/mcp", None, None);
        assert_ne!(
            decode(other.unwrap().split('.').nth(1).unwrap())["jti"],
            claims["jti"]
        );
    }
}
