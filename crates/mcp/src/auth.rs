//! Signing in to MCP servers that ask for it: the authorization flow of the MCP spec for
//! Streamable HTTP servers (OAuth 2.1), on top of the official SDK's `auth` module.
//!
//! A server that answers 401 starts it. The SDK discovers the protected resource's metadata
//! (RFC 9728, from `WWW-Authenticate` or the well-known paths) and its authorization server's
//! (RFC 8414, then OpenID discovery), checking each issuer; picks the scopes (the challenge's,
//! else `scopes_supported`); and runs the authorization code flow with PKCE S256 and the
//! `resource` parameter (RFC 8707), checking the `iss` of the answer (RFC 9207). We add the
//! rest: who Tooltrail is to the authorization server (the `oauth.client_id` of `mcp.json`,
//! else a Client ID Metadata Document where the server supports one and one is configured, else
//! a dynamic registration (RFC 7591) whose secret we keep), the user's browser with a loopback
//! redirect on 127.0.0.1 (RFC 8252), step-up on 403 `insufficient_scope` with the scopes
//! granted so far plus the new one (at most [`MAX_STEP_UPS`] times for one request), and the
//! record kept in the OS keychain by server URL (see [`SecretStore`]).
//!
//! Tokens are refreshed by the SDK before they expire and when the server rejects one; only
//! when that fails is the user asked again. A pre-registered confidential client authenticates
//! with the `client_secret` of `mcp.json` on every refresh and revocation too (the secret stays
//! in the config, which may read it from the environment; it is not copied to the keychain).
//!
//! Hosts named by the server's sign-in metadata may not be on private networks (the SDK's
//! guard), unless the server's `oauth` in `mcp.json` says `"allow_private_addresses": true`;
//! a refusal says so. A loopback server may name loopback hosts. Whether a browser may be opened without the user
//! asking is the [`SignInPolicy`]: the app and a terminal may, `serve` and a piped `ask` may
//! not, and then the server's tools fail with a sentence naming `tooltrail mcp login NAME`.
//!
//! Nothing secret reaches a log, an error message or a listing: errors are built from the
//! SDK's error kinds, not its debug output, and records print without their tokens.

mod browser;
mod client;
pub mod launcher;
mod private;
mod store;

use std::sync::{Arc, Mutex as StdMutex, PoisonError};
use std::time::Duration;

use base64::Engine;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadataSource, AuthorizationRequest,
    AuthorizationSession, OAuthClientConfig, OAuthTokenResponse,
};
use serde::Serialize;
use tokio::sync::Mutex;
use ts_rs::TS;

use crate::config::{OAuthConfig, ServerConfig, Transport};
use crate::error::SignInError;

pub use browser::Browser;
pub(crate) use client::SignInClient;
pub use store::{MemorySecrets, SecretStore, record_key};
use store::{RecordStore, SignInRecord};

/// Step-ups (403 `insufficient_scope`) tried for one request before giving up.
pub const MAX_STEP_UPS: u32 = 2;
/// How long a sign-in waits for the browser to come back, unless told otherwise.
pub const DEFAULT_SIGN_IN_WAIT: Duration = Duration::from_secs(300);
/// The name Tooltrail registers itself under.
const CLIENT_NAME: &str = "Tooltrail";

/// Whether a server that asks for sign-in may open the user's browser on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignInPolicy {
    /// Yes, with this browser (the command line on a terminal).
    Interactive(Browser),
    /// Only to renew a sign-in the user made before (it expired or was revoked); a server never
    /// signed in to waits for the user to ask (the app's Sign in button).
    Renew(Browser),
    /// No: the server's requests fail and say to run `tooltrail mcp login NAME`.
    Never,
}

/// Told of a server's new sign-in state: the server's name and the state.
pub type SignInObserver = Arc<dyn Fn(&str, &SignInState) + Send + Sync>;

/// How servers sign in, for [`crate::McpOptions`].
#[derive(Clone)]
pub struct SignInOptions {
    pub policy: SignInPolicy,
    /// Where records are kept; in memory (forgotten on exit) when `None`.
    pub secrets: Option<Arc<dyn SecretStore>>,
    /// How long to wait for the browser to come back.
    pub wait: Duration,
    /// Told of every change of a server's sign-in state (the app's cards follow it).
    pub observer: Option<SignInObserver>,
}

impl Default for SignInOptions {
    fn default() -> Self {
        Self {
            policy: SignInPolicy::Never,
            secrets: None,
            wait: DEFAULT_SIGN_IN_WAIT,
            observer: None,
        }
    }
}

impl std::fmt::Debug for SignInOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInOptions")
            .field("policy", &self.policy)
            .field("keeps_records", &self.secrets.is_some())
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

/// Where a server's sign-in stands, as listings and the app show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case", tag = "state")]
#[ts(rename = "McpSignInState")]
pub enum SignInState {
    /// The server has not asked for sign-in (as far as we know).
    NotNeeded,
    /// The server asks for sign-in and no usable sign-in is kept.
    Needed,
    /// The browser was opened on `url`; waiting for it to come back.
    Waiting { url: String },
    /// Signed in; `identity` is who, when the authorization server said.
    SignedIn {
        #[serde(skip_serializing_if = "Option::is_none")]
        identity: Option<String>,
    },
    /// The last sign-in did not work; `reason` is a sentence.
    Failed { reason: String },
}

impl SignInState {
    /// A few words for listings.
    pub fn summary(&self) -> String {
        match self {
            Self::NotNeeded => "no sign-in needed".into(),
            Self::Needed => "needs sign-in".into(),
            Self::Waiting { .. } => "waiting for the browser".into(),
            Self::SignedIn {
                identity: Some(who),
            } => format!("signed in as {who}"),
            Self::SignedIn { identity: None } => "signed in".into(),
            Self::Failed { reason } => format!("sign-in failed: {reason}"),
        }
    }
}

/// One HTTP server's sign-in: its record, its state, and the flow. Shared by every connection
/// to the server over the process's life.
pub(crate) struct ServerAuth {
    name: String,
    url: String,
    oauth: OAuthConfig,
    store: RecordStore,
    options: SignInOptions,
    state: StdMutex<SignInState>,
    /// Why the last request that needed a sign-in did not get one, for the error it ends in.
    last_error: StdMutex<Option<SignInError>>,
    /// Held while a sign-in runs, so parallel requests that all got 401 sign in once; the
    /// number counts finished sign-ins.
    flow: Mutex<u64>,
}

impl std::fmt::Debug for ServerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerAuth")
            .field("name", &self.name)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl ServerAuth {
    /// `None` for stdio servers, which do not sign in.
    pub fn for_server(config: &ServerConfig, options: &SignInOptions) -> Option<Arc<Self>> {
        let Transport::Http { url, .. } = &config.transport else {
            return None;
        };
        let secrets = options
            .secrets
            .clone()
            .unwrap_or_else(|| Arc::new(MemorySecrets::default()));
        let store = RecordStore::new(secrets, url);
        let state = match store.load() {
            Ok(record) if record.has_tokens() => SignInState::SignedIn {
                identity: record.identity,
            },
            // A keychain that cannot be read is told when a sign-in needs it, not before: the
            // server may never ask.
            Ok(_) | Err(_) => SignInState::NotNeeded,
        };
        Some(Arc::new(Self {
            name: config.name.clone(),
            url: url.clone(),
            oauth: config.oauth.clone().unwrap_or_default(),
            store,
            options: options.clone(),
            state: StdMutex::new(state),
            last_error: StdMutex::new(None),
            flow: Mutex::new(0),
        }))
    }

    pub fn state(&self) -> SignInState {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_state(&self, state: SignInState) {
        *self.state.lock().unwrap_or_else(PoisonError::into_inner) = state.clone();
        if let Some(observer) = &self.options.observer {
            observer(&self.name, &state);
        }
    }

    /// How long a request may wait for a sign-in to finish: the browser's wait where one may
    /// open, else nothing.
    pub fn sign_in_wait(&self) -> Duration {
        match self.options.policy {
            SignInPolicy::Interactive(_) | SignInPolicy::Renew(_) => self.options.wait,
            SignInPolicy::Never => Duration::ZERO,
        }
    }

    /// Why the last sign-in a request needed did not happen, once.
    pub fn take_error(&self) -> Option<SignInError> {
        self.last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn remember(&self, err: SignInError) -> SignInError {
        *self
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(err.clone());
        err
    }

    /// The server asked and we may not sign in here: say so.
    pub fn needed(&self) -> SignInError {
        self.set_state(SignInState::Needed);
        self.remember(SignInError::Needed(self.name.clone()))
    }

    /// The HTTP client the transport uses: requests carry the kept token, refreshed by the SDK
    /// as needed.
    pub async fn http_client(&self) -> Result<AuthClient<reqwest::Client>, SignInError> {
        let mut manager = self.manager().await?;
        // A keychain that cannot be read keeps nothing; a server that needs no sign-in works
        // all the same.
        let record = self.store.load().unwrap_or_default();
        if record.has_tokens() {
            // Reads the authorization server's metadata, so refreshing works; an unreachable
            // server leaves the kept token to be tried as it is.
            if let Ok(true) = manager.initialize_from_store().await
                && let (Some(id), Some(secret)) = (&record.client_id, self.client_secret(&record))
            {
                let config = OAuthClientConfig::new(id.clone(), self.url.clone())
                    .with_client_secret(secret.clone());
                let _ = manager.configure_client(config);
            }
        }
        Ok(AuthClient::new(reqwest::Client::new(), manager))
    }

    /// The secret `record`'s client authenticates with: the one of `mcp.json` for the
    /// pre-registered client it names, else the one a dynamic registration handed out.
    fn client_secret(&self, record: &SignInRecord) -> Option<String> {
        match (&self.oauth.client_id, &record.client_id) {
            (Some(configured), Some(kept)) if configured == kept => {
                self.oauth.client_secret.clone()
            }
            _ => record.client_secret.clone(),
        }
    }

    async fn manager(&self) -> Result<AuthorizationManager, SignInError> {
        let manager = if self.oauth.allow_private_addresses {
            AuthorizationManager::new_allowing_private_addresses(self.url.as_str()).await
        } else {
            AuthorizationManager::new(self.url.as_str()).await
        };
        let mut manager = manager.map_err(|err| self.failed(describe(&err)))?;
        manager.set_credential_store(self.store.clone());
        Ok(manager)
    }

    pub(crate) fn failed(&self, reason: String) -> SignInError {
        self.set_state(SignInState::Failed {
            reason: reason.clone(),
        });
        self.remember(SignInError::Failed {
            server: self.name.clone(),
            reason,
        })
    }

    /// Signs in with the policy's browser, unless a sign-in finished since `seen` (then the
    /// caller just tries again). `challenge` is the server's `WWW-Authenticate`; `more` are
    /// scopes a step-up needs on top of those granted.
    pub async fn sign_in_after(
        &self,
        seen: u64,
        challenge: Option<&str>,
        more: &[String],
    ) -> Result<u64, SignInError> {
        let browser = match &self.options.policy {
            SignInPolicy::Interactive(browser) => browser,
            SignInPolicy::Renew(browser)
                if self
                    .store
                    .load()
                    .is_ok_and(|record| record.client_id.is_some()) =>
            {
                browser
            }
            SignInPolicy::Renew(_) | SignInPolicy::Never => return Err(self.needed()),
        };
        let mut done = self.flow.lock().await;
        if *done != seen {
            return Ok(*done);
        }
        self.run(browser, challenge, more).await?;
        *done += 1;
        Ok(*done)
    }

    /// Finished sign-ins so far.
    pub async fn generation(&self) -> u64 {
        *self.flow.lock().await
    }

    /// A sign-in the user asked for (`tooltrail mcp login`, the app's button): probes the
    /// server for its challenge first.
    pub async fn sign_in_now(&self, browser: &Browser) -> Result<SignInState, SignInError> {
        let mut done = self.flow.lock().await;
        let challenge = self.probe().await?;
        self.run(browser, challenge.as_deref(), &[]).await?;
        *done += 1;
        Ok(self.state())
    }

    /// Forgets the tokens (and the registered client), revoking the tokens first where the
    /// authorization server supports it. Revocation is best effort: the tokens are forgotten
    /// whatever it answers.
    pub async fn sign_out(&self) -> Result<bool, SignInError> {
        let _flow = self.flow.lock().await;
        let record = self.store.load().map_err(|reason| self.failed(reason))?;
        let mut revoked = false;
        if let (Some(endpoint), Some(credentials)) =
            (&record.revocation_endpoint, &record.credentials)
            && let Some(tokens) = &credentials.token_response
        {
            let secret = self.client_secret(&record);
            revoked = revoke(endpoint, &record, secret.as_deref(), tokens).await;
        }
        self.store.delete().map_err(|reason| self.failed(reason))?;
        self.set_state(SignInState::Needed);
        Ok(revoked)
    }

    /// The server's `WWW-Authenticate` when it refuses us, from an `initialize` sent without a
    /// token. `NotAsked` when it answers without one.
    async fn probe(&self) -> Result<Option<String>, SignInError> {
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "tooltrail", "version": env!("CARGO_PKG_VERSION")}}
        });
        let response = reqwest::Client::new()
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .json(&body)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|err| self.failed(format!("the server could not be reached ({err})")))?;
        match response.status().as_u16() {
            401 | 403 => Ok(response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|value| value.to_str().ok())
                .map(str::to_string)),
            _ => {
                // A server that lets us in has nothing to sign in to; keep what we have.
                Err(SignInError::NotAsked(self.name.clone()))
            }
        }
    }

    /// Authorization server metadata of a server of the 2025-03-26 revision, whose issuer the
    /// SDK refused: such a server publishes no protected resource metadata, so its own origin's
    /// `/.well-known/oauth-authorization-server` is where that revision says to look, and what it
    /// serves there is the server speaking for itself. Its issuer may then name another path of
    /// the same origin (an authorization server mounted under `/oauth`, say); never another
    /// origin. `None` (refuse, as RFC 8414 says) when the server has protected resource metadata,
    /// when either issuer is off the server's origin, or when the metadata cannot be read again.
    async fn legacy_metadata(
        &self,
        challenge: Option<&str>,
        expected_issuer: &str,
        received_issuer: &str,
    ) -> Option<rmcp::transport::auth::AuthorizationMetadata> {
        let server = reqwest::Url::parse(&self.url).ok()?;
        let origin = server.origin();
        let same_origin =
            |issuer: &str| reqwest::Url::parse(issuer).is_ok_and(|url| url.origin() == origin);
        if challenge.is_some_and(|text| text.to_ascii_lowercase().contains("resource_metadata"))
            || !same_origin(expected_issuer)
            || !same_origin(received_issuer)
        {
            return None;
        }
        let http = reqwest::Client::new();
        let get = |path: String| {
            let mut url = server.clone();
            url.set_path(&path);
            url.set_query(None);
            url.set_fragment(None);
            http.get(url)
                .header("Accept", "application/json")
                .timeout(Duration::from_secs(30))
                .send()
        };
        let resource_path = server.path().trim_matches('/');
        let mut prm_paths = vec!["/.well-known/oauth-protected-resource".to_string()];
        if !resource_path.is_empty() {
            prm_paths.insert(
                0,
                format!("/.well-known/oauth-protected-resource/{resource_path}"),
            );
        }
        for path in prm_paths {
            if get(path).await.ok()?.status().is_success() {
                return None;
            }
        }
        let response = get("/.well-known/oauth-authorization-server".to_string())
            .await
            .ok()?;
        if !response.status().is_success() {
            return None;
        }
        let metadata: rmcp::transport::auth::AuthorizationMetadata =
            serde_json::from_slice(&response.bytes().await.ok()?).ok()?;
        let issuer = metadata.issuer.as_deref()?;
        (issuer == received_issuer && same_origin(issuer)).then_some(metadata)
    }

    /// The flow itself.
    async fn run(
        &self,
        browser: &Browser,
        challenge: Option<&str>,
        more: &[String],
    ) -> Result<(), SignInError> {
        let mut manager = self.manager().await?;
        let (metadata, source) = match manager.resolve_metadata_from_challenge(challenge).await {
            Ok(resolution) => (resolution.metadata, resolution.source),
            Err(AuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            }) => match self
                .legacy_metadata(challenge, &expected_issuer, &received_issuer)
                .await
            {
                Some(metadata) => (
                    metadata,
                    AuthorizationMetadataSource::AuthorizationServerMetadata,
                ),
                None => {
                    return Err(
                        self.failed(describe(&AuthError::AuthorizationServerMismatch {
                            expected_issuer,
                            received_issuer,
                        })),
                    );
                }
            },
            Err(err) => return Err(self.failed(self.explain(&err, challenge).await)),
        };
        // A server of the 2025-03-26 revision, found without protected resource metadata,
        // predates RFC 9207 in MCP: an `iss` it sends unasked is not held against it. Every
        // other server's `iss` must be its issuer exactly.
        let check_iss = source == AuthorizationMetadataSource::ProtectedResourceMetadata
            || metadata
                .additional_fields
                .get("authorization_response_iss_parameter_supported")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
        let revocation_endpoint = metadata
            .additional_fields
            .get("revocation_endpoint")
            .and_then(|value| value.as_str())
            .map(str::to_string);
        let revoke_in_body = secret_goes_in_body(&metadata.additional_fields);
        let supports_cimd = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        let takes_registrations = metadata.registration_endpoint.is_some();
        manager.set_metadata(metadata);

        let record = self.store.load().map_err(|reason| self.failed(reason))?;
        // Scopes: what mcp.json says, else what the server suggests; a step-up adds the new
        // ones to those granted so far (a new sign-in replaces the old token entirely).
        let mut scopes: Vec<String> = if self.oauth.scopes.is_empty() {
            manager.select_initial_scopes(&[]).await
        } else {
            self.oauth.scopes.clone()
        };
        if !more.is_empty() {
            let granted = record
                .credentials
                .as_ref()
                .map(|credentials| credentials.granted_scopes.clone())
                .unwrap_or_default();
            for scope in granted.into_iter().chain(more.iter().cloned()) {
                if !scopes.contains(&scope) {
                    scopes.push(scope);
                }
            }
        }

        let loopback = browser::Loopback::bind()
            .await
            .map_err(|reason| self.failed(reason))?;
        let redirect_uri = loopback.redirect_uri();
        let mut request = AuthorizationRequest::new(redirect_uri.clone())
            .with_client_name(CLIENT_NAME)
            .with_scopes(scopes.clone());
        let mut client_secret = None;
        if let Some(id) = &self.oauth.client_id {
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = &self.oauth.client_secret {
                request = request.with_client_secret(secret.clone());
            }
        } else if let (Some(url), true) = (&self.oauth.client_metadata_url, supports_cimd) {
            request = request.with_client_metadata_url(url.clone());
        } else if takes_registrations {
            // Register here rather than inside the SDK's session, so the secret the
            // authorization server hands out is ours to keep for refreshing later.
            let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let registered = manager
                .register_client(CLIENT_NAME, &redirect_uri, &scope_refs)
                .await
                .map_err(|err| self.failed(describe(&err)))?;
            request = request.with_preregistered_client(registered.client_id.clone());
            if let Some(secret) = registered.client_secret.clone() {
                request = request.with_client_secret(secret.clone());
                client_secret = Some(secret);
            }
        } else {
            return Err(self.failed(
                "the authorization server takes no registrations and mcp.json gives no \
                 \"oauth\": {\"client_id\"} for this server"
                    .into(),
            ));
        }

        let session = match AuthorizationSession::new(manager, request).await {
            Ok(session) => session,
            Err((_, err)) => return Err(self.failed(self.explain(&err, None).await)),
        };
        let url = session.get_authorization_url().to_string();
        // The authorization endpoint comes from the server's metadata: only a web page is
        // opened, and only the callback carrying this sign-in's state is taken.
        let state = launcher::web_address(&url)
            .map_err(|err| err.to_string())
            .and_then(|address| {
                address
                    .query_pairs()
                    .find(|(key, _)| key == "state")
                    .map(|(_, value)| value.into_owned())
                    .filter(|state| !state.is_empty())
                    .ok_or_else(|| {
                        "the authorization page has no state to check the answer by".into()
                    })
            })
            .map_err(|reason: String| self.failed(reason))?;
        self.set_state(SignInState::Waiting { url: url.clone() });
        // Listen while the browser opens: a browser without a person (`Fetch`) only finishes
        // once the callback has been answered, which is after the exchange. One that does not
        // start is no reason to stop: the waiting state carries the URL, which the command line
        // prints and the app shows.
        let opener = {
            let (browser, url) = (browser.clone(), url.clone());
            tokio::spawn(async move {
                let _ = browser.open(&url).await;
            })
        };
        let Some(arrival) = loopback.wait(self.options.wait, &state).await else {
            opener.abort();
            let secs = self.options.wait.as_secs();
            self.set_state(SignInState::Failed {
                reason: format!("the browser did not come back within {secs} s"),
            });
            return Err(self.remember(SignInError::TimedOut {
                server: self.name.clone(),
                secs,
            }));
        };
        let outcome = self
            .finish(
                session,
                &arrival.url,
                check_iss,
                client_secret,
                revocation_endpoint,
                revoke_in_body,
            )
            .await;
        arrival
            .answer(
                &self.name,
                outcome.as_ref().map(|_| ()).map_err(String::as_str),
            )
            .await;
        match outcome {
            Ok(identity) => {
                self.set_state(SignInState::SignedIn { identity });
                Ok(())
            }
            Err(reason) => Err(self.failed(reason)),
        }
    }

    /// The browser came back with `callback`: exchanges its code and keeps what the sign-in
    /// gave. Who signed in, or why it did not work.
    async fn finish(
        &self,
        session: AuthorizationSession,
        callback: &str,
        check_iss: bool,
        client_secret: Option<String>,
        revocation_endpoint: Option<String>,
        revoke_in_body: bool,
    ) -> Result<Option<String>, String> {
        if let Some(reason) = callback_error(callback) {
            return Err(reason);
        }
        // Keep the client first, so the tokens the exchange writes join it in one record. A
        // pre-registered client's secret stays in mcp.json.
        self.store.update(|record| {
            record.client_secret = client_secret.or_else(|| {
                if self.oauth.client_id.is_some() {
                    None
                } else {
                    record.client_secret.take()
                }
            });
            record.revocation_endpoint = revocation_endpoint;
            record.revoke_in_body = revoke_in_body;
        })?;
        let callback = if check_iss {
            callback.to_string()
        } else {
            without_iss(callback)
        };
        let tokens = match session.handle_callback_url(&callback).await {
            Ok(tokens) => tokens,
            Err(err) => return Err(self.explain(&err, None).await),
        };
        let identity = identity_of(&tokens);
        self.store
            .update(|record| record.identity = identity.clone())?;
        Ok(identity)
    }

    /// An SDK error in words, naming the `mcp.json` opt-in when the SDK refused a host on a
    /// private network that the server's metadata (or its `challenge`) named.
    async fn explain(&self, err: &AuthError, challenge: Option<&str>) -> String {
        if !self.oauth.allow_private_addresses
            && let Some(host) = private::named_private_host(err, challenge).await
        {
            return private::refusal(&host);
        }
        describe(err)
    }
}

/// The callback without its `iss` parameter.
fn without_iss(callback: &str) -> String {
    let Ok(mut url) = reqwest::Url::parse(callback) else {
        return callback.to_string();
    };
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(key, _)| key != "iss")
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect();
    url.query_pairs_mut().clear().extend_pairs(kept);
    url.to_string()
}

/// The `error` of a callback, in words.
fn callback_error(callback: &str) -> Option<String> {
    let url = reqwest::Url::parse(callback).ok()?;
    let mut error = None;
    let mut description = None;
    for (key, value) in url.query_pairs() {
        match key.as_ref() {
            "error" => error = Some(value.into_owned()),
            "error_description" => description = Some(value.into_owned()),
            _ => {}
        }
    }
    let error = error?;
    Some(match description {
        Some(description) => format!("the authorization server said {error}: {description}"),
        None if error == "access_denied" => "access was denied".into(),
        None => format!("the authorization server said {error}"),
    })
}

/// Who signed in, from the ID token's claims when the authorization server sent one (read for
/// display only, not trusted for anything).
fn identity_of(tokens: &OAuthTokenResponse) -> Option<String> {
    let extra = &tokens.extra_fields().0;
    if let Some(id_token) = extra.get("id_token").and_then(|v| v.as_str()) {
        let payload = id_token.split('.').nth(1)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload.trim_end_matches('='))
            .ok()?;
        let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        for claim in ["email", "preferred_username", "name", "sub"] {
            if let Some(value) = claims.get(claim).and_then(|v| v.as_str()) {
                return Some(value.to_string());
            }
        }
    }
    for field in ["username", "user", "email"] {
        if let Some(value) = extra.get(field).and_then(|v| v.as_str()) {
            return Some(value.to_string());
        }
    }
    None
}

/// RFC 7009: revokes the refresh token (which takes the access token with it at most servers),
/// else the access token. Whether the server accepted it.
async fn revoke(
    endpoint: &str,
    record: &SignInRecord,
    secret: Option<&str>,
    tokens: &OAuthTokenResponse,
) -> bool {
    use oauth2::TokenResponse;
    let (token, hint) = match tokens.refresh_token() {
        Some(refresh) => (refresh.secret().clone(), "refresh_token"),
        None => (tokens.access_token().secret().clone(), "access_token"),
    };
    let mut form = vec![("token", token), ("token_type_hint", hint.to_string())];
    let client = reqwest::Client::new();
    let mut request = client.post(endpoint).timeout(Duration::from_secs(15));
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

/// Whether a client secret goes in the request body (`client_secret_post`) rather than HTTP
/// Basic: when the authorization server lists only the former for revocation (else for its
/// token endpoint), as the SDK decides for the token endpoint.
fn secret_goes_in_body(metadata: &std::collections::HashMap<String, serde_json::Value>) -> bool {
    let methods = metadata
        .get("revocation_endpoint_auth_methods_supported")
        .or_else(|| metadata.get("token_endpoint_auth_methods_supported"))
        .and_then(serde_json::Value::as_array);
    methods.is_some_and(|methods| {
        let has = |name: &str| methods.iter().any(|method| method.as_str() == Some(name));
        has("client_secret_post") && !has("client_secret_basic")
    })
}

/// `pairs` as an `application/x-www-form-urlencoded` body.
fn form_body(pairs: &[(&str, String)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// An SDK auth error in words. Built from the error's kind, never its debug output, so no
/// token or code can slip through.
pub(crate) fn describe(err: &AuthError) -> String {
    let text = err.to_string();
    let text = text
        .strip_prefix("OAuth ")
        .map(|rest| {
            let mut chars = rest.chars();
            chars
                .next()
                .map(|first| first.to_lowercase().collect::<String>() + chars.as_str())
                .unwrap_or_default()
        })
        .unwrap_or(text);
    text.trim_end_matches('.').to_string()
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

    #[test]
    fn states_read_as_words() {
        assert_eq!(
            SignInState::SignedIn {
                identity: Some("ada@example.com".into())
            }
            .summary(),
            "signed in as ada@example.com"
        );
        assert_eq!(SignInState::Needed.summary(), "needs sign-in");
        assert_eq!(
            SignInError::Needed("docs".into()).to_string(),
            "the MCP server \"docs\" needs you to sign in: run `tooltrail mcp login docs`"
        );
    }

    #[test]
    fn only_the_iss_is_taken_off_a_callback() {
        assert_eq!(
            without_iss("http://127.0.0.1:9/callback?code=c&iss=http%3A%2F%2Fa&state=s"),
            "http://127.0.0.1:9/callback?code=c&state=s"
        );
    }

    #[test]
    fn callback_errors_are_sentences() {
        assert_eq!(
            callback_error("http://127.0.0.1:1/callback?error=access_denied&state=x"),
            Some("access was denied".into())
        );
        assert_eq!(
            callback_error("http://127.0.0.1:1/callback?code=c&state=x"),
            None
        );
    }

    #[test]
    fn the_identity_comes_from_the_id_token() {
        let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(br#"{"sub":"123","email":"ada@example.com"}"#);
        let tokens: OAuthTokenResponse = serde_json::from_value(serde_json::json!({
            "access_token": "a", "token_type": "Bearer", "id_token": format!("h.{claims}.s")
        }))
        .unwrap();
        assert_eq!(identity_of(&tokens), Some("ada@example.com".into()));
    }
}
