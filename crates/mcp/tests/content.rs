//! What MCP tools return and which of them are offered, against real servers and a scripted
//! model that checks what the requests carry: images from `@modelcontextprotocol/server-everything`
//! (`get-tiny-image`) as image parts for a model that sees and in words for one that does not,
//! `get-structured-content` checked against its output schema, tools set to `never` and
//! task-only tools left out of the offer, and a server with 62 tools
//! (`tests/mcp/fixtures/many-tools-server.js`) offered in part with `find_tools`.
//!
//! Without `node` (or the npm packages, which `scripts/mcp-setup` installs) the tests print
//! why and pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{everything, interop_dir, manager, registry_with, workspace};
use tokio_util::sync::CancellationToken;
use tooltrail_agent::{Agent, AgentConfig, AllowAll, CollectingSink, Conversation};
use tooltrail_llm::{LlmClient, LlmConfig};
use tooltrail_mcp::{Approval, ServerConfig};
use tooltrail_protocol::{Event, EventBody, ToolStatus};
use tooltrail_test_support::{Reply, ScriptedServer};
use tooltrail_tools::{ToolContext, ToolRegistry};

fn many_tools(count: usize, extra: &[&str]) -> ServerConfig {
    let script = interop_dir().join("fixtures/many-tools-server.js");
    let count = count.to_string();
    let mut args = vec![script.to_str().unwrap(), count.as_str()];
    args.extend_from_slice(extra);
    ServerConfig::stdio("many", "node", &args)
}

/// One question to a scripted model, with the MCP tools of `registry`.
async fn ask(
    registry: ToolRegistry,
    root: &Path,
    replies: Vec<Reply>,
    llm: impl FnOnce(LlmConfig) -> LlmConfig,
    config: AgentConfig,
) -> (ScriptedServer, Vec<Event>, String) {
    let model = ScriptedServer::start(replies).await;
    let agent = Agent::new(
        LlmClient::new(llm(LlmConfig::new(model.base_url(), "m"))).unwrap(),
        Arc::new(registry),
        ToolContext::open(root).unwrap(),
        config,
    );
    let sink = CollectingSink::new();
    let outcome = agent
        .run_turn(
            &mut Conversation::new(),
            "Go on.",
            &sink,
            &AllowAll,
            &CancellationToken::new(),
        )
        .await;
    (model, sink.events(), outcome.text)
}

fn finished(events: &[Event]) -> Vec<(String, ToolStatus, String, Option<Value>)> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolCallFinished {
                tool,
                status,
                result,
                data,
                ..
            } => Some((tool.clone(), *status, result.clone(), data.clone())),
            _ => None,
        })
        .collect()
}

fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| tool["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A window that every tool fits in a quarter of.
const WIDE: u32 = 131_072;

const TINY_PNG_START: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABQAAAAU";

#[tokio::test]
async fn an_image_goes_to_a_model_that_sees_and_is_told_to_one_that_does_not() {
    require_node!();
    let (_dir, root) = workspace();
    for vision in [true, false] {
        let manager = manager(vec![everything()], &root);
        let registry = registry_with(&manager).await;
        let (model, events, _) = ask(
            registry,
            &root,
            vec![
                Reply::tool_calls(&[("everything__get-tiny-image", "{}")]),
                Reply::text("It is the MCP logo."),
            ],
            |config| LlmConfig {
                vision,
                context_window: Some(WIDE),
                ..config
            },
            AgentConfig::default(),
        )
        .await;
        let calls = finished(&events);
        assert_eq!(calls.len(), 1);
        let (tool, status, result, data) = &calls[0];
        assert_eq!(
            (tool.as_str(), *status),
            ("everything__get-tiny-image", ToolStatus::Success)
        );
        assert!(result.contains("[image 1: image/png, "), "{result}");
        // The record keeps the image whole with the call.
        let image = &data.as_ref().unwrap()["result"]["content"][1];
        assert_eq!(image["type"], "image");
        assert_eq!(image["mimeType"], "image/png");
        assert!(image["data"].as_str().unwrap().len() > 1000);

        let requests = model.chat_requests();
        let messages = requests[1].body["messages"].as_array().unwrap().clone();
        let tool_message = messages.iter().find(|m| m["role"] == "tool").unwrap();
        let text = tool_message["content"].as_str().unwrap();
        let sent = requests[1].body.to_string();
        if vision {
            let last = messages.last().unwrap();
            assert_eq!(last["role"], "user");
            assert_eq!(last["content"][1]["type"], "image_url");
            let url = last["content"][1]["image_url"]["url"].as_str().unwrap();
            assert!(url.starts_with(TINY_PNG_START), "{url}");
            assert!(
                text.ends_with("(The image this tool returned follows in the next message.)"),
                "{text}"
            );
            assert!(!sent.contains("You cannot see"), "{sent}");
        } else {
            assert!(!sent.contains("image_url"), "{sent}");
            assert!(!sent.contains("iVBORw0KGgo"), "{sent}");
            assert!(
                text.contains(
                    "The tool also returned an image (image/png, 3.9 KiB). You cannot see or \
                     hear it"
                ),
                "{text}"
            );
        }
        manager.shutdown().await;
    }
}

#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema() {
    require_node!();
    let (_dir, root) = workspace();
    let manager = manager(vec![everything(), many_tools(0, &["wrong-output"])], &root);
    let registry = registry_with(&manager).await;
    let (model, events, _) = ask(
        registry,
        &root,
        vec![
            Reply::tool_calls(&[
                (
                    "everything__get-structured-content",
                    r#"{"location":"Chicago"}"#,
                ),
                ("many__weather_report", r#"{"city":"Chicago"}"#),
            ]),
            Reply::text("Chicago is 36 degrees."),
        ],
        |config| config,
        AgentConfig::default(),
    )
    .await;
    let calls = finished(&events);
    assert_eq!(calls[0].1, ToolStatus::Success);
    assert_eq!(
        calls[0].3.as_ref().unwrap()["result"]["structuredContent"],
        json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82})
    );
    assert_eq!(calls[1].1, ToolStatus::Error);
    assert!(
        calls[1].2.starts_with(
            "error [failed]: the MCP tool weather_report of many returned structured content \
             that does not match its output schema ("
        ),
        "{}",
        calls[1].2
    );
    // The model read the mismatch.
    let sent = model.chat_requests()[1].body.to_string();
    assert!(sent.contains("does not match its output schema"), "{sent}");
    manager.shutdown().await;
}

#[tokio::test]
async fn never_tools_are_not_offered_and_task_only_tools_are() {
    require_node!();
    let (_dir, root) = workspace();
    let mut server = everything();
    server.tools.insert("get-sum".into(), Approval::Never);
    let manager = manager(vec![server], &root);
    let registry = registry_with(&manager).await;
    let (model, _, _) = ask(
        registry,
        &root,
        vec![Reply::text("Nothing to do.")],
        |config| LlmConfig {
            context_window: Some(WIDE),
            ..config
        },
        AgentConfig::default(),
    )
    .await;
    let offered = offered(&model.chat_requests()[0].body);
    assert!(
        offered.contains(&"everything__echo".to_string()),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"everything__get-sum".to_string()),
        "{offered:?}"
    );
    // A tool the server runs only as a task is called as one (`tasks.rs`).
    assert!(
        offered.contains(&"everything__simulate-research-query".to_string()),
        "{offered:?}"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn many_tools_are_offered_in_part_and_found_with_find_tools() {
    require_node!();
    let (_dir, root) = workspace();
    let manager = manager(vec![many_tools(62, &[])], &root);

    // Every tool offered: a window large enough for them all.
    let registry = registry_with(&manager).await;
    let (model, events, _) = ask(
        registry,
        &root,
        vec![Reply::text("Hello.")],
        |config| LlmConfig {
            context_window: Some(WIDE),
            ..config
        },
        AgentConfig::default(),
    )
    .await;
    let all = offered(&model.chat_requests()[0].body);
    assert_eq!(
        all.iter().filter(|name| name.starts_with("many__")).count(),
        62
    );
    assert!(!all.contains(&"find_tools".to_string()));
    let before = first_request_tokens(&events);

    // A local model's 8,192 tokens: the built-in tools, the most used MCP tool, find_tools.
    let registry = registry_with(&manager).await;
    let create = r#"{"workspace":"team","fields":{"title":"Review"}}"#;
    let (model, events, text) = ask(
        registry,
        &root,
        vec![
            Reply::tool_calls(&[("find_tools", r#"{"query":"create calendar event"}"#)]),
            Reply::tool_calls(&[("many__calendar_create_event", create)]),
            Reply::text("The review is in the calendar."),
        ],
        |config| LlmConfig {
            context_window: Some(8192),
            ..config
        },
        AgentConfig {
            tool_counts: BTreeMap::from([("many__jira_get_issue".to_string(), 7)]),
            ..AgentConfig::default()
        },
    )
    .await;
    assert_eq!(text, "The review is in the calendar.");
    let requests = model.chat_requests();
    let first = offered(&requests[0].body);
    let mcp_first: Vec<&String> = first.iter().filter(|n| n.starts_with("many__")).collect();
    assert_eq!(mcp_first, vec!["many__jira_get_issue"]);
    assert!(first.contains(&"find_tools".to_string()), "{first:?}");
    assert!(first.contains(&"read_file".to_string()), "{first:?}");
    let after = first_request_tokens(&events);
    eprintln!(
        "first request with 62 MCP tools: {before} tokens with every tool, {after} with \
         find_tools (window 8,192)"
    );
    assert!(after * 2 < before, "{after} tokens, before {before}");
    assert!(after < 8192 / 2, "{after}");

    // What find_tools found is offered from the next request on, and runs.
    let second = offered(&requests[1].body);
    assert!(
        second.contains(&"many__calendar_create_event".to_string()),
        "{second:?}"
    );
    let calls = finished(&events);
    assert_eq!(
        calls
            .iter()
            .map(|(tool, status, ..)| (tool.as_str(), *status))
            .collect::<Vec<_>>(),
        vec![
            ("find_tools", ToolStatus::Success),
            ("many__calendar_create_event", ToolStatus::Success)
        ]
    );
    assert!(
        calls[0]
            .2
            .contains("- many__calendar_create_event: Creates a calendar event")
    );
    manager.shutdown().await;
}

/// The tokens of a turn's first request, as the turn estimated them before sending it.
fn first_request_tokens(events: &[Event]) -> u32 {
    events
        .iter()
        .find_map(|event| match event.body {
            EventBody::ContextUsage { used_tokens, .. } => Some(used_tokens),
            _ => None,
        })
        .unwrap()
}

/// MCP Apps: a tool whose `visibility` lacks `"model"` is for its server's views alone. It is
/// not offered, and a model that guesses its name reaches nothing; tools with a view (by the
/// nested key or the deprecated flat one) are offered like any other.
#[tokio::test]
async fn attack_views_app_only_tools_are_never_in_the_models_registry() {
    require_node!();
    let (_dir, root) = workspace();
    let manager = manager(vec![many_tools(0, &["views"])], &root);
    let registry = registry_with(&manager).await;
    assert!(registry.get("many__stats_poll").is_none());
    assert!(registry.get("many__stats_chart").is_some());
    assert!(registry.get("many__legacy_chart").is_some());

    let (model, events, text) = ask(
        registry,
        &root,
        vec![
            Reply::tool_calls(&[("many__stats_poll", "{}")]),
            Reply::text("No such tool."),
        ],
        |config| LlmConfig {
            context_window: Some(WIDE),
            ..config
        },
        AgentConfig::default(),
    )
    .await;
    assert_eq!(text, "No such tool.");
    let mcp: Vec<String> = offered(&model.chat_requests()[0].body)
        .into_iter()
        .filter(|name| name.starts_with("many__"))
        .collect();
    assert_eq!(
        mcp,
        vec![
            "many__legacy_chart",
            "many__stats_chart",
            "many__stats_table"
        ]
    );
    let calls = finished(&events);
    assert_eq!(calls.len(), 1, "{calls:?}");
    let (tool, status, result, _) = &calls[0];
    assert_eq!(tool, "many__stats_poll");
    assert_eq!(*status, ToolStatus::Error);
    assert!(
        !result.contains("ran with"),
        "the server's tool ran: {result}"
    );
}
