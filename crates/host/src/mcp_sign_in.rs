//! Where the MCP sign-ins are kept and how they open a browser: the OS keychain (one entry per
//! server URL, under the `tooltrail` service) and the policy each front end asks for. The app
//! and a command run on a terminal may open the user's browser when a server asks for sign-in;
//! `serve` and piped commands may not, and say to run `tooltrail mcp login NAME` instead.

use std::sync::Arc;

use tooltrail_keychain::OsKeychain;
use tooltrail_mcp::{Browser, SignInOptions, SignInPolicy};

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
        secrets: Some(Arc::new(OsKeychain)),
        ..SignInOptions::default()
    }
}
