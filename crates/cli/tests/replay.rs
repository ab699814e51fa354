//! `tooltrail replay` as a person uses it: a recorded question asked again with another
//! (scripted) model, in the same folder, with nothing changed by it: calls that only read run,
//! a command or a write is answered from the record when the original made the same call and
//! is not run otherwise; then where the calls part, how much they agree, and the table.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use crate::support::run;

use pretty_assertions::assert_eq;
use run::{text, tooltrail};
use serde_json::Value;
use tooltrail_test_support::{Reply, ScriptedServer};

/// Every file of `dir` with its bytes, sorted: the folder as a replay must leave it.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let bytes = std::fs::read(entry.path()).unwrap_or_default();
            (entry.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    files.sort();
    files
}

fn json_lines(out: &std::process::Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A folder with two files, and the question asked in it once: the model lists the folder,
/// reads a file, runs a command that writes a file (allowed), then answers. Returns the
/// turn's id and the command's result as the model read it.
async fn asked(config: &Path, ws: &Path) -> (String, String) {
    std::fs::write(ws.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(ws.join("b.txt"), "beta\n").unwrap();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(&[("list_dir", r#"{"path":"."}"#)]),
        Reply::tool_calls(&[("read_file", r#"{"path":"a.txt"}"#)]),
        Reply::tool_calls(&[("execute_bash", r#"{"command":"echo made > made.txt"}"#)]),
        Reply::text("There are two files; a.txt says alpha."),
    ])
    .await;
    let base_url = server.base_url();
    let out = tooltrail(
        &[
            "ask",
            "--json",
            "--approve",
            "all",
            "--base-url",
            &base_url,
            "-m",
            "big-model",
            "-w",
            ws.to_str().unwrap(),
            "What is in this folder?",
        ],
        config,
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(ws.join("made.txt").exists(), "the original's command ran");
    std::fs::remove_file(ws.join("made.txt")).unwrap();
    let events = json_lines(&out);
    let bash = events
        .iter()
        .find(|e| e["type"] == "tool_call_finished" && e["tool"] == "execute_bash")
        .unwrap();
    (
        events[0]["turn_id"].as_str().unwrap().to_string(),
        bash["result"].as_str().unwrap().to_string(),
    )
}

/// Replays `turn` with a scripted model answering `replies`; returns the output.
async fn replay(
    config: &Path,
    turn: &str,
    replies: Vec<Reply>,
    extra: &[&str],
) -> (std::process::Output, ScriptedServer) {
    let server = ScriptedServer::start(replies).await;
    let base_url = server.base_url();
    let mut args = vec![
        "replay",
        "--json",
        "--base-url",
        &base_url,
        "-m",
        "small-model",
    ];
    args.extend_from_slice(extra);
    args.push(turn);
    let out = tooltrail(&args, config, &[]).await;
    (out, server)
}

fn summary(out: &std::process::Output) -> Value {
    let lines = json_lines(out);
    let last = lines.last().unwrap().clone();
    assert_eq!(last["type"], "replay_summary", "{last}");
    last
}

#[tokio::test]
async fn attack_replay_the_same_command_is_answered_from_the_record_not_run_again() {
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let (turn, bash_result) = asked(config.path(), ws.path()).await;
    let before = snapshot(ws.path());
    let (out, server) = replay(
        config.path(),
        &turn,
        vec![
            Reply::tool_calls(&[("list_dir", r#"{"path":"."}"#)]),
            Reply::tool_calls(&[("read_file", r#"{"path":"a.txt"}"#)]),
            Reply::tool_calls(&[("execute_bash", r#"{"command":"echo made > made.txt"}"#)]),
            Reply::text("Two files."),
        ],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(snapshot(ws.path()), before, "the replay changed the folder");
    let summary = summary(&out);
    assert_eq!(summary["replay_of"], turn.as_str());
    assert_eq!(summary["model"], "small-model");
    assert_eq!(summary["original_model"], "big-model");
    assert_eq!(summary["first_divergence"], Value::Null);
    assert_eq!(summary["calls_agreement"], 1.0);
    assert_eq!(summary["answer_same"], false);
    assert_eq!(summary["calls_from_record"], 1);
    assert_eq!(summary["error"], Value::Null);
    assert_eq!(summary["calls_not_run"], 0);
    // The command's recorded result went to the model, as if it had run.
    let requests = server.chat_requests();
    let messages = requests.last().unwrap().body["messages"].clone();
    let told = messages.as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        told, bash_result,
        "the model got the recorded result of the command"
    );
    // The replay is its own turn, naming the one it replays, in the record and the exports.
    let events = json_lines(&out);
    assert_eq!(events[0]["type"], "turn_started");
    assert_eq!(events[0]["replay_of"], turn.as_str());
    let bash = events
        .iter()
        .find(|e| e["type"] == "tool_call_finished" && e["tool"] == "execute_bash")
        .unwrap();
    assert_eq!(bash["approval"]["by"]["kind"], "replay");
    assert_eq!(bash["approval"]["allowed"], true);
}

#[tokio::test]
async fn attack_replay_a_command_the_original_never_made_is_not_run_and_the_folder_is_unchanged() {
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let (turn, _) = asked(config.path(), ws.path()).await;
    let before = snapshot(ws.path());
    let (out, _server) = replay(
        config.path(),
        &turn,
        vec![
            Reply::tool_calls(&[("list_dir", r#"{"path":"."}"#)]),
            Reply::tool_calls(&[("search_text", r#"{"pattern":"alpha"}"#)]),
            Reply::tool_calls(&[("execute_bash", r#"{"command":"rm a.txt b.txt"}"#)]),
            // The same answer, but for whitespace and case.
            Reply::text("there are two files;  A.TXT says alpha."),
        ],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(snapshot(ws.path()), before, "the replay changed the folder");
    let summary = summary(&out);
    assert_eq!(summary["first_divergence"], 2);
    assert_eq!(summary["answer_same"], true);
    assert_eq!(summary["calls_not_run"], 1);
    // One call of three in common: 2·1 / (3 + 3).
    let agreement = summary["calls_agreement"].as_f64().unwrap();
    assert!((agreement - 1.0 / 3.0).abs() < 1e-9, "{agreement}");
    let events = json_lines(&out);
    let rm = events
        .iter()
        .find(|e| e["type"] == "tool_call_finished" && e["tool"] == "execute_bash")
        .unwrap();
    assert_eq!(rm["status"], "denied");
    assert_eq!(rm["approval"]["by"]["kind"], "replay");
    assert!(
        rm["error"]["message"].as_str().unwrap().contains("not run"),
        "{rm}"
    );

    // The table ranks the model tried on the folder's questions.
    let out = tooltrail(
        &["replay", "--table", "-w", ws.path().to_str().unwrap()],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.starts_with("| model | replays |"), "{table}");
    assert!(
        table.contains("| small-model | 1 | 0.33 | 0 % | 100 % |"),
        "{table}"
    );
}

#[tokio::test]
async fn replays_of_the_last_questions_and_clear_errors() {
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    asked(config.path(), ws.path()).await;
    let dir = ws.path().to_str().unwrap();
    let (out, _server) = replay(
        config.path(),
        "",
        vec![Reply::text("Two files.")],
        &["--last", "1", "-w", dir],
    )
    .await;
    // `--last` replays the folder's last question; the empty turn argument is not one.
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let server = ScriptedServer::start(vec![Reply::text("Two files.")]).await;
    let base_url = server.base_url();
    let out = tooltrail(
        &[
            "replay",
            "--json",
            "--base-url",
            &base_url,
            "-m",
            "small-model",
            "--last",
            "1",
            "-w",
            dir,
        ],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = summary(&out);
    assert_eq!(summary["first_divergence"], 1);
    assert_eq!(summary["calls_agreement"], 0.0);

    // A turn that is not in the record, and a dead endpoint: a sentence each, exit 1.
    let out = tooltrail(&["replay", "turn_nope"], config.path(), &[]).await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("could not replay turn_nope"), "{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Error {"),
        "{stderr}"
    );
    let turns = tooltrail(
        &[
            "replay",
            "--last",
            "5",
            "-w",
            dir,
            "--base-url",
            "http://127.0.0.1:9",
            "-m",
            "x",
        ],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(turns.status.code(), Some(1), "{}", text(&turns.stderr));
    assert!(
        text(&turns.stderr).contains("error: could not replay"),
        "{}",
        text(&turns.stderr)
    );
    // Nothing to replay in a folder never asked about.
    let empty = tempfile::tempdir().unwrap();
    let out = tooltrail(
        &[
            "replay",
            "--last",
            "3",
            "-w",
            empty.path().to_str().unwrap(),
        ],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("there is nothing to replay"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test]
async fn a_model_without_function_calling_replays_a_question_asked_with_native_tools() {
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let (turn, _) = asked(config.path(), ws.path()).await;
    let call = |name: &str, arguments: &str| {
        format!("<tool_use><name>{name}</name><arguments>{arguments}</arguments></tool_use>")
    };
    let (out, server) = replay(
        config.path(),
        &turn,
        vec![
            Reply::error(400, "this model does not support tools"),
            Reply::text(call("list_dir", r#"{"path":"."}"#)),
            Reply::text(call("read_file", r#"{"path":"a.txt"}"#)),
            Reply::text("There are two files; a.txt says alpha."),
        ],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = summary(&out);
    // The same first two calls, made in prompt mode; the command was never asked for.
    assert_eq!(summary["first_divergence"], 3);
    assert_eq!(summary["answer_same"], true);
    let agreement = summary["calls_agreement"].as_f64().unwrap();
    assert!((agreement - 0.8).abs() < 1e-9, "{agreement}");
    let tools_sent: Vec<bool> = server
        .chat_requests()
        .iter()
        .map(|request| request.body.get("tools").is_some())
        .collect();
    assert_eq!(tools_sent, vec![true, false, false, false]);
}

#[tokio::test]
async fn a_replay_whose_model_goes_round_in_circles_is_stopped_and_counted() {
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let (turn, _) = asked(config.path(), ws.path()).await;
    let again = || Reply::tool_calls(&[("list_dir", r#"{"path":"."}"#)]);
    let (out, _server) = replay(
        config.path(),
        &turn,
        vec![
            again(),
            again(),
            again(),
            again(),
            again(),
            Reply::text("Two files."),
        ],
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = summary(&out);
    assert_eq!(summary["first_divergence"], 2);
    // The repeats past the limit were refused, each an error of the replay.
    assert!(summary["errors"].as_u64().unwrap() >= 1, "{summary}");
    assert_eq!(summary["answer_same"], false);
}
