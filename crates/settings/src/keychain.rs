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
    if no_service(&detail) {
        SettingsError::NoKeychainService
    } else {
        SettingsError::Keychain(detail)
    }
}

/// Whether the Secret Service's error says that nothing answers on D-Bus: no session bus
/// (`Failed to connect to socket`, X11 autolaunch disabled) or no keychain on it
/// (`org.freedesktop.secrets was not provided`). The raw D-Bus text helps no one; what to do
/// about it does.
fn no_service(detail: &str) -> bool {
    let detail = detail.to_ascii_lowercase();
    detail.contains("dbus error")
        || detail.contains("d-bus")
        || detail.contains("org.freedesktop.dbus.error")
        || detail.contains("org.freedesktop.secrets")
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

/// Secrets other than provider keys (the MCP sign-ins), each under its own account name. The
/// error of a missing keychain speaks of API keys, so these report the keychain's own words.
impl OsKeychain {
    pub fn get_secret(&self, account: &str) -> Result<Option<String>, String> {
        let entry = keyring::Entry::new(SERVICE, account).map_err(|err| err.to_string())?;
        match entry.get_password() {
            Ok(secret) => Ok(Some(secret)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(error) => Err(secret_error(&error)),
        }
    }

    pub fn set_secret(&self, account: &str, secret: &str) -> Result<(), String> {
        keyring::Entry::new(SERVICE, account)
            .and_then(|entry| entry.set_password(secret))
            .map_err(|error| secret_error(&error))
    }

    /// Removes the secret; no error when there was none.
    pub fn delete_secret(&self, account: &str) -> Result<(), String> {
        let entry = keyring::Entry::new(SERVICE, account).map_err(|err| err.to_string())?;
        match entry.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(error) => Err(secret_error(&error)),
        }
    }
}

fn secret_error(error: &keyring::Error) -> String {
    let detail = match error {
        keyring::Error::PlatformFailure(inner) | keyring::Error::NoStorageAccess(inner) => {
            inner.to_string()
        }
        other => other.to_string(),
    };
    if no_service(&detail) {
        "no system keychain is running (the Secret Service, which GNOME Keyring or KWallet \
         provides), so the sign-in cannot be kept: start one, then sign in again"
            .to_string()
    } else {
        format!("the system keychain could not be used ({detail})")
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_secret_service_is_a_sentence_with_a_way_forward() {
        for detail in [
            "DBus error: Using X11 for dbus-daemon autolaunch was disabled at compile time, set your DBUS_SESSION_BUS_ADDRESS instead",
            "DBus error: Failed to connect to socket /run/user/1000/bus: No such file or directory",
            "DBus error: org.freedesktop.DBus.Error.ServiceUnknown: The name org.freedesktop.secrets was not provided by any .service files",
        ] {
            let error = unavailable(keyring::Error::PlatformFailure(detail.into()));
            let text = error.to_string();
            assert!(
                matches!(error, SettingsError::NoKeychainService),
                "{detail}"
            );
            assert!(text.starts_with("API keys cannot be stored"), "{text}");
            assert!(text.contains("TOOLTRAIL_API_KEY"), "{text}");
            assert!(!text.contains("DBus"), "{text}");
        }
        let other = unavailable(keyring::Error::PlatformFailure("locked".into()));
        assert_eq!(
            other.to_string(),
            "the system keychain could not be used: locked"
        );
    }
}
