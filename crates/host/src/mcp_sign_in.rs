//! Where the MCP sign-ins are kept and how they open a browser: the OS keychain (one entry per
//! server URL, under the `tooltrail` service) and the policy each front end asks for. The app
//! and a command run on a terminal may open the user's browser when a server asks for sign-in;
//! `serve` and piped commands may not, and say to run `tooltrail mcp login NAME` instead.

use std::sync::Arc;

use tooltrail_mcp::{Browser, SecretStore, SignInOptions, SignInPolicy};
use tooltrail_settings::keychain::OsKeychain;

/// The OS keychain as the MCP client's [`SecretStore`].
#[derive(Debug, Default, Clone, Copy)]
pub struct KeychainSecrets;

impl SecretStore for KeychainSecrets {
    fn load(&self, key: &str) -> Result<Option<String>, String> {
        OsKeychain.get_secret(key)
    }

    fn save(&self, key: &str, value: &str) -> Result<(), String> {
        OsKeychain.set_secret(key, value)
    }

    fn delete(&self, key: &str) -> Result<(), String> {
        OsKeychain.delete_secret(key)
    }
}

/// Sign-in options backed by the keychain; `interactive` lets a server that asks open the
/// user's browser (the `BROWSER` variable names another command).
pub fn sign_in_options(interactive: bool) -> SignInOptions {
    with_policy(if interactive {
        SignInPolicy::Interactive(Browser::System)
    } else {
        SignInPolicy::Never
    })
}

/// Sign-in options backed by the keychain with `policy` (the app renews sign-ins the user made,
/// and waits for the Sign in button for the others).
pub fn with_policy(policy: SignInPolicy) -> SignInOptions {
    SignInOptions {
        policy,
        secrets: Some(Arc::new(KeychainSecrets)),
        ..SignInOptions::default()
    }
}
