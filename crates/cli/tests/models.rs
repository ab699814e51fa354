//! `tooltrail models` end to end through the binary, against a hub on loopback laid out like
//! Hugging Face's (`HF_ENDPOINT`): pull, list, use (config.toml), rm, import; Ctrl-C during a
//! pull leaves a download the next pull carries on; a missing file is one sentence.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use run::{text, tooltrail};
use serde_json::Value;
use tooltrail_test_support::gguf::GgufBuilder;
use tooltrail_test_support::hub::{HubFile, HubOptions, HubServer, sha256_hex};

const REPO: &str = "acme/Tiny-GGUF";
const FILE: &str = "Tiny-Q4_K_M.gguf";

fn model_bytes(data: usize) -> Vec<u8> {
    GgufBuilder::new()
        .string("general.architecture", "qwen3")
        .string("general.size_label", "2M")
        .u32("general.file_type", 15)
        .u32("qwen3.context_length", 40960)
        .string(
            "tokenizer.chat_template",
            "{% if tools %}{{ tools }}{% endif %}",
        )
        .tensor("token_embd.weight", &[512, 4096], 12)
        .data_bytes(data)
        .build()
}

async fn hub(bytes: &[u8], options: HubOptions) -> HubServer {
    HubServer::start(vec![HubFile::bytes(REPO, FILE, bytes.to_vec())], options)
        .await
        .unwrap()
}

/// `tooltrail models ARGS` with the hub as `HF_ENDPOINT` and no token.
async fn models(args: &[&str], config: &Path, hub: &HubServer) -> std::process::Output {
    let mut all = vec!["models"];
    all.extend_from_slice(args);
    tooltrail(
        &all,
        config,
        &[("HF_ENDPOINT", &hub.endpoint()), ("HF_TOKEN", "")],
    )
    .await
}

fn ok(out: &std::process::Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

#[tokio::test]
async fn a_model_is_pulled_listed_used_and_removed() {
    let bytes = model_bytes(500_000);
    let hub = hub(
        &bytes,
        HubOptions {
            redirect: true,
            ..HubOptions::default()
        },
    )
    .await;
    let config = tempfile::tempdir().unwrap();
    let reference = format!("hf.co/{REPO}/{FILE}");

    let out = models(&["pull", &reference], config.path(), &hub).await;
    let stdout = ok(&out);
    let models_dir = config.path().join("data").join("models");
    assert!(
        stdout.starts_with(&format!(
            "Pulled tiny-q4_k_m (500 KB, SHA-256 checked) into {}.\nDownloaded 500 KB in ",
            models_dir.join("tiny-q4_k_m.gguf").display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("To ask it questions: tooltrail models use tiny-q4_k_m\n"),
        "{stdout}"
    );
    // Not on a terminal: lines, not a bar.
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "Pulling tiny-q4_k_m from {}/{REPO}/resolve/main/{FILE}\n",
            hub.endpoint()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("  500 KB of 500 KB (100%)"), "{stderr}");

    let listed: Value =
        serde_json::from_str(&ok(&models(&["list", "--json"], config.path(), &hub).await)).unwrap();
    let installed = listed["installed"].as_array().unwrap();
    assert_eq!(installed.len(), 1);
    assert_eq!(installed[0]["name"], "tiny-q4_k_m");
    assert_eq!(installed[0]["sha256"], sha256_hex(&bytes).as_str());
    assert_eq!(installed[0]["metadata"]["context_length"], 40960);
    assert_eq!(installed[0]["source"]["kind"], "hub");
    assert_eq!(listed["available"].as_array().unwrap().len(), 5);
    assert_eq!(listed["local_model"], Value::Null);

    let stdout = ok(&models(&["use", "Tiny-Q4_K_M"], config.path(), &hub).await);
    assert!(
        stdout.starts_with("Questions now go to tiny-q4_k_m, which Tooltrail serves itself"),
        "{stdout}"
    );
    let toml = std::fs::read_to_string(config.path().join("config.toml")).unwrap();
    assert_eq!(
        toml,
        "active_provider = \"local\"\n\n[local]\nmodel = \"tiny-q4_k_m\"\n"
    );
    let stdout = ok(&models(&[], config.path(), &hub).await);
    assert!(stdout.contains("\n* tiny-q4_k_m  500 KB  2M      Q4_K_M  40960    hf.co/acme/Tiny-GGUF/Tiny-Q4_K_M.gguf\n"), "{stdout}");
    assert!(
        stdout.contains("Available to pull (tooltrail models pull NAME):\n"),
        "{stdout}"
    );

    let stdout = ok(&models(&["rm", "tiny-q4_k_m"], config.path(), &hub).await);
    assert_eq!(
        stdout,
        "Removed tiny-q4_k_m (500 KB).\nIt was the model of the local provider; choose another with `tooltrail models use NAME`.\n"
    );
    let listed: Value =
        serde_json::from_str(&ok(&models(&["list", "--json"], config.path(), &hub).await)).unwrap();
    assert_eq!(listed["installed"], Value::Array(vec![]));
    let out = models(&["use", "tiny-q4_k_m"], config.path(), &hub).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "error: no model named tiny-q4_k_m is installed (`tooltrail models list` shows what is)\n"
    );
    let out = models(&["use", "qwen3-1.7b"], config.path(), &hub).await;
    assert_eq!(
        text(&out.stderr),
        "error: qwen3-1.7b is not installed yet; pull it first with `tooltrail models pull qwen3-1.7b`\n"
    );
}

#[tokio::test]
async fn ctrl_c_during_a_pull_keeps_what_arrived_and_the_next_pull_carries_on() {
    let bytes = model_bytes(2_000_000);
    let hub = hub(
        &bytes,
        HubOptions {
            chunk_delay: Duration::from_millis(40),
            ..HubOptions::default()
        },
    )
    .await;
    let config = tempfile::tempdir().unwrap();
    let reference = format!("hf.co/{REPO}/{FILE}");
    let part = config
        .path()
        .join("data")
        .join("models")
        .join("tiny-q4_k_m.gguf.part");

    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_tooltrail"))
        .args(["models", "pull", &reference])
        .env("TOOLTRAIL_CONFIG_DIR", config.path())
        .env("TOOLTRAIL_DATA_DIR", config.path().join("data"))
        .env("HF_ENDPOINT", hub.endpoint())
        .env("HF_TOKEN", "")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once some bytes are on disk, as Ctrl-C on a terminal would.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while std::fs::metadata(&part).map_or(0, |m| m.len()) < 300_000 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the download did not start"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().await.unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let kept = std::fs::metadata(&part).unwrap().len();
    assert!(kept >= 300_000 && kept < bytes.len() as u64, "{kept}");
    assert!(
        stderr.contains(&format!(
            "error: the pull of tiny-q4_k_m was stopped after {}",
            tooltrail_runtime::models::human_bytes(kept)
        )),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(&format!(
            "\nTo carry on: tooltrail models pull {reference}\n"
        )),
        "{stderr}"
    );
    let stdout = ok(&models(&["list"], config.path(), &hub).await);
    assert!(stdout.starts_with("No models installed yet"), "{stdout}");
    assert!(
        stdout.contains("Unfinished downloads (pull again to carry on):\n  tiny-q4_k_m  "),
        "{stdout}"
    );

    let out = models(&["pull", &reference], config.path(), &hub).await;
    let stdout = ok(&out);
    assert!(
        stdout.contains(&format!(
            ", carrying on after {}; verified in ",
            tooltrail_runtime::models::human_bytes(kept)
        )),
        "{stdout}"
    );
    assert_eq!(
        hub.downloads().last().unwrap().range,
        Some(format!("bytes={kept}-"))
    );
    let installed = config.path().join("data/models/tiny-q4_k_m.gguf");
    assert_eq!(std::fs::read(installed).unwrap(), bytes);
    assert!(!part.exists());
}

#[tokio::test]
async fn a_missing_file_or_a_file_that_is_not_a_model_is_one_sentence() {
    let hub = hub(&model_bytes(1_000), HubOptions::default()).await;
    let config = tempfile::tempdir().unwrap();
    let out = models(
        &["pull", &format!("hf.co/{REPO}/Nope.gguf")],
        config.path(),
        &hub,
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).ends_with(
            "error: the hub has no file Nope.gguf in acme/Tiny-GGUF (at main); check the file's \
             name on the repository's Files page\n"
        ),
        "{}",
        text(&out.stderr)
    );

    let notes = config.path().join("notes.gguf");
    std::fs::write(&notes, "not a model").unwrap();
    let out = models(&["import", notes.to_str().unwrap()], config.path(), &hub).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {} is not a GGUF model file (it does not start with the GGUF signature)\n",
            notes.display()
        )
    );

    let model = config.path().join("Mine.gguf");
    std::fs::write(&model, model_bytes(10_000)).unwrap();
    let stdout = ok(&models(
        &["import", model.to_str().unwrap(), "--link"],
        config.path(),
        &hub,
    )
    .await);
    assert_eq!(
        stdout,
        format!(
            "Imported {} as mine (10 KB, hard-linked from {}).\nIt is qwen3, 2M, Q4_K_M, trained for 40960 tokens.\nTo ask it questions: tooltrail models use mine\n",
            model.display(),
            model.display()
        )
    );
}

#[tokio::test]
async fn use_refuses_to_take_over_a_provider_of_the_users_own_called_local() {
    let hub = hub(&model_bytes(1_000), HubOptions::default()).await;
    let config = tempfile::tempdir().unwrap();
    let model = config.path().join("m.gguf");
    std::fs::write(&model, model_bytes(1_000)).unwrap();
    ok(&models(&["import", model.to_str().unwrap()], config.path(), &hub).await);
    let before = "active_provider = \"local\"\n\n[[providers]]\nid = \"local\"\nname = \"Local Ollama\"\nbase_url = \"http://localhost:11434/v1\"\n";
    std::fs::write(config.path().join("config.toml"), before).unwrap();
    let out = models(&["use", "m"], config.path(), &hub).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {} has a provider of its own with the id \"local\" (Local Ollama); give that \
             provider another id there, so that `local` can mean the models Tooltrail serves itself\n",
            config.path().join("config.toml").display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(config.path().join("config.toml")).unwrap(),
        before
    );
}

/// What a user pastes from a page that means harm: a link to another host dressed as the hub,
/// and references whose revision or path climb out of the repository. Each is one sentence,
/// and the hub (with a token set) is asked nothing.
#[tokio::test]
async fn attack_hub_pull_refuses_links_elsewhere_and_references_that_climb_out() {
    let hub = hub(&model_bytes(10_000), HubOptions::default()).await;
    let config = tempfile::tempdir().unwrap();
    let host = hub.endpoint().replace("http://", "");
    for reference in [
        format!("https://evil.example/{REPO}/resolve/main/{FILE}"),
        format!("http://{host}.evil.net/{REPO}/resolve/main/{FILE}"),
        format!("http://{host}@evil.net/{REPO}/resolve/main/{FILE}"),
        format!("hf.co/{REPO}/{FILE}@../../other/repo"),
        format!("hf.co/{REPO}/%2e%2e/%2E%2e/{FILE}"),
        format!("hf.co/{REPO}/..%2f{FILE}"),
        format!("hf.co/{REPO}//{FILE}"),
    ] {
        let out = tooltrail(
            &["models", "pull", &reference],
            config.path(),
            &[("HF_ENDPOINT", &hub.endpoint()), ("HF_TOKEN", "hf_secret")],
        )
        .await;
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{reference}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: {:?} is not a model to pull: ", reference)),
            "{reference}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    assert_eq!(hub.requests(), []);
}
