//! Resources and prompts against the reference server `@modelcontextprotocol/server-everything`
//! (pinned in `tests/mcp/package.json`), over stdio: listing resources and templates, reading
//! text and blob resources, subscribing and hearing of updates, the `read_resource` tool
//! following a `resource_link` in an agent turn with a scripted model, prompts with arguments,
//! completions that depend on an earlier argument, and a prompt that embeds a resource.
//!
//! The npm packages are installed into `tests/mcp/node_modules` on first run; without `node`
//! the tests print why and pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::{everything, manager, package_entry, workspace};
use tokio_util::sync::CancellationToken;
use tooltrail_agent::{Agent, AgentConfig, AllowAll, CollectingSink, Conversation};
use tooltrail_llm::{LlmClient, LlmConfig};
use tooltrail_mcp::{Approval, ResourceNotice};
use tooltrail_protocol::{
    AttachedContent, AttachmentSource, EventBody, PromptArgumentItem, PromptMessageItem,
    PromptRole, ToolStatus,
};
use tooltrail_test_support::{Reply, ScriptedServer};
use tooltrail_tools::{ToolContext, ToolRegistry};

const INSTRUCTIONS: &str = "demo://resource/static/document/instructions.md";

#[tokio::test]
async fn resources_and_templates_are_listed_and_read() {
    require_node!();
    let (_dir, root) = workspace();
    let manager = manager(vec![everything()], &root);
    let server = manager.server("everything").unwrap();

    let items = server.resources().await.unwrap();
    let instructions = items.iter().find(|item| item.uri == INSTRUCTIONS).unwrap();
    assert_eq!(instructions.server, "everything");
    assert_eq!(instructions.name, "instructions.md");
    assert_eq!(instructions.mime_type.as_deref(), Some("text/markdown"));
    assert!(!instructions.template);
    let templates: Vec<&str> = items
        .iter()
        .filter(|item| item.template)
        .map(|item| item.uri.as_str())
        .collect();
    assert_eq!(
        templates,
        vec![
            "demo://resource/dynamic/text/{resourceId}",
            "demo://resource/dynamic/blob/{resourceId}"
        ]
    );

    // A text resource, whole, as the file on disk has it.
    let attachment = server.attachment(INSTRUCTIONS).await.unwrap();
    let on_disk = std::fs::read_to_string(
        package_entry("server-everything")
            .parent()
            .unwrap()
            .join("docs/instructions.md"),
    )
    .unwrap();
    assert_eq!(
        attachment.source,
        AttachmentSource::Resource {
            server: "everything".into(),
            uri: INSTRUCTIONS.into()
        }
    );
    assert_eq!(attachment.name, "instructions.md");
    assert_eq!(
        attachment.content,
        AttachedContent::Text {
            text: on_disk,
            truncated: false
        }
    );

    // A blob of a text type reads as its text; a template's URI with its variable filled.
    let blob = server
        .read_resource("demo://resource/dynamic/blob/3")
        .await
        .unwrap();
    let AttachedContent::Text { text, .. } = &blob[0].content else {
        panic!("a text/plain blob is text: {blob:?}");
    };
    assert!(text.starts_with("Resource 3: This is a base64 blob created at"));

    // A URI the server does not have is one sentence naming it.
    let missing = server
        .read_resource("demo://resource/dynamic/text/0")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        missing.starts_with("the MCP server \"everything\" failed to read the resource: "),
        "{missing}"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn a_subscribed_resource_reports_its_updates() {
    require_node!();
    let (_dir, root) = workspace();
    let mut config = everything();
    config
        .tools
        .insert("toggle-subscriber-updates".into(), Approval::Allow);
    let manager = manager(vec![config], &root);
    let server = manager.server("everything").unwrap();
    let mut notices = server.resource_notices();
    assert!(server.subscribe(INSTRUCTIONS).await.unwrap());
    // Subscribing twice asks the server once.
    assert!(server.subscribe(INSTRUCTIONS).await.unwrap());

    // The server sends updates of subscribed resources once this tool turns them on.
    let mut registry = ToolRegistry::new();
    manager.register_into(&mut registry).await;
    let ctx = ToolContext::open(&root).unwrap();
    registry
        .call("everything__toggle-subscriber-updates", "{}", &ctx)
        .await
        .unwrap();
    let notice = tokio::time::timeout(Duration::from_secs(10), notices.recv())
        .await
        .expect("an update within 10 s")
        .unwrap();
    assert_eq!(
        notice,
        ResourceNotice::Updated {
            server: "everything".into(),
            uri: INSTRUCTIONS.into()
        }
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn the_model_follows_a_resource_link_with_read_resource() {
    require_node!();
    let (_dir, root) = workspace();
    let mut config = everything();
    config
        .tools
        .insert("get-resource-links".into(), Approval::Allow);
    let manager = manager(vec![config], &root);
    let mut registry = ToolRegistry::with_builtins();
    let failures = manager.register_into(&mut registry).await;
    assert!(failures.is_empty());
    assert!(registry.get("read_resource").is_some());

    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[(
            "everything__get-resource-links",
            &json!({"count": 2}).to_string(),
        )]),
        Reply::tool_calls(&[(
            "read_resource",
            &json!({"server": "everything", "uri": "demo://resource/dynamic/text/2"}).to_string(),
        )]),
        Reply::text("Resource 2 is plain text."),
    ])
    .await;
    let llm = LlmClient::new(LlmConfig::new(model.base_url(), "scripted")).unwrap();
    let agent = Agent::new(
        llm,
        std::sync::Arc::new(registry),
        ToolContext::open(&root).unwrap(),
        AgentConfig::default(),
    );
    let sink = CollectingSink::new();
    let mut conversation = Conversation::new();
    let outcome = agent
        .run_turn(
            &mut conversation,
            "What is behind the links?",
            &sink,
            &AllowAll,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.text, "Resource 2 is plain text.");

    // The model saw the link, then the resource's text in the reply to read_resource.
    let requests: Vec<serde_json::Value> =
        model.chat_requests().into_iter().map(|r| r.body).collect();
    assert_eq!(requests.len(), 3);
    let tools: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"read_resource"), "{tools:?}");
    let last_message = |request: &serde_json::Value| {
        request["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone()
    };
    let link = last_message(&requests[1]);
    assert!(
        link["content"]
            .as_str()
            .unwrap()
            .contains("demo://resource/dynamic/text/2"),
        "{link}"
    );
    let read = last_message(&requests[2]);
    assert_eq!(read["role"], "tool");
    let text = read["content"].as_str().unwrap();
    assert!(
        text.starts_with("[resource demo://resource/dynamic/text/2, text/plain]\nResource 2: This is a plaintext resource created at"),
        "{text}"
    );
    let finished: Vec<ToolStatus> = sink
        .events()
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolCallFinished { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    assert_eq!(finished, vec![ToolStatus::Success, ToolStatus::Success]);
    manager.shutdown().await;
}

#[tokio::test]
async fn prompts_are_listed_filled_and_completed() {
    require_node!();
    let (_dir, root) = workspace();
    let manager = manager(vec![everything()], &root);
    let server = manager.server("everything").unwrap();

    let prompts = server.prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|prompt| prompt.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "simple-prompt",
            "args-prompt",
            "completable-prompt",
            "resource-prompt"
        ]
    );
    let args = &prompts[1];
    assert_eq!(args.title.as_deref(), Some("Arguments Prompt"));
    assert_eq!(
        args.arguments,
        vec![
            PromptArgumentItem {
                name: "city".into(),
                title: None,
                description: Some("Name of the city".into()),
                required: true
            },
            PromptArgumentItem {
                name: "state".into(),
                title: None,
                // The server's schema puts `.optional()` after `.describe()`, which drops it.
                description: None,
                required: false
            }
        ]
    );

    let filled = server
        .get_prompt(
            "args-prompt",
            &BTreeMap::from([
                ("city".to_string(), "Portland".to_string()),
                ("state".to_string(), "Oregon".to_string()),
            ]),
        )
        .await
        .unwrap();
    assert_eq!(
        filled.messages,
        vec![PromptMessageItem {
            role: PromptRole::User,
            text: "What's weather in Portland, Oregon?".into()
        }]
    );

    // The second argument's values depend on the first one's.
    let none = BTreeMap::new();
    let departments = server
        .complete_prompt_argument("completable-prompt", "department", "S", &none)
        .await
        .unwrap();
    assert_eq!(departments, vec!["Sales", "Support"]);
    let chosen = BTreeMap::from([("department".to_string(), "Engineering".to_string())]);
    let names = server
        .complete_prompt_argument("completable-prompt", "name", "", &chosen)
        .await
        .unwrap();
    assert_eq!(names, vec!["Alice", "Bob", "Charlie"]);

    // An embedded resource is inlined under its URI.
    let embedded = server
        .get_prompt(
            "resource-prompt",
            &BTreeMap::from([
                ("resourceType".to_string(), "Text".to_string()),
                ("resourceId".to_string(), "4".to_string()),
            ]),
        )
        .await
        .unwrap();
    assert_eq!(embedded.messages.len(), 2);
    assert!(
        embedded.messages[1]
            .text
            .starts_with("<resource uri=\"demo://resource/dynamic/text/4\">\nResource 4: This is a plaintext resource"),
        "{:?}",
        embedded.messages[1]
    );
    let (all, failures) = manager.all_prompts().await;
    assert!(failures.is_empty());
    assert_eq!(all.len(), 4);
    manager.shutdown().await;
}
