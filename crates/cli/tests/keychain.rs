//! With no keychain running (no Secret Service on D-Bus, as on a server or in CI), a provider's
//! key cannot be read: `ask` says so in a sentence with the way forward and what works
//! meanwhile (TOOLTRAIL_API_KEY), not with the D-Bus error, and the question still goes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use run::{text, tooltrail};
use tooltrail_test_support::{Reply, ScriptedServer};

#[tokio::test]
async fn a_missing_keychain_is_a_sentence_with_the_way_forward() {
    let server = ScriptedServer::start(vec![Reply::text("Hello.")]).await;
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("config.toml"),
        format!(
            "active_provider = \"cloud\"\n\n[[providers]]\nid = \"cloud\"\nname = \"Cloud\"\nbase_url = \"{}\"\nmodel = \"scripted\"\n",
            server.base_url()
        ),
    )
    .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let out = tooltrail(
        &["ask", "-w", ws.path().to_str().unwrap(), "Hi"],
        config.path(),
        // A session bus that is not there: what a machine without a desktop session has.
        &[("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")],
    )
    .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(text(&out.stdout).contains("Hello."));
    assert!(
        stderr.contains(
            "warning: the API key of provider \"Cloud\" could not be read, so none is sent: API keys cannot be stored, because no keychain is running on this computer"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("TOOLTRAIL_API_KEY"), "{stderr}");
    assert!(!stderr.contains("DBus"), "{stderr}");
}
