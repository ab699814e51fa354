//! Signing in without a person, for servers a team runs where no browser can open: the grant
//! that `mcp.json`'s `oauth` names (`grant.rs`) at the authorization server the MCP server
//! points to, the token it gives kept in the record like a browser sign-in's.
//!
//! - `client_credentials` (the client-credentials extension): the client's secret, as HTTP
//!   Basic or in the body, or a JWT signed with its private key (`private_key_jwt`, RFC 7523,
//!   its audience the authorization server's issuer).
//! - `enterprise` (enterprise-managed authorization): the enterprise identity provider
//!   exchanges the user's identity token for an identity assertion grant (ID-JAG, RFC 8693),
//!   which the MCP server's authorization server takes as a JWT bearer grant. The SDK's
//!   `enterprise` module does both exchanges and checks the ID-JAG's bindings.
//! - `jwt_bearer` (workload identity federation): a workload's own JWT as the grant.
//!
//! What a secret, a key's signature or a token may reach is the point of this file. It goes
//! only to a token endpoint over https (http only on this computer), on the origin of the
//! authorization server whose issuer the SDK checked, or to the one `mcp.json` pins in
//! `"authorization_server"`; a workload's token only where its own audience says. A refusal
//! says what was not sent and why. Answers are read by their `error` code alone: a server's
//! words (which may echo what was sent) never reach a message, a log or the record.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use oauth2::TokenResponse;
use reqwest::Url;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAssertion, EmaClientAssertionProvider,
    EmaClientAuthentication, EmaError, EmaExchangeRequest, EmaExchangeStage,
};
use rmcp::transport::auth::{
    AuthorizationMetadata, CredentialStore, OAuthTokenResponse, StoredCredentials,
    default_oauth_http_client,
};
use serde_json::Value;

use super::grant::{Algorithm, ClientAuth, MachineGrant, Secret, SecretMethod, keychain_account};
use super::store::keychain_sentence;
use super::{ServerAuth, SignInState};
use crate::error::SignInError;

/// How long a token request may take.
const TOKEN_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest token response read.
const MAX_TOKEN_RESPONSE: usize = 64 * 1024;
/// How long a signed client assertion is good for.
const ASSERTION_LIFETIME_SECS: u64 = 300;

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The authorization server a grant's secrets may go to: its issuer and its token endpoint,
/// both checked.
#[derive(Debug, Clone)]
pub(crate) struct TokenServer {
    issuer: String,
    token_endpoint: Url,
}

impl TokenServer {
    /// The token endpoint of `metadata`, when a secret may be sent there: over https (http
    /// only to this computer), on the issuer's origin unless `mcp.json` pins the issuer
    /// (`pinned`), which must then be the issuer.
    pub(crate) fn checked(
        metadata: &AuthorizationMetadata,
        pinned: Option<&str>,
    ) -> Result<Self, String> {
        let issuer = metadata.issuer.clone().ok_or(
            "the authorization server's metadata names no issuer, which a sign-in without a \
             browser needs",
        )?;
        if let Some(pinned) = pinned
            && pinned.trim_end_matches('/') != issuer.trim_end_matches('/')
        {
            return Err(format!(
                "the server's authorization server is {issuer}, not {pinned} as \
                 \"authorization_server\" in mcp.json says: nothing was sent to it"
            ));
        }
        let endpoint = &metadata.token_endpoint;
        let token_endpoint = Url::parse(endpoint)
            .ok()
            .filter(|url| {
                url.username().is_empty() && url.password().is_none() && url.fragment().is_none()
            })
            .ok_or_else(|| {
                format!(
                    "the authorization server's token endpoint {endpoint:?} is not a web address"
                )
            })?;
        if !secure(&token_endpoint) {
            return Err(format!(
                "the authorization server's token endpoint {token_endpoint} is not https: a \
                 client's secret, key or token is sent only over https (or to this computer)"
            ));
        }
        let same_origin =
            Url::parse(&issuer).is_ok_and(|issuer| issuer.origin() == token_endpoint.origin());
        if pinned.is_none() && !same_origin {
            return Err(format!(
                "the token endpoint {token_endpoint} is on another origin than its authorization \
                 server {issuer}: a client's secret, key or token is sent only to the \
                 authorization server itself (if {issuer} is yours, name it in mcp.json as \
                 \"authorization_server\")"
            ));
        }
        Ok(Self {
            issuer,
            token_endpoint,
        })
    }
}

/// https, or http to this computer.
fn secure(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match url.scheme() {
        "https" => true,
        "http" => {
            host.eq_ignore_ascii_case("localhost")
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        _ => false,
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or_default()
}

impl ServerAuth {
    /// Signs in with `grant`, from the server's challenge (`www_authenticate`); a step-up
    /// asks for `step_up_scopes` on top of the others.
    pub(super) async fn run_machine(
        &self,
        grant: &MachineGrant,
        www_authenticate: Option<&str>,
        step_up_scopes: &[String],
    ) -> Result<(), SignInError> {
        let manager = self.manager().await?;
        let (metadata, _) = self.discover(&manager, www_authenticate).await?;
        let server = TokenServer::checked(&metadata, self.oauth.authorization_server.as_deref())
            .map_err(|reason| self.failed(reason))?;
        let mut scopes = if self.oauth.scopes.is_empty() {
            manager.select_initial_scopes(&[]).await
        } else {
            self.oauth.scopes.clone()
        };
        for scope in step_up_scopes {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        let client_id = self.oauth.client_id.clone().unwrap_or_default();
        let token = match grant {
            MachineGrant::ClientCredentials { client } => {
                let form = vec![("grant_type", "client_credentials".to_string())];
                self.grant_request(&server, &metadata, client, form, &scopes)
                    .await
            }
            MachineGrant::JwtBearer { assertion, client } => {
                match self.read(assertion, "workload token").await {
                    Ok(assertion) => match assertion_is_for(&assertion, &server) {
                        Ok(()) => {
                            let form = vec![
                                ("grant_type", JWT_BEARER.to_string()),
                                ("assertion", assertion),
                            ];
                            self.grant_request(&server, &metadata, client, form, &scopes)
                                .await
                        }
                        Err(reason) => Err(reason),
                    },
                    Err(reason) => Err(reason),
                }
            }
            MachineGrant::Enterprise {
                identity_provider,
                id_token,
                client,
            } => {
                self.enterprise(
                    &server,
                    &metadata,
                    identity_provider,
                    id_token,
                    client,
                    &scopes,
                )
                .await
            }
        }
        .map_err(|reason| self.failed(reason))?;
        let granted = token
            .scopes()
            .map(|granted| granted.iter().map(|scope| scope.to_string()).collect())
            .unwrap_or(scopes);
        let credentials =
            StoredCredentials::new(client_id.clone(), Some(token), granted, Some(now_secs()))
                .with_issuer(Some(server.issuer.clone()));
        if CredentialStore::save(&self.store, credentials.clone())
            .await
            .is_err()
        {
            // No keychain to keep it: the grant can be made again by the next run, so this
            // one keeps its token for itself.
            self.store.keep_in_memory();
            CredentialStore::save(&self.store, credentials)
                .await
                .map_err(|err| self.failed(super::describe(&err)))?;
        }
        let kept = if self.store.in_memory() {
            "; kept for this run, with no system keychain"
        } else {
            ""
        };
        let identity = Some(format!("{client_id} ({}, no browser{kept})", grant.label()));
        self.store
            .update(|record| {
                record.identity = identity.clone();
                record.client_secret = None;
            })
            .map_err(|reason| self.failed(reason))?;
        self.set_state(SignInState::SignedIn { identity });
        Ok(())
    }

    /// A secret's value, from where `mcp.json` says it is; `what` names it in a refusal.
    async fn read(&self, secret: &Secret, what: &str) -> Result<String, String> {
        let value = match secret {
            Secret::Value(value) => value.clone(),
            Secret::Keychain(name) => {
                let account = keychain_account(name);
                self.store
                    .secrets()
                    .get(&account)
                    .map_err(|error| format!("the {what}: {}", keychain_sentence(error)))?
                    .ok_or_else(|| {
                        format!(
                            "the system keychain has no entry {account:?} (service \"tooltrail\") \
                             for the {what} that mcp.json names: add it there"
                        )
                    })?
            }
            Secret::File(path) => tokio::fs::read_to_string(path).await.map_err(|error| {
                format!(
                    "the {what} file {} could not be read ({})",
                    path.display(),
                    error.kind()
                )
            })?,
        };
        let value = value.trim().to_string();
        if value.is_empty() {
            return Err(format!("the {what} that mcp.json names is empty"));
        }
        Ok(value)
    }

    /// A grant's token request with the client's authentication (`client`), the `resource`
    /// (this server) and the scopes.
    async fn grant_request(
        &self,
        server: &TokenServer,
        metadata: &AuthorizationMetadata,
        client: &ClientAuth,
        mut form: Vec<(&'static str, String)>,
        scopes: &[String],
    ) -> Result<OAuthTokenResponse, String> {
        form.push(("resource", self.url.clone()));
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        let client_id = self.oauth.client_id.clone().unwrap_or_default();
        let mut basic = None;
        match client {
            ClientAuth::Secret { secret, method } => {
                let secret = self.read(secret, "client secret").await?;
                match method.unwrap_or_else(|| preferred_secret_method(metadata)) {
                    SecretMethod::Basic => basic = Some(basic_credentials(&client_id, &secret)),
                    SecretMethod::Post => {
                        form.push(("client_id", client_id));
                        form.push(("client_secret", secret));
                    }
                }
            }
            ClientAuth::PrivateKeyJwt { key, algorithm } => {
                let key = self.read(key, "private key").await?;
                let assertion =
                    sign_client_assertion(&client_id, &server.issuer, &key, *algorithm)?;
                form.push(("client_assertion_type", CLIENT_ASSERTION_TYPE.to_string()));
                form.push(("client_assertion", assertion));
            }
            ClientAuth::None => form.push(("client_id", client_id)),
        }
        token_request(&server.token_endpoint, &form, basic.as_deref()).await
    }

    /// Enterprise-managed: the identity token for an ID-JAG at the identity provider, the
    /// ID-JAG for an access token at the server's authorization server.
    async fn enterprise(
        &self,
        server: &TokenServer,
        metadata: &AuthorizationMetadata,
        idp: &super::grant::IdentityProvider,
        id_token: &Secret,
        client: &ClientAuth,
        scopes: &[String],
    ) -> Result<OAuthTokenResponse, String> {
        let id_token = self.read(id_token, "identity token").await?;
        let idp_auth = match &idp.client_secret {
            Some(secret) => EmaClientAuthentication::ClientSecretBasic(oauth2::ClientSecret::new(
                self.read(secret, "identity provider's client secret")
                    .await?,
            )),
            None => EmaClientAuthentication::None,
        };
        let client_id = self.oauth.client_id.clone().unwrap_or_default();
        let resource_auth = match client {
            ClientAuth::Secret { secret, method } => {
                let secret = oauth2::ClientSecret::new(self.read(secret, "client secret").await?);
                match method.unwrap_or_else(|| preferred_secret_method(metadata)) {
                    SecretMethod::Basic => EmaClientAuthentication::ClientSecretBasic(secret),
                    SecretMethod::Post => EmaClientAuthentication::ClientSecretPost(secret),
                }
            }
            ClientAuth::PrivateKeyJwt { key, algorithm } => {
                let key = self.read(key, "private key").await?;
                EmaClientAuthentication::JwtAssertion(std::sync::Arc::new(KeySigner {
                    client_id: client_id.clone(),
                    key,
                    algorithm: *algorithm,
                }))
            }
            ClientAuth::None => EmaClientAuthentication::None,
        };
        let idp_server = EmaAuthorizationServer::new(
            idp.issuer.clone(),
            idp.token_endpoint.clone(),
            idp.client_id.clone(),
        )
        .with_client_authentication(idp_auth);
        let resource_server = EmaAuthorizationServer::new(
            server.issuer.clone(),
            server.token_endpoint.to_string(),
            client_id,
        )
        .with_client_authentication(resource_auth);
        let http = default_oauth_http_client()
            .map_err(|_| "no HTTP client could be made for the sign-in".to_string())?;
        let token = EmaExchangeRequest::new_with_id_token(
            idp_server,
            resource_server,
            &self.url,
            &id_token,
        )
        .with_scopes(scopes.iter().cloned())
        .exchange(&http, &http)
        .await
        .map_err(|err| enterprise_sentence(&err))?;
        let mut body = serde_json::json!({
            "access_token": token.access_token.secret(),
            "token_type": "Bearer",
        });
        if let Some(expires_in) = token.expires_in {
            body["expires_in"] = expires_in.as_secs().into();
        }
        if !token.scopes.is_empty() {
            let mut scopes: Vec<&str> = token.scopes.iter().map(String::as_str).collect();
            scopes.sort_unstable();
            body["scope"] = scopes.join(" ").into();
        }
        serde_json::from_value(body)
            .map_err(|_| "the authorization server's token could not be kept".to_string())
    }
}

/// Basic when the metadata names it or names neither (RFC 6749's default), else the body.
fn preferred_secret_method(metadata: &AuthorizationMetadata) -> SecretMethod {
    let methods: Vec<&str> = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(Value::as_array)
        .map(|methods| methods.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !methods.contains(&"client_secret_basic") && methods.contains(&"client_secret_post") {
        SecretMethod::Post
    } else {
        SecretMethod::Basic
    }
}

/// HTTP Basic credentials, each part form-encoded first (RFC 6749 §2.3.1).
fn basic_credentials(client_id: &str, secret: &str) -> String {
    let encode = |text: &str| form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", encode(client_id), encode(secret));
    format!("Basic {}", STANDARD.encode(pair))
}

/// A JWT naming `client_id` as issuer and subject, for `audience`, signed with the PEM `key`.
fn sign_client_assertion(
    client_id: &str,
    audience: &str,
    key: &str,
    algorithm: Algorithm,
) -> Result<String, String> {
    use jsonwebtoken::{EncodingKey, Header};
    let jwt_algorithm = match algorithm {
        Algorithm::ES256 => jsonwebtoken::Algorithm::ES256,
        Algorithm::ES384 => jsonwebtoken::Algorithm::ES384,
        Algorithm::RS256 => jsonwebtoken::Algorithm::RS256,
        Algorithm::RS384 => jsonwebtoken::Algorithm::RS384,
        Algorithm::RS512 => jsonwebtoken::Algorithm::RS512,
        Algorithm::PS256 => jsonwebtoken::Algorithm::PS256,
        Algorithm::EdDSA => jsonwebtoken::Algorithm::EdDSA,
    };
    // The key's kind follows the algorithm's family.
    let pem = key.as_bytes();
    let encoding_key = match algorithm {
        Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem),
        Algorithm::RS256 | Algorithm::RS384 | Algorithm::RS512 | Algorithm::PS256 => {
            EncodingKey::from_rsa_pem(pem)
        }
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem),
    };
    let unreadable = || {
        format!(
            "the private key is not a PEM key that {} signs with",
            algorithm.name()
        )
    };
    let encoding_key = encoding_key.map_err(|_| unreadable())?;
    let now = now_secs();
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME_SECS,
        "jti": uuid::Uuid::new_v4().to_string(),
    });
    jsonwebtoken::encode(&Header::new(jwt_algorithm), &claims, &encoding_key)
        .map_err(|_| unreadable())
}

/// Signs the client's assertions for the enterprise exchange's authorization server.
struct KeySigner {
    client_id: String,
    key: String,
    algorithm: Algorithm,
}

#[async_trait::async_trait]
impl EmaClientAssertionProvider for KeySigner {
    async fn create_assertion(
        &self,
        server: &EmaAuthorizationServer,
    ) -> Result<EmaClientAssertion, Box<dyn std::error::Error + Send + Sync>> {
        sign_client_assertion(&self.client_id, &server.issuer, &self.key, self.algorithm)
            .map(EmaClientAssertion::new)
            .map_err(Into::into)
    }
}

/// Whether a workload's token may go to `server`: it must be meant for it (its `aud` the
/// issuer or the token endpoint) and not have expired. A server may not have it sent to an
/// authorization server it is not for, where it could be replayed at the one it is for.
fn assertion_is_for(assertion: &str, server: &TokenServer) -> Result<(), String> {
    let claims = jwt_claims(assertion)
        .ok_or("the workload token is not a JWT, which a JWT bearer grant needs")?;
    let audiences: Vec<&str> = match claims.get("aud") {
        Some(Value::String(aud)) => vec![aud.as_str()],
        Some(Value::Array(auds)) => auds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let trim = |text: &str| text.trim_end_matches('/').to_string();
    let accepted = [trim(&server.issuer), trim(server.token_endpoint.as_str())];
    if !audiences.iter().any(|aud| accepted.contains(&trim(aud))) {
        return Err(format!(
            "the workload token is for {}, not for the authorization server {} that the server \
             names: it was not sent",
            if audiences.is_empty() {
                "no audience".to_string()
            } else {
                audiences.join(", ")
            },
            server.issuer
        ));
    }
    if claims
        .get("exp")
        .and_then(Value::as_u64)
        .is_some_and(|exp| exp <= now_secs())
    {
        return Err("the workload token has expired: renew it where it comes from".into());
    }
    Ok(())
}

/// The claims of a compact JWT, unverified (the authorization server verifies it).
fn jwt_claims(jwt: &str) -> Option<serde_json::Map<String, Value>> {
    let mut parts = jwt.split('.');
    let (_, payload, _, None) = (parts.next()?, parts.next()?, parts.next()?, parts.next()) else {
        return None;
    };
    match serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()? {
        Value::Object(claims) => Some(claims),
        _ => None,
    }
}

/// One token request; the answer's token, or why not in words built from its `error` code.
async fn token_request(
    endpoint: &Url,
    form: &[(&str, String)],
    basic: Option<&str>,
) -> Result<OAuthTokenResponse, String> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TOKEN_TIMEOUT)
        .build()
        .map_err(|_| "no HTTP client could be made for the sign-in".to_string())?;
    let body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(key, value)| (*key, value.as_str())))
        .finish();
    let mut request = client
        .post(endpoint.clone())
        .header("Accept", "application/json")
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body);
    if let Some(basic) = basic {
        request = request.header(reqwest::header::AUTHORIZATION, basic);
    }
    let mut response = request.send().await.map_err(|err| {
        if err.is_timeout() {
            format!("the authorization server's token endpoint {endpoint} did not answer in time")
        } else {
            format!("the authorization server's token endpoint {endpoint} could not be reached")
        }
    })?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|_| {
        format!("the authorization server's token endpoint {endpoint} stopped answering")
    })? {
        if body.len() + chunk.len() > MAX_TOKEN_RESPONSE {
            return Err("the authorization server's answer is too large to be a token".into());
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        return Err(refusal(status.as_u16(), &body));
    }
    let answer: Value = serde_json::from_slice(&body)
        .map_err(|_| "the authorization server answered with something that is not a token")?;
    let bearer = answer
        .get("token_type")
        .and_then(Value::as_str)
        .is_some_and(|kind| kind.eq_ignore_ascii_case("bearer"));
    let has_token = answer
        .get("access_token")
        .and_then(Value::as_str)
        .is_some_and(|token| !token.trim().is_empty());
    if !has_token || !bearer {
        return Err("the authorization server answered without a bearer token".into());
    }
    serde_json::from_value(answer)
        .map_err(|_| "the authorization server answered with something that is not a token".into())
}

/// A token endpoint's refusal in words, from its `error` code alone: its description and
/// anything else it says are left out, since they may echo what was sent.
fn refusal(status: u16, body: &[u8]) -> String {
    let code = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|answer| answer.get("error")?.as_str().map(str::to_string));
    match code.as_deref() {
        Some("invalid_client") => "the authorization server did not accept the client's \
                                   credentials (invalid_client): check \"client_id\" and its \
                                   secret or key in mcp.json"
            .into(),
        Some("invalid_grant") => "the authorization server did not accept the grant \
                                  (invalid_grant): the token or assertion may have expired or be \
                                  meant for another server"
            .into(),
        Some("unauthorized_client") => "the authorization server does not let this client use \
                                        this grant (unauthorized_client)"
            .into(),
        Some("unsupported_grant_type") => {
            "the authorization server does not take this grant (unsupported_grant_type)".into()
        }
        Some("invalid_scope") => {
            "the authorization server did not grant the scopes asked for (invalid_scope)".into()
        }
        Some("invalid_request") => {
            "the authorization server found the token request malformed (invalid_request)".into()
        }
        Some("invalid_target") => {
            "the authorization server does not serve this MCP server (invalid_target)".into()
        }
        _ => format!("the authorization server refused the sign-in (HTTP {status})"),
    }
}

/// The SDK's enterprise exchange errors in words (they carry no secret).
fn enterprise_sentence(err: &EmaError) -> String {
    let who = |stage: &EmaExchangeStage| match stage {
        EmaExchangeStage::IdentityProvider => "the identity provider",
        EmaExchangeStage::ResourceAuthorizationServer => "the MCP server's authorization server",
        _ => "the authorization server",
    };
    match err {
        EmaError::InvalidRequest(what) => format!("the enterprise sign-in was not sent: {what}"),
        EmaError::InvalidResponse { stage, message } => {
            format!(
                "{} answered with what Tooltrail does not take ({message})",
                who(stage)
            )
        }
        EmaError::RequestFailed(stage) => format!("{} could not be reached", who(stage)),
        EmaError::InvalidGrant(EmaExchangeStage::IdentityProvider) => {
            "the identity provider did not accept the identity token (invalid_grant): it may \
             have expired; get a new one"
                .into()
        }
        EmaError::InvalidGrant(stage) => format!(
            "{} did not accept the identity assertion (invalid_grant)",
            who(stage)
        ),
        EmaError::InsufficientUserAuthentication(stage) => format!(
            "{} asks for a fresher sign-in at the identity provider \
             (insufficient_user_authentication)",
            who(stage)
        ),
        EmaError::OAuthRejected {
            stage,
            status,
            code,
        } => format!(
            "{} refused the exchange ({code}, HTTP {status})",
            who(stage)
        ),
        _ => "the enterprise sign-in did not work".into(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;
    use crate::auth::grant::IdentityProvider;
    use crate::auth::{Browser, MemorySecrets, SecretStore, SignInOptions};
    use crate::config::{OAuthConfig, ServerConfig};

    /// A test key pair (P-256), made for these tests only.
    const KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQguL0mRkQElq6+1bRi
b+8A1zP+SEVABesJc6lBZGPHnrqhRANCAAT7RppnJSZVSmTgAjYwG+qGkaPdwPJ8
dV0s/ttjEYscG/QzRnbp126AMo+8dXqfd2C0EULqnpqs4x+4Q4kELGIo
-----END PRIVATE KEY-----";
    const PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE+0aaZyUmVUpk4AI2MBvqhpGj3cDy
fHVdLP7bYxGLHBv0M0Z26ddugDKPvHV6n3dgtBFC6p6arOMfuEOJBCxiKA==
-----END PUBLIC KEY-----";
    const SECRET: &str = "canary-secret-48213";

    /// One request a scripted server heard.
    #[derive(Debug, Clone)]
    struct Heard {
        path: String,
        headers: HashMap<String, String>,
        body: String,
    }

    impl Heard {
        fn form(&self) -> HashMap<String, String> {
            form_urlencoded::parse(self.body.as_bytes())
                .into_owned()
                .collect()
        }
    }

    type Route = Arc<dyn Fn(&Heard) -> (u16, String) + Send + Sync>;

    /// A loopback HTTP server answering each request with `route`, keeping what it heard.
    struct Scripted {
        origin: String,
        heard: Arc<Mutex<Vec<Heard>>>,
    }

    impl Scripted {
        async fn start(route: Route) -> Self {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let origin = format!("http://{}", listener.local_addr().unwrap());
            let heard = Arc::new(Mutex::new(Vec::new()));
            let kept = Arc::clone(&heard);
            tokio::spawn(async move {
                while let Ok((mut stream, _)) = listener.accept().await {
                    let (route, kept) = (Arc::clone(&route), Arc::clone(&kept));
                    tokio::spawn(async move {
                        let mut data = Vec::new();
                        let mut buf = [0u8; 4096];
                        let (head, body_start) = loop {
                            let n = stream.read(&mut buf).await.unwrap_or(0);
                            if n == 0 {
                                return;
                            }
                            data.extend_from_slice(&buf[..n]);
                            if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
                                break (String::from_utf8_lossy(&data[..at]).to_string(), at + 4);
                            }
                        };
                        let mut lines = head.lines();
                        let path = lines
                            .next()
                            .and_then(|line| line.split(' ').nth(1))
                            .unwrap_or("/")
                            .to_string();
                        let headers: HashMap<String, String> = lines
                            .filter_map(|line| line.split_once(':'))
                            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                            .collect();
                        let length: usize = headers
                            .get("content-length")
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(0);
                        while data.len() < body_start + length {
                            let n = stream.read(&mut buf).await.unwrap_or(0);
                            if n == 0 {
                                break;
                            }
                            data.extend_from_slice(&buf[..n]);
                        }
                        let body = String::from_utf8_lossy(&data[body_start..]).to_string();
                        let request = Heard {
                            path,
                            headers,
                            body,
                        };
                        let (status, text) = route(&request);
                        kept.lock().unwrap().push(request.clone());
                        let challenge = if status == 401 && request.path == "/mcp" {
                            let host = request.headers.get("host").cloned().unwrap_or_default();
                            format!(
                                "WWW-Authenticate: Bearer resource_metadata=\"http://{host}/.well-known/oauth-protected-resource/mcp\"\r\n"
                            )
                        } else {
                            String::new()
                        };
                        let reply = format!(
                            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{challenge}Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
                            text.len()
                        );
                        let _ = stream.write_all(reply.as_bytes()).await;
                    });
                }
            });
            Self { origin, heard }
        }

        fn heard(&self, path: &str) -> Vec<Heard> {
            self.heard
                .lock()
                .unwrap()
                .iter()
                .filter(|heard| heard.path == path)
                .cloned()
                .collect()
        }
    }

    /// An MCP server that asks for sign-in, its authorization server (`metadata` given the
    /// authorization server's origin, `token` answering its token requests), and a sign-in
    /// with `oauth`.
    struct World {
        mcp: Scripted,
        auth_server: Scripted,
        secrets: Arc<MemorySecrets>,
        auth: Arc<ServerAuth>,
    }

    impl World {
        async fn new(
            metadata: impl Fn(&str) -> Value + Send + Sync + 'static,
            token: impl Fn(&Heard) -> (u16, String) + Send + Sync + 'static,
            oauth: OAuthConfig,
        ) -> Self {
            let auth_server = Scripted::start(Arc::new({
                let origin = Arc::new(Mutex::new(String::new()));
                move |heard: &Heard| {
                    let host = heard.headers.get("host").cloned().unwrap_or_default();
                    *origin.lock().unwrap() = format!("http://{host}");
                    if heard.path.starts_with("/.well-known/") {
                        (200, metadata(&format!("http://{host}")).to_string())
                    } else {
                        token(heard)
                    }
                }
            }))
            .await;
            let as_origin = auth_server.origin.clone();
            let mcp = Scripted::start(Arc::new(move |heard: &Heard| {
                let host = heard.headers.get("host").cloned().unwrap_or_default();
                if heard
                    .path
                    .starts_with("/.well-known/oauth-protected-resource")
                {
                    let body = json!({"resource": format!("http://{host}/mcp"),
                                      "authorization_servers": [as_origin]});
                    (200, body.to_string())
                } else if heard.path == "/mcp" {
                    (401, "{}".into())
                } else {
                    (404, "{}".into())
                }
            }))
            .await;
            let mut server = ServerConfig::http("team", format!("{}/mcp", mcp.origin));
            server.oauth = Some(oauth);
            let secrets = Arc::new(MemorySecrets::default());
            let options = SignInOptions {
                secrets: Some(secrets.clone() as Arc<dyn SecretStore>),
                ..SignInOptions::default()
            };
            let auth = ServerAuth::for_server(&server, &options).unwrap();
            Self {
                mcp,
                auth_server,
                secrets,
                auth,
            }
        }

        async fn sign_in(&self) -> Result<SignInState, String> {
            self.auth
                .sign_in_now(&Browser::Command("false".into()))
                .await
                .map_err(|err| err.to_string())
        }

        fn token_requests(&self) -> Vec<Heard> {
            self.auth_server.heard("/token")
        }

        /// Every byte kept in the keychain.
        fn kept(&self) -> String {
            let url = format!("{}/mcp", self.mcp.origin);
            self.secrets
                .get(&crate::auth::record_key(&url))
                .unwrap()
                .unwrap_or_default()
        }
    }

    fn metadata(origin: &str) -> Value {
        json!({"issuer": origin, "authorization_endpoint": format!("{origin}/authorize"),
               "token_endpoint": format!("{origin}/token"), "response_types_supported": ["code"],
               "grant_types_supported": ["client_credentials"],
               "token_endpoint_auth_methods_supported": ["client_secret_basic"]})
    }

    fn granted(_: &Heard) -> (u16, String) {
        (
            200,
            json!({"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600}).to_string(),
        )
    }

    fn oauth(grant: MachineGrant) -> OAuthConfig {
        OAuthConfig {
            client_id: Some("reports bot".into()),
            grant: Some(grant),
            ..OAuthConfig::default()
        }
    }

    fn with_secret(secret: Secret) -> MachineGrant {
        MachineGrant::ClientCredentials {
            client: ClientAuth::Secret {
                secret,
                method: None,
            },
        }
    }

    #[tokio::test]
    async fn a_client_secret_from_the_keychain_signs_in_without_a_browser() {
        let world = World::new(
            metadata,
            granted,
            oauth(with_secret(Secret::Keychain("reports".into()))),
        )
        .await;
        world
            .secrets
            .set(&keychain_account("reports"), SECRET)
            .unwrap();
        let state = world.sign_in().await.unwrap();
        assert_eq!(
            state.summary(),
            "signed in as reports bot (client credentials, no browser)"
        );
        let requests = world.token_requests();
        assert_eq!(requests.len(), 1);
        let form = requests[0].form();
        assert_eq!(form["grant_type"], "client_credentials");
        assert_eq!(form["resource"], format!("{}/mcp", world.mcp.origin));
        assert!(!form.contains_key("client_secret"));
        // HTTP Basic, each part form-encoded first.
        assert_eq!(
            requests[0].headers["authorization"],
            format!("Basic {}", STANDARD.encode(format!("reports+bot:{SECRET}")))
        );
        // The token is kept in the record; the secret stays where mcp.json says it is.
        let kept = world.kept();
        assert!(kept.contains("at-1") && !kept.contains(SECRET), "{kept}");
    }

    /// A computer with no keychain running.
    struct NoKeychain;

    impl SecretStore for NoKeychain {
        fn get(&self, _: &str) -> Result<Option<String>, tooltrail_keychain::KeychainError> {
            Err(tooltrail_keychain::KeychainError::NoService)
        }
        fn set(&self, _: &str, _: &str) -> Result<(), tooltrail_keychain::KeychainError> {
            Err(tooltrail_keychain::KeychainError::NoService)
        }
        fn delete(&self, _: &str) -> Result<(), tooltrail_keychain::KeychainError> {
            Err(tooltrail_keychain::KeychainError::NoService)
        }
    }

    #[tokio::test]
    async fn with_no_keychain_the_token_is_kept_for_the_run_and_requests_carry_it() {
        let world = World::new(
            metadata,
            granted,
            oauth(with_secret(Secret::Value(SECRET.into()))),
        )
        .await;
        let mut server = ServerConfig::http("team", format!("{}/mcp", world.mcp.origin));
        server.oauth = Some(oauth(with_secret(Secret::Value(SECRET.into()))));
        let options = SignInOptions {
            secrets: Some(Arc::new(NoKeychain)),
            ..SignInOptions::default()
        };
        let auth = ServerAuth::for_server(&server, &options).unwrap();
        let state = auth.sign_in_now(&Browser::Fetch).await.unwrap();
        assert_eq!(
            state.summary(),
            "signed in as reports bot (client credentials, no browser; kept for this run, with \
             no system keychain)"
        );
        // The next request's client carries the token kept in memory.
        let client = auth.http_client().await.unwrap();
        assert_eq!(client.get_access_token().await.unwrap(), "at-1");
    }

    #[tokio::test]
    async fn a_private_key_signs_an_assertion_for_the_authorization_server_alone() {
        let world = World::new(
            metadata,
            granted,
            oauth(MachineGrant::ClientCredentials {
                client: ClientAuth::PrivateKeyJwt {
                    key: Secret::Value(KEY.into()),
                    algorithm: Algorithm::ES256,
                },
            }),
        )
        .await;
        world.sign_in().await.unwrap();
        let form = world.token_requests()[0].form();
        assert_eq!(form["client_assertion_type"], CLIENT_ASSERTION_TYPE);
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.set_audience(&[world.auth_server.origin.as_str()]);
        let claims = jsonwebtoken::decode::<Value>(
            &form["client_assertion"],
            &jsonwebtoken::DecodingKey::from_ec_pem(PUBLIC_KEY.as_bytes()).unwrap(),
            &validation,
        )
        .unwrap()
        .claims;
        assert_eq!(claims["iss"], "reports bot");
        assert_eq!(claims["sub"], "reports bot");
    }

    #[tokio::test]
    async fn what_goes_wrong_is_said_in_a_sentence() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        for (grant, says) in [
            (
                with_secret(Secret::File(missing.clone())),
                format!(
                    "the client secret file {} could not be read (entity not found)",
                    missing.display()
                ),
            ),
            (
                MachineGrant::ClientCredentials {
                    client: ClientAuth::PrivateKeyJwt {
                        key: Secret::Value("not a key".into()),
                        algorithm: Algorithm::ES256,
                    },
                },
                "the private key is not a PEM key that ES256 signs with".to_string(),
            ),
            (
                with_secret(Secret::Keychain("absent".into())),
                "the system keychain has no entry \"mcp-secret:absent\" (service \"tooltrail\") \
                 for the client secret that mcp.json names: add it there"
                    .to_string(),
            ),
        ] {
            let world = World::new(metadata, granted, oauth(grant)).await;
            assert_eq!(
                world.sign_in().await.unwrap_err(),
                format!("signing in to the MCP server \"team\" did not work: {says}")
            );
            assert!(world.token_requests().is_empty());
        }
        // The identity provider refusing the identity token.
        let idp = Scripted::start(Arc::new(|_: &Heard| {
            (400, json!({"error": "invalid_grant"}).to_string())
        }))
        .await;
        let world = World::new(
            metadata,
            granted,
            oauth(MachineGrant::Enterprise {
                identity_provider: IdentityProvider {
                    issuer: idp.origin.clone(),
                    token_endpoint: format!("{}/token", idp.origin),
                    client_id: "tooltrail".into(),
                    client_secret: None,
                },
                id_token: Secret::Value("id-token".into()),
                client: ClientAuth::Secret {
                    secret: Secret::Value(SECRET.into()),
                    method: None,
                },
            }),
        )
        .await;
        assert_eq!(
            world.sign_in().await.unwrap_err(),
            "signing in to the MCP server \"team\" did not work: the identity provider did not \
             accept the identity token (invalid_grant): it may have expired; get a new one"
        );
    }

    #[tokio::test]
    async fn attack_signin_a_secret_echoed_in_a_refusal_reaches_no_message_state_or_record() {
        let world = World::new(
            metadata,
            |heard: &Heard| {
                // Echoes everything it was sent, the Basic credentials decoded.
                let echo = format!("{heard:?} {SECRET}");
                (
                    401,
                    json!({"error": "invalid_client", "error_description": echo}).to_string(),
                )
            },
            oauth(with_secret(Secret::Value(SECRET.into()))),
        )
        .await;
        let error = world.sign_in().await.unwrap_err();
        assert_eq!(
            error,
            "signing in to the MCP server \"team\" did not work: the authorization server did not \
             accept the client's credentials (invalid_client): check \"client_id\" and its \
             secret or key in mcp.json"
        );
        let state = format!("{:?}", world.auth.state());
        assert!(!state.contains(SECRET), "{state}");
        assert!(!world.kept().contains(SECRET));
        assert_eq!(world.token_requests().len(), 1);
    }

    #[tokio::test]
    async fn attack_signin_a_token_endpoint_on_another_origin_is_sent_nothing() {
        let elsewhere = Scripted::start(Arc::new(granted)).await;
        let other = elsewhere.origin.clone();
        let world = World::new(
            move |origin| {
                let mut metadata = metadata(origin);
                metadata["token_endpoint"] = format!("{other}/token").into();
                metadata
            },
            granted,
            oauth(with_secret(Secret::Value(SECRET.into()))),
        )
        .await;
        let error = world.sign_in().await.unwrap_err();
        assert!(
            error.contains("is on another origin than its authorization server"),
            "{error}"
        );
        assert!(elsewhere.heard("/token").is_empty());
        // Pinned in mcp.json, the authorization server's own word for it is taken.
        let other = elsewhere.origin.clone();
        let world = World::new(
            move |origin| {
                let mut metadata = metadata(origin);
                metadata["token_endpoint"] = format!("{other}/token").into();
                metadata
            },
            granted,
            OAuthConfig::default(),
        )
        .await;
        let mut pinned = oauth(with_secret(Secret::Value(SECRET.into())));
        pinned.authorization_server = Some(world.auth_server.origin.clone());
        let mut server = ServerConfig::http("team", format!("{}/mcp", world.mcp.origin));
        server.oauth = Some(pinned);
        let auth = ServerAuth::for_server(&server, &SignInOptions::default()).unwrap();
        auth.sign_in_now(&Browser::Fetch).await.unwrap();
        assert_eq!(elsewhere.heard("/token").len(), 1);
    }

    #[tokio::test]
    async fn attack_signin_an_authorization_server_other_than_the_pinned_one_is_sent_nothing() {
        let mut pinned = oauth(with_secret(Secret::Value(SECRET.into())));
        pinned.authorization_server = Some("https://login.example.com".into());
        let world = World::new(metadata, granted, pinned).await;
        let error = world.sign_in().await.unwrap_err();
        assert!(
            error.ends_with(&format!(
                "the server's authorization server is {}, not https://login.example.com as \
                 \"authorization_server\" in mcp.json says: nothing was sent to it",
                world.auth_server.origin
            )),
            "{error}"
        );
        assert!(world.token_requests().is_empty());
    }

    #[test]
    fn attack_signin_a_token_endpoint_over_http_off_this_computer_is_refused() {
        let metadata = |issuer: &str, endpoint: &str| -> AuthorizationMetadata {
            serde_json::from_value(json!({"issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": endpoint}))
            .unwrap()
        };
        let refused = TokenServer::checked(
            &metadata("http://auth.example.com", "http://auth.example.com/token"),
            None,
        )
        .unwrap_err();
        assert_eq!(
            refused,
            "the authorization server's token endpoint http://auth.example.com/token is not \
             https: a client's secret, key or token is sent only over https (or to this computer)"
        );
        for local in [
            "http://127.0.0.1:8080",
            "http://localhost:9",
            "http://[::1]:7",
        ] {
            TokenServer::checked(&metadata(local, &format!("{local}/token")), None).unwrap();
        }
        TokenServer::checked(
            &metadata(
                "https://auth.example.com",
                "https://auth.example.com/oauth/token",
            ),
            None,
        )
        .unwrap();
    }

    #[tokio::test]
    async fn attack_signin_a_workload_token_goes_only_to_the_audience_it_names() {
        let jwt = |aud: &str, exp: u64| {
            let part = |value: Value| URL_SAFE_NO_PAD.encode(value.to_string());
            format!(
                "{}.{}.c2ln",
                part(json!({"alg": "ES256"})),
                part(json!({"iss": "https://idp", "sub": "w", "aud": aud, "exp": exp}))
            )
        };
        let elsewhere = jwt("https://real-as.example.com", now_secs() + 600);
        let world = World::new(
            metadata,
            granted,
            oauth(MachineGrant::JwtBearer {
                assertion: Secret::Value(elsewhere),
                client: ClientAuth::None,
            }),
        )
        .await;
        let error = world.sign_in().await.unwrap_err();
        assert!(
            error.ends_with(&format!(
                "the workload token is for https://real-as.example.com, not for the \
                 authorization server {} that the server names: it was not sent",
                world.auth_server.origin
            )),
            "{error}"
        );
        assert!(world.token_requests().is_empty());
        // Its own audience, then: sent, as the grant.
        let audience = world.auth_server.origin.clone();
        let own = jwt(&audience, now_secs() + 600);
        let mut server = ServerConfig::http("team", format!("{}/mcp", world.mcp.origin));
        server.oauth = Some(oauth(MachineGrant::JwtBearer {
            assertion: Secret::Value(own.clone()),
            client: ClientAuth::None,
        }));
        let auth = ServerAuth::for_server(&server, &SignInOptions::default()).unwrap();
        auth.sign_in_now(&Browser::Fetch).await.unwrap();
        let form = world.token_requests()[0].form();
        assert_eq!(form["grant_type"], JWT_BEARER);
        assert_eq!(form["assertion"], own);
        assert_eq!(form["client_id"], "reports bot");
    }
}
