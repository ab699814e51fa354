//! What a sign-in leaves behind: one record per server URL in a [`SecretStore`] (the OS
//! keychain in the app and the command line), holding the registered client and the tokens.
//!
//! The record is written whole, in one write, so a process killed mid-sign-in leaves either the
//! old record or the new one, never half of one. Nothing in it is ever logged: its `Debug`
//! shows only whether tokens are there.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use tooltrail_keychain::KeychainError;
// Where secrets are kept, by account name: the host hands the OS keychain in; tests and the
// conformance client use the map.
pub use tooltrail_keychain::{MemorySecrets, SecretStore};

/// The keychain's trouble in the words of a sign-in: with no keychain running, none can be
/// kept, and the way forward is to start one and sign in again.
pub(super) fn keychain_sentence(error: KeychainError) -> String {
    match error {
        KeychainError::NoService => "no system keychain is running (the Secret Service, which \
                                     GNOME Keyring or KWallet provides), so the sign-in cannot \
                                     be kept: start one, then sign in again"
            .to_string(),
        KeychainError::Failed(detail) => {
            format!("the system keychain could not be used ({detail})")
        }
    }
}

/// The key a server's record is kept under: its URL, so two entries of `mcp.json` naming the
/// same server share one sign-in, and renaming an entry keeps it.
pub fn record_key(url: &str) -> String {
    format!("mcp-oauth:{url}")
}

/// Everything kept for one server.
#[derive(Clone, Default, Serialize, Deserialize)]
pub(crate) struct SignInRecord {
    /// The client id the authorization server knows Tooltrail by (registered, pre-registered,
    /// or a metadata document's URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The secret a dynamic registration handed out, for refreshing later. A pre-registered
    /// client's secret is never kept here: it is read from `mcp.json` each time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The tokens, as the SDK keeps them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<StoredCredentials>,
    /// Who signed in, for display ("signed in as ...").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// The revocation endpoint (RFC 7009), when the authorization server has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,
    /// Whether revocation sends the client secret in the body (`client_secret_post`) rather
    /// than as HTTP Basic.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub revoke_in_body: bool,
    /// The key the tokens are bound to (DPoP, RFC 9449), when the authorization server binds
    /// them: PKCS #8, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<String>,
}

impl std::fmt::Debug for SignInRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInRecord")
            .field("client_id", &self.client_id)
            .field("has_tokens", &self.has_tokens())
            .field("identity", &self.identity)
            .finish()
    }
}

impl SignInRecord {
    pub fn has_tokens(&self) -> bool {
        self.credentials
            .as_ref()
            .is_some_and(|credentials| credentials.token_response.is_some())
    }
}

/// One server's record in a [`SecretStore`].
#[derive(Clone)]
pub(crate) struct RecordStore {
    secrets: Arc<dyn SecretStore>,
    key: String,
    /// Where the record is kept instead once the keychain could not keep it, for a sign-in
    /// without a person: that one can be made again by the next run, so a computer with no
    /// keychain (a server, a CI runner) keeps its token for the process alone.
    memory: Arc<OnceLock<MemorySecrets>>,
}

impl RecordStore {
    pub fn new(secrets: Arc<dyn SecretStore>, url: &str) -> Self {
        Self {
            secrets,
            key: record_key(url),
            memory: Arc::new(OnceLock::new()),
        }
    }

    /// Where the record is: the keychain, or the process's memory after [`Self::keep_in_memory`].
    fn kept(&self) -> &dyn SecretStore {
        match self.memory.get() {
            Some(memory) => memory,
            None => self.secrets.as_ref(),
        }
    }

    /// From now on, keeps the record in this process's memory (every clone of this store).
    pub fn keep_in_memory(&self) {
        let _ = self.memory.set(MemorySecrets::default());
    }

    /// Whether the record is kept in memory for want of a keychain.
    pub fn in_memory(&self) -> bool {
        self.memory.get().is_some()
    }

    /// The record; a record that cannot be read (another version wrote it) counts as none.
    pub fn load(&self) -> Result<SignInRecord, String> {
        Ok(self
            .kept()
            .get(&self.key)
            .map_err(keychain_sentence)?
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default())
    }

    pub fn save(&self, record: &SignInRecord) -> Result<(), String> {
        let text = serde_json::to_string(record)
            .map_err(|err| format!("the sign-in could not be encoded: {err}"))?;
        self.kept().set(&self.key, &text).map_err(keychain_sentence)
    }

    /// Where the record is kept, which also holds the secrets `mcp.json` names by
    /// `{"keychain": NAME}`.
    pub fn secrets(&self) -> &dyn SecretStore {
        self.secrets.as_ref()
    }

    pub fn delete(&self) -> Result<(), String> {
        self.kept().delete(&self.key).map_err(keychain_sentence)
    }

    /// Applies `change` to the stored record and writes it back whole.
    pub fn update(&self, change: impl FnOnce(&mut SignInRecord)) -> Result<(), String> {
        let mut record = self.load()?;
        change(&mut record);
        self.save(&record)
    }
}

fn store_error(message: String) -> AuthError {
    AuthError::CredentialStoreError(message)
}

/// The SDK's view of a [`RecordStore`]: it reads and writes the tokens, the rest of the record
/// is kept as it is.
#[async_trait]
impl CredentialStore for RecordStore {
    /// A keychain that cannot be read keeps no sign-in: requests go out without a token, and a
    /// server that wants one asks, which is when the keychain's trouble is told (on saving).
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(RecordStore::load(self)
            .ok()
            .and_then(|record| record.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.update(|record| {
            record.client_id = Some(credentials.client_id.clone());
            record.credentials = Some(credentials);
        })
        .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.update(|record| record.credentials = None)
            .map_err(store_error)
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[tokio::test]
    async fn tokens_are_written_with_the_rest_of_the_record_and_never_shown() {
        let secrets: Arc<dyn SecretStore> = Arc::new(MemorySecrets::default());
        let store = RecordStore::new(Arc::clone(&secrets), "https://mcp.example.com/mcp");
        store
            .update(|record| record.client_secret = Some("s3cret".into()))
            .unwrap();
        let token = serde_json::from_value(serde_json::json!({
            "access_token": "at-123", "token_type": "Bearer", "refresh_token": "rt-456"
        }))
        .unwrap();
        CredentialStore::save(
            &store,
            StoredCredentials::new("client-1".into(), Some(token), vec![], Some(1)),
        )
        .await
        .unwrap();
        let record = RecordStore::load(&store).unwrap();
        assert_eq!(record.client_id.as_deref(), Some("client-1"));
        assert_eq!(record.client_secret.as_deref(), Some("s3cret"));
        assert!(record.has_tokens());
        let shown = format!("{record:?}");
        assert!(
            !shown.contains("at-123") && !shown.contains("rt-456") && !shown.contains("s3cret")
        );
        // One key per server URL.
        assert!(
            secrets
                .get("mcp-oauth:https://mcp.example.com/mcp")
                .unwrap()
                .is_some()
        );
        CredentialStore::clear(&store).await.unwrap();
        let record = RecordStore::load(&store).unwrap();
        assert!(!record.has_tokens());
        assert_eq!(record.client_id.as_deref(), Some("client-1"));
    }

    #[test]
    fn a_keychain_that_cannot_keep_the_sign_in_says_so_in_a_sentence() {
        assert_eq!(
            keychain_sentence(KeychainError::NoService),
            "no system keychain is running (the Secret Service, which GNOME Keyring or KWallet \
             provides), so the sign-in cannot be kept: start one, then sign in again"
        );
        assert_eq!(
            keychain_sentence(KeychainError::Failed("locked".into())),
            "the system keychain could not be used (locked)"
        );
    }
}
