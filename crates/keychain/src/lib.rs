//! Secrets in the OS keychain (Keychain on macOS, Credential Manager on Windows, the Secret
//! Service on Linux), each under an account name beneath one service, [`SERVICE`]. Provider API
//! keys, the telemetry headers and the MCP sign-ins are all kept here; none of them ever reaches
//! a config file, the database or a log.
//!
//! [`SecretStore`] is what callers take, so that tests hand in [`MemorySecrets`] where the app
//! hands in [`OsKeychain`]. The keychain's trouble is a [`KeychainError`], which tells a
//! keychain that is not there at all from one that failed; each caller says it in its own words,
//! since what to do about it differs (an API key can come from a variable meanwhile, a sign-in
//! cannot).
//!
//! ```
//! use tooltrail_keychain::{MemorySecrets, SecretStore};
//! let secrets = MemorySecrets::default();
//! secrets.set("provider:openrouter", "sk-or")?;
//! assert_eq!(secrets.get("provider:openrouter")?.as_deref(), Some("sk-or"));
//! secrets.delete("provider:openrouter")?;
//! secrets.delete("provider:openrouter")?;
//! assert_eq!(secrets.get("provider:openrouter")?, None);
//! # Ok::<(), tooltrail_keychain::KeychainError>(())
//! ```

mod error;
mod memory;
mod os;
mod parted;

pub use error::KeychainError;
pub use memory::MemorySecrets;
pub use os::OsKeychain;

/// The service name every entry is filed under.
pub const SERVICE: &str = "tooltrail";

/// Where secrets are kept, by account name: the OS keychain in the app and the command line, a
/// map in tests.
pub trait SecretStore: Send + Sync {
    /// The secret kept under `account`, `None` when there is none.
    fn get(&self, account: &str) -> Result<Option<String>, KeychainError>;
    /// Keeps `secret` under `account`, replacing what was there.
    fn set(&self, account: &str, secret: &str) -> Result<(), KeychainError>;
    /// Removes the secret; no error when there was none.
    fn delete(&self, account: &str) -> Result<(), KeychainError>;
}
