//! Asking a server whether it wants a sign-in before one is started by hand (`tooltrail mcp
//! login`, the app's Sign in button): an `initialize` sent without a token, whose 401 or 403
//! carries the `WWW-Authenticate` challenge the sign-in starts from.
//!
//! The request is rmcp's own `initialize`, at [`ProtocolVersion::LATEST_WITH_INITIALIZE`]
//! rather than [`ProtocolVersion::LATEST`]: revisions from 2026-07-28 on have no `initialize`
//! (a session starts with `server/discover`), so the newest revision that still has one is the
//! newest this request can name. A server that wants a token refuses the request before it
//! reads it, whatever revision it speaks: only the HTTP status and the challenge are read, and
//! the session itself starts later, the usual way.

use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientJsonRpcMessage, ClientRequest, Implementation, InitializeRequest,
    InitializeRequestParams, ProtocolVersion, RequestId,
};

use super::ServerAuth;
use crate::error::SignInError;

/// How long the server may take to answer the probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

impl ServerAuth {
    /// The server's `WWW-Authenticate` when it refuses us, from an `initialize` sent without a
    /// token. `NotAsked` when it answers without one.
    pub(super) async fn probe(&self) -> Result<Option<String>, SignInError> {
        let response = reqwest::Client::new()
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .json(&initialize())
            .timeout(PROBE_TIMEOUT)
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
}

/// The probe's `initialize`: no capabilities, since no session follows it.
fn initialize() -> ClientJsonRpcMessage {
    let params = InitializeRequestParams::new(
        ClientCapabilities::default(),
        Implementation::new("tooltrail", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
    ClientJsonRpcMessage::request(
        ClientRequest::InitializeRequest(InitializeRequest::new(params)),
        RequestId::Number(0),
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_probe_is_an_initialize_of_the_newest_revision_that_has_one() {
        assert_eq!(
            serde_json::to_value(initialize()).unwrap(),
            serde_json::json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "tooltrail", "version": env!("CARGO_PKG_VERSION")}}
            })
        );
    }
}
