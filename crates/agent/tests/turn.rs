//! A turn end to end: the agent against the scripted model server over real HTTP, with the
//! built-in tools on a temporary workspace and a few test tools for gating and failure paths.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tooltrail_agent::{
    Agent, AgentConfig, AllowAll, ApprovalRequest, Approver, CollectingSink, Conversation,
    Decision, DenyAll, EventSink, RuleBook, RuleDecision, TurnOptions, TurnOutcome,
};
use tooltrail_llm::{LlmClient, LlmConfig};
use tooltrail_protocol::{
    ApprovalBy, ApprovalReply, ErrorCode, Event, EventBody, Message, ToolChoice, ToolError,
    ToolErrorCode, ToolOutput, ToolProgress, ToolSpec, ToolStatus, TurnEnd,
};
use tooltrail_test_support::{Reply, ScriptedServer};
use tooltrail_tools::{Tool, ToolContext, ToolRegistry};

/// A workspace with a README and two Go files.
fn workspace() -> tempfile::TempDir {
    tooltrail_test_support::demo_workspace().unwrap()
}

/// A tool that writes (so it needs approval) and counts its runs.
struct WriteNote {
    spec: ToolSpec,
    runs: Arc<AtomicUsize>,
}

impl WriteNote {
    fn new(runs: Arc<AtomicUsize>) -> Self {
        Self {
            spec: ToolSpec {
                name: "write_note".into(),
                description: "Write a note".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                }),
                read_only: false,
            },
            runs,
        }
    }
}

#[async_trait]
impl Tool for WriteNote {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::new(
            format!("wrote {}", args["text"]),
            json!({"ok": true}),
        ))
    }
}

/// A read-only tool whose behaviour a test chooses.
struct Probe {
    spec: ToolSpec,
    behaviour: Behaviour,
}

#[derive(Clone)]
enum Behaviour {
    /// Returns this many bytes of text.
    Big(usize),
    /// Fails with an io error.
    Fail,
    /// Waits until cancelled.
    WaitForCancel,
    /// Waits on a barrier shared with another call: only returns when both run at once.
    Meet(Arc<tokio::sync::Barrier>),
    /// Reports progress twice, then succeeds.
    Progress,
}

impl Probe {
    fn new(name: &str, behaviour: Behaviour) -> Self {
        Self {
            spec: ToolSpec {
                name: name.into(),
                description: format!("probe {name}"),
                parameters: json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
                read_only: true,
            },
            behaviour,
        }
    }
}

#[async_trait]
impl Tool for Probe {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        match &self.behaviour {
            Behaviour::Big(size) => Ok(ToolOutput::new("x".repeat(*size), Value::Null)),
            Behaviour::Fail => Err(ToolError::new(ToolErrorCode::Io, "the disk said no")),
            Behaviour::WaitForCancel => {
                ctx.cancel.cancelled().await;
                Err(ToolError::new(ToolErrorCode::Cancelled, "stopped"))
            }
            Behaviour::Meet(barrier) => {
                barrier.wait().await;
                Ok(ToolOutput::new("met", Value::Null))
            }
            Behaviour::Progress => {
                for step in [1.0, 2.0] {
                    ctx.report_progress(ToolProgress {
                        progress: step,
                        total: Some(2.0),
                        message: Some(format!("step {step}")),
                        task: None,
                    });
                }
                Ok(ToolOutput::new("done", Value::Null))
            }
        }
    }
}

struct Harness {
    server: ScriptedServer,
    agent: Agent,
    _dir: tempfile::TempDir,
}

async fn harness(replies: Vec<Reply>, extra: Vec<Arc<dyn Tool>>, config: AgentConfig) -> Harness {
    let server = ScriptedServer::start(replies).await;
    let dir = workspace();
    let mut registry = ToolRegistry::with_builtins();
    for tool in extra {
        registry.register(tool).unwrap();
    }
    let llm = LlmClient::new(LlmConfig::new(server.base_url(), "scripted")).unwrap();
    let agent = Agent::new(
        llm,
        Arc::new(registry),
        ToolContext::open(dir.path()).unwrap(),
        config,
    );
    Harness {
        server,
        agent,
        _dir: dir,
    }
}

async fn ask(
    h: &Harness,
    question: &str,
    approver: &dyn Approver,
) -> (tooltrail_agent::TurnOutcome, Vec<Event>, Conversation) {
    let sink = CollectingSink::new();
    let (outcome, conversation) = ask_into(h, question, approver, &sink).await;
    (outcome, sink.events(), conversation)
}

/// One turn of a fresh conversation, its events handed to `sink`.
async fn ask_into(
    h: &Harness,
    question: &str,
    approver: &dyn Approver,
    sink: &dyn EventSink,
) -> (tooltrail_agent::TurnOutcome, Conversation) {
    let mut conversation = Conversation::new();
    let outcome = h
        .agent
        .run_turn(
            &mut conversation,
            question,
            sink,
            approver,
            &CancellationToken::new(),
        )
        .await;
    (outcome, conversation)
}

/// One turn of a fresh agent on the built-in tools in a demo folder, with this model client.
async fn turn_with(
    config: LlmConfig,
    question: &str,
) -> (tooltrail_agent::TurnOutcome, Vec<Event>) {
    let dir = workspace();
    let agent = support::builtins_agent(config, dir.path());
    let sink = CollectingSink::new();
    let outcome = agent
        .run_turn(
            &mut Conversation::new(),
            question,
            &sink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    (outcome, sink.events())
}

fn kinds(events: &[Event]) -> Vec<&'static str> {
    events
        .iter()
        .map(|event| event.body.kind())
        .filter(|kind| *kind != "text_delta" && *kind != "tool_call_delta")
        .collect()
}

fn finished(events: &[Event]) -> Vec<(String, ToolStatus, Option<ToolErrorCode>)> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolCallFinished {
                tool,
                status,
                error,
                ..
            } => Some((tool.clone(), *status, error.as_ref().map(|e| e.code))),
            _ => None,
        })
        .collect()
}

/// The tool messages of a request body, as (tool_call_id, content).
fn tool_messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_two_round_turn_keeps_order_and_the_model_sees_every_result() {
    let h = harness(
        vec![
            Reply::tool_calls(&[
                ("search_files", r#"{"pattern":"*.go"}"#),
                ("read_file", r#"{"path":"README.md"}"#),
            ]),
            Reply::text("There are 2 Go files; the README calls it a demo project."),
        ],
        vec![],
        AgentConfig::default(),
    )
    .await;
    let (outcome, events, conversation) = ask(&h, "How many Go files?", &DenyAll).await;

    assert_eq!(outcome.end, TurnEnd::Completed);
    assert_eq!(
        outcome.text,
        "There are 2 Go files; the README calls it a demo project."
    );
    assert_eq!(outcome.rounds, 2);
    assert_eq!(
        kinds(&events),
        vec![
            "turn_started",
            "message_added", // system
            "message_added", // the folder's context
            "message_added", // user
            "context_usage",
            "usage",
            "tool_mode_used", // native, said once
            "message_added",  // assistant with two calls
            "tool_call_started",
            "tool_call_started",
            "tool_call_finished",
            "tool_call_finished",
            "message_added", // tool result 1
            "message_added", // tool result 2
            "context_usage",
            "usage",
            "message_added", // final answer
            "turn_finished",
        ]
    );
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..events.len() as u64).collect::<Vec<_>>());

    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 2);
    // The first request offers the tools as OpenAI function tools.
    let tools = requests[0].body["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"read_file") && names.contains(&"search_files"),
        "{names:?}"
    );
    assert_eq!(tools[0]["type"], "function");
    assert_eq!(requests[0].body["tool_choice"], "auto");
    // The second request carries the assistant's calls and both results, in call order.
    let second = &requests[1].body;
    let roles: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "tool", "tool"]);
    let calls = second["messages"][2]["tool_calls"].as_array().unwrap();
    let results = tool_messages(second);
    assert_eq!(results[0].0, calls[0]["id"].as_str().unwrap());
    assert_eq!(results[1].0, calls[1]["id"].as_str().unwrap());
    assert!(
        results[0].1.contains("cmd/app/main.go") && results[0].1.contains("util.go"),
        "{}",
        results[0].1
    );
    assert!(results[1].1.contains("A demo project."), "{}", results[1].1);
    // The conversation holds what the model saw (the folder's context as a message of its
    // own), plus its last answer.
    assert_eq!(conversation.messages.len(), 7);
    assert_eq!(
        conversation.messages[6],
        Message::assistant(
            "There are 2 Go files; the README calls it a demo project.",
            vec![]
        )
    );
}

#[tokio::test]
async fn read_only_calls_of_one_round_run_in_parallel() {
    // Each call waits for the other at a barrier: run one after the other, they never return.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let h = harness(
        vec![
            Reply::tool_calls(&[("meet_a", "{}"), ("meet_b", "{}")]),
            Reply::text("done"),
        ],
        vec![
            Arc::new(Probe::new("meet_a", Behaviour::Meet(barrier.clone()))),
            Arc::new(Probe::new("meet_b", Behaviour::Meet(barrier))),
        ],
        AgentConfig::default(),
    )
    .await;
    let (outcome, events, _) =
        tokio::time::timeout(Duration::from_secs(20), ask(&h, "go", &DenyAll))
            .await
            .expect("read-only calls of one round must run concurrently");
    assert_eq!(outcome.end, TurnEnd::Completed);
    let mut statuses = finished(&events);
    statuses.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        statuses,
        vec![
            ("meet_a".to_string(), ToolStatus::Success, None),
            ("meet_b".to_string(), ToolStatus::Success, None)
        ]
    );
}

/// A sink whose every event takes a while to put on record, as a commit does on a busy machine.
struct SlowRecord(CollectingSink);

impl EventSink for SlowRecord {
    fn emit(&self, event: Event) {
        std::thread::sleep(Duration::from_millis(30));
        self.0.emit(event);
    }
}

#[tokio::test]
async fn calls_of_one_dispatch_are_on_record_as_starting_together() {
    let h = harness(
        vec![
            Reply::tool_calls(&[("small_a", "{}"), ("small_b", "{}"), ("small_c", "{}")]),
            Reply::text("done"),
        ],
        vec![
            Arc::new(Probe::new("small_a", Behaviour::Big(10))),
            Arc::new(Probe::new("small_b", Behaviour::Big(10))),
            Arc::new(Probe::new("small_c", Behaviour::Big(10))),
        ],
        AgentConfig::default(),
    )
    .await;
    let sink = SlowRecord(CollectingSink::new());
    let (outcome, _) = ask_into(&h, "go", &DenyAll, &sink).await;
    assert_eq!(outcome.end, TurnEnd::Completed);
    let events = sink.0.events();
    let starts: Vec<(usize, i64)> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.body, EventBody::ToolCallStarted { .. }))
        .map(|(at, e)| (at, e.time_ms))
        .collect();
    assert_eq!(starts.len(), 3);
    // However long each start takes to record, the three share their dispatch's moment…
    assert!(
        starts.iter().all(|(_, time)| *time == starts[0].1),
        "{starts:?}"
    );
    // …and all are on record before any of them ends.
    let first_end = events
        .iter()
        .position(|e| matches!(e.body, EventBody::ToolCallFinished { .. }))
        .unwrap();
    assert!(starts.iter().all(|(at, _)| *at < first_end), "{starts:?}");
}

#[tokio::test]
async fn bad_calls_become_error_results_and_the_turn_goes_on() {
    let h = harness(
        vec![
            Reply::tool_calls(&[
                ("no_such_tool", "{}"),
                ("read_file", r#"{"path": "README.md""#),
                ("read_file", r#"{"limit": 5}"#),
                ("read_file", r#"{"path":"/etc/passwd"}"#),
                ("flaky", "{}"),
            ]),
            Reply::text("I could not read those."),
        ],
        vec![Arc::new(Probe::new("flaky", Behaviour::Fail))],
        AgentConfig::default(),
    )
    .await;
    let (outcome, events, _) = ask(&h, "read things", &DenyAll).await;
    assert_eq!(outcome.end, TurnEnd::Completed);
    let statuses = finished(&events);
    assert_eq!(
        statuses,
        vec![
            (
                "no_such_tool".into(),
                ToolStatus::Error,
                Some(ToolErrorCode::ToolNotFound)
            ),
            (
                "read_file".into(),
                ToolStatus::Error,
                Some(ToolErrorCode::InvalidArguments)
            ),
            (
                "read_file".into(),
                ToolStatus::Error,
                Some(ToolErrorCode::InvalidArguments)
            ),
            (
                "read_file".into(),
                ToolStatus::Error,
                Some(ToolErrorCode::OutsideWorkspace)
            ),
            ("flaky".into(), ToolStatus::Error, Some(ToolErrorCode::Io)),
        ]
    );
    let results = tool_messages(&h.server.chat_requests()[1].body);
    assert_eq!(
        results[0].1,
        "error [tool_not_found]: tool not found: no_such_tool"
    );
    assert!(
        results[1]
            .1
            .starts_with("error [invalid_arguments]: arguments are not valid JSON"),
        "{}",
        results[1].1
    );
    assert!(
        results[2].1.contains("path"),
        "the error names the missing parameter: {}",
        results[2].1
    );
    assert!(
        results[3].1.starts_with("error [outside_workspace]"),
        "{}",
        results[3].1
    );
    assert!(
        !results[3].1.contains("/tmp"),
        "no system paths reach the model: {}",
        results[3].1
    );
    assert_eq!(results[4].1, "error [io]: the disk said no");
}

#[tokio::test]
async fn calls_that_need_approval_are_denied_or_allowed() {
    let runs = Arc::new(AtomicUsize::new(0));
    let replies = || {
        vec![
            Reply::tool_calls(&[("write_note", r#"{"text":"hi"}"#)]),
            Reply::text("ok"),
        ]
    };
    let h = harness(
        replies(),
        vec![Arc::new(WriteNote::new(runs.clone()))],
        AgentConfig::default(),
    )
    .await;
    let (_, events, _) = ask(&h, "write", &DenyAll).await;
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(
        finished(&events),
        vec![(
            "write_note".into(),
            ToolStatus::Denied,
            Some(ToolErrorCode::Denied)
        )]
    );
    assert!(kinds(&events).contains(&"approval_requested"));
    let denied = &tool_messages(&h.server.chat_requests()[1].body)[0].1;
    assert!(
        denied.starts_with(
            "error [denied]: the user denied this call: calls that need approval are turned off"
        ),
        "{denied}"
    );

    let h = harness(
        replies(),
        vec![Arc::new(WriteNote::new(runs.clone()))],
        AgentConfig::default(),
    )
    .await;
    let (_, events, _) = ask(&h, "write", &AllowAll).await;
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let approval = events.iter().find_map(|e| match &e.body {
        EventBody::ToolCallFinished { approval, .. } => Some(approval.clone()),
        _ => None,
    });
    let approval = approval.unwrap();
    assert!(approval.allowed);
    assert_eq!(approval.by, ApprovalBy::Setting);
}

/// Answers every request with the same reply and counts the requests.
struct Counting {
    reply: ApprovalReply,
    asked: AtomicUsize,
}

#[async_trait]
impl Approver for Counting {
    async fn decide(&self, _request: &ApprovalRequest) -> Decision {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Decision {
            reply: self.reply.clone(),
            by: ApprovalBy::User,
        }
    }
}

#[tokio::test]
async fn allow_for_this_conversation_is_not_asked_again() {
    let runs = Arc::new(AtomicUsize::new(0));
    let h = harness(
        vec![
            Reply::tool_calls(&[("write_note", r#"{"text":"hi"}"#)]),
            Reply::text("first"),
            Reply::tool_calls(&[
                ("write_note", r#"{"text":"hi"}"#),
                ("write_note", r#"{"text":"other"}"#),
            ]),
            Reply::text("second"),
        ],
        vec![Arc::new(WriteNote::new(runs.clone()))],
        AgentConfig::default(),
    )
    .await;
    let approver = Counting {
        reply: ApprovalReply::AllowForConversation,
        asked: AtomicUsize::new(0),
    };
    let sink = CollectingSink::new();
    let mut conversation = Conversation::new();
    let cancel = CancellationToken::new();
    h.agent
        .run_turn(&mut conversation, "one", &sink, &approver, &cancel)
        .await;
    let outcome = h
        .agent
        .run_turn(&mut conversation, "two", &sink, &approver, &cancel)
        .await;
    assert_eq!(outcome.text, "second");
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    // Asked for the first call and for the call with other arguments, not for the repeat.
    assert_eq!(approver.asked.load(Ordering::SeqCst), 2);
    let by: Vec<ApprovalBy> = sink
        .events()
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolCallFinished { approval, .. } => Some(approval.by.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        by,
        vec![ApprovalBy::User, ApprovalBy::Conversation, ApprovalBy::User]
    );
    // The second turn's request carries the whole first turn.
    let roles: Vec<String> = h.server.chat_requests()[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        roles,
        vec!["system", "user", "assistant", "tool", "assistant", "user"]
    );
}

#[tokio::test]
async fn the_round_limit_asks_for_a_last_answer_with_the_same_prefix_and_no_tool_choice() {
    let h = harness(
        vec![
            Reply::tool_calls(&[("read_file", r#"{"path":"README.md"}"#)]),
            Reply::tool_calls(&[("search_files", r#"{"pattern":"*.md"}"#)]),
            Reply::text("Here is what I found."),
        ],
        vec![],
        AgentConfig {
            max_rounds: 2,
            ..AgentConfig::default()
        },
    )
    .await;
    let (outcome, events, _) = ask(&h, "dig", &DenyAll).await;
    assert_eq!(outcome.end, TurnEnd::RoundLimit);
    assert_eq!(outcome.text, "Here is what I found.");
    assert!(
        events
            .iter()
            .any(|e| e.body == EventBody::RoundLimitReached { limit: 2 })
    );
    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].body.get("tools").is_some());
    assert_eq!(
        requests[2].body["tools"], requests[1].body["tools"],
        "the last request keeps the tools, so the server's prompt cache serves its prefix"
    );
    assert_eq!(requests[2].body["tool_choice"], "none");
    let before = requests[1].body["messages"].as_array().unwrap();
    let last = requests[2].body["messages"].as_array().unwrap();
    assert_eq!(
        &last[..before.len()],
        &before[..],
        "the prefix is kept byte for byte"
    );
    let last_user = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last_user["role"], "user");
    assert!(
        last_user["content"]
            .as_str()
            .unwrap()
            .contains("limit of 2 tool rounds")
    );
}

#[tokio::test]
async fn identical_calls_are_flagged_then_refused() {
    let call = ("read_file", r#"{"path":"README.md"}"#);
    let h = harness(
        vec![
            Reply::tool_calls(&[call]),
            Reply::tool_calls(&[call]),
            Reply::tool_calls(&[call]),
            Reply::text("fine"),
        ],
        vec![],
        AgentConfig::default(),
    )
    .await;
    let (_, events, _) = ask(&h, "read it", &DenyAll).await;
    let requests = h.server.chat_requests();
    let second = tool_messages(&requests[2].body);
    assert!(
        second[1]
            .1
            .contains("you already made this exact call in round 1"),
        "{}",
        second[1].1
    );
    let third = tool_messages(&requests[3].body);
    assert!(
        third[2]
            .1
            .starts_with("error [failed]: this exact call was already made 2 times"),
        "{}",
        third[2].1
    );
    assert_eq!(finished(&events).len(), 3);
}

#[tokio::test]
async fn long_results_are_cut_for_the_model_but_kept_whole_in_events() {
    let h = harness(
        vec![Reply::tool_calls(&[("big", "{}")]), Reply::text("ok")],
        vec![Arc::new(Probe::new("big", Behaviour::Big(100_000)))],
        AgentConfig {
            max_result_bytes: 1000,
            ..AgentConfig::default()
        },
    )
    .await;
    let (_, events, _) = ask(&h, "big", &DenyAll).await;
    let (result, truncated) = events
        .iter()
        .find_map(|e| match &e.body {
            EventBody::ToolCallFinished {
                result,
                truncated_for_model,
                ..
            } => Some((result.clone(), *truncated_for_model)),
            _ => None,
        })
        .unwrap();
    assert_eq!(result.len(), 100_000);
    assert!(truncated);
    let sent = &tool_messages(&h.server.chat_requests()[1].body)[0].1;
    assert!(sent.len() < 1200, "{}", sent.len());
    assert!(sent.ends_with("[output cut: showing 1000 of 100000 bytes. Ask for less (a narrower pattern, an offset and limit) to see the rest.]"), "{sent}");
}

#[tokio::test]
async fn cancelling_mid_stream_stops_at_once_and_keeps_what_was_said() {
    let h = harness(
        vec![
            Reply::text("one two three four five six seven eight nine ten")
                .delay(Duration::from_millis(400)),
        ],
        vec![],
        AgentConfig::default(),
    )
    .await;
    let sink = CollectingSink::new();
    let mut conversation = Conversation::new();
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(900)).await;
        stopper.cancel();
    });
    let outcome = h
        .agent
        .run_turn(&mut conversation, "count", &sink, &DenyAll, &cancel)
        .await;
    assert_eq!(outcome.end, TurnEnd::Cancelled);
    assert!(
        !outcome.text.is_empty()
            && outcome.text.len() < "one two three four five six seven eight nine ten".len(),
        "{:?}",
        outcome.text
    );
    let Some(Message::Assistant { content, .. }) = conversation.messages.last() else {
        panic!("the partial answer is kept: {:?}", conversation.messages);
    };
    assert_eq!(content, &outcome.text);
    let last = sink.events().last().unwrap().body.clone();
    assert_eq!(
        last,
        EventBody::TurnFinished {
            reason: TurnEnd::Cancelled,
            rounds: 1,
            text: outcome.text.clone()
        }
    );
}

#[tokio::test]
async fn cancelling_during_a_tool_call_marks_it_cancelled_and_answers_every_call() {
    let h = harness(
        vec![Reply::tool_calls(&[
            ("wait", "{}"),
            ("write_note", r#"{"text":"x"}"#),
        ])],
        vec![
            Arc::new(Probe::new("wait", Behaviour::WaitForCancel)),
            Arc::new(WriteNote::new(Arc::new(AtomicUsize::new(0)))),
        ],
        AgentConfig::default(),
    )
    .await;
    let sink = CollectingSink::new();
    let mut conversation = Conversation::new();
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let outcome = h
        .agent
        .run_turn(&mut conversation, "wait", &sink, &AllowAll, &cancel)
        .await;
    assert_eq!(outcome.end, TurnEnd::Cancelled);
    let statuses: Vec<ToolStatus> = finished(&sink.events())
        .into_iter()
        .map(|(_, s, _)| s)
        .collect();
    assert_eq!(statuses, vec![ToolStatus::Cancelled, ToolStatus::Cancelled]);
    // Every call has a result, so the conversation can go on.
    let tools: Vec<&Message> = conversation
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Tool { .. }))
        .collect();
    assert_eq!(tools.len(), 2);
}

/// Never answers: the call waits for approval until the turn is stopped.
struct NeverAnswers;

#[async_trait]
impl Approver for NeverAnswers {
    async fn decide(&self, _request: &ApprovalRequest) -> Decision {
        std::future::pending().await
    }
}

/// Each started and finished event's (tool, description), in order.
fn descriptions(events: &[Event]) -> Vec<(&'static str, String, String)> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolCallStarted {
                tool, description, ..
            } => Some(("started", tool.clone(), description.clone())),
            EventBody::ToolCallFinished {
                tool, description, ..
            } => Some(("finished", tool.clone(), description.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_call_stopped_before_it_finished_still_carries_its_description() {
    async fn stopped(h: &Harness, approver: &dyn Approver) -> Vec<Event> {
        let sink = CollectingSink::new();
        let cancel = CancellationToken::new();
        let stopper = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            stopper.cancel();
        });
        let outcome = h
            .agent
            .run_turn(&mut Conversation::new(), "go", &sink, approver, &cancel)
            .await;
        assert_eq!(outcome.end, TurnEnd::Cancelled);
        sink.events()
    }

    // Stopped while it runs: the start already says what the tool does, and so does the end.
    let running = harness(
        vec![Reply::tool_calls(&[("wait", "{}")])],
        vec![Arc::new(Probe::new("wait", Behaviour::WaitForCancel))],
        AgentConfig::default(),
    )
    .await;
    let events = stopped(&running, &AllowAll).await;
    assert_eq!(
        descriptions(&events),
        vec![
            ("started", "wait".to_string(), "probe wait".to_string()),
            ("finished", "wait".to_string(), "probe wait".to_string()),
        ]
    );
    assert_eq!(
        finished(&events),
        vec![(
            "wait".to_string(),
            ToolStatus::Cancelled,
            Some(ToolErrorCode::Cancelled)
        )]
    );

    // Stopped while it waits for approval: it never starts, and its end has the description.
    let waiting = harness(
        vec![Reply::tool_calls(&[("write_note", r#"{"text":"x"}"#)])],
        vec![Arc::new(WriteNote::new(Arc::new(AtomicUsize::new(0))))],
        AgentConfig::default(),
    )
    .await;
    let events = stopped(&waiting, &NeverAnswers).await;
    assert!(
        events
            .iter()
            .any(|event| matches!(event.body, EventBody::ApprovalRequested { .. }))
    );
    assert_eq!(
        descriptions(&events),
        vec![(
            "finished",
            "write_note".to_string(),
            "Write a note".to_string()
        )]
    );
    assert_eq!(finished(&events)[0].1, ToolStatus::Cancelled);
}

#[tokio::test]
async fn a_dead_endpoint_ends_the_turn_with_one_sentence() {
    let (outcome, events) = turn_with(LlmConfig::new("http://127.0.0.1:9/v1", "m"), "hi").await;
    assert_eq!(outcome.end, TurnEnd::Error);
    let error = outcome.error.unwrap();
    assert!(
        error.contains("http://127.0.0.1:9/v1")
            && error.ends_with('.')
            && !error.contains("Error {"),
        "{error}"
    );
    let fatal = events.iter().find_map(|e| match &e.body {
        EventBody::Error {
            code, fatal: true, ..
        } => Some(*code),
        _ => None,
    });
    assert_eq!(fatal, Some(ErrorCode::Unreachable));
}

#[tokio::test]
async fn a_server_error_and_a_cut_stream_end_the_turn_cleanly() {
    let h = harness(
        vec![Reply::error(401, "invalid api key")],
        vec![],
        AgentConfig::default(),
    )
    .await;
    let (outcome, _, _) = ask(&h, "hi", &DenyAll).await;
    assert_eq!(outcome.end, TurnEnd::Error);
    assert!(outcome.error.unwrap().contains("invalid api key"));

    let h = harness(
        vec![Reply::tool_calls(&[("read_file", r#"{"path":"README.md"}"#)]).cut_after(2)],
        vec![],
        AgentConfig::default(),
    )
    .await;
    let (outcome, events, _) = ask(&h, "hi", &DenyAll).await;
    assert_eq!(outcome.end, TurnEnd::Error);
    assert!(
        finished(&events).is_empty(),
        "no tool runs from an incomplete answer"
    );
}

#[tokio::test]
async fn chat_with_tool_execution_returns_the_final_text() {
    let h = harness(
        vec![
            Reply::tool_calls(&[("read_file", r#"{"path":"README.md"}"#)]),
            Reply::text("A demo project."),
        ],
        vec![],
        AgentConfig::default(),
    )
    .await;
    let answer =
        tooltrail_agent::chat_with_tool_execution(&h.agent, vec![Message::user("What is it?")])
            .await
            .unwrap();
    assert_eq!(answer, "A demo project.");
}

#[tokio::test]
async fn progress_a_tool_reports_reaches_the_timeline() {
    let h = harness(
        vec![
            Reply::tool_calls(&[("slow_job", "{}")]),
            Reply::text("done"),
        ],
        vec![Arc::new(Probe::new("slow_job", Behaviour::Progress))],
        AgentConfig::default(),
    )
    .await;
    let (_, events, _) = ask(&h, "run it", &DenyAll).await;
    let progress: Vec<(f64, Option<String>)> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolCallProgress {
                tool,
                progress,
                message,
                ..
            } if tool == "slow_job" => Some((*progress, message.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        progress,
        vec![
            (1.0, Some("step 1".to_string())),
            (2.0, Some("step 2".to_string()))
        ]
    );
    let kinds = kinds(&events);
    let started = kinds
        .iter()
        .position(|k| *k == "tool_call_started")
        .unwrap();
    let finished = kinds
        .iter()
        .position(|k| *k == "tool_call_finished")
        .unwrap();
    let first_progress = kinds
        .iter()
        .position(|k| *k == "tool_call_progress")
        .unwrap();
    assert!(
        started < first_progress && first_progress < finished,
        "{kinds:?}"
    );
}

/// Allows `write_note` with the text "hi", refuses every `read_file`.
struct NoteRules;

impl RuleBook for NoteRules {
    fn decide(&self, tool: &str, arguments: &serde_json::Value) -> Option<RuleDecision> {
        match tool {
            "write_note" if arguments["text"] == "hi" => Some(RuleDecision {
                rule_id: "rule_allow".to_string(),
                allow: true,
                description: "the allow rule `write_note hi`".to_string(),
            }),
            "read_file" => Some(RuleDecision {
                rule_id: "rule_deny".to_string(),
                allow: false,
                description: "the deny rule `read_file`".to_string(),
            }),
            _ => None,
        }
    }

    fn offer(&self, tool: &str, arguments: &serde_json::Value) -> Option<String> {
        (tool == "write_note").then(|| format!("write_note {}", arguments["text"]))
    }
}

/// Answers "always allow" as a front end does once it has kept the offered rule.
struct KeepsRule {
    offered: std::sync::Mutex<Vec<Option<String>>>,
}

#[async_trait]
impl Approver for KeepsRule {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        self.offered.lock().unwrap().push(request.rule.clone());
        Decision {
            reply: ApprovalReply::AllowInWorkspace,
            by: ApprovalBy::Rule {
                id: "rule_kept".to_string(),
            },
        }
    }
}

#[tokio::test]
async fn an_offered_rule_reaches_the_request_and_a_kept_one_is_recorded_with_the_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut h = harness(
        vec![
            Reply::tool_calls(&[("write_note", r#"{"text":"other"}"#)]),
            Reply::text("done"),
        ],
        vec![Arc::new(WriteNote::new(runs.clone()))],
        AgentConfig::default(),
    )
    .await;
    h.agent = h.agent.with_rules(Arc::new(NoteRules));
    let approver = KeepsRule {
        offered: std::sync::Mutex::new(Vec::new()),
    };
    let (outcome, events, _) = ask(&h, "go", &approver).await;
    assert_eq!(outcome.text, "done");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let offer = Some("write_note \"other\"".to_string());
    assert_eq!(*approver.offered.lock().unwrap(), vec![offer.clone()]);
    let requested: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ApprovalRequested { rule, .. } => Some(rule.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(requested, vec![offer]);
    let approval = events.iter().find_map(|e| match &e.body {
        EventBody::ToolCallFinished { approval, .. } => Some(approval.clone()),
        _ => None,
    });
    let approval = approval.unwrap();
    assert!(approval.allowed);
    assert_eq!(
        approval.by,
        ApprovalBy::Rule {
            id: "rule_kept".to_string()
        }
    );
}

#[tokio::test]
async fn rules_allow_without_asking_and_deny_even_read_only_calls() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut h = harness(
        vec![
            Reply::tool_calls(&[
                ("write_note", r#"{"text":"hi"}"#),
                ("read_file", r#"{"path":"README.md"}"#),
                ("write_note", r#"{"text":"other"}"#),
            ]),
            Reply::text("done"),
        ],
        vec![Arc::new(WriteNote::new(runs.clone()))],
        AgentConfig::default(),
    )
    .await;
    h.agent = h.agent.with_rules(Arc::new(NoteRules));
    let approver = Counting {
        reply: ApprovalReply::AllowOnce,
        asked: AtomicUsize::new(0),
    };
    let (outcome, events, _) = ask(&h, "go", &approver).await;
    assert_eq!(outcome.text, "done");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    // Only the call no rule covers was asked about.
    assert_eq!(approver.asked.load(Ordering::SeqCst), 1);
    let finished: Vec<(String, bool, ApprovalBy)> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolCallFinished { tool, approval, .. } => {
                Some((tool.clone(), approval.allowed, approval.by.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        vec![
            (
                "write_note".to_string(),
                true,
                ApprovalBy::Rule {
                    id: "rule_allow".to_string()
                }
            ),
            (
                "read_file".to_string(),
                false,
                ApprovalBy::Rule {
                    id: "rule_deny".to_string()
                }
            ),
            ("write_note".to_string(), true, ApprovalBy::User),
        ]
    );
}

fn weather_spec() -> ToolSpec {
    ToolSpec {
        name: "get_weather".into(),
        description: "The weather of a city".into(),
        parameters: json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        }),
        read_only: false,
    }
}

/// The names of the tools a request body offers.
fn offered_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn external_calls_end_the_turn_and_their_results_continue_it() {
    let h = harness(
        vec![
            Reply::tool_calls(&[
                ("read_file", r#"{"path":"README.md"}"#),
                ("get_weather", r#"{"city":"Beijing"}"#),
            ]),
            Reply::text("A demo project, and it is sunny in Beijing."),
        ],
        vec![],
        AgentConfig::default(),
    )
    .await;
    let options = TurnOptions {
        offered: Some(vec!["read_file".into()]),
        external: vec![weather_spec()],
        first_choice: Some(ToolChoice::Required),
        ..TurnOptions::default()
    };
    let sink = CollectingSink::new();
    let mut conversation = Conversation::new();
    let first = h
        .agent
        .run(
            &mut conversation,
            vec![Message::user("What is it, and the weather?")],
            &options,
            &sink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    // Our call ran; the client's is handed back, and the turn ends there.
    let weather_call = conversation.messages[3].clone();
    let Message::Assistant { tool_calls, .. } = &weather_call else {
        panic!("{weather_call:?}");
    };
    assert_eq!(
        first,
        TurnOutcome {
            end: TurnEnd::Completed,
            text: String::new(),
            rounds: 1,
            error: None,
            pending_calls: vec![tool_calls[1].clone()],
        }
    );
    assert_eq!(tool_calls[1].name, "get_weather");
    assert_eq!(
        finished(&sink.events()),
        vec![("read_file".to_string(), ToolStatus::Success, None)]
    );
    let requests = h.server.chat_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        offered_names(&requests[0].body),
        vec!["read_file".to_string(), "get_weather".to_string()]
    );
    assert_eq!(requests[0].body["tool_choice"], "required");

    // The client's result continues the conversation in the next turn.
    let result = Message::tool(tool_calls[1].id.clone(), "get_weather", "sunny, 25°C");
    let second = h
        .agent
        .run(
            &mut conversation,
            vec![result.clone()],
            &options,
            &sink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(second.text, "A demo project, and it is sunny in Beijing.");
    assert_eq!(second.pending_calls, vec![]);
    let requests = h.server.chat_requests();
    let roles: Vec<&str> = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, vec!["system", "user", "assistant", "tool", "tool"]);
    assert_eq!(
        tool_messages(&requests[1].body)[1],
        (tool_calls[1].id.clone(), "sunny, 25°C".to_string())
    );
    // Each turn's first model call takes the given choice (later calls take auto, below).
    assert_eq!(requests[1].body["tool_choice"], "required");
    assert_eq!(conversation.messages[5], result);
}

#[tokio::test]
async fn a_registry_tool_that_was_not_offered_is_not_found_and_the_input_may_bring_its_own_system_message()
 {
    let h = harness(
        vec![
            Reply::tool_calls(&[("search_files", r#"{"pattern":"*.go"}"#)]),
            Reply::text("I cannot search."),
        ],
        vec![],
        AgentConfig::default(),
    )
    .await;
    let options = TurnOptions {
        offered: Some(vec!["read_file".into()]),
        ..TurnOptions::default()
    };
    let sink = CollectingSink::new();
    let mut conversation = Conversation::new();
    let outcome = h
        .agent
        .run(
            &mut conversation,
            vec![Message::system("Be brief."), Message::user("Go files?")],
            &options,
            &sink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.text, "I cannot search.");
    assert_eq!(
        finished(&sink.events()),
        vec![(
            "search_files".to_string(),
            ToolStatus::Error,
            Some(ToolErrorCode::ToolNotFound)
        )]
    );
    let requests = h.server.chat_requests();
    assert_eq!(
        offered_names(&requests[0].body),
        vec!["read_file".to_string()]
    );
    assert_eq!(
        requests[0].body["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
    assert_eq!(requests[1].body["tool_choice"], "auto");
    let started = sink.events()[0].body.clone();
    let EventBody::TurnStarted { user_message, .. } = started else {
        panic!("{started:?}");
    };
    assert_eq!(user_message, "Go files?");
}

/// Two folders' first requests are the same up to the question: the system prompt, then the
/// tools; the folder's name and its project instructions come at the head of the question,
/// after them, so a server's prefix cache serves every folder.
#[tokio::test]
async fn every_folder_shares_the_prefix_and_its_context_comes_after_the_tools() {
    let mut firsts = Vec::new();
    for instructions in ["Use tabs.", "Use spaces."] {
        let config = AgentConfig {
            project_instructions: Some(format!("\n\n{instructions}")),
            ..AgentConfig::default()
        };
        let h = harness(vec![Reply::text("A demo.")], vec![], config).await;
        let (outcome, _, conversation) = ask(&h, "What is it?", &DenyAll).await;
        assert_eq!(outcome.end, TurnEnd::Completed);
        let name = h
            ._dir
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        // The record keeps the context as a message of its own.
        assert!(
            matches!(&conversation.messages[1], Message::System { content } if content.contains(&name)),
            "{:?}",
            conversation.messages
        );
        let body = h.server.chat_requests()[0].body.clone();
        let messages = body["messages"].as_array().unwrap().clone();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert_eq!(messages[1]["role"], "user");
        let question = messages[1]["content"].as_str().unwrap().to_string();
        assert!(
            question.starts_with(&format!("<context>\nThe project folder is \"{name}\".")),
            "{question}"
        );
        assert!(question.contains(instructions), "{question}");
        assert!(
            question.ends_with("\n</context>\n\nWhat is it?"),
            "{question}"
        );
        firsts.push((messages[0].clone(), body["tools"].clone()));
    }
    assert!(
        !firsts[0].0["content"]
            .as_str()
            .unwrap()
            .contains("Use tabs")
    );
    assert_eq!(firsts[0], firsts[1]);
}

/// A server that reads a long prompt says how far it got (llama.cpp's `prompt_progress`, asked
/// for only where the client is told the server is llama-server): each report is an event of
/// the round, before its first text.
#[tokio::test]
async fn the_servers_prompt_progress_reaches_the_timeline_before_the_answer() {
    let progress = |processed: u32| {
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null}}],
               "prompt_progress": {"total": 1200, "cache": 300, "processed": processed, "time_ms": 812.5}})
    };
    let answer = json!({"choices": [{"index": 0, "delta": {"content": "A demo."}, "finish_reason": "stop"}]});
    let server =
        ScriptedServer::start(vec![Reply::sse([progress(300), progress(1200), answer])]).await;
    let mut config = LlmConfig::new(server.base_url(), "scripted");
    config.prompt_progress = true;
    let (outcome, events) = turn_with(config, "What is it?").await;
    assert_eq!(outcome.text, "A demo.");
    let reports: Vec<(u32, u32, u32, u64)> = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::PromptProgress {
                processed,
                total,
                cached,
                elapsed_ms,
                ..
            } => Some((*processed, *total, *cached, *elapsed_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(reports, vec![(300, 1200, 300, 812), (1200, 1200, 300, 812)]);
    let kinds: Vec<&str> = events.iter().map(|event| event.body.kind()).collect();
    let last_report = kinds.iter().rposition(|kind| *kind == "prompt_progress");
    let first_text = kinds.iter().position(|kind| *kind == "text_delta");
    assert!(last_report.unwrap() < first_text.unwrap(), "{kinds:?}");
    assert_eq!(server.chat_requests()[0].body["return_progress"], true);
}
