//! The real updater plugin, on Tauri's mock runtime, against an update server on loopback that
//! serves `latest.json` and an artifact signed the way the release workflow signs them.

use std::io::Cursor;
use std::sync::Mutex;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use pretty_assertions::assert_eq;
use serde_json::json;
use tauri::test::{MockRuntime, mock_builder, mock_context, noop_assets};

use super::*;

const ARTIFACT: &[u8] = b"the new Tooltrail, packed";

/// A minisign key pair in the text forms Tauri uses: the public key as `tauri.conf.json`
/// holds it, and a signer of `.sig` files.
struct Key(minisign::KeyPair);

impl Key {
    fn new() -> Self {
        Self(minisign::KeyPair::generate_unencrypted_keypair().unwrap())
    }

    /// Base64 of the public key's box, as `plugins.updater.pubkey`.
    fn public(&self) -> String {
        STANDARD.encode(self.0.pk.to_box().unwrap().into_string())
    }

    /// Base64 of the signature box of `data` signed for `version`, as the `.sig` the release
    /// workflow puts beside an artifact (the Tauri CLI binds the version into the trusted
    /// comment, which the signature covers).
    fn sign(&self, data: &[u8], version: &str) -> String {
        self.sign_with_comment(
            data,
            &format!("timestamp:1795800000\tfile:tooltrail.tar.gz\tversion:{version}"),
        )
    }

    /// As [`Key::sign`], with the trusted comment given: a Tauri CLI older than version
    /// binding wrote only `timestamp:…\tfile:…`.
    fn sign_with_comment(&self, data: &[u8], trusted_comment: &str) -> String {
        let signature = minisign::sign(
            Some(&self.0.pk),
            &self.0.sk,
            Cursor::new(data),
            Some(trusted_comment),
            Some("signature from tauri secret key"),
        )
        .unwrap();
        STANDARD.encode(signature.into_string())
    }
}

/// The platform key `latest.json` lists this system's artifact under.
fn platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    format!("{os}-{}", std::env::consts::ARCH)
}

/// An update server on loopback answering `latest` at `/latest.json` and `artifact` at
/// `/tooltrail.tar.gz`; its address.
async fn serve(latest: impl Fn(&str) -> String, artifact: &'static [u8]) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let body = latest(&format!("{base}/tooltrail.tar.gz"));
    let app = axum::Router::new()
        .route(
            "/latest.json",
            axum::routing::get(move || async move { body }),
        )
        .route(
            "/tooltrail.tar.gz",
            axum::routing::get(move || async move { artifact }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("{base}/latest.json")
}

fn release(version: &str, url: &str, signature: &str) -> String {
    json!({
        "version": version,
        "notes": "Faster first answers.\n\n- Updates install themselves.",
        "pub_date": "2026-11-20T10:00:00Z",
        "platforms": { platform(): { "url": url, "signature": signature } }
    })
    .to_string()
}

/// The updater's section of the shipped `tauri.conf.json`.
fn shipped_updater_config() -> serde_json::Value {
    let config: serde_json::Value =
        serde_json::from_str(include_str!("../../../tauri.conf.json")).unwrap();
    config["plugins"]["updater"].clone()
}

/// The app as the updater sees it (version 0.1.0), configured as shipped but trusting
/// `pubkey` and reading `endpoint`.
fn app(pubkey: &str, endpoint: &str) -> tauri::App<MockRuntime> {
    let mut updater = shipped_updater_config();
    updater["pubkey"] = json!(pubkey);
    updater["endpoints"] = json!([endpoint]);
    let mut context = mock_context(noop_assets());
    context
        .config_mut()
        .plugins
        .0
        .insert("updater".to_string(), updater);
    mock_builder()
        .plugin(tauri_plugin_updater::Builder::new().build())
        .build(context)
        .unwrap()
}

/// Looks for an update and downloads it; what the window would be told on the way.
async fn look_and_fetch(
    app: &tauri::App<MockRuntime>,
) -> (
    UpdateInfo,
    Vec<UpdateProgress>,
    Result<Vec<u8>, UpdateError>,
) {
    let Ok(Some(update)) = look(app.handle()).await else {
        panic!("no update was offered");
    };
    let steps = Mutex::new(Vec::new());
    let bytes = fetch_verified(&update, &|step| steps.lock().unwrap().push(step)).await;
    (info(&update), steps.into_inner().unwrap(), bytes)
}

#[tokio::test]
async fn a_release_signed_with_the_key_is_found_downloaded_and_accepted() {
    let key = Key::new();
    let signature = key.sign(ARTIFACT, "0.2.0");
    let endpoint = serve(|url| release("0.2.0", url, &signature), ARTIFACT).await;
    let app = app(&key.public(), &endpoint);

    let (shown, steps, bytes) = look_and_fetch(&app).await;

    assert_eq!(
        shown,
        UpdateInfo {
            version: "0.2.0".to_string(),
            current_version: "0.1.0".to_string(),
            notes: Some("Faster first answers.\n\n- Updates install themselves.".to_string()),
            date: Some("2026-11-20T10:00:00Z".to_string()),
        }
    );
    assert_eq!(bytes.unwrap(), ARTIFACT);
    let total = ARTIFACT.len() as u64;
    assert_eq!(
        steps,
        vec![
            UpdateProgress::Downloading {
                downloaded: total,
                total: Some(total)
            },
            UpdateProgress::Verifying,
        ]
    );
}

#[tokio::test]
async fn attack_updates_a_tampered_signature_is_refused() {
    let key = Key::new();
    // One character of the signature line changed: the box still decodes, the check fails.
    let text = String::from_utf8(STANDARD.decode(key.sign(ARTIFACT, "0.2.0")).unwrap()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let line = &mut lines[1];
    let flipped = if line.as_bytes()[20] == b'A' {
        "B"
    } else {
        "A"
    };
    line.replace_range(20..21, flipped);
    let tampered = STANDARD.encode(lines.join("\n") + "\n");
    let endpoint = serve(|url| release("0.2.0", url, &tampered), ARTIFACT).await;
    let app = app(&key.public(), &endpoint);

    let (_, _, bytes) = look_and_fetch(&app).await;

    let error = bytes.unwrap_err();
    assert!(matches!(error, UpdateError::Signature), "{error:?}");
    assert_eq!(
        CommandError::from(error).message,
        "The update's signature does not match Tooltrail's key, so it was not installed. Nothing was changed."
    );
}

#[tokio::test]
async fn attack_updates_an_artifact_changed_after_signing_is_refused() {
    let key = Key::new();
    let signature = key.sign(ARTIFACT, "0.2.0");
    let endpoint = serve(
        |url| release("0.2.0", url, &signature),
        b"the new Tooltrail, packed, and a little more",
    )
    .await;
    let app = app(&key.public(), &endpoint);

    let (_, _, bytes) = look_and_fetch(&app).await;

    assert!(matches!(bytes, Err(UpdateError::Signature)), "{bytes:?}");
}

#[tokio::test]
async fn attack_updates_a_release_signed_by_another_key_is_refused() {
    let ours = Key::new();
    let theirs = Key::new();
    let signature = theirs.sign(ARTIFACT, "0.2.0");
    let endpoint = serve(|url| release("0.2.0", url, &signature), ARTIFACT).await;
    let app = app(&ours.public(), &endpoint);

    let (_, _, bytes) = look_and_fetch(&app).await;

    assert!(matches!(bytes, Err(UpdateError::Signature)), "{bytes:?}");
}

/// `latest.json` is not signed, only the artifact is: a server (or anyone in its place) can
/// announce an inflated version beside an older release's download and genuine signature, to
/// put a build with known flaws back. The signature must name the version announced.
#[tokio::test]
async fn attack_updates_an_older_release_announced_as_newer_is_refused() {
    const OLD: &[u8] = b"the old Tooltrail, with a known flaw";
    let key = Key::new();
    for (what, signature) in [
        // Signed by a Tauri CLI that did not bind the version yet.
        (
            "no version",
            key.sign_with_comment(OLD, "timestamp:1700000000\tfile:tooltrail.tar.gz"),
        ),
        // Signed for what it is: 0.0.9.
        ("version 0.0.9", key.sign(OLD, "0.0.9")),
    ] {
        let endpoint = serve(|url| release("0.2.0", url, &signature), OLD).await;
        let app = app(&key.public(), &endpoint);

        let (shown, _, bytes) = look_and_fetch(&app).await;

        assert_eq!(shown.version, "0.2.0");
        let error = bytes.expect_err(what);
        assert!(matches!(error, UpdateError::Signature), "{what}: {error:?}");
        assert_eq!(
            CommandError::from(error).message,
            "The update's signature does not match Tooltrail's key, so it was not installed. Nothing was changed."
        );
    }
}

#[tokio::test]
async fn attack_updates_an_answer_that_is_not_a_release_is_said_in_a_sentence() {
    let key = Key::new();
    for answer in [
        "<html>captive portal</html>".to_string(),
        json!({ "version": "not a version", "platforms": {} }).to_string(),
        json!({ "version": "0.2.0", "platforms": { "plan9-mips": { "url": "http://x", "signature": "" } } }).to_string(),
    ] {
        let endpoint = serve(move |_| answer.clone(), ARTIFACT).await;
        let app = app(&key.public(), &endpoint);

        let Err(error) = look(app.handle()).await else {
            panic!("an update was offered");
        };

        assert!(matches!(error, UpdateError::BadAnswer(_)), "{error:?}");
        let message = CommandError::from(error).message;
        assert!(
            message.starts_with("The update server's answer is not a release Tooltrail can read ("),
            "{message}"
        );
    }
}

#[tokio::test]
async fn the_same_or_an_older_version_is_no_update() {
    let key = Key::new();
    for version in ["0.1.0", "0.0.9"] {
        let signature = key.sign(ARTIFACT, version);
        let endpoint = serve(|url| release(version, url, &signature), ARTIFACT).await;
        let app = app(&key.public(), &endpoint);

        assert!(
            matches!(look(app.handle()).await, Ok(None)),
            "{version} was offered"
        );
    }
}

#[tokio::test]
async fn a_server_that_is_not_there_is_said_in_a_sentence() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/latest.json", listener.local_addr().unwrap());
    drop(listener);
    let app = app(&Key::new().public(), &endpoint);

    let Err(error) = look(app.handle()).await else {
        panic!("an update was offered");
    };

    let message = CommandError::from(error).message;
    assert!(
        message.starts_with("Tooltrail could not reach the update server (")
            && message.ends_with("Check the connection and try again."),
        "{message}"
    );
}

/// The key and the address the app ships with: a minisign public key, and `https` only.
#[test]
fn the_shipped_configuration_trusts_one_minisign_key_over_https() {
    let config: serde_json::Value =
        serde_json::from_str(include_str!("../../../tauri.conf.json")).unwrap();
    let updater = &config["plugins"]["updater"];
    let pubkey = updater["pubkey"].as_str().expect("a public key");
    let text = String::from_utf8(STANDARD.decode(pubkey).unwrap()).unwrap();
    assert!(
        text.starts_with("untrusted comment: minisign public key: "),
        "{text}"
    );
    minisign::PublicKeyBox::from_string(&text)
        .unwrap()
        .into_public_key()
        .unwrap();
    let endpoints = updater["endpoints"].as_array().expect("endpoints");
    assert!(!endpoints.is_empty());
    for endpoint in endpoints {
        assert!(
            endpoint.as_str().unwrap().starts_with("https://"),
            "{endpoint}"
        );
    }
    assert_eq!(updater.get("dangerousInsecureTransportProtocol"), None);
    // A signature counts only for the version it was made for.
    assert_eq!(updater["requireSignedVersion"], json!(true));
    assert_eq!(updater.get("allowDowngrades"), None);
}
