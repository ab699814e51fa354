//! `file_write`, `tooltrail undo` and `ask_user` through the binary, as a person uses them:
//! off until turned on, every write asked about with its diff, undone per conversation or
//! turn (refused, changing nothing, for a file edited since), and questions answered ahead
//! with `--user-answer` or refused when no one can answer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::run;

use std::path::Path;

use pretty_assertions::assert_eq;
use run::{text, tooltrail};
use serde_json::Value;
use tooltrail_test_support::{Reply, ScriptedServer};

/// The events `ask --json` printed.
fn events(out: &std::process::Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn finished(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|event| event["type"] == "tool_call_finished")
        .collect()
}

/// Asks once with `--json`, the model making `calls` and then answering.
async fn ask(
    config: &Path,
    workspace: &Path,
    calls: &[(&str, &str)],
    extra: &[&str],
) -> (std::process::Output, ScriptedServer) {
    let server = ScriptedServer::start(vec![Reply::tool_calls(calls), Reply::text("Done.")]).await;
    let base_url = server.base_url();
    let mut args = vec![
        "ask",
        "--json",
        "--base-url",
        &base_url,
        "-m",
        "scripted",
        "-w",
        workspace.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args.push("Change the file.");
    let out = tooltrail(&args, config, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    (out, server)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// `tooltrail tool file_write` in `dir` with `flags` before the arguments.
async fn file_write(config: &Path, dir: &str, flags: &[&str], args: &str) -> std::process::Output {
    let mut command = vec!["tool", "file_write", "-w", dir, "--args", args];
    command.extend_from_slice(flags);
    tooltrail(&command, config, &[]).await
}

#[tokio::test]
async fn file_write_is_off_until_turned_on_and_shows_its_diff() {
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    let dir = ws.path().to_str().unwrap();
    let args = r#"{"path":"notes.txt","content":"one\n2\nthree\n"}"#;
    let enabled = ["--enable", "file_write"];
    let approved = ["--enable", "file_write", "--approve", "all"];

    let off = file_write(config.path(), dir, &[], args).await;
    assert_eq!(off.status.code(), Some(2));
    assert_eq!(
        text(&off.stderr),
        "error: file_write is off until you turn it on: pass --enable file_write, or add it to enabled_tools in config.toml\n"
    );

    let denied = file_write(config.path(), dir, &enabled, args).await;
    assert_eq!(denied.status.code(), Some(1));
    assert_eq!(
        text(&denied.stderr),
        "    --- a/notes.txt\n    +++ b/notes.txt\n    @@ -1,3 +1,3 @@\n        1  one\n        2 -two\n        2 +2\n        3  three\n"
    );
    let result: Value = serde_json::from_slice(&denied.stdout).unwrap();
    assert_eq!(result["error"]["code"], "approval_required");
    assert_eq!(read(&ws.path().join("notes.txt")), "one\ntwo\nthree\n");

    let written = file_write(config.path(), dir, &approved, args).await;
    assert_eq!(written.status.code(), Some(0), "{}", text(&written.stderr));
    let result: Value = serde_json::from_slice(&written.stdout).unwrap();
    assert_eq!(
        result["text"],
        "overwrote notes.txt: 12 bytes, +1 −1 lines (this write cannot be undone from Tooltrail)"
    );
    assert_eq!(read(&ws.path().join("notes.txt")), "one\n2\nthree\n");

    // Paths stay in the folder, and git's folder is not written.
    for (path, code) in [
        ("../out.txt", "outside_workspace"),
        (".git/hooks/pre-commit", "denied"),
    ] {
        let args = format!(r#"{{"path":"{path}","content":"x"}}"#);
        let out = file_write(config.path(), dir, &approved, &args).await;
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(result["error"]["code"], code, "{path}: {result}");
    }
}

#[tokio::test]
async fn a_turn_s_writes_need_approval_each_time_and_are_undone() {
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let notes = ws.path().join("notes.txt");
    std::fs::write(&notes, "before\n").unwrap();
    let write_notes = ("file_write", r#"{"path":"notes.txt","content":"after\n"}"#);
    let write_new = (
        "file_write",
        r#"{"path":"src/new.rs","content":"fn main() {}\n","mode":"create"}"#,
    );

    // Off by default: the model is not offered it, and a call to it is not found.
    let (out, server) = ask(
        config.path(),
        ws.path(),
        &[write_notes],
        &["--approve", "all"],
    )
    .await;
    let offered: Vec<String> = server.chat_requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!offered.contains(&"file_write".to_string()), "{offered:?}");
    assert_eq!(
        finished(&events(&out))[0]["error"]["code"],
        "tool_not_found"
    );

    // Denied: nothing changes.
    let (out, _server) = ask(
        config.path(),
        ws.path(),
        &[write_notes],
        &["--enable", "file_write", "--approve", "deny"],
    )
    .await;
    let events_seen = events(&out);
    let asked = events_seen
        .iter()
        .find(|event| event["type"] == "approval_requested")
        .unwrap();
    assert_eq!(asked["once_only"], true);
    assert_eq!(asked["change"]["path"], "notes.txt");
    assert_eq!(
        (&asked["change"]["added"], &asked["change"]["removed"]),
        (&Value::from(1), &Value::from(1))
    );
    assert_eq!(finished(&events_seen)[0]["status"], "denied");
    assert_eq!(read(&notes), "before\n");

    // Approved: both files written, then undone by conversation.
    let (out, _server) = ask(
        config.path(),
        ws.path(),
        &[write_notes, write_new],
        &["--enable", "file_write", "--approve", "all"],
    )
    .await;
    let events_seen = events(&out);
    let statuses: Vec<&Value> = finished(&events_seen)
        .iter()
        .map(|e| &e["status"])
        .collect();
    assert_eq!(statuses, vec!["success", "success"]);
    assert_eq!(read(&notes), "after\n");
    assert_eq!(read(&ws.path().join("src/new.rs")), "fn main() {}\n");
    let conversation = events_seen[0]["conversation_id"]
        .as_str()
        .unwrap()
        .to_string();
    let turn = events_seen[0]["turn_id"].as_str().unwrap().to_string();

    // Someone edits a file after the turn: undo refuses and changes nothing...
    std::fs::write(&notes, "edited by hand\n").unwrap();
    let refused = tooltrail(&["undo", "-c", &conversation], config.path(), &[]).await;
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        text(&refused.stderr),
        "error: nothing was undone: `notes.txt` changed since Tooltrail wrote it; run it again with --force to overwrite that change\n"
    );
    assert_eq!(read(&notes), "edited by hand\n");
    assert!(ws.path().join("src/new.rs").exists());

    // ...until forced.
    let undone = tooltrail(
        &["undo", "-c", &conversation, "--turn", &turn, "--force"],
        config.path(),
        &[],
    )
    .await;
    assert_eq!(undone.status.code(), Some(0), "{}", text(&undone.stderr));
    assert_eq!(
        text(&undone.stdout),
        "restored notes.txt\nremoved  src/new.rs (the turn created it)\n"
    );
    assert_eq!(read(&notes), "before\n");
    assert!(!ws.path().join("src/new.rs").exists());

    let again = tooltrail(&["undo", "-c", &conversation], config.path(), &[]).await;
    assert_eq!(
        text(&again.stderr),
        "error: there is nothing to undo: this conversation wrote no file that is not undone already\n"
    );
}

#[tokio::test]
async fn ask_user_takes_answers_given_ahead_and_says_when_no_one_can_answer() {
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let question = (
        "ask_user",
        r#"{"question":"Which branch?","choices":["main","dev"]}"#,
    );

    let (out, server) = ask(
        config.path(),
        ws.path(),
        &[question],
        &["--user-answer", "dev"],
    )
    .await;
    let events_seen = events(&out);
    let asked = events_seen
        .iter()
        .find(|event| event["type"] == "user_question")
        .unwrap();
    assert_eq!(asked["question"], "Which branch?");
    assert_eq!(asked["choices"], serde_json::json!(["main", "dev"]));
    let requests = server.chat_requests();
    let result = &requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"];
    assert_eq!(result, "The user answered: dev");

    let (out, server) = ask(config.path(), ws.path(), &[question], &[]).await;
    assert_eq!(finished(&events(&out))[0]["status"], "error");
    let result = server.chat_requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        result.contains("no one can answer questions in this run"),
        "{result}"
    );
}

/// A cloned repository ships links at the temporary names an approved write used to take
/// (`.README.md.tooltrail-<pid>.tmp`, for a range of process ids, all to one file outside).
/// The approved write of `README.md` through `tooltrail ask` and its undo land in the folder:
/// the file outside keeps its bytes and permissions, and `README.md` stays a file.
#[cfg(unix)]
#[tokio::test]
async fn attack_links_an_approved_write_and_its_undo_stay_in_the_folder_whatever_links_stand_beside()
 {
    use std::os::unix::fs::PermissionsExt;
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "the user's own file\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let readme = ws.path().join("README.md");
    std::fs::write(&readme, "# Project\n").unwrap();
    // The processes started next take the ids after this one's (a child's just started, as
    // the tests beside this one in its binary start processes of their own).
    let mut probe = std::process::Command::new("true").spawn().unwrap();
    let own = probe.id();
    probe.wait().unwrap();
    for pid in own..own + 4000 {
        std::os::unix::fs::symlink(
            &victim,
            ws.path().join(format!(".README.md.tooltrail-{pid}.tmp")),
        )
        .unwrap();
    }

    let write = (
        "file_write",
        r##"{"path":"README.md","content":"# Approved\n"}"##,
    );
    let (out, _server) = ask(
        config.path(),
        ws.path(),
        &[write],
        &["--enable", "file_write", "--approve", "all"],
    )
    .await;
    let events_seen = events(&out);
    assert_eq!(finished(&events_seen)[0]["status"], "success");
    assert_eq!(read(&readme), "# Approved\n");
    assert!(std::fs::symlink_metadata(&readme).unwrap().is_file());
    assert_eq!(read(&victim), "the user's own file\n");

    let conversation = events_seen[0]["conversation_id"].as_str().unwrap();
    let undone = tooltrail(&["undo", "-c", conversation], config.path(), &[]).await;
    assert_eq!(undone.status.code(), Some(0), "{}", text(&undone.stderr));
    assert_eq!(read(&readme), "# Project\n");
    assert!(std::fs::symlink_metadata(&readme).unwrap().is_file());
    assert_eq!(read(&victim), "the user's own file\n");
    let mode = std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}
