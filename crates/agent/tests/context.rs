//! The context window end to end: the agent against the scripted model server, with the
//! built-in tools reading files far larger than a small window.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use pretty_assertions::assert_eq;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tooltrail_agent::{Agent, CollectingSink, Conversation, DenyAll};
use tooltrail_llm::{LOCAL_DEFAULT_WINDOW, LlmConfig, WindowSource, estimate_tokens};
use tooltrail_protocol::{EventBody, Message, TurnEnd};
use tooltrail_test_support::{Reply, ScriptedServer, ServerOptions};
use tooltrail_tools::ToolRegistry;

const WINDOW: u32 = 4096;
/// What a 4,096-token window leaves for a request: a quarter is kept for the answer.
const ROOM: u32 = 3072;

/// A workspace of three source files of 2,000 lines each (about 80 KB apiece).
fn big_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.rs", "b.rs", "c.rs"] {
        let text: String = (1..=2000)
            .map(|n| {
                format!(
                    "pub fn {}_{n}(value: u64) -> u64 {{ value * {n} + 1 }}\n",
                    &name[..1]
                )
            })
            .collect();
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

async fn agent_for(server: &ScriptedServer, root: &std::path::Path, window: Option<u32>) -> Agent {
    let mut config = LlmConfig::new(server.base_url(), "scripted");
    config.context_window = window;
    support::builtins_agent(config, root)
}

fn tool_contents(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn three_rounds_of_large_reads_never_send_more_than_a_4096_token_window() {
    let ws = big_workspace();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("read_file", r#"{"path":"a.rs","limit":1000}"#)]),
        Reply::tool_calls(&[("read_file", r#"{"path":"b.rs","limit":1000}"#)]),
        Reply::tool_calls(&[("read_file", r#"{"path":"c.rs","limit":1000}"#)]),
        Reply::text("Each file defines 2000 small functions."),
    ])
    .await;
    let agent = agent_for(&server, ws.path(), Some(WINDOW)).await;
    let sink = CollectingSink::default();
    let mut conversation = Conversation::new();
    let outcome = agent
        .run_turn(
            &mut conversation,
            "What do a.rs, b.rs and c.rs hold?",
            &sink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;

    // The turn ends in an answer.
    assert_eq!(outcome.end, TurnEnd::Completed, "{:?}", outcome.error);
    assert_eq!(outcome.text, "Each file defines 2000 small functions.");

    // No request was larger than the window, counted over the whole body as sent (keys,
    // escapes and all), which is more than the model is given.
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 4);
    for request in &requests {
        let tokens = estimate_tokens(&request.body.to_string());
        assert!(
            tokens <= WINDOW,
            "a request of about {tokens} tokens was sent"
        );
    }

    // One context_usage per request, each inside the room the window leaves.
    let usage: Vec<(u32, u32, u32)> = sink
        .events()
        .iter()
        .filter_map(|event| match event.body {
            EventBody::ContextUsage {
                round,
                used_tokens,
                window_tokens,
            } => Some((round, used_tokens, window_tokens)),
            _ => None,
        })
        .collect();
    assert_eq!(
        usage
            .iter()
            .map(|(round, _, window)| (*round, *window))
            .collect::<Vec<_>>(),
        vec![(1, WINDOW), (2, WINDOW), (3, WINDOW), (4, WINDOW)]
    );
    assert!(usage.iter().all(|(_, used, _)| *used <= ROOM), "{usage:?}");

    // The last request: the two earlier reads are summaries, the latest is cut with a marker
    // that says where to read on.
    let sent = tool_contents(&requests[3].body);
    assert_eq!(sent.len(), 3);
    for earlier in &sent[..2] {
        assert!(
            earlier
                .starts_with("[earlier result of read_file, left out to fit the context window: "),
            "{earlier}"
        );
    }
    let latest = sent[2].lines().last().unwrap();
    assert!(
        latest.starts_with("[cut to fit the context window: showing ")
            && latest.contains(" Read on with read_file offset="),
        "{latest}"
    );

    // The conversation, and so the record, keeps every result as the tool gave it.
    let kept: Vec<&str> = conversation
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(kept.len(), 3);
    for (content, name) in kept.iter().zip(["a.rs", "b.rs", "c.rs"]) {
        assert!(
            content.starts_with(&format!("`{name}`: lines 1-")),
            "{content:.80}"
        );
        assert!(estimate_tokens(content) > ROOM, "the kept result is whole");
    }
}

#[tokio::test]
async fn an_answer_cut_by_the_length_limit_says_so() {
    let ws = big_workspace();
    let server = ScriptedServer::start(vec![
        Reply::text("The files define").finish_reason("length"),
    ])
    .await;
    let agent = agent_for(&server, ws.path(), Some(WINDOW)).await;
    let sink = CollectingSink::default();
    let outcome = agent
        .run_turn(
            &mut Conversation::new(),
            "What is here?",
            &sink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.end, TurnEnd::Completed);
    assert_eq!(outcome.text, "The files define");
    let truncated: Vec<EventBody> = sink
        .events()
        .into_iter()
        .map(|event| event.body)
        .filter(|body| matches!(body, EventBody::AnswerTruncated { .. }))
        .collect();
    assert_eq!(truncated, vec![EventBody::AnswerTruncated { round: 1 }]);
}

#[tokio::test]
async fn the_window_is_learned_from_llama_cpp_props_else_a_default() {
    let ws = big_workspace();
    let llama = ScriptedServer::start_with(
        vec![Reply::text("Hello.")],
        ServerOptions {
            n_ctx: Some(8192),
            ..ServerOptions::default()
        },
    )
    .await
    .unwrap();
    let agent = agent_for(&llama, ws.path(), None).await;
    let window = agent.context_window(&CancellationToken::new()).await;
    assert_eq!(
        (window.tokens, window.source),
        (8192, WindowSource::LlamaCpp)
    );
    let sink = CollectingSink::default();
    agent
        .run_turn(
            &mut Conversation::new(),
            "Hi",
            &sink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    assert!(sink.events().iter().any(|event| matches!(
        event.body,
        EventBody::ContextUsage {
            window_tokens: 8192,
            ..
        }
    )));

    // A server that says nothing: the default for one on this machine.
    let quiet = ScriptedServer::start(vec![]).await;
    let quiet_agent = agent_for(&quiet, ws.path(), None).await;
    let window = quiet_agent.context_window(&CancellationToken::new()).await;
    assert_eq!(
        (window.tokens, window.source),
        (LOCAL_DEFAULT_WINDOW, WindowSource::Default)
    );
    // Asked once per client.
    let asked = quiet.requests().len();
    quiet_agent.context_window(&CancellationToken::new()).await;
    assert_eq!(quiet.requests().len(), asked);
}

/// What the tool schemas cost on every request: the first five tools with `code_query` and
/// `list_dir`, as the native request body offers them. Measured with Gemma 3's tokenizer
/// (llama.cpp's `/tokenize`), their 3,101 bytes were 792 tokens; docs/configuration.md ("Prompt
/// economy") gives the figure.
#[test]
fn the_built_in_tool_schemas_stay_small() {
    let names = [
        "search_files",
        "read_file",
        "search_text",
        "execute_bash",
        "count_lines",
        "code_query",
        "list_dir",
    ];
    let tools: Vec<_> = ToolRegistry::with_builtins()
        .specs()
        .into_iter()
        .filter(|spec| names.contains(&spec.name.as_str()))
        .collect();
    assert_eq!(tools.len(), names.len());
    let body = tooltrail_llm::ChatRequest {
        tools,
        ..tooltrail_llm::ChatRequest::default()
    }
    .to_body("m", false);
    let schemas = body["tools"].to_string();
    println!(
        "{} tool schemas: {} bytes, {} tokens by Tooltrail's estimate (3 bytes a token)",
        names.len(),
        schemas.len(),
        estimate_tokens(&schemas)
    );
    assert!(
        schemas.len() <= 3200,
        "the tool schemas grew to {} bytes (about {} tokens); keep them tight",
        schemas.len(),
        schemas.len() / 4
    );
}

/// With every built-in tool, a 1,536-token window has no room for their descriptions beside the
/// question: the model is asked to answer without tools rather than not asked at all.
#[tokio::test]
async fn a_window_too_small_for_the_tools_gets_an_answer_without_them() {
    let ws = big_workspace();
    let server = ScriptedServer::start(vec![Reply::text("From what I know: three files.")]).await;
    let agent = agent_for(&server, ws.path(), Some(1536)).await;
    let sink = CollectingSink::default();
    let outcome = agent
        .run_turn(
            &mut Conversation::new(),
            "What is here?",
            &sink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.end, TurnEnd::Completed, "{:?}", outcome.error);
    assert_eq!(outcome.text, "From what I know: three files.");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].body.get("tools").is_none());
    let last = requests[0].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .starts_with("[Tooltrail] The context window is full."),
        "{last}"
    );
    assert!(estimate_tokens(&requests[0].body.to_string()) <= 2048);
    assert!(sink.events().iter().any(|event| matches!(
        &event.body,
        EventBody::Error { fatal: false, message, .. } if message.contains("context window is full")
    )));
}

/// Prompt mode puts the tools in the system prompt and the results in user messages; the same
/// fitting keeps those requests inside the window.
#[tokio::test]
async fn prompt_mode_requests_fit_the_window_too() {
    let ws = big_workspace();
    let call = |path: &str| {
        Reply::text(format!(
            "<tool_use><name>read_file</name><arguments>{{\"path\":\"{path}\",\"limit\":1000}}</arguments></tool_use>"
        ))
    };
    let server = ScriptedServer::start(vec![
        call("a.rs"),
        call("b.rs"),
        Reply::text("Two files of small functions."),
    ])
    .await;
    let mut config = LlmConfig::new(server.base_url(), "scripted")
        .with_tool_mode(tooltrail_protocol::ToolMode::Prompt);
    config.context_window = Some(WINDOW);
    let agent = support::builtins_agent(config, ws.path());
    let outcome = agent
        .run_turn(
            &mut Conversation::new(),
            "What do a.rs and b.rs hold?",
            &CollectingSink::default(),
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.end, TurnEnd::Completed, "{:?}", outcome.error);
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert!(
            request.body.get("tools").is_none(),
            "prompt mode sends no tools field"
        );
        let tokens = estimate_tokens(&request.body.to_string());
        assert!(
            tokens <= WINDOW,
            "a request of about {tokens} tokens was sent"
        );
    }
    // The results went back as <tool_use_result> blocks in user messages: the earlier one a
    // summary, the latest cut with its marker.
    let sent: Vec<String> = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].as_str().unwrap().to_string())
        .collect();
    let earlier = sent.iter().find(|text| {
        text.contains("<name>read_file</name><result>[earlier result of read_file, left out")
    });
    assert!(earlier.is_some(), "{sent:#?}");
    let latest = sent.last().unwrap();
    assert!(
        latest.contains("Read on with read_file offset="),
        "{latest:.300}"
    );
}
