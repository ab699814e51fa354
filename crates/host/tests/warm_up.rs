//! Opening a folder in the app warms it up (`Host::warm_up_folder`): its MCP servers start,
//! and the local model runtime only when the local provider is the one in use. With any other
//! provider nothing starts, nothing is said about a local model, and no runtime files appear.
//! (With the local provider, the CLI's `local_runtime_double.rs` and the window's
//! `readiness.e2e.mjs` show the start and the saved prefixes.)
//!
//! The check runs in a child of this test binary, with the config and data folders of its own
//! in its environment.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use tooltrail_host::{Host, Record};
use tooltrail_protocol::LocalModelStatus;

/// Runs the check in a child process whose config and data folders are `home`'s.
#[test]
fn opening_a_folder_starts_no_runtime_unless_the_local_provider_is_in_use() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "base_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
    )
    .unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            // Its name in this binary, whose tests are one module a file.
            "warm_up::another_provider_warms_no_runtime",
            "--ignored",
            "--nocapture",
        ])
        .env("TOOLTRAIL_CONFIG_DIR", &config)
        .env("TOOLTRAIL_DATA_DIR", home.path().join("data"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("1 passed"), "{said}");
}

#[tokio::test]
#[ignore = "run by opening_a_folder_starts_no_runtime_unless_the_local_provider_is_in_use, with its folders"]
async fn another_provider_warms_no_runtime() {
    let data = std::path::PathBuf::from(
        std::env::var_os("TOOLTRAIL_DATA_DIR")
            .expect("run by the test above, which sets TOOLTRAIL_DATA_DIR"),
    );
    let folder = tooltrail_test_support::demo_workspace().unwrap();
    let host = Host::new(Record::in_memory().unwrap());
    let heard: Arc<Mutex<Vec<LocalModelStatus>>> = Arc::default();
    let tell = {
        let heard = Arc::clone(&heard);
        move |status| heard.lock().unwrap().push(status)
    };
    let failures = host.warm_up_folder(folder.path(), &tell).await;
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(*heard.lock().unwrap(), Vec::<LocalModelStatus>::new());
    assert!(!data.join("runtime").exists(), "a runtime folder appeared");
    host.shutdown().await;
}
