//! `tooltrail providers` and the first-run guide through the binary: a provider added for a
//! URL by what answers there, the list, detection at `detect_urls`, and what `ask` says when
//! the endpoint cannot be reached.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use std::path::Path;

use pretty_assertions::assert_eq;
use run::{text, tooltrail};
use serde_json::Value;
use tooltrail_runtime::detect::{FoundModel, FoundServer, ServerKind, Support};
use tooltrail_settings::{ConfigFile, Provider};
use tooltrail_test_support::{ScriptedServer, ServerOptions};

/// A llama.cpp-like scripted server: `/props` says its window, `/v1/models` lists `scripted-model`.
async fn llama() -> ScriptedServer {
    ScriptedServer::start_with(
        vec![],
        ServerOptions {
            n_ctx: Some(8192),
            ..ServerOptions::default()
        },
    )
    .await
    .unwrap()
}

/// A loopback base URL where nothing listens.
async fn closed_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    format!("http://{}/v1", listener.local_addr().unwrap())
}

fn config_file(dir: &Path) -> ConfigFile {
    ConfigFile::read(&dir.join("config.toml")).unwrap()
}

#[tokio::test]
async fn use_url_adds_a_provider_named_by_the_server_there_and_makes_it_active() {
    let server = llama().await;
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("config.toml"),
        "# mine\nmax_rounds = 4\n",
    )
    .unwrap();
    let url = server.base_url();

    let out = tooltrail(&["providers", "use", &url], config.path(), &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "Questions now go to llama.cpp server (provider \"llama-cpp-server\") at {url}, model scripted-model.\n"
        )
    );
    let file = config_file(config.path());
    let expected = Provider {
        id: "llama-cpp-server".into(),
        name: "llama.cpp server".into(),
        base_url: url.clone(),
        model: Some("scripted-model".into()),
        tool_mode: None,
        context_window: None,
        price_input_per_mtok: None,
        price_output_per_mtok: None,
        max_tokens: None,
        max_tokens_field: None,
        vision: None,
    };
    assert_eq!(file.providers, vec![expected.clone()]);
    assert_eq!(file.active_provider.as_deref(), Some("llama-cpp-server"));
    assert_eq!(file.max_rounds, Some(4));
    let saved = std::fs::read_to_string(config.path().join("config.toml")).unwrap();
    assert!(saved.starts_with("# mine\n"), "{saved}");

    // The same URL again, with a model: the same provider, not a second one.
    let out = tooltrail(
        &["providers", "use", &format!("{url}/"), "--model", "other"],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "Questions now go to llama.cpp server (provider \"llama-cpp-server\") at {url}, model other.\n\
             warning: the server does not list a model \"other\"; it has scripted-model.\n"
        )
    );
    assert_eq!(
        config_file(config.path()).providers,
        vec![Provider {
            model: Some("other".into()),
            ..expected
        }]
    );

    // Where nothing answers: named by its address, and said so. An address without a path is
    // a server's, with its API under /v1.
    let nowhere = closed_url().await;
    let out = tooltrail(
        &[
            "providers",
            "use",
            nowhere.trim_end_matches("/v1"),
            "-m",
            "m",
        ],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let host = nowhere
        .trim_start_matches("http://")
        .trim_end_matches("/v1");
    let id = host.replace(['.', ':'], "-");
    assert_eq!(
        text(&out.stdout),
        format!(
            "Questions now go to {host} (provider \"{id}\") at {nowhere}, model m.\n\
             Nothing answered at {nowhere} just now; questions will go there once something does.\n"
        )
    );

    // The list marks the active one; a configured provider is chosen again by its id.
    let out = tooltrail(&["providers"], config.path(), &[]).await;
    let listed = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<&str> = listed.lines().collect();
    assert!(
        lines[1].starts_with("  llama-cpp-server  llama.cpp server "),
        "{listed}"
    );
    assert!(lines[1].ends_with(&format!("{url}  other")), "{listed}");
    assert!(lines[2].starts_with(&format!("* {id} ")), "{listed}");
    assert!(lines[3].starts_with("  local "), "{listed}");

    let out = tooltrail(
        &["providers", "use", "llama-cpp-server"],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        config_file(config.path()).active_provider.as_deref(),
        Some("llama-cpp-server")
    );
    let out = tooltrail(&["providers", "use", "nope"], config.path(), &[]).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr), "error: there is no provider \"nope\"\n");
}

#[tokio::test]
async fn detect_json_lists_the_servers_at_detect_urls_with_their_models() {
    let server = llama().await;
    let nowhere = closed_url().await;
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("config.toml"),
        format!("detect_urls = [\"{}\", \"{nowhere}\"]\n", server.base_url()),
    )
    .unwrap();
    let out = tooltrail(&["providers", "detect", "--json"], config.path(), &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let looked_at: Vec<&str> = report["looked_at"]
        .as_array()
        .unwrap()
        .iter()
        .map(|url| url.as_str().unwrap())
        .collect();
    assert_eq!(
        looked_at[5..],
        [server.base_url().as_str(), nowhere.as_str()]
    );
    assert!(report["took_ms"].is_f64(), "{report}");
    let servers: Vec<FoundServer> = serde_json::from_value(report["servers"].clone()).unwrap();
    // Servers that run on this machine may be listed too; the scripted one must be.
    let ours: Vec<&FoundServer> = servers
        .iter()
        .filter(|found| found.base_url == server.base_url())
        .collect();
    assert_eq!(
        ours,
        [&FoundServer {
            kind: ServerKind::LlamaCpp,
            base_url: server.base_url(),
            needs_api_key: false,
            models: vec![FoundModel {
                id: "scripted-model".into(),
                tools: Support::Unknown,
                vision: Support::Unknown,
                context_window: Some(8192),
                max_context_window: None,
            }],
        }]
    );

    // As text: the server, its model, and the command that uses it.
    let out = tooltrail(&["providers", "detect"], config.path(), &[]).await;
    let shown = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let block = format!(
        "llama.cpp server at {}\n  scripted-model  tools: unknown  vision: unknown  context: 8192 tokens\n",
        server.base_url()
    );
    assert!(shown.contains(&block), "{shown}");
    assert!(
        shown.contains(&format!(
            "\n  tooltrail providers use {} --model scripted-model\n",
            server.base_url()
        )),
        "{shown}"
    );
}

#[tokio::test]
async fn ask_with_nothing_reachable_says_what_was_found_and_the_ways_forward() {
    let server = llama().await;
    let nowhere = closed_url().await;
    let ws = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("config.toml"),
        format!("detect_urls = [\"{}\"]\n", server.base_url()),
    )
    .unwrap();
    // Without a model the endpoint is asked for its first one; with one, the turn fails.
    for model in [None, Some("m")] {
        let mut args = vec![
            "ask",
            "-w",
            ws.path().to_str().unwrap(),
            "--base-url",
            &nowhere,
        ];
        if let Some(model) = model {
            args.extend(["--model", model]);
        }
        args.push("what is this project?");
        let out = tooltrail(&args, config.path(), &[]).await;
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            // The agent's sentence starts with a capital and ends with a period.
            stderr.to_lowercase().starts_with(&format!(
                "error: the model endpoint {nowhere} could not be reached (connection refused)"
            )),
            "{stderr}"
        );
        for line in [
            format!(
                "  llama.cpp server at {}: scripted-model",
                server.base_url()
            ),
            "To send questions to one:".to_string(),
            format!(
                "  tooltrail providers use {} --model scripted-model",
                server.base_url()
            ),
            "      tooltrail models pull qwen3-1.7b".to_string(),
            "      tooltrail models use qwen3-1.7b".to_string(),
            "      export TOOLTRAIL_API_KEY=sk-...".to_string(),
        ] {
            assert!(
                stderr.lines().any(|l| l == line),
                "{line:?} missing:\n{stderr}"
            );
        }
    }

    // With nothing found, it says where it looked, and still how to go on.
    let bare = tempfile::tempdir().unwrap();
    let out = tooltrail(
        &[
            "ask",
            "-w",
            ws.path().to_str().unwrap(),
            "--base-url",
            &nowhere,
            "hi",
        ],
        bare.path(),
        &[("OLLAMA_HOST", nowhere.trim_end_matches("/v1"))],
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // Servers of this machine's own (on LM Studio's or llama.cpp's port, say) are listed instead.
    let nothing = stderr.contains(
        "No model server answered on this machine (looked for Ollama, LM Studio, llama.cpp, vLLM and Jan at their usual addresses in ",
    );
    assert!(
        nothing || stderr.contains("Model servers found (in "),
        "{stderr}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l == "      tooltrail models use qwen3-1.7b"),
        "{stderr}"
    );
}
