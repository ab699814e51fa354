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
        CredentialStore::save(&self.store, credentials)
            .await
            .map_err(|err| self.failed(super::describe(&err)))?;
        let identity = Some(format!("{client_id} ({}, no browser)", grant.label()));
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
    let (jwt_algorithm, encoding_key) = match algorithm {
        Algorithm::ES256 => (
            jsonwebtoken::Algorithm::ES256,
            EncodingKey::from_ec_pem(key.as_bytes()),
        ),
        Algorithm::ES384 => (
            jsonwebtoken::Algorithm::ES384,
            EncodingKey::from_ec_pem(key.as_bytes()),
        ),
        Algorithm::RS256 => (
            jsonwebtoken::Algorithm::RS256,
            EncodingKey::from_rsa_pem(key.as_bytes()),
        ),
        Algorithm::RS384 => (
            jsonwebtoken::Algorithm::RS384,
            EncodingKey::from_rsa_pem(key.as_bytes()),
        ),
        Algorithm::RS512 => (
            jsonwebtoken::Algorithm::RS512,
            EncodingKey::from_rsa_pem(key.as_bytes()),
        ),
        Algorithm::PS256 => (
            jsonwebtoken::Algorithm::PS256,
            EncodingKey::from_rsa_pem(key.as_bytes()),
        ),
        Algorithm::EdDSA => (
            jsonwebtoken::Algorithm::EdDSA,
            EncodingKey::from_ed_pem(key.as_bytes()),
        ),
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
