//! A keychain in memory: for tests, and for an MCP client that keeps no sign-in past its run
//! (the conformance client).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use crate::{KeychainError, SecretStore};

/// Secrets in a map, gone with the value.
#[derive(Debug, Default)]
pub struct MemorySecrets(Mutex<BTreeMap<String, String>>);

impl MemorySecrets {
    fn map(&self) -> MutexGuard<'_, BTreeMap<String, String>> {
        // A panic elsewhere while holding the lock leaves the map whole: every change is one call.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl SecretStore for MemorySecrets {
    fn get(&self, account: &str) -> Result<Option<String>, KeychainError> {
        Ok(self.map().get(account).cloned())
    }

    fn set(&self, account: &str, secret: &str) -> Result<(), KeychainError> {
        self.map().insert(account.to_string(), secret.to_string());
        Ok(())
    }

    fn delete(&self, account: &str) -> Result<(), KeychainError> {
        self.map().remove(account);
        Ok(())
    }
}
