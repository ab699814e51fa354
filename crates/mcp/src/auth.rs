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
//! A server whose `oauth` names a `"grant"` signs in without a person (`grant.rs` reads it,
//! `machine.rs` makes it): client credentials, enterprise-managed authorization or a workload's
//! token, whatever the [`SignInPolicy`], since no browser opens.
//!
//! Hosts named by the server's sign-in metadata may not be on private networks (the SDK's
//! guard), unless the server's `oauth` in `mcp.json` says `"allow_private_addresses": true`;
//! a refusal says so. A loopback server may name loopback hosts. Whether a browser may be
//! opened without the user asking is the [`SignInPolicy`]: the app and a terminal may, `serve`
//! and a piped `ask` may not, and then the server's tools fail with a sentence naming
//! `tooltrail mcp login NAME`.
//!
//! Nothing secret reaches a log, an error message or a listing: errors are built from the
//! SDK's error kinds, not its debug output, and records print without their tokens.
//!
//! This file holds the policy, the states and [`ServerAuth`], one server's sign-in as the rest
//! of the crate sees it. The steps live beside it: `client.rs` (the HTTP client that signs in
//! on 401 and steps up on 403), `probe.rs` (asking a server for its challenge), `discovery.rs`
//! (finding the authorization server), `flow.rs` (the sign-in itself), `browser.rs` and
//! `launcher.rs` (the page and the loopback redirect), `private.rs` (hosts on private
//! networks), `identity.rs` (who signed in), `revoke.rs` (signing out), `store.rs` (the
//! record in the keychain), and `grant.rs` and `machine.rs` (signing in without a person).

mod browser;
mod client;
mod discovery;
mod dpop;
mod flow;
pub(crate) mod grant;
mod identity;
pub mod launcher;
mod machine;
mod private;
mod probe;
mod revoke;
mod store;

use std::sync::{Arc, Mutex as StdMutex, PoisonError};
use std::time::Duration;

use rmcp::transport::auth::{AuthClient, AuthError, AuthorizationManager, OAuthClientConfig};
use serde::Serialize;
use tokio::sync::Mutex;
use ts_rs::TS;

use crate::config::{OAuthConfig, ServerConfig, Transport};
use crate::error::SignInError;
use crate::http_layer::Layered;

pub use browser::Browser;
pub(crate) use client::SignInClient;
pub use grant::MachineGrant;
pub use store::{MemorySecrets, SecretStore, record_key};
use store::{RecordStore, SignInRecord};

/// Step-ups (403 `insufficient_scope`) tried for one request before giving up.
pub const MAX_STEP_UPS: u32 = 2;
/// How long a sign-in waits for the browser to come back, unless told otherwise.
pub const DEFAULT_SIGN_IN_WAIT: Duration = Duration::from_secs(300);

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
    /// The sign-in generation: how many sign-ins have finished, so that a request refused with
    /// the client of an older one tries again instead of signing in once more. Held while a
    /// sign-in (or a sign-out) runs, so parallel requests that all got 401 sign in once.
    sign_in_generation: Mutex<u64>,
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
            sign_in_generation: Mutex::new(0),
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
    pub async fn http_client(&self) -> Result<AuthClient<Layered<dpop::DpopHttp>>, SignInError> {
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
        // A token bound to a key (DPoP) goes with a proof by that key; any other as a bearer.
        let key = record
            .dpop_key
            .as_deref()
            .and_then(dpop::DpopKey::from_kept);
        Ok(AuthClient::new(Layered(dpop::DpopHttp::new(key)), manager))
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

    /// A request made with the client of sign-in `refused_generation` was refused: signs in
    /// with the policy's browser, unless another sign-in has finished since (then the caller
    /// just tries again with the newer client). `www_authenticate` is the server's challenge;
    /// `step_up_scopes` are the scopes a 403 `insufficient_scope` asked for on top of those
    /// granted (empty for a 401). The sign-in generation the caller is now at.
    pub async fn sign_in_after_refusal(
        &self,
        refused_generation: u64,
        www_authenticate: Option<&str>,
        step_up_scopes: &[String],
    ) -> Result<u64, SignInError> {
        // A sign-in without a person needs no browser, so no policy keeps it from happening.
        if let Some(grant) = &self.oauth.grant {
            let mut generation = self.sign_in_generation.lock().await;
            if *generation != refused_generation {
                return Ok(*generation);
            }
            self.run_machine(grant, www_authenticate, step_up_scopes)
                .await?;
            *generation += 1;
            return Ok(*generation);
        }
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
        let mut generation = self.sign_in_generation.lock().await;
        if *generation != refused_generation {
            return Ok(*generation);
        }
        self.run(browser, www_authenticate, step_up_scopes).await?;
        *generation += 1;
        Ok(*generation)
    }

    /// The sign-in generation: how many sign-ins have finished so far.
    pub async fn generation(&self) -> u64 {
        *self.sign_in_generation.lock().await
    }

    /// A sign-in the user asked for (`tooltrail mcp login`, the app's button): probes the
    /// server for its challenge first.
    pub async fn sign_in_now(&self, browser: &Browser) -> Result<SignInState, SignInError> {
        let mut generation = self.sign_in_generation.lock().await;
        let www_authenticate = self.probe().await?;
        match &self.oauth.grant {
            Some(grant) => {
                self.run_machine(grant, www_authenticate.as_deref(), &[])
                    .await?
            }
            None => self.run(browser, www_authenticate.as_deref(), &[]).await?,
        }
        *generation += 1;
        Ok(self.state())
    }

    /// Forgets the tokens (and the registered client), revoking the tokens first where the
    /// authorization server supports it. Revocation is best effort: the tokens are forgotten
    /// whatever it answers.
    pub async fn sign_out(&self) -> Result<bool, SignInError> {
        // No sign-in may write tokens while they are being forgotten.
        let _generation = self.sign_in_generation.lock().await;
        let record = self.store.load().map_err(|reason| self.failed(reason))?;
        let revoked = self.revoke(&record).await;
        self.store.delete().map_err(|reason| self.failed(reason))?;
        self.set_state(SignInState::Needed);
        Ok(revoked)
    }
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
}
