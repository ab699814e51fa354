//! Signing out at the authorization server: token revocation (RFC 7009), best effort.
//!
//! Whether a server revokes, and how its client authenticates there, is read from its metadata
//! when the user signs in ([`Revocation::advertised`]) and kept in the record, so signing out
//! needs no discovery. The refresh token is revoked when there is one (at most servers it takes
//! the access token with it), else the access token.
//!
//! The `oauth2` crate has a `RevocationRequest`, and rmcp's client is built on it, but it is
//! not used here: it refuses every revocation endpoint that is not https, where a server on
//! loopback (a local server, the test fixtures) has an http one and its tokens must be revoked
//! all the same; it url-encodes the client id and secret before putting them in HTTP Basic
//! (RFC 6749 2.3.1), which would change the header a server gets today for any id or secret
//! with a reserved character in it; and with its default features off it brings no HTTP
//! client, so the request would still be ours to send. rmcp's `AuthorizationManager` offers no
//! revocation of its own.

use std::collections::HashMap;
use std::time::Duration;

use oauth2::TokenResponse;
use rmcp::transport::auth::OAuthTokenResponse;

use super::ServerAuth;
use super::store::SignInRecord;

/// How long a revocation may take before signing out goes on without it.
const REVOCATION_TIMEOUT: Duration = Duration::from_secs(15);

/// What an authorization server's metadata says about revoking its tokens.
pub(super) struct Revocation {
    /// The revocation endpoint, when there is one.
    pub endpoint: Option<String>,
    /// Whether a client secret goes in the request body (`client_secret_post`) rather than as
    /// HTTP Basic.
    pub secret_in_body: bool,
}

impl Revocation {
    /// Read from the metadata's fields. The secret goes in the body when the server lists only
    /// `client_secret_post` for revocation (else for its token endpoint), as the SDK decides for
    /// the token endpoint.
    pub fn advertised(metadata: &HashMap<String, serde_json::Value>) -> Self {
        let endpoint = metadata
            .get("revocation_endpoint")
            .and_then(|value| value.as_str())
            .map(str::to_string);
        let methods = metadata
            .get("revocation_endpoint_auth_methods_supported")
            .or_else(|| metadata.get("token_endpoint_auth_methods_supported"))
            .and_then(serde_json::Value::as_array);
        let secret_in_body = methods.is_some_and(|methods| {
            let has = |name: &str| methods.iter().any(|method| method.as_str() == Some(name));
            has("client_secret_post") && !has("client_secret_basic")
        });
        Self {
            endpoint,
            secret_in_body,
        }
    }

    /// Kept in `record` for signing out later.
    pub fn keep_in(self, record: &mut SignInRecord) {
        record.revocation_endpoint = self.endpoint;
        record.revoke_in_body = self.secret_in_body;
    }
}

impl ServerAuth {
    /// Revokes the tokens `record` keeps, where its authorization server has an endpoint for it.
    /// Whether the server accepted it.
    pub(super) async fn revoke(&self, record: &SignInRecord) -> bool {
        let (Some(endpoint), Some(credentials)) =
            (&record.revocation_endpoint, &record.credentials)
        else {
            return false;
        };
        let Some(tokens) = &credentials.token_response else {
            return false;
        };
        let secret = self.client_secret(record);
        revoke(endpoint, record, secret.as_deref(), tokens).await
    }
}

/// RFC 7009: revokes the refresh token, else the access token. Whether the server accepted it.
async fn revoke(
    endpoint: &str,
    record: &SignInRecord,
    secret: Option<&str>,
    tokens: &OAuthTokenResponse,
) -> bool {
    let (token, hint) = match tokens.refresh_token() {
        Some(refresh) => (refresh.secret().clone(), "refresh_token"),
        None => (tokens.access_token().secret().clone(), "access_token"),
    };
    let mut form = vec![("token", token), ("token_type_hint", hint.to_string())];
    let client = reqwest::Client::new();
    let mut request = client.post(endpoint).timeout(REVOCATION_TIMEOUT);
    match (&record.client_id, secret) {
        (Some(id), Some(secret)) if record.revoke_in_body => {
            form.push(("client_id", id.clone()));
            form.push(("client_secret", secret.to_string()));
        }
        (Some(id), Some(secret)) => request = request.basic_auth(id, Some(secret)),
        (Some(id), None) => form.push(("client_id", id.clone())),
        _ => {}
    }
    request
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(form_body(&form))
        .send()
        .await
        .is_ok_and(|response| response.status().is_success())
}

/// `pairs` as an `application/x-www-form-urlencoded` body.
fn form_body(pairs: &[(&str, String)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn form_bodies_encode_what_would_split_a_value() {
        let body = form_body(&[
            ("token", "aZ09-_.~ +/=&%ü".to_string()),
            ("token_type_hint", "refresh_token".to_string()),
        ]);
        assert_eq!(
            body,
            "token=aZ09-_.%7E+%2B%2F%3D%26%25%C3%BC&token_type_hint=refresh_token"
        );
    }
}
