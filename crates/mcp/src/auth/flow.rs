//! The sign-in itself, from the server's challenge to the tokens in the record: discovery
//! (`discovery.rs`), the scopes, who Tooltrail is to the authorization server, the authorization
//! page in the user's browser with its loopback redirect (`browser.rs`), and the exchange of
//! the code that comes back. Each step reports what went wrong as a sentence without secrets.

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
    AuthorizationRequest, AuthorizationSession,
};

use std::sync::Arc;

use oauth2::TokenResponse;

use super::browser::{Arrival, Loopback};
use super::dpop::{self, DpopKey, DpopOAuthHttp};
use super::identity::identity_of;
use super::revoke::Revocation;
use super::{Browser, ServerAuth, SignInState, describe, launcher, private};
use crate::error::SignInError;

/// The name Tooltrail registers itself under.
const CLIENT_NAME: &str = "Tooltrail";

/// What the authorization server's metadata says that the flow needs after the metadata has
/// gone to the SDK.
struct Advertised {
    /// Whether the `iss` of the answer must be the issuer (RFC 9207).
    check_iss: bool,
    /// How its tokens are revoked, kept for signing out.
    revocation: Revocation,
    /// Whether it takes a Client ID Metadata Document's URL as a client id.
    client_metadata_documents: bool,
    /// Whether it takes dynamic registrations (RFC 7591).
    registrations: bool,
}

impl Advertised {
    fn read(metadata: &AuthorizationMetadata, source: AuthorizationMetadataSource) -> Self {
        let fields = &metadata.additional_fields;
        let flag = |name: &str| {
            fields
                .get(name)
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false)
        };
        Self {
            // A server of the 2025-03-26 revision, found without protected resource metadata,
            // predates RFC 9207 in MCP: an `iss` it sends unasked is not held against it. Every
            // other server's `iss` must be its issuer exactly.
            check_iss: source == AuthorizationMetadataSource::ProtectedResourceMetadata
                || flag("authorization_response_iss_parameter_supported"),
            revocation: Revocation::advertised(fields),
            client_metadata_documents: flag("client_id_metadata_document_supported"),
            registrations: metadata.registration_endpoint.is_some(),
        }
    }
}

/// What the record keeps of a sign-in beside the tokens the SDK writes into it.
struct Kept {
    /// The secret a dynamic registration handed out, for refreshing later.
    client_secret: Option<String>,
    revocation: Revocation,
    /// The key a DPoP token is to be bound to.
    dpop_key: Option<String>,
}

impl ServerAuth {
    /// Signs in with `browser`, from the server's challenge (`www_authenticate`); a step-up
    /// asks for `step_up_scopes` on top of those granted.
    pub(super) async fn run(
        &self,
        browser: &Browser,
        www_authenticate: Option<&str>,
        step_up_scopes: &[String],
    ) -> Result<(), SignInError> {
        let mut manager = self.manager().await?;
        let (metadata, source) = self.discover(&manager, www_authenticate).await?;
        let advertised = Advertised::read(&metadata, source);
        let dpop = dpop::offered(&metadata).then(|| metadata.clone());
        manager.set_metadata(metadata);
        let scopes = self.scopes(&manager, step_up_scopes).await?;
        // A server that binds tokens to a key (DPoP) gets a proof with the token request, from
        // a manager whose HTTP client adds it; discovery is done by then.
        let dpop_key = match dpop {
            Some(metadata) => {
                let key = Arc::new(DpopKey::generate().map_err(|reason| self.failed(reason))?);
                manager = self.dpop_manager(Arc::clone(&key), metadata).await?;
                Some(key)
            }
            None => None,
        };
        let loopback = Loopback::bind()
            .await
            .map_err(|reason| self.failed(reason))?;
        let (request, client_secret) = self
            .authorization_request(&mut manager, loopback.redirect_uri(), scopes, &advertised)
            .await?;
        let session = match AuthorizationSession::new(manager, request).await {
            Ok(session) => session,
            Err((_, err)) => return Err(self.failed(self.explain(&err, None).await)),
        };
        let url = session.get_authorization_url().to_string();
        let state = page_state(&url).map_err(|reason| self.failed(reason))?;
        self.set_state(SignInState::Waiting { url: url.clone() });
        let arrival = self
            .wait_for_browser(browser, &loopback, &url, &state)
            .await?;
        let kept = Kept {
            client_secret,
            revocation: advertised.revocation,
            dpop_key: dpop_key.map(|key| key.kept()),
        };
        let outcome = self
            .finish(session, &arrival.url, advertised.check_iss, kept)
            .await;
        self.answer(arrival, outcome).await
    }

    /// A manager for the rest of a sign-in whose token is to be bound to `key`: its HTTP client
    /// puts a proof on the token request. `metadata` was found (and checked) by the first.
    async fn dpop_manager(
        &self,
        key: Arc<DpopKey>,
        metadata: AuthorizationMetadata,
    ) -> Result<AuthorizationManager, SignInError> {
        let http = DpopOAuthHttp::new(key, &metadata.token_endpoint)
            .map_err(|reason| self.failed(reason))?;
        let mut manager =
            AuthorizationManager::new_with_oauth_http_client(self.url.as_str(), Arc::new(http))
                .await
                .map_err(|err| self.failed(describe(&err)))?;
        manager.set_credential_store(self.store.clone());
        manager.set_metadata(metadata);
        Ok(manager)
    }

    /// The scopes to ask for: what mcp.json says, else what the server suggests; a step-up adds
    /// `step_up_scopes` and those granted so far (a new sign-in replaces the old token
    /// entirely, so what it had must be asked for again).
    ///
    /// rmcp's own step-up (`AuthorizationManager::request_scope_upgrade`) is not used: it counts
    /// its attempts over one manager's life and builds the union from the scopes that manager
    /// requested, where a manager here lasts one sign-in, the limit is per request
    /// ([`super::MAX_STEP_UPS`], in `client.rs`), and the scopes granted so far are the ones
    /// kept in the record from an earlier sign-in, possibly of an earlier run.
    async fn scopes(
        &self,
        manager: &AuthorizationManager,
        step_up_scopes: &[String],
    ) -> Result<Vec<String>, SignInError> {
        let record = self.store.load().map_err(|reason| self.failed(reason))?;
        let mut scopes: Vec<String> = if self.oauth.scopes.is_empty() {
            manager.select_initial_scopes(&[]).await
        } else {
            self.oauth.scopes.clone()
        };
        if !step_up_scopes.is_empty() {
            let granted = record
                .credentials
                .as_ref()
                .map(|credentials| credentials.granted_scopes.clone())
                .unwrap_or_default();
            for scope in granted.into_iter().chain(step_up_scopes.iter().cloned()) {
                if !scopes.contains(&scope) {
                    scopes.push(scope);
                }
            }
        }
        Ok(scopes)
    }

    /// The authorization request, with who Tooltrail is to the authorization server: the
    /// `oauth.client_id` of mcp.json, else a Client ID Metadata Document where the server takes
    /// one and one is configured, else a dynamic registration. With the secret a registration
    /// handed out, if it did.
    async fn authorization_request(
        &self,
        manager: &mut AuthorizationManager,
        redirect_uri: String,
        scopes: Vec<String>,
        advertised: &Advertised,
    ) -> Result<(AuthorizationRequest, Option<String>), SignInError> {
        let request = AuthorizationRequest::new(redirect_uri.clone())
            .with_client_name(CLIENT_NAME)
            .with_scopes(scopes.clone());
        if let Some(id) = &self.oauth.client_id {
            let request = request.with_preregistered_client(id.clone());
            return Ok(match &self.oauth.client_secret {
                Some(secret) => (request.with_client_secret(secret.clone()), None),
                None => (request, None),
            });
        }
        if let (Some(url), true) = (
            &self.oauth.client_metadata_url,
            advertised.client_metadata_documents,
        ) {
            return Ok((request.with_client_metadata_url(url.clone()), None));
        }
        if !advertised.registrations {
            return Err(self.failed(
                "the authorization server takes no registrations and mcp.json gives no \
                 \"oauth\": {\"client_id\"} for this server"
                    .into(),
            ));
        }
        // Register here rather than inside the SDK's session, so the secret the authorization
        // server hands out is ours to keep for refreshing later.
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let registered = manager
            .register_client(CLIENT_NAME, &redirect_uri, &scope_refs)
            .await
            .map_err(|err| self.failed(describe(&err)))?;
        let request = request.with_preregistered_client(registered.client_id.clone());
        Ok(match registered.client_secret {
            Some(secret) => (request.with_client_secret(secret.clone()), Some(secret)),
            None => (request, None),
        })
    }

    /// Opens the authorization page `url` and waits for the browser to come back to
    /// `loopback` with this sign-in's `state`.
    async fn wait_for_browser(
        &self,
        browser: &Browser,
        loopback: &Loopback,
        url: &str,
        state: &str,
    ) -> Result<Arrival, SignInError> {
        // Listen while the browser opens: a browser without a person (`Fetch`) only finishes
        // once the callback has been answered, which is after the exchange. One that does not
        // start is no reason to stop: the waiting state carries the URL, which the command line
        // prints and the app shows.
        let opener = {
            let (browser, url) = (browser.clone(), url.to_string());
            tokio::spawn(async move {
                let _ = browser.open(&url).await;
            })
        };
        let Some(arrival) = loopback.wait(self.options.wait, state).await else {
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
        Ok(arrival)
    }

    /// The browser came back with `callback`: exchanges its code and keeps what the sign-in
    /// gave. Who signed in, or why it did not work.
    async fn finish(
        &self,
        session: AuthorizationSession,
        callback: &str,
        check_iss: bool,
        kept: Kept,
    ) -> Result<Option<String>, String> {
        if let Some(reason) = callback_error(callback) {
            return Err(reason);
        }
        // Keep the client first, so the tokens the exchange writes join it in one record. A
        // pre-registered client's secret stays in mcp.json.
        self.store.update(|record| {
            record.client_secret = kept.client_secret.or_else(|| {
                if self.oauth.client_id.is_some() {
                    None
                } else {
                    record.client_secret.take()
                }
            });
            kept.revocation.keep_in(record);
            record.dpop_key = kept.dpop_key;
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
        // A token handed out as a bearer is not bound to the key, whatever the server offered.
        let bound = dpop::is_dpop_type(tokens.token_type().as_ref());
        self.store.update(|record| {
            record.identity = identity.clone();
            if !bound {
                record.dpop_key = None;
            }
        })?;
        Ok(identity)
    }

    /// Leaves the browser on a page saying how the sign-in ended, and the sign-in's state.
    async fn answer(
        &self,
        arrival: Arrival,
        outcome: Result<Option<String>, String>,
    ) -> Result<(), SignInError> {
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

    /// An SDK error in words, naming the `mcp.json` opt-in when the SDK refused a host on a
    /// private network that the server's metadata (or its `challenge`) named.
    pub(super) async fn explain(&self, err: &AuthError, challenge: Option<&str>) -> String {
        if !self.oauth.allow_private_addresses
            && let Some(host) = private::named_private_host(err, challenge).await
        {
            return private::refusal(&host);
        }
        describe(err)
    }
}

/// The `state` of the authorization page `url`, which the callback must carry. The authorization
/// endpoint comes from the server's metadata: only a web page is opened, and only the callback
/// carrying this sign-in's state is taken.
fn page_state(url: &str) -> Result<String, String> {
    let address = launcher::web_address(url).map_err(|err| err.to_string())?;
    address
        .query_pairs()
        .find(|(key, _)| key == "state")
        .map(|(_, value)| value.into_owned())
        .filter(|state| !state.is_empty())
        .ok_or_else(|| "the authorization page has no state to check the answer by".into())
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

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

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
}
