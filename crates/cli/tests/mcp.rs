//! `tooltrail mcp list|test` and MCP tools in `tooltrail tool` and `tooltrail ask`, against the
//! reference filesystem server from npm (installed by `scripts/mcp-setup` into
//! `tests/mcp/node_modules`; installed here on first run when missing). Without node the tests
//! say so and pass.

#![allow(clippy::unwrap_used)]

use crate::support::mcp as support;

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{Setup, ask, listed_server, reference_server, text, tooltrail};
use tooltrail_protocol::{ApprovalBy, Event, EventBody, ToolSource, ToolStatus};
use tooltrail_test_support::{Reply, ScriptedServer};

/// A workspace with one file, and a config folder whose mcp.json has the filesystem server
/// (`fs`, read_text_file allowed), one that dies at start, and one disabled.
fn setup(entry: &Path) -> Setup {
    Setup::new(
        &[("notes.txt", "alpha\nbeta\n")],
        |workspace| {
            json!({"mcpServers": {
                "fs": {"command": "node", "args": [entry, workspace],
                       "tools": {"read_text_file": "allow"}},
                "dies": {"command": "node",
                         "args": ["-e", "console.error('boom: no database'); process.exit(2)"]},
                "off": {"command": "node", "disabled": true}
            }})
        },
        "",
    )
}

#[tokio::test]
async fn mcp_list_shows_states_and_tools() {
    let Some(entry) = reference_server("server-filesystem") else {
        return;
    };
    let setup = setup(&entry);
    let out = tooltrail(&["mcp", "list", "--json"], &setup).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let servers: Value = serde_json::from_slice(&out.stdout).unwrap();
    let by_name = |name: &str| listed_server(&servers, name);
    let fs = by_name("fs");
    assert_eq!(fs["state"], "running");
    let read = fs["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "fs__read_text_file")
        .unwrap();
    assert_eq!(read["approval"], "allow");
    let dies = by_name("dies");
    assert_eq!(dies["state"], "failed");
    assert!(
        dies["stderr"].to_string().contains("boom: no database"),
        "{dies}"
    );
    assert_eq!(by_name("off")["state"], "disabled");

    let out = tooltrail(&["mcp", "list"], &setup).await;
    let listing = text(&out.stdout);
    assert!(listing.contains("fs  [stdio] node "), "{listing}");
    assert!(listing.contains("fs__list_directory"), "{listing}");
    assert!(listing.contains("(server: read-only)"), "{listing}");
}

#[tokio::test]
async fn mcp_test_shows_the_handshake_or_the_stderr() {
    let Some(entry) = reference_server("server-filesystem") else {
        return;
    };
    let setup = setup(&entry);
    let out = tooltrail(&["mcp", "test", "fs"], &setup).await;
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("handshake: "), "{stdout}");
    assert!(stdout.contains("protocol 2025-11-25"), "{stdout}");
    assert!(stdout.contains("fs__read_text_file"), "{stdout}");

    let out = tooltrail(&["mcp", "test", "dies"], &setup).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("error: the MCP server \"dies\" did not complete the MCP handshake"),
        "{stderr}"
    );
    assert!(stderr.contains("  boom: no database"), "{stderr}");

    let out = tooltrail(&["mcp", "test", "nope"], &setup).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("there is no MCP server named \"nope\" in mcp.json"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn tool_runs_an_mcp_tool_and_warns_about_failed_servers() {
    let Some(entry) = reference_server("server-filesystem") else {
        return;
    };
    let setup = setup(&entry);
    let path = setup.workspace.join("notes.txt");
    let args = json!({"path": path}).to_string();
    let out = tooltrail(&["tool", "fs__read_text_file", "--args", &args], &setup).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["ok"], true);
    assert_eq!(result["text"], "alpha\nbeta\n");
    assert_eq!(result["data"]["server"], "fs");
    let warnings: Vec<String> = text(&out.stderr)
        .lines()
        .filter(|line| line.starts_with("warning:"))
        .map(str::to_string)
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("warning: going on without MCP server \"dies\": "),
        "{warnings:?}"
    );

    // Tools that ask need --approve all here, as built-in ones do.
    let dir = json!({"path": setup.workspace}).to_string();
    let out = tooltrail(&["tool", "fs__list_directory", "--args", &dir], &setup).await;
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["error"]["code"], "approval_required");

    // Built-in tools start no MCP servers.
    let out = tooltrail(
        &["tool", "search_files", "--args", r#"{"pattern": "*.txt"}"#],
        &setup,
    )
    .await;
    assert!(out.status.success());
    assert_eq!(text(&out.stderr), "");
}

#[tokio::test]
async fn ask_calls_mcp_tools_and_goes_on_without_a_failed_server() {
    let Some(entry) = reference_server("server-filesystem") else {
        return;
    };
    let setup = setup(&entry);
    let path = setup.workspace.join("notes.txt");
    let call = json!({"path": path}).to_string();
    let model = ScriptedServer::start(vec![
        Reply::tool_calls(&[("fs__read_text_file", &call)]),
        Reply::text("Alpha and beta."),
    ])
    .await;
    let out = ask(
        &model,
        &["--approve", "deny", "--json", "What do the notes say?"],
        &setup,
    )
    .await;
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let mcp_warnings = stderr
        .lines()
        .filter(|line| line.contains("MCP server"))
        .count();
    assert_eq!(mcp_warnings, 1, "{stderr}");
    let events: Vec<Event> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let finished: Vec<(String, ToolSource, ToolStatus, String, ApprovalBy)> = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::ToolCallFinished {
                tool,
                source,
                status,
                result,
                approval,
                ..
            } => Some((
                tool.clone(),
                source.clone(),
                *status,
                result.clone(),
                approval.by.clone(),
            )),
            _ => None,
        })
        .collect();
    // The record says mcp.json let it run, not that the policy found it read-only.
    assert_eq!(
        finished,
        vec![(
            "fs__read_text_file".to_string(),
            ToolSource::Mcp {
                server: "fs".into()
            },
            ToolStatus::Success,
            "alpha\nbeta\n".to_string(),
            ApprovalBy::Setting,
        )]
    );
}

/// MCP Apps: `mcp test` names each tool's view, and says which tools are for the server's views
/// alone (never offered to the model); `mcp list --json` carries the view.
#[tokio::test]
async fn mcp_test_says_which_tools_have_views_and_which_are_for_views_alone() {
    // Node and the npm packages, as for the reference servers.
    if reference_server("server-filesystem").is_none() {
        return;
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/fixtures/many-tools-server.js")
        .canonicalize()
        .unwrap();
    let setup = Setup::new(
        &[],
        |_| json!({"mcpServers": {"stats": {"command": "node", "args": [fixture, "0", "views"]}}}),
        "",
    );
    let out = tooltrail(&["mcp", "test", "stats"], &setup).await;
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("tools: 4"), "{stdout}");
    let line = |name: &str| {
        stdout
            .lines()
            .find(|line| line.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no line for {name}: {stdout}"))
            .to_string()
    };
    assert!(
        line("stats__stats_chart").ends_with("(view: ui://stats/chart.html)"),
        "{stdout}"
    );
    assert!(
        line("stats__legacy_chart").ends_with("(view: ui://stats/legacy.html)"),
        "{stdout}"
    );
    assert_eq!(
        line("stats_poll").trim(),
        "stats_poll is for the server's views alone: never offered to the model"
    );
    assert!(!stdout.contains("stats__stats_poll"), "{stdout}");
    // Each view read and checked as the app would.
    assert!(
        stdout.contains(
            "  view ui://stats/chart.html: 47 bytes of HTML, declares connectDomains, resourceDomains\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("  view ui://stats/legacy.html: 28 bytes of HTML, the strict default CSP\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "  view ui://stats/table: not shown: the page is text/plain, not an MCP App view \
             (text/html;profile=mcp-app); the result is shown as text\n"
        ),
        "{stdout}"
    );

    let out = tooltrail(&["mcp", "list", "--json"], &setup).await;
    let servers: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = listed_server(&servers, "stats")["tools"].clone();
    let chart = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "stats__stats_chart")
        .unwrap();
    assert_eq!(chart["view"], "ui://stats/chart.html");
}

/// The MCP Apps example servers from npm: `server-basic-vanillajs`, whose one tool has a view,
/// and `server-system-monitor`, whose poll is for its view alone. `mcp test` reads each view's
/// page as the app will, under the strict default CSP (neither declares domains).
#[tokio::test]
async fn mcp_test_reads_the_views_of_the_mcp_apps_example_servers() {
    let (Some(basic), Some(monitor)) = (
        reference_server("server-basic-vanillajs"),
        reference_server("server-system-monitor"),
    ) else {
        return;
    };
    let setup = Setup::new(
        &[],
        |_| {
            json!({"mcpServers": {
                "basic": {"command": "node", "args": [basic, "--stdio"]},
                "monitor": {"command": "node", "args": [monitor, "--stdio"]}
            }})
        },
        "",
    );
    let out = tooltrail(&["mcp", "test", "basic"], &setup).await;
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("(view: ui://get-time/mcp-app.html)"),
        "{stdout}"
    );
    let page = stdout
        .lines()
        .find(|line| line.starts_with("  view ui://get-time/mcp-app.html: "))
        .unwrap_or_else(|| panic!("no view line: {stdout}"));
    assert!(
        page.ends_with("bytes of HTML, the strict default CSP"),
        "{page}"
    );

    let out = tooltrail(&["mcp", "test", "monitor"], &setup).await;
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "  poll-system-stats is for the server's views alone: never offered to the model"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("monitor__poll-system-stats"), "{stdout}");
    assert!(
        stdout.contains("(view: ui://system-monitor/mcp-app.html)"),
        "{stdout}"
    );
}

/// `ask` says a call's tool has a view (its page's address), on the timeline and in `--json`,
/// with `server-basic-vanillajs` from npm; the view itself opens only in the app.
#[tokio::test]
async fn ask_says_which_call_has_a_view_and_json_carries_it() {
    let Some(basic) = reference_server("server-basic-vanillajs") else {
        return;
    };
    let setup = Setup::new(
        &[],
        |_| json!({"mcpServers": {"basic": {"command": "node", "args": [basic, "--stdio"], "approval": "allow"}}}),
        "",
    );
    let script = || {
        vec![
            Reply::tool_calls(&[("basic__get-time", "{}")]),
            Reply::text("It is late."),
        ]
    };
    let model = ScriptedServer::start(script()).await;
    let out = ask(&model, &["What time is it on the server?"], &setup).await;
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "⧉ has a view: ui://get-time/mcp-app.html (open the conversation in the app to use it)"
        ),
        "{stdout}"
    );

    let model = ScriptedServer::start(script()).await;
    let out = ask(
        &model,
        &["--json", "What time is it on the server?"],
        &setup,
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let views: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| {
            event["type"] == "tool_call_started" || event["type"] == "tool_call_finished"
        })
        .map(|event| event["view"].clone())
        .collect();
    assert_eq!(
        views,
        vec![json!({"resource_uri": "ui://get-time/mcp-app.html"}); 2]
    );
}
