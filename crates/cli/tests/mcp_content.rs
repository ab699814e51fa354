//! The command line with the reference MCP server `@modelcontextprotocol/server-everything`:
//! `tooltrail tools` lists MCP tools with how each is gated, and `tooltrail ask` sends the image
//! a tool returns to a model whose provider sees images (`vision = true` in config.toml), and
//! tells one that does not what came back. The npm packages are installed by
//! `scripts/mcp-setup` (here on first run when missing); without node the tests say so and pass.

#![allow(clippy::unwrap_used)]

use crate::support::mcp as support;

use std::path::Path;

use serde_json::{Value, json};
use support::{Setup, reference_server, text, tooltrail};
use tooltrail_test_support::{Reply, ScriptedServer};

/// A config folder whose mcp.json has server-everything (`echo` and `get-tiny-image` allowed,
/// `get-sum` never), and whose config.toml is `config_toml`.
fn setup(entry: &Path, config_toml: &str) -> Setup {
    Setup::new(
        &[],
        |_| {
            json!({"mcpServers": {
                "everything": {"command": "node", "args": [entry, "stdio"],
                               "tools": {"echo": "allow", "get-tiny-image": "allow", "get-sum": "never"}}
            }})
        },
        config_toml,
    )
}

/// The words of the listing's line for `tool`.
fn line_of(listing: &str, tool: &str) -> Vec<String> {
    listing
        .lines()
        .find(|line| line.split_whitespace().next() == Some(tool))
        .map(|line| line.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn tools_lists_mcp_tools_with_how_each_is_gated() {
    let Some(entry) = reference_server("server-everything") else {
        return;
    };
    let setup = setup(&entry, "");
    let out = tooltrail(&["tools"], &setup).await;
    let listing = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(line_of(&listing, "read_file")[1], "read-only", "{listing}");
    assert_eq!(
        line_of(&listing, "everything__echo")[1],
        "allowed",
        "{listing}"
    );
    assert_eq!(
        line_of(&listing, "everything__get-sum")[1],
        "never",
        "{listing}"
    );
    assert_eq!(
        line_of(&listing, "everything__get-structured-content")[1..3],
        ["asks", "first"],
        "{listing}"
    );
    let specs: Vec<Value> =
        serde_json::from_slice(&tooltrail(&["tools", "--json"], &setup).await.stdout).unwrap();
    assert!(
        specs
            .iter()
            .any(|spec| spec["name"] == "everything__get-tiny-image")
    );
}

/// Asks for the tiny image with `vision` in config.toml (or none), and returns the request
/// that carried the result.
async fn ask_for_the_image(entry: &Path, vision: Option<bool>) -> Value {
    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[("everything__get-tiny-image", "{}")]),
        Reply::text("The MCP logo."),
    ])
    .await;
    let mut config = format!(
        "base_url = \"{}\"\nmodel = \"m\"\ncontext_window = 131072\n",
        model.base_url()
    );
    if let Some(vision) = vision {
        config.push_str(&format!("vision = {vision}\n"));
    }
    let setup = setup(entry, &config);
    let out = tooltrail(&["ask", "What does the image show?"], &setup).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("The MCP logo."));
    let requests = model.chat_requests();
    assert_eq!(requests.len(), 2);
    requests[1].body.clone()
}

#[tokio::test]
async fn ask_sends_an_image_to_a_model_that_sees_and_words_to_one_that_does_not() {
    let Some(entry) = reference_server("server-everything") else {
        return;
    };
    let seeing = ask_for_the_image(&entry, Some(true)).await;
    let last = seeing["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"][1]["type"], "image_url");
    assert!(
        last["content"][1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,iVBORw0KGgo")
    );

    // Unset, the server is asked; the scripted one does not say, so the model does not see.
    for vision in [Some(false), None] {
        let blind = ask_for_the_image(&entry, vision).await;
        let sent = blind.to_string();
        assert!(!sent.contains("image_url"), "{sent}");
        assert!(
            sent.contains("The tool also returned an image (image/png, 3.9 KiB). You cannot see"),
            "{sent}"
        );
    }
}
