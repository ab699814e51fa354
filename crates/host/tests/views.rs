//! MCP App views, below the window: a server whose view attacks
//! (`tests/mcp/fixtures/hostile-view-server.js`) is asked about by a scripted model, its call
//! goes on the record with its view, and the view's requests go through [`Views`] as the
//! window's bridge sends them: approved like the model's calls, recorded in the view's turn
//! under its call, and refused when the view reaches for what is not its own.
//!
//! Without `node` the tests fail under CI=true and are skipped otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tooltrail_agent::{
    Agent, AgentConfig, AllowAll, Approver, CollectingSink, Conversation, DenyAll, EventSink,
};
use tooltrail_host::views::{ViewCalls, ViewOutcome, ViewStart, Views};
use tooltrail_host::{Record, RecordingSink, Toolbox};
use tooltrail_llm::{LlmClient, LlmConfig};
use tooltrail_protocol::{EventBody, ToolStatus, ViewEnd, ViewLink};
use tooltrail_store::{HistoryFilter, Store};
use tooltrail_test_support::{Reply, ScriptedServer};
use tooltrail_tools::ToolContext;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/fixtures/hostile-view-server.js")
}

fn has_node() -> bool {
    let found = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        tooltrail_test_support::dependency_missing(
            "node is not installed, so the MCP test servers cannot run (scripts/setup --app installs it)",
        );
    }
    found
}

struct Setup {
    _dir: tempfile::TempDir,
    root: PathBuf,
    toolbox: Toolbox,
    history: Arc<Record>,
    views: Views,
    /// What each server was sent, one JSON line per message.
    hostile_log: PathBuf,
    other_log: PathBuf,
    conversation: String,
    turn: String,
    call: String,
    /// What the window would have been sent while the question ran.
    screen: Vec<tooltrail_protocol::Event>,
}

impl Setup {
    fn store(&self) -> &Arc<Store> {
        self.history.store()
    }

    fn sent(&self, log: &Path) -> Vec<Value> {
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// The tools the server ran, by name.
    fn ran(&self, log: &Path) -> Vec<String> {
        self.sent(log)
            .into_iter()
            .filter(|sent| sent["method"] == "tools/call")
            .map(|sent| sent["params"]["name"].as_str().unwrap().to_string())
            .collect()
    }
}

/// A folder with the hostile server and another, and a question whose model opened the trap:
/// its call is on the record.
async fn asked() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let hostile_log = root.join("hostile.log");
    let other_log = root.join("other.log");
    let mcp_json = root.join("mcp.json");
    std::fs::write(
        &mcp_json,
        json!({ "mcpServers": {
            "hostile": { "command": "node", "args": [fixture(), hostile_log] },
            "other": { "command": "node", "args": [fixture(), other_log] },
        }})
        .to_string(),
    )
    .unwrap();
    let toolbox = Toolbox::new(Some(mcp_json));
    let tools = toolbox.tools(&root, &[]).await;
    assert!(tools.failures.is_empty(), "{:?}", tools.failures);
    let names: Vec<String> = tools.registry.names().map(str::to_string).collect();
    assert!(
        names.contains(&"hostile__open_trap".to_string()),
        "{names:?}"
    );
    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[("hostile__open_trap", "{}")]),
        Reply::text("Here is the chart."),
    ])
    .await;
    let llm = LlmClient::new(LlmConfig::new(model.base_url(), "scripted")).unwrap();
    let agent = Agent::new(
        llm,
        tools.registry,
        ToolContext::open(&root).unwrap(),
        AgentConfig::default(),
    );
    let history = Arc::new(Record::in_memory().unwrap());
    let screen = Arc::new(CollectingSink::new());
    let sink = RecordingSink::new(Arc::clone(&history), Box::new(Screen(Arc::clone(&screen))));
    let mut conversation = Conversation::new();
    agent
        .run_turn(
            &mut conversation,
            "Chart the numbers.",
            &sink,
            &AllowAll,
            &CancellationToken::new(),
        )
        .await;
    let screen = screen.events();
    let events = history
        .store()
        .conversation_events(&conversation.id)
        .unwrap();
    let (turn, call, view) = events
        .iter()
        .find_map(|event| match &event.body {
            EventBody::ToolCallFinished {
                call_id,
                view,
                status: ToolStatus::Success,
                ..
            } => Some((event.turn_id.clone(), call_id.clone(), view.clone())),
            _ => None,
        })
        .expect("the trap's call finished");
    assert_eq!(
        view.map(|view| view.resource_uri).as_deref(),
        Some("ui://trap/page.html"),
        "the recorded call says it has a view"
    );
    Setup {
        _dir: dir,
        root,
        toolbox,
        history,
        views: Views::default(),
        hostile_log,
        other_log,
        conversation: conversation.id,
        turn,
        call,
        screen,
    }
}

struct Screen(Arc<CollectingSink>);

impl EventSink for Screen {
    fn emit(&self, event: tooltrail_protocol::Event) {
        self.0.emit(event);
    }
}

struct NullScreen;

impl EventSink for NullScreen {
    fn emit(&self, _event: tooltrail_protocol::Event) {}
}

/// Prepares and starts the trap's view; its events are recorded.
async fn open_view(setup: &Setup) -> String {
    open_view_at(setup).await.0
}

/// [`open_view`], with where the window loads it.
async fn open_view_at(setup: &Setup) -> (String, ViewStart) {
    let servers = setup.toolbox.mcp_servers(&setup.root).await;
    let plan = setup
        .views
        .prepare(
            setup.store(),
            &servers,
            &setup.conversation,
            &setup.turn,
            &setup.call,
        )
        .await
        .unwrap();
    assert_eq!(plan.server, "hostile");
    assert_eq!(plan.resource_uri, "ui://trap/page.html");
    assert_eq!(plan.input, json!({}));
    let ViewOutcome::Result { result } = &plan.outcome else {
        panic!("the recorded call has a result: {:?}", plan.outcome);
    };
    assert_eq!(result["content"][0]["text"], "numbers: 1, 2, 3");
    let sink: Arc<dyn EventSink> = Arc::new(RecordingSink::new(
        Arc::clone(&setup.history),
        Box::new(NullScreen),
    ));
    let start = setup.views.start(&plan.view_id, &[], sink).await.unwrap();
    assert!(start.origin.starts_with("http://127.0.0.1:"), "{start:?}");
    assert!(start.csp.contains("connect-src 'none'"), "{}", start.csp);
    (plan.view_id, start)
}

/// The trap's call on the record and its view open; `None` (said why) without node.
async fn opened() -> Option<(Setup, String)> {
    if !has_node() {
        return None;
    }
    let setup = asked().await;
    let view = open_view(&setup).await;
    Some((setup, view))
}

async fn call(
    setup: &Setup,
    view: &str,
    approver: &dyn Approver,
    name: &str,
    arguments: Value,
) -> Result<Value, tooltrail_host::HostError> {
    let ctx = ToolContext::open(&setup.root).unwrap();
    setup
        .views
        .call_tool(
            view,
            name,
            arguments,
            ViewCalls {
                ctx: &ctx,
                rules: None,
                approver,
            },
        )
        .await
}

/// The events of the view's turn, as recorded.
fn view_events(setup: &Setup, view: &str) -> Vec<EventBody> {
    setup
        .store()
        .turn_events(view)
        .unwrap()
        .into_iter()
        .map(|event| event.body)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn attack_views_the_handshake_announces_views_and_app_only_tools_are_never_offered() {
    if !has_node() {
        return;
    }
    let setup = asked().await;
    let initialize = setup
        .sent(&setup.hostile_log)
        .into_iter()
        .find(|sent| sent["method"] == "initialize")
        .unwrap();
    assert_eq!(
        initialize["params"]["capabilities"]["extensions"]["io.modelcontextprotocol/ui"]["mimeTypes"],
        json!(["text/html;profile=mcp-app"])
    );
    let tools = setup.toolbox.tools(&setup.root, &[]).await;
    let names: Vec<&str> = tools.registry.names().collect();
    assert!(!names.contains(&"hostile__report"), "{names:?}");
    assert!(names.contains(&"hostile__secret_model_tool"), "{names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_views_call_is_approved_run_and_recorded_under_the_call_that_opened_it() {
    let Some((setup, view)) = opened().await else {
        return;
    };
    let result = call(
        &setup,
        &view,
        &AllowAll,
        "report",
        json!({"findings": {"a": 1}}),
    )
    .await
    .unwrap();
    assert_eq!(result["structuredContent"], json!({"tool": "report"}));
    assert_eq!(result.get("isError"), None);
    assert_eq!(setup.ran(&setup.hostile_log), ["open_trap", "report"]);
    // Shown again, the page is not read again: the server has not said it changed.
    setup
        .views
        .close(&open_view(&setup).await, ViewEnd::Closed)
        .await;
    let page_reads = setup
        .sent(&setup.hostile_log)
        .iter()
        .filter(|sent| sent["method"] == "resources/read")
        .count();
    assert_eq!(page_reads, 1);

    setup.views.close(&view, ViewEnd::Closed).await;
    let events = view_events(&setup, &view);
    let EventBody::ViewOpened {
        parent_turn_id,
        parent_call_id,
        server,
        ..
    } = &events[0]
    else {
        panic!("a view turn begins with view_opened: {events:?}");
    };
    assert_eq!(
        (parent_turn_id, parent_call_id, server.as_str()),
        (&setup.turn, &setup.call, "hostile")
    );
    assert!(matches!(
        events.last(),
        Some(EventBody::ViewClosed {
            reason: ViewEnd::Closed
        })
    ));
    // History lists the view's call under the call that opened it.
    let page = setup
        .store()
        .history(&HistoryFilter {
            conversation: Some(setup.conversation.clone()),
            ..HistoryFilter::default()
        })
        .unwrap();
    let parent = page
        .items
        .iter()
        .find(|row| row.tool == "hostile__open_trap")
        .unwrap();
    let child = page
        .items
        .iter()
        .find(|row| row.tool == "hostile__report")
        .unwrap();
    assert_eq!(child.view_of.as_deref(), Some(parent.id.as_str()));
    assert_eq!(parent.view_of, None);
    // The view's turn is no question of the conversation's.
    let summary = setup.store().conversation(&setup.conversation).unwrap();
    assert_eq!(summary.turns, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn attack_views_a_view_cannot_call_a_tool_without_app_visibility() {
    let Some((setup, view)) = opened().await else {
        return;
    };
    let result = call(&setup, &view, &AllowAll, "secret_model_tool", json!({}))
        .await
        .unwrap();
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("not meant to be called by views"), "{text}");
    assert_eq!(
        setup.ran(&setup.hostile_log),
        ["open_trap"],
        "the server never saw it"
    );
    let denied = view_events(&setup, &view)
        .into_iter()
        .find_map(|body| match body {
            EventBody::ToolCallFinished { status, tool, .. } => Some((status, tool)),
            _ => None,
        });
    assert_eq!(
        denied,
        Some((ToolStatus::Denied, "secret_model_tool".to_string())),
        "the refusal is on the record"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn attack_views_a_view_cannot_call_another_servers_tool() {
    let Some((setup, view)) = opened().await else {
        return;
    };
    for name in ["other__echo", "other__report"] {
        let result = call(&setup, &view, &AllowAll, name, json!({"text": "x"}))
            .await
            .unwrap();
        assert_eq!(result["isError"], true, "{name}: {result}");
    }
    assert_eq!(setup.ran(&setup.other_log), Vec::<String>::new());
    // `echo` names its own server's tool, never the other's.
    call(&setup, &view, &AllowAll, "echo", json!({"text": "mine"}))
        .await
        .unwrap();
    assert_eq!(setup.ran(&setup.hostile_log), ["open_trap", "echo"]);
    assert_eq!(setup.ran(&setup.other_log), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn attack_views_view_calls_wait_for_approval_like_the_models() {
    let Some((setup, view)) = opened().await else {
        return;
    };
    let result = call(&setup, &view, &DenyAll, "echo", json!({"text": "no"}))
        .await
        .unwrap();
    assert_eq!(result["isError"], true);
    assert_eq!(setup.ran(&setup.hostile_log), ["open_trap"]);
    let events = view_events(&setup, &view);
    assert!(
        events
            .iter()
            .any(|body| matches!(body, EventBody::ApprovalRequested { tool, .. } if tool == "hostile__echo")),
        "the user was asked: {events:?}"
    );
    assert!(events.iter().any(|body| matches!(
        body,
        EventBody::ToolCallFinished {
            status: ToolStatus::Denied,
            ..
        }
    )));
}

#[tokio::test(flavor = "multi_thread")]
async fn attack_views_a_flood_of_requests_is_cut_and_the_view_closed() {
    let Some((setup, view)) = opened().await else {
        return;
    };
    let calls = (0..400).map(|i| call(&setup, &view, &AllowAll, "echo", json!({"text": i})));
    let answers = futures::future::join_all(calls).await;
    let refused = answers.iter().filter(|answer| answer.is_err()).count();
    assert!(refused >= 200, "{refused} of 400 refused");
    let closed = call(&setup, &view, &AllowAll, "echo", json!({})).await;
    assert!(closed.is_err(), "a flooded view is closed");
    let events = view_events(&setup, &view);
    assert!(matches!(
        events.last(),
        Some(EventBody::ViewClosed {
            reason: ViewEnd::Flooded
        })
    ));
    let ran = setup.ran(&setup.hostile_log).len();
    assert!(ran <= 1 + 120, "{ran} calls reached the server");
}

#[tokio::test(flavor = "multi_thread")]
async fn attack_views_a_resource_of_another_type_is_refused_with_a_sentence() {
    if !has_node() {
        return;
    }
    let setup = asked().await;
    // The record says the call had the plain-text "view"; the page is read and refused.
    let servers = setup.toolbox.mcp_servers(&setup.root).await;
    let plain = servers
        .iter()
        .find(|server| server.name() == "hostile")
        .unwrap()
        .view_resource("ui://trap/plain")
        .await
        .unwrap_err()
        .to_string();
    assert!(plain.contains("text/plain"), "{plain}");
    let missing = setup
        .views
        .prepare(
            setup.store(),
            &servers,
            &setup.conversation,
            &setup.turn,
            "no_such_call",
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(missing.contains("no such call"), "{missing}");
}

#[tokio::test(flavor = "multi_thread")]
async fn attack_views_resources_read_by_a_view_follow_its_servers_approval() {
    let Some((setup, view)) = opened().await else {
        return;
    };
    let ctx = ToolContext::open(&setup.root).unwrap();
    let read = |approver: &'static dyn Approver| {
        let ctx = &ctx;
        let setup = &setup;
        let view = view.clone();
        async move {
            setup
                .views
                .read_resource(
                    &view,
                    "ui://trap/plain",
                    ViewCalls {
                        ctx,
                        rules: None,
                        approver,
                    },
                )
                .await
        }
    };
    let denied = read(&DenyAll).await.unwrap_err().to_string();
    assert!(denied.contains("[denied]"), "{denied}");
    let reads = |setup: &Setup| {
        setup
            .sent(&setup.hostile_log)
            .iter()
            .filter(|sent| {
                sent["method"] == "resources/read" && sent["params"]["uri"] == "ui://trap/plain"
            })
            .count()
    };
    assert_eq!(reads(&setup), 0, "a denied read never reaches the server");
    let allowed = read(&AllowAll).await.unwrap();
    assert!(allowed.to_string().contains("not a view"), "{allowed}");
    assert_eq!(reads(&setup), 1);
    let events = view_events(&setup, &view);
    let reads_recorded: Vec<ToolStatus> = events
        .iter()
        .filter_map(|body| match body {
            EventBody::ToolCallFinished { tool, status, .. } if tool == "read_resource" => {
                Some(*status)
            }
            _ => None,
        })
        .collect();
    assert_eq!(reads_recorded, [ToolStatus::Denied, ToolStatus::Success]);
}

#[tokio::test(flavor = "multi_thread")]
async fn attack_views_a_frame_may_load_only_the_address_the_host_issued() {
    if !has_node() {
        return;
    }
    let setup = asked().await;
    let (view, start) = open_view_at(&setup).await;
    let views = &setup.views;
    assert!(views.admits_navigation(&start.url), "{}", start.url);
    // The app's own pages.
    assert!(views.admits_navigation("tauri://localhost/"));
    assert!(views.admits_navigation("http://tauri.localhost/index.html"));
    // Another local service, another path or a query at the view's own origin, the same port
    // by another name, a look-alike of the app, a page outside.
    let port = start.origin.rsplit(':').next().unwrap();
    for elsewhere in [
        "http://127.0.0.1:9/".to_string(),
        format!("http://127.0.0.1:{}/", port.parse::<u16>().unwrap() ^ 1),
        format!("{}/", start.origin),
        format!("{}/admin", start.origin),
        format!("{}?x=1", start.url),
        format!("{}x", start.url),
        format!(
            "http://localhost:{port}{}",
            start.url.trim_start_matches(&start.origin)
        ),
        "tauri://localhost.evil.example/".to_string(),
        "http://tauri.localhost.evil.example/".to_string(),
        "https://evil.example/?data=secret".to_string(),
        "data:text/html,hi".to_string(),
    ] {
        assert!(
            !views.admits_navigation(&elsewhere),
            "{elsewhere} was admitted"
        );
    }
    // Closed, its address is no longer issued.
    views.close(&view, ViewEnd::Closed).await;
    assert!(!views.admits_navigation(&start.url));
}

#[tokio::test(flavor = "multi_thread")]
async fn attack_views_an_oversized_call_is_refused_and_recorded_small() {
    let Some((setup, view)) = opened().await else {
        return;
    };
    let huge = "x".repeat(1024 * 1024);
    let long_name = call(&setup, &view, &AllowAll, &huge, json!({}))
        .await
        .unwrap();
    assert_eq!(long_name["isError"], true);
    let text = long_name["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("name is 1048576 bytes long"), "{text}");
    let big_arguments = call(&setup, &view, &AllowAll, "echo", json!({ "text": huge }))
        .await
        .unwrap();
    assert_eq!(big_arguments["isError"], true);
    let text = big_arguments["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("bytes of arguments"), "{text}");
    // A refused tool with large arguments is recorded without them.
    call(
        &setup,
        &view,
        &AllowAll,
        "secret_model_tool",
        json!({ "text": "y".repeat(32 * 1024) }),
    )
    .await
    .unwrap();
    assert_eq!(
        setup.ran(&setup.hostile_log),
        ["open_trap"],
        "none reached the server"
    );
    let recorded = serde_json::to_string(&view_events(&setup, &view)).unwrap();
    assert!(
        recorded.len() < 16 * 1024,
        "the view's turn weighs {} bytes on the record",
        recorded.len()
    );
    let refused: Vec<(String, ToolStatus)> = view_events(&setup, &view)
        .into_iter()
        .filter_map(|body| match body {
            EventBody::ToolCallFinished { tool, status, .. } => Some((tool, status)),
            _ => None,
        })
        .collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert!(
        refused
            .iter()
            .all(|(_, status)| *status == ToolStatus::Denied)
    );
    assert!(refused[0].0.len() <= 132, "{}", refused[0].0.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn attack_views_refused_calls_count_toward_flooding() {
    let Some((setup, view)) = opened().await else {
        return;
    };
    // One after another, each refused: the first 120 (a minute's worth) because the tool is not
    // for views, the rest because the minute's are used. Both kinds count toward the 200
    // refusals that close a view; before, only the second did, and such a view went on.
    let mut answers = Vec::new();
    for _ in 0..200 {
        answers.push(call(&setup, &view, &AllowAll, "secret_model_tool", json!({})).await);
    }
    let last = answers.last().unwrap().as_ref().unwrap_err().to_string();
    assert!(last.contains("too many requests and was closed"), "{last}");
    let events = view_events(&setup, &view);
    assert!(
        matches!(
            events.last(),
            Some(EventBody::ViewClosed {
                reason: ViewEnd::Flooded
            })
        ),
        "{:?}",
        events.last()
    );
    assert!(
        call(&setup, &view, &AllowAll, "echo", json!({}))
            .await
            .is_err()
    );
}

/// The engine keeps website data by host, every view's port together: it may clear what views
/// kept only when no view is open. The front end is told exactly then, for whatever reason the
/// last one closed (here flooded, then the app closing), and never while a view is open.
#[tokio::test(flavor = "multi_thread")]
async fn attack_views_the_last_view_closing_is_when_views_data_is_cleared() {
    if !has_node() {
        return;
    }
    let setup = asked().await;
    let told = Arc::new(std::sync::Mutex::new(Vec::new()));
    let heard = Arc::clone(&told);
    setup
        .views
        .when_none_open(move |reason| heard.lock().unwrap().push(reason));
    let first = open_view(&setup).await;
    let second = open_view(&setup).await;
    setup.views.close(&first, ViewEnd::Navigated).await;
    assert_eq!(*told.lock().unwrap(), [], "a view is still open");
    setup.views.close(&first, ViewEnd::Closed).await;
    assert_eq!(
        *told.lock().unwrap(),
        [],
        "closing a closed view is nothing"
    );
    let calls = (0..400).map(|i| call(&setup, &second, &AllowAll, "echo", json!({"text": i})));
    futures::future::join_all(calls).await;
    assert_eq!(*told.lock().unwrap(), [ViewEnd::Flooded]);
    let third = open_view(&setup).await;
    let _ = third;
    setup.views.close_all().await;
    assert_eq!(
        *told.lock().unwrap(),
        [ViewEnd::Flooded, ViewEnd::AppClosed]
    );
    // What is cleared then: views' data, by the loopback host the engine files it under.
    assert!(tooltrail_host::views::is_view_site("127.0.0.1"));
    assert!(!tooltrail_host::views::is_view_site("localhost"));
}

fn view_file(
    source: tooltrail_host::view_download::ViewFileSource,
) -> tooltrail_host::view_download::ViewFile {
    tooltrail_host::view_download::ViewFile {
        name: Some("report.csv".to_string()),
        mime_type: Some("text/csv".to_string()),
        source,
    }
}

async fn download(
    setup: &Setup,
    view: &str,
    file: &tooltrail_host::view_download::ViewFile,
    path: &Path,
) -> Result<tooltrail_host::view_download::SavedFile, tooltrail_host::HostError> {
    let ctx = ToolContext::open(&setup.root).unwrap();
    let target = path.to_path_buf();
    setup
        .views
        .download(
            view,
            file,
            path,
            Box::new(move |bytes| std::fs::write(&target, bytes)),
            ViewCalls {
                ctx: &ctx,
                rules: None,
                approver: &DenyAll,
            },
        )
        .await
}

/// A file the view handed over is written where the user chose (the user said yes on the bar
/// and in the save dialog, so no approval is asked again) and the save is on the record in the
/// view's turn, under the call whose view asked.
#[tokio::test(flavor = "multi_thread")]
async fn a_views_file_is_saved_where_the_user_chose_and_recorded_under_its_call() {
    let Some((setup, view)) = opened().await else {
        return;
    };
    let path = setup.root.join("saved.csv");
    let saved = download(
        &setup,
        &view,
        &view_file(tooltrail_host::view_download::ViewFileSource::Text {
            text: "a,b\n1,2\n".to_string(),
        }),
        &path,
    )
    .await
    .unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a,b\n1,2\n");
    assert_eq!(saved.bytes, 8);
    setup.views.close(&view, ViewEnd::Closed).await;
    let page = setup
        .store()
        .history(&HistoryFilter {
            conversation: Some(setup.conversation.clone()),
            ..HistoryFilter::default()
        })
        .unwrap();
    let parent = page
        .items
        .iter()
        .find(|row| row.tool == "hostile__open_trap")
        .unwrap();
    let save = page
        .items
        .iter()
        .find(|row| row.tool == "ui/download-file")
        .expect("the save is on the record");
    assert_eq!(save.view_of.as_deref(), Some(parent.id.as_str()));
    assert_eq!(save.status, tooltrail_store::CallStatus::Success);
    let events = view_events(&setup, &view);
    let arguments = events
        .iter()
        .find_map(|event| match event {
            EventBody::ToolCallFinished {
                tool, arguments, ..
            } if tool == "ui/download-file" => Some(arguments.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        arguments,
        json!({
            "name": "report.csv",
            "from": "8 bytes handed over by the view",
            "saved_to": path.display().to_string(),
        })
    );
    // The server never heard of it: a save is the host's, not a call of its tools.
    assert_eq!(setup.ran(&setup.hostile_log), ["open_trap"]);
}

/// A view cannot have a file read from this computer or fetched from it (a stdio server's
/// view has no opt-in for private addresses): refused with a sentence, nothing written, and
/// the refusal on the record under the view's call.
#[tokio::test(flavor = "multi_thread")]
async fn attack_views_a_download_of_a_local_file_or_loopback_address_is_refused_and_recorded() {
    let Some((setup, view)) = opened().await else {
        return;
    };
    let path = setup.root.join("never.txt");
    // A loopback service that must hear nothing.
    let canary = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    canary.set_nonblocking(true).unwrap();
    let port = canary.local_addr().unwrap().port();
    let local = download(
        &setup,
        &view,
        &view_file(tooltrail_host::view_download::ViewFileSource::Url {
            url: "file:///etc/passwd".to_string(),
        }),
        &path,
    )
    .await
    .unwrap_err();
    assert!(local.to_string().contains("file:"), "{local}");
    let from_loopback = view_file(tooltrail_host::view_download::ViewFileSource::Url {
        url: format!("http://127.0.0.1:{port}/secret.csv"),
    });
    // Before the user is asked where to save it, and again as it would be fetched.
    let ctx = ToolContext::open(&setup.root).unwrap();
    let asked = setup
        .views
        .check_download(
            &view,
            &from_loopback,
            ViewCalls {
                ctx: &ctx,
                rules: None,
                approver: &DenyAll,
            },
        )
        .await
        .unwrap_err();
    assert!(asked.to_string().contains("private network"), "{asked}");
    let loopback = download(&setup, &view, &from_loopback, &path)
        .await
        .unwrap_err();
    assert!(
        loopback.to_string().contains("private network"),
        "{loopback}"
    );
    assert!(canary.accept().is_err(), "the loopback service was reached");
    assert!(!path.exists());
    let statuses: Vec<ToolStatus> = view_events(&setup, &view)
        .into_iter()
        .filter_map(|event| match event {
            EventBody::ToolCallFinished { tool, status, .. } if tool == "ui/download-file" => {
                Some(status)
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        [ToolStatus::Denied, ToolStatus::Denied, ToolStatus::Error]
    );
}

/// The delta that names a tool with a view says so, and a call still being written (or
/// waiting, its message come) has its view prepared from what the record holds of it: the
/// view opens while the model writes, with the input so far, and its result pending.
#[tokio::test(flavor = "multi_thread")]
async fn attack_views_a_live_calls_view_opens_early_but_acts_only_once_its_call_started() {
    if !has_node() {
        return;
    }
    let setup = asked().await;
    let named: Vec<Option<ViewLink>> = setup
        .screen
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolCallDelta {
                tool: Some(_),
                view,
                ..
            } => Some(view.clone()),
            _ => None,
        })
        .collect();
    let trap = ViewLink {
        resource_uri: "ui://trap/page.html".to_string(),
    };
    assert_eq!(named, [Some(trap.clone())]);

    // Another question whose model is writing a call of the same tool.
    let sink = RecordingSink::new(Arc::clone(&setup.history), Box::new(NullScreen));
    let mut seq = 0;
    let mut emit = |body: EventBody| {
        sink.emit(tooltrail_protocol::Event {
            conversation_id: setup.conversation.clone(),
            turn_id: "turn_live".to_string(),
            seq,
            time_ms: 1_000 + seq as i64,
            body,
        });
        seq += 1;
    };
    emit(EventBody::TurnStarted {
        workspace: setup.root.display().to_string(),
        model: "scripted".to_string(),
        user_message: "Chart them again.".to_string(),
        replay_of: None,
    });
    emit(EventBody::ToolCallDelta {
        round: 1,
        index: 0,
        call_id: "call_live".to_string(),
        tool: Some("hostile__open_trap".to_string()),
        arguments_delta: "{\"tit".to_string(),
        view: Some(trap.clone()),
    });
    let servers = setup.toolbox.mcp_servers(&setup.root).await;
    let plan = setup
        .views
        .prepare(
            setup.store(),
            &servers,
            &setup.conversation,
            "turn_live",
            "call_live",
        )
        .await
        .unwrap();
    assert_eq!(
        (
            plan.server.as_str(),
            plan.tool.as_str(),
            plan.resource_uri.as_str()
        ),
        ("hostile", "hostile__open_trap", "ui://trap/page.html")
    );
    assert_eq!(plan.input, json!({}));
    assert_eq!(plan.outcome, ViewOutcome::Pending);

    // Its message came (the call now waits for approval): the whole input.
    emit(EventBody::MessageAdded {
        message: tooltrail_protocol::Message::Assistant {
            content: String::new(),
            tool_calls: vec![tooltrail_protocol::ToolCall {
                id: "call_live".to_string(),
                name: "hostile__open_trap".to_string(),
                arguments: "{\"title\":\"again\"}".to_string(),
            }],
        },
    });
    let plan = setup
        .views
        .prepare(
            setup.store(),
            &servers,
            &setup.conversation,
            "turn_live",
            "call_live",
        )
        .await
        .unwrap();
    assert_eq!(plan.resource_uri, "ui://trap/page.html");
    assert_eq!(plan.input, json!({"title": "again"}));
    assert_eq!(plan.outcome, ViewOutcome::Pending);

    // Shown while the call waits: it may not act before its call is on the record, and its
    // turn is filed under the call once it is.
    let sink: Arc<dyn EventSink> = Arc::new(RecordingSink::new(
        Arc::clone(&setup.history),
        Box::new(NullScreen),
    ));
    setup.views.start(&plan.view_id, &[], sink).await.unwrap();
    let early = call(
        &setup,
        &plan.view_id,
        &AllowAll,
        "echo",
        json!({"text": "hi"}),
    )
    .await
    .unwrap_err();
    assert!(early.to_string().contains("has not started yet"), "{early}");
    emit(EventBody::ToolCallStarted {
        round: 1,
        call_id: "call_live".to_string(),
        tool: "hostile__open_trap".to_string(),
        source: tooltrail_protocol::ToolSource::Mcp {
            server: "hostile".to_string(),
        },
        description: String::new(),
        arguments: json!({"title": "again"}),
        approval: tooltrail_protocol::ApprovalRecord::not_needed(),
        view: Some(trap.clone()),
    });
    let echoed = call(
        &setup,
        &plan.view_id,
        &AllowAll,
        "echo",
        json!({"text": "hi"}),
    )
    .await
    .unwrap();
    assert_eq!(echoed.get("isError"), None, "{echoed}");
    setup.views.close(&plan.view_id, ViewEnd::Closed).await;
    // In the folder's History, under the call whose view made it.
    let page = setup
        .store()
        .history(&HistoryFilter {
            workspace: Some(setup.root.display().to_string()),
            ..HistoryFilter::default()
        })
        .unwrap();
    let parent = page
        .items
        .iter()
        .find(|row| row.call_id == "call_live")
        .expect("the live call is on the record");
    let echo = page
        .items
        .iter()
        .find(|row| row.tool == "hostile__echo")
        .expect("the view's call is in the folder's History");
    assert_eq!(echo.view_of.as_deref(), Some(parent.id.as_str()));
    // A call of another conversation is not found through this one.
    assert!(
        setup
            .views
            .prepare(
                setup.store(),
                &servers,
                "conv_other",
                "turn_live",
                "call_live"
            )
            .await
            .is_err()
    );
}
