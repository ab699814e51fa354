//! The `tooltrail` binary as a person runs it, against the scripted model server.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use std::path::Path;

use pretty_assertions::assert_eq;
use run::{text, tooltrail};
use serde_json::Value;
use tooltrail_protocol::{Event, EventBody, ToolStatus, TurnEnd};
use tooltrail_test_support::{Reply, ScriptedServer};

fn workspace() -> tempfile::TempDir {
    tooltrail_test_support::demo_workspace().unwrap()
}

fn two_rounds() -> Vec<Reply> {
    vec![
        Reply::tool_calls(&[
            ("search_files", r#"{"pattern":"*.go"}"#),
            ("read_file", r#"{"path":"/etc/passwd"}"#),
        ]),
        Reply::text("There are 2 Go files."),
    ]
}

#[tokio::test]
async fn ask_prints_the_answer_and_one_line_per_tool_call() {
    let server = ScriptedServer::start(two_rounds()).await;
    let ws = workspace();
    let config = tempfile::tempdir().unwrap();
    let out = tooltrail(
        &[
            "ask",
            "-w",
            ws.path().to_str().unwrap(),
            "--base-url",
            &server.base_url(),
            "--model",
            "scripted",
            "How many Go files?",
        ],
        config.path(),
        &[],
    )
    .await;
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {}",
        text(&out.stderr)
    );
    let mut lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    // The two calls run in parallel; their lines come in the order they finish.
    lines[..2].sort_by_key(|line| !line.contains("search_files"));
    assert!(
        lines[0].starts_with("✓ search_files pattern=*.go · success · "),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("✗ read_file path=/etc/passwd · error · ") && lines[1].contains(" — "),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "There are 2 Go files.");
    assert_eq!(server.chat_requests()[0].body["model"], "scripted");
}

#[tokio::test]
async fn ask_json_prints_one_event_per_line() {
    let server = ScriptedServer::start(two_rounds()).await;
    let ws = workspace();
    let config = tempfile::tempdir().unwrap();
    let out = tooltrail(
        &[
            "ask",
            "--json",
            "-w",
            ws.path().to_str().unwrap(),
            "--base-url",
            &server.base_url(),
            "-m",
            "scripted",
            "How many Go files?",
        ],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let events: Vec<Event> = text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert!(matches!(
        events.first().unwrap().body,
        EventBody::TurnStarted { .. }
    ));
    assert_eq!(
        events.last().unwrap().body,
        EventBody::TurnFinished {
            reason: TurnEnd::Completed,
            rounds: 2,
            text: "There are 2 Go files.".into()
        }
    );
    let mut statuses: Vec<(String, ToolStatus)> = events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::ToolCallFinished { tool, status, .. } => Some((tool.clone(), *status)),
            _ => None,
        })
        .collect();
    statuses.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        statuses,
        vec![
            ("read_file".into(), ToolStatus::Error),
            ("search_files".into(), ToolStatus::Success)
        ]
    );
    let conversation = &events[0].conversation_id;
    assert!(events.iter().all(|e| &e.conversation_id == conversation));
}

#[tokio::test]
async fn a_dead_endpoint_is_one_sentence_then_the_ways_forward_and_exit_1() {
    let ws = workspace();
    let config = tempfile::tempdir().unwrap();
    let out = tooltrail(
        &[
            "ask",
            "-w",
            ws.path().to_str().unwrap(),
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "hi",
        ],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: ") && first.contains("http://127.0.0.1:9/v1"),
        "{stderr}"
    );
    // What was found on this machine (whatever runs here) and how to go on follow it.
    assert!(stderr.contains("tooltrail providers use"), "{stderr}");
    assert!(
        !stderr.contains("Error {") && !stderr.contains("kind:"),
        "no debug dumps: {stderr}"
    );
}

#[tokio::test]
async fn without_a_model_the_endpoints_first_model_is_used() {
    let server = ScriptedServer::start(vec![Reply::text("hello")]).await;
    let ws = workspace();
    let config = tempfile::tempdir().unwrap();
    let out = tooltrail(
        &["ask", "-w", ws.path().to_str().unwrap(), "hi"],
        config.path(),
        &[("TOOLTRAIL_BASE_URL", &server.base_url())],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "hello\n");
    let chat: Vec<_> = server
        .chat_requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .collect();
    let listed = tooltrail_test_support::SCRIPTED_MODEL;
    assert_eq!(chat[0].body["model"], listed);
}

#[tokio::test]
async fn settings_come_from_flags_then_environment_then_the_config_file() {
    let from_file = ScriptedServer::start(vec![Reply::text("from the file")]).await;
    let from_env = ScriptedServer::start(vec![Reply::text("from the environment")]).await;
    let ws = workspace();
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("config.toml"),
        format!(
            "base_url = \"{}\"\nmodel = \"file-model\"\n",
            from_file.base_url()
        ),
    )
    .unwrap();
    let dir = ws.path().to_str().unwrap();
    let out = tooltrail(&["ask", "-w", dir, "hi"], config.path(), &[]).await;
    assert_eq!(
        text(&out.stdout),
        "from the file\n",
        "{}",
        text(&out.stderr)
    );
    assert_eq!(from_file.chat_requests()[0].body["model"], "file-model");

    let out = tooltrail(
        &["ask", "-w", dir, "hi"],
        config.path(),
        &[
            ("TOOLTRAIL_BASE_URL", &from_env.base_url()),
            ("TOOLTRAIL_MODEL", "env-model"),
        ],
    )
    .await;
    assert_eq!(
        text(&out.stdout),
        "from the environment\n",
        "{}",
        text(&out.stderr)
    );
    assert_eq!(from_env.chat_requests()[0].body["model"], "env-model");

    std::fs::write(config.path().join("config.toml"), "base_url = 42\n").unwrap();
    let out = tooltrail(&["ask", "-w", dir, "hi"], config.path(), &[]).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("error: the config file ") && stderr.contains("is not valid"),
        "{stderr}"
    );
}

#[tokio::test]
async fn tool_runs_one_tool_and_exits_by_its_result() {
    let ws = workspace();
    let config = tempfile::tempdir().unwrap();
    let dir = ws.path().to_str().unwrap();

    let out = tooltrail(
        &[
            "tool",
            "read_file",
            "-w",
            dir,
            "--args",
            r#"{"path":"README.md"}"#,
        ],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["ok"], true);
    assert!(result["text"].as_str().unwrap().contains("A demo project."));

    let out = tooltrail(
        &[
            "tool",
            "read_file",
            "-w",
            dir,
            "--args",
            r#"{"path":"/etc/passwd"}"#,
        ],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["ok"], false);
    assert_eq!(result["error"]["code"], "outside_workspace");

    let out = tooltrail(
        &["tool", "read_file", "-w", dir, "--args", r#"{"limit": 3}"#],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["error"]["code"], "invalid_arguments");

    let out = tooltrail(&["tool", "no_such_tool", "-w", dir], config.path(), &[]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .starts_with("error: there is no tool named \"no_such_tool\"; the tools are: ")
    );

    let out = tooltrail(
        &["tool", "read_file", "-w", dir, "--args", "{path"],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("error: --args is not valid JSON"));

    let out = tooltrail(
        &["tool", "read_file", "-w", "/no/such/folder"],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("/no/such/folder"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn turns_are_recorded_and_a_conversation_can_be_continued_and_exported() {
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[
            ("search_files", r#"{"pattern":"*.go"}"#),
            ("read_file", r#"{"path":"nope.md"}"#),
        ]),
        Reply::text("There are 2 Go files."),
        Reply::tool_calls(&[("count_lines", r#"{"path":".","pattern":"*.go"}"#)]),
        Reply::text("They have 4 lines."),
    ])
    .await;
    let ws = workspace();
    let config = tempfile::tempdir().unwrap();
    let dir = ws.path().to_str().unwrap();
    let url = server.base_url();
    let base = ["--base-url", url.as_str(), "-m", "scripted", "-w", dir];

    let out = tooltrail(
        &[&["ask"][..], &base, &["How many Go files?"]].concat(),
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let id = stderr
        .split_whitespace()
        .find(|word| word.starts_with("conv_"))
        .map(|word| word.trim_end_matches(';').to_string())
        .unwrap_or_else(|| panic!("the conversation id is printed: {stderr}"));

    // The second question carries on the first conversation: the model sees both turns.
    let out = tooltrail(
        &[
            &["ask", "-c", id.as_str()][..],
            &base,
            &["And how many lines?"],
        ]
        .concat(),
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let roles: Vec<String> = server.chat_requests()[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        roles,
        vec![
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "user"
        ]
    );

    let out = tooltrail(&["history", "--json"], config.path(), &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let page: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows: Vec<(String, String)> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["tool"].as_str().unwrap().to_string(),
                row["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(
        rows[0],
        ("count_lines".to_string(), "success".to_string()),
        "newest first"
    );
    assert!(rows.contains(&("read_file".to_string(), "error".to_string())));

    let out = tooltrail(&["history", "--status", "error"], config.path(), &[]).await;
    let listing = text(&out.stdout);
    assert_eq!(listing.lines().count(), 1, "{listing}");
    assert!(
        listing.contains("read_file") && listing.contains("error"),
        "{listing}"
    );

    let out = tooltrail(
        &["history", "--search", "nope", "--json"],
        config.path(),
        &[],
    )
    .await;
    let page: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(page["items"].as_array().unwrap().len(), 1);

    let out = tooltrail(&["conversations"], config.path(), &[]).await;
    let listing = text(&out.stdout);
    assert!(
        listing.contains(&id)
            && listing.contains("2 turn(s), 3 tool call(s)")
            && listing.contains("How many Go files?"),
        "{listing}"
    );

    let out = tooltrail(
        &["export", "-c", id.as_str(), "--format", "md"],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let markdown = text(&out.stdout);
    assert!(
        markdown.contains("How many Go files?")
            && markdown.contains("They have 4 lines.")
            && markdown.contains("count_lines"),
        "{markdown}"
    );

    let out = tooltrail(
        &["export", "-c", id.as_str(), "--format", "jsonl"],
        config.path(),
        &[],
    )
    .await;
    let events: Vec<Event> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e.body, EventBody::TurnFinished { .. }))
            .count(),
        2
    );

    let out = tooltrail(&["delete", id.as_str()], config.path(), &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = tooltrail(&["history", "--json"], config.path(), &[]).await;
    let page: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(page["items"].as_array().unwrap().is_empty());

    let out = tooltrail(
        &[&["ask", "-c", "conv_missing"][..], &base, &["hi"]].concat(),
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with("error: could not continue conversation conv_missing"),
        "{}",
        text(&out.stderr)
    );
}

/// Runs `tooltrail ask --json`, kills it with SIGKILL once `stop_at` matches a printed event,
/// and returns the events it printed.
async fn ask_and_kill(
    replies: Vec<Reply>,
    config_dir: &Path,
    stop_at: impl Fn(&Event) -> bool,
) -> Vec<Event> {
    use tokio::io::AsyncBufReadExt;
    let server = ScriptedServer::start(replies).await;
    let ws = workspace();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_tooltrail"))
        .args(["ask", "--json", "--approve", "all", "-m", "scripted"])
        .args([
            "--base-url",
            &server.base_url(),
            "-w",
            ws.path().to_str().unwrap(),
            "go",
        ])
        .env("TOOLTRAIL_CONFIG_DIR", config_dir)
        .env("TOOLTRAIL_DATA_DIR", config_dir.join("data"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        let event: Event = serde_json::from_str(&line).unwrap();
        let stop = stop_at(&event);
        printed.push(event);
        if stop {
            break;
        }
    }
    child.start_kill().unwrap(); // SIGKILL
    child.wait().await.unwrap();
    printed
}

/// The recorded events of a conversation, from `tooltrail export --format jsonl`.
async fn recorded_events(config_dir: &Path, conversation: &str) -> Vec<Event> {
    let out = tooltrail(
        &["export", "-c", conversation, "--format", "jsonl"],
        config_dir,
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test]
async fn a_turn_killed_mid_stream_keeps_every_event_it_printed() {
    let config = tempfile::tempdir().unwrap();
    let long = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen";
    let printed = ask_and_kill(
        vec![Reply::text(long).delay(std::time::Duration::from_millis(300))],
        config.path(),
        |event| matches!(event.body, EventBody::TextDelta { .. }),
    )
    .await;
    let recorded = recorded_events(config.path(), &printed[0].conversation_id).await;
    assert_eq!(
        recorded[..printed.len()],
        printed[..],
        "every printed event is in the store"
    );
}

#[tokio::test]
async fn a_turn_killed_during_a_tool_call_leaves_the_call_cancelled() {
    let config = tempfile::tempdir().unwrap();
    let printed = ask_and_kill(
        vec![
            Reply::tool_calls(&[(
                "execute_bash",
                r#"{"command":"sleep 3 && echo late > late.txt"}"#,
            )]),
            Reply::text("never"),
        ],
        config.path(),
        |event| matches!(event.body, EventBody::ToolCallStarted { .. }),
    )
    .await;
    let conversation = printed[0].conversation_id.clone();
    let recorded = recorded_events(config.path(), &conversation).await;
    // Once the assistant's message is recorded it stands for the deltas that streamed it.
    let kept: Vec<Event> = printed
        .into_iter()
        .filter(|e| {
            !matches!(
                e.body,
                EventBody::TextDelta { .. } | EventBody::ToolCallDelta { .. }
            )
        })
        .collect();
    assert_eq!(
        recorded[..kept.len()],
        kept[..],
        "every printed event is in the store"
    );
    // On the next open the call the crash interrupted is marked cancelled.
    let out = tooltrail(
        &["history", "--json", "-c", &conversation],
        config.path(),
        &[],
    )
    .await;
    let page: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = page["items"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["tool"], "execute_bash");
    assert_eq!(rows[0]["status"], "cancelled");
    let out = tooltrail(&["conversations", "--json"], config.path(), &[]).await;
    let page: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(page["items"][0]["running"], false);
}

#[test]
fn a_reader_that_goes_away_ends_listings_quietly() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["tools"][..],
        &["history"],
        &["conversations"],
        &["rules", "list", "--all"],
    ] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tooltrail"))
            .args(args)
            .env("TOOLTRAIL_CONFIG_DIR", dir.path())
            .env("TOOLTRAIL_DATA_DIR", dir.path().join("data"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before anything is written, as `| head -0` would.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
        assert_eq!(stderr, "", "{args:?}");
    }
}
