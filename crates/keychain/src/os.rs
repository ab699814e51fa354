//! The OS keychain, through the `keyring` crate: one entry per account under [`SERVICE`].

use crate::parted::{Parted, platform_limit};
use crate::{KeychainError, SERVICE, SecretStore};

/// The OS keychain. A secret longer than one entry holds on this system is kept in parts
/// (`parted.rs`).
#[derive(Debug, Default, Clone, Copy)]
pub struct OsKeychain;

impl OsKeychain {
    fn parted() -> Parted<'static> {
        Parted {
            raw: &Entries,
            max_units: platform_limit(),
        }
    }
}

impl SecretStore for OsKeychain {
    fn get(&self, account: &str) -> Result<Option<String>, KeychainError> {
        Self::parted().get(account)
    }

    fn set(&self, account: &str, secret: &str) -> Result<(), KeychainError> {
        Self::parted().set(account, secret)
    }

    fn delete(&self, account: &str) -> Result<(), KeychainError> {
        Self::parted().delete(account)
    }
}

/// The keychain's entries as they are, one secret each.
struct Entries;

impl Entries {
    fn entry(account: &str) -> Result<keyring::Entry, KeychainError> {
        keyring::Entry::new(SERVICE, account).map_err(classify)
    }
}

impl SecretStore for Entries {
    fn get(&self, account: &str) -> Result<Option<String>, KeychainError> {
        match Self::entry(account)?.get_password() {
            Ok(secret) => Ok(Some(secret)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(error) => Err(classify(error)),
        }
    }

    fn set(&self, account: &str, secret: &str) -> Result<(), KeychainError> {
        Self::entry(account)?.set_password(secret).map_err(classify)
    }

    fn delete(&self, account: &str) -> Result<(), KeychainError> {
        match Self::entry(account)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(error) => Err(classify(error)),
        }
    }
}

/// The platform's own words about a failure, without `keyring`'s wrapping, classified.
fn classify(error: keyring::Error) -> KeychainError {
    let detail = match &error {
        keyring::Error::PlatformFailure(inner) | keyring::Error::NoStorageAccess(inner) => {
            inner.to_string()
        }
        other => other.to_string(),
    };
    KeychainError::from_platform(detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_platform_failure_is_told_in_the_platforms_words() {
        assert_eq!(
            classify(keyring::Error::NoStorageAccess("locked".into())),
            KeychainError::Failed("locked".to_string())
        );
        assert_eq!(
            classify(keyring::Error::PlatformFailure(
                "DBus error: Failed to connect to socket /run/user/1000/bus".into()
            )),
            KeychainError::NoService
        );
    }
}
