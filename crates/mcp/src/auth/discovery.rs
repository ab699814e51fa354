//! Finding the authorization server of an MCP server that asked for sign-in.
//!
//! The SDK does the discovery (RFC 9728 protected resource metadata from the challenge or the
//! well-known paths, then RFC 8414 or OpenID metadata, checking each issuer). One case it
//! refuses is let through here: a server of the 2025-03-26 revision publishes no protected
//! resource metadata, so its own origin's `/.well-known/oauth-authorization-server` is where
//! that revision says to look, and what it serves there is the server speaking for itself. Its
//! issuer may then name another path of the same origin (an authorization server mounted under
//! `/oauth`, say); never another origin.

use std::time::Duration;

use reqwest::{Response, Url};
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
};

use super::{ServerAuth, describe};
use crate::error::SignInError;

/// How long each well-known document may take to come.
const METADATA_TIMEOUT: Duration = Duration::from_secs(30);

impl ServerAuth {
    /// The authorization server's metadata and how it was found, starting from the server's
    /// `challenge` (its `WWW-Authenticate`), if it sent one.
    pub(super) async fn discover(
        &self,
        manager: &AuthorizationManager,
        challenge: Option<&str>,
    ) -> Result<(AuthorizationMetadata, AuthorizationMetadataSource), SignInError> {
        match manager.resolve_metadata_from_challenge(challenge).await {
            Ok(resolution) => Ok((resolution.metadata, resolution.source)),
            Err(AuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            }) => match self
                .legacy_metadata(challenge, &expected_issuer, &received_issuer)
                .await
            {
                Some(metadata) => Ok((
                    metadata,
                    AuthorizationMetadataSource::AuthorizationServerMetadata,
                )),
                None => Err(
                    self.failed(describe(&AuthError::AuthorizationServerMismatch {
                        expected_issuer,
                        received_issuer,
                    })),
                ),
            },
            Err(err) => Err(self.failed(self.explain(&err, challenge).await)),
        }
    }

    /// The metadata of a 2025-03-26 server whose issuer the SDK refused (see the module docs).
    /// `None` (refuse, as RFC 8414 says) when the server has protected resource metadata, when
    /// either issuer is off the server's origin, or when the metadata cannot be read again.
    async fn legacy_metadata(
        &self,
        challenge: Option<&str>,
        expected_issuer: &str,
        received_issuer: &str,
    ) -> Option<AuthorizationMetadata> {
        let server = Url::parse(&self.url).ok()?;
        let origin = server.origin();
        let same_origin = |issuer: &str| Url::parse(issuer).is_ok_and(|url| url.origin() == origin);
        if challenge.is_some_and(|text| text.to_ascii_lowercase().contains("resource_metadata"))
            || !same_origin(expected_issuer)
            || !same_origin(received_issuer)
        {
            return None;
        }
        let well_known = WellKnown::new(server);
        if well_known.has_protected_resource_metadata().await? {
            return None;
        }
        let metadata = well_known.authorization_server_metadata().await?;
        let issuer = metadata.issuer.as_deref()?;
        (issuer == received_issuer && same_origin(issuer)).then_some(metadata)
    }
}

/// The well-known documents of one server's origin.
struct WellKnown {
    server: Url,
    http: reqwest::Client,
}

impl WellKnown {
    fn new(server: Url) -> Self {
        Self {
            server,
            http: reqwest::Client::new(),
        }
    }

    /// Whether the server publishes protected resource metadata (RFC 9728), at its path's
    /// well-known address or its origin's. `None` when a request did not go through.
    async fn has_protected_resource_metadata(&self) -> Option<bool> {
        let resource_path = self.server.path().trim_matches('/');
        let mut paths = vec!["/.well-known/oauth-protected-resource".to_string()];
        if !resource_path.is_empty() {
            paths.insert(
                0,
                format!("/.well-known/oauth-protected-resource/{resource_path}"),
            );
        }
        for path in paths {
            if self.get(&path).await.ok()?.status().is_success() {
                return Some(true);
            }
        }
        Some(false)
    }

    /// The origin's authorization server metadata (RFC 8414), when it serves one.
    async fn authorization_server_metadata(&self) -> Option<AuthorizationMetadata> {
        let response = self
            .get("/.well-known/oauth-authorization-server")
            .await
            .ok()?;
        if !response.status().is_success() {
            return None;
        }
        serde_json::from_slice(&response.bytes().await.ok()?).ok()
    }

    async fn get(&self, path: &str) -> reqwest::Result<Response> {
        let mut url = self.server.clone();
        url.set_path(path);
        url.set_query(None);
        url.set_fragment(None);
        self.http
            .get(url)
            .header("Accept", "application/json")
            .timeout(METADATA_TIMEOUT)
            .send()
            .await
    }
}
