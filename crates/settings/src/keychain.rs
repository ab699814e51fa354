//! Provider API keys in the OS keychain (see `tooltrail-keychain`), one entry per provider under
//! [`account`]. Keys never reach the config file, the database or a log.

use tooltrail_keychain::{KeychainError, OsKeychain, SecretStore};

use crate::SettingsError;

/// The keychain account of a provider's key.
pub fn account(provider: &str) -> String {
    format!("provider:{provider}")
}

/// The keys of the providers, in a keychain: the OS one in the app and the command line
/// ([`ProviderKeys::os`]), a map in tests. Its errors speak of API keys and of what to do
/// meanwhile ([`SettingsError::NoKeychainService`]).
#[derive(Clone, Copy)]
pub struct ProviderKeys<'a> {
    keychain: &'a dyn SecretStore,
}

impl ProviderKeys<'static> {
    /// The keys in the OS keychain.
    pub fn os() -> Self {
        Self::new(&OsKeychain)
    }
}

impl<'a> ProviderKeys<'a> {
    pub fn new(keychain: &'a dyn SecretStore) -> Self {
        Self { keychain }
    }

    /// The key of `provider`, `None` when none is stored.
    pub fn get(&self, provider: &str) -> Result<Option<String>, SettingsError> {
        Ok(self.keychain.get(&account(provider))?)
    }

    pub fn set(&self, provider: &str, key: &str) -> Result<(), SettingsError> {
        Ok(self.keychain.set(&account(provider), key)?)
    }

    /// Removes the key; no error when there was none.
    pub fn delete(&self, provider: &str) -> Result<(), SettingsError> {
        Ok(self.keychain.delete(&account(provider))?)
    }

    /// Whether keys can be kept here; the sentence says why not.
    pub fn check(&self) -> Result<(), SettingsError> {
        self.get("__probe__").map(|_| ())
    }
}

/// The keychain's trouble in the words of API keys: a keychain that is not running at all gets
/// the sentence with the way forward, any other failure the keychain's own words.
impl From<KeychainError> for SettingsError {
    fn from(error: KeychainError) -> Self {
        match error {
            KeychainError::NoService => SettingsError::NoKeychainService,
            KeychainError::Failed(detail) => SettingsError::Keychain(detail),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tooltrail_keychain::MemorySecrets;

    #[test]
    fn a_missing_secret_service_is_a_sentence_with_a_way_forward() {
        for detail in [
            "DBus error: Using X11 for dbus-daemon autolaunch was disabled at compile time, set your DBUS_SESSION_BUS_ADDRESS instead",
            "DBus error: Failed to connect to socket /run/user/1000/bus: No such file or directory",
            "DBus error: org.freedesktop.DBus.Error.ServiceUnknown: The name org.freedesktop.secrets was not provided by any .service files",
        ] {
            let error = SettingsError::from(KeychainError::from_platform(detail));
            let text = error.to_string();
            assert!(
                matches!(error, SettingsError::NoKeychainService),
                "{detail}"
            );
            assert!(text.starts_with("API keys cannot be stored"), "{text}");
            assert!(text.contains("TOOLTRAIL_API_KEY"), "{text}");
            assert!(!text.contains("DBus"), "{text}");
        }
        let other = SettingsError::from(KeychainError::from_platform("locked"));
        assert_eq!(
            other.to_string(),
            "the system keychain could not be used: locked"
        );
    }

    #[test]
    fn a_providers_key_is_kept_under_its_account_as_before() {
        // Keys saved by earlier versions are found where they were put.
        let keychain = MemorySecrets::default();
        keychain.set("provider:or", "sk-or").unwrap();
        let keys = ProviderKeys::new(&keychain);
        assert_eq!(keys.get("or").unwrap().as_deref(), Some("sk-or"));
        keys.set("other", "sk-other").unwrap();
        assert_eq!(
            keychain.get("provider:other").unwrap().as_deref(),
            Some("sk-other")
        );
        keys.delete("other").unwrap();
        keys.delete("other").unwrap();
        assert_eq!(keys.get("other").unwrap(), None);
    }
}
