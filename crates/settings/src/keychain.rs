//! API keys in the OS keychain (Keychain on macOS, Credential Manager on Windows, the Secret
//! Service on Linux), one entry per provider. Keys never reach the config file, the database or
//! a log.

use crate::SettingsError;

/// The service name every entry is filed under.
pub const SERVICE: &str = "tooltrail";

/// Where provider keys are kept. The OS keychain in the app; a map in tests.
pub trait KeyStore {
    /// The key of `provider`, `None` when none is stored.
    fn get(&self, provider: &str) -> Result<Option<String>, SettingsError>;
    fn set(&self, provider: &str, key: &str) -> Result<(), SettingsError>;
    /// Removes the key; no error when there was none.
    fn delete(&self, provider: &str) -> Result<(), SettingsError>;
}

/// The OS keychain.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsKeychain;

impl OsKeychain {
    fn entry(provider: &str) -> Result<keyring::Entry, SettingsError> {
        keyring::Entry::new(SERVICE, &account(provider)).map_err(unavailable)
    }

    /// Whether keys can be kept here; the sentence says why not.
    pub fn check(&self) -> Result<(), SettingsError> {
        self.get("__probe__").map(|_| ())
    }
}

/// The keychain account of a provider's key.
pub fn account(provider: &str) -> String {
    format!("provider:{provider}")
}

fn unavailable(error: keyring::Error) -> SettingsError {
    let detail = match &error {
        keyring::Error::PlatformFailure(inner) | keyring::Error::NoStorageAccess(inner) => {
            inner.to_string()
        }
        other => other.to_string(),
    };
    SettingsError::Keychain(detail)
}

impl KeyStore for OsKeychain {
    fn get(&self, provider: &str) -> Result<Option<String>, SettingsError> {
        match Self::entry(provider)?.get_password() {
            Ok(key) => Ok(Some(key)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(error) => Err(unavailable(error)),
        }
    }

    fn set(&self, provider: &str, key: &str) -> Result<(), SettingsError> {
        Self::entry(provider)?
            .set_password(key)
            .map_err(unavailable)
    }

    fn delete(&self, provider: &str) -> Result<(), SettingsError> {
        match Self::entry(provider)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(error) => Err(unavailable(error)),
        }
    }
}

/// Keys in memory, for tests.
#[derive(Debug, Default)]
pub struct MemoryKeys(std::sync::Mutex<std::collections::BTreeMap<String, String>>);

impl KeyStore for MemoryKeys {
    fn get(&self, provider: &str) -> Result<Option<String>, SettingsError> {
        Ok(self.lock().get(provider).cloned())
    }

    fn set(&self, provider: &str, key: &str) -> Result<(), SettingsError> {
        self.lock().insert(provider.to_string(), key.to_string());
        Ok(())
    }

    fn delete(&self, provider: &str) -> Result<(), SettingsError> {
        self.lock().remove(provider);
        Ok(())
    }
}

impl MemoryKeys {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<String, String>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
