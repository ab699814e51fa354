//! A process recording a turn is killed with SIGKILL; the next open finds every event it had
//! committed and shown, and closes what it left open.
//!
//! The test binary runs itself as the child: `crash_child` does nothing unless
//! `TOOLTRAIL_STORE_CRASH` names a scenario. The child prints `EVENT <json>` for each event
//! once `flush` has returned (the moment a terminal would show it), then `READY` and waits to
//! be killed at the scenario's point.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg(unix)]

use crate::support::fixture;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use fixture::{Script, T0, folded, sample_turn};
use pretty_assertions::assert_eq;
use serde_json::json;
use tooltrail_protocol::{Event, EventBody, Message, ToolErrorCode};
use tooltrail_store::{CallStatus, HistoryFilter, INTERRUPTED, Store};

const SCENARIO: &str = "TOOLTRAIL_STORE_CRASH";
const DB: &str = "TOOLTRAIL_STORE_CRASH_DB";
const WS: &str = "/home/dev/src/app";

/// The events before the kill: a first turn that completed, then a second cut short.
fn script(scenario: &str) -> (Vec<Event>, usize) {
    let mut events = sample_turn("conv_1", "turn_1", WS, T0, true).events;
    let mut second = Script::new("conv_1", "turn_2", T0 + 60_000);
    second
        .start(WS, "Now count the lines")
        .message(Message::user("Now count the lines"));
    match scenario {
        "tool_call" => {
            let args = json!({"path": "src/parser.rs"});
            second
                .text(1, "Counting.")
                .message(Message::assistant(
                    "Counting.",
                    vec![fixture::call("call_c", "count_lines", &args)],
                ))
                .started(1, "call_c", "count_lines", args)
                .push(EventBody::ToolCallProgress {
                    call_id: "call_c".into(),
                    tool: "count_lines".into(),
                    progress: 3.0,
                    total: None,
                    message: Some("3 files".into()),
                    task: None,
                });
        }
        "streaming" => {
            second
                .text(1, "The parser ")
                .text(1, "is 120 lines ")
                .text(1, "long, and");
        }
        other => panic!("unknown scenario {other}"),
    }
    let shown = events.len() + second.events.len();
    events.extend(second.events);
    (events, shown)
}

#[test]
fn crash_child() {
    let Ok(scenario) = std::env::var(SCENARIO) else {
        return;
    };
    let db = std::env::var(DB).unwrap();
    let store = Store::open(&db).unwrap();
    let recorder = store.recorder().unwrap();
    let mut stdout = std::io::stdout().lock();
    if scenario == "burst" {
        // Writes as fast as it can; the parent kills it at an arbitrary moment, most likely
        // in the middle of a transaction.
        for turn in 0.. {
            let script = sample_turn(
                "conv_burst",
                &format!("turn_{turn}"),
                WS,
                T0 + turn,
                turn == 0,
            );
            for event in &script.events {
                recorder.record(event.clone());
            }
            recorder.flush().unwrap();
            writeln!(stdout, "FLUSHED turn_{turn}").unwrap();
            stdout.flush().unwrap();
        }
    }
    let (events, _) = script(&scenario);
    for event in events {
        recorder.record(event.clone());
        recorder.flush().unwrap();
        writeln!(stdout, "EVENT {}", serde_json::to_string(&event).unwrap()).unwrap();
        stdout.flush().unwrap();
    }
    writeln!(stdout, "READY").unwrap();
    stdout.flush().unwrap();
    std::thread::sleep(Duration::from_secs(120));
}

/// Runs the child until it prints `stop_at` (or `count` lines of it), kills it, and returns
/// what it printed.
fn run_child(scenario: &str, db: &Path, stop_at: &str, count: usize) -> Vec<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        // The test's name in this binary, whose tests are one module a file.
        .args([
            "crash::crash_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SCENARIO, scenario)
        .env(DB, db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = Vec::new();
    let mut seen = 0;
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let stop = line.contains(stop_at);
        lines.push(line);
        if stop {
            seen += 1;
            if seen >= count {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(seen >= count, "the child stopped early: {lines:?}");
    lines
}

fn printed_events(lines: &[String]) -> Vec<Event> {
    lines
        .iter()
        // libtest's "test crash::crash_child ... " may precede the first line.
        .filter_map(|line| line.split_once("EVENT ").map(|(_, json)| json))
        .map(|json| serde_json::from_str(json).unwrap())
        .collect()
}

fn integrity(db: &Path) -> String {
    Store::open(db).unwrap().integrity_check().unwrap()
}

#[test]
fn a_kill_during_a_tool_call_leaves_it_cancelled_and_loses_nothing_shown() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tooltrail.sqlite3");
    let lines = run_child("tool_call", &db, "READY", 1);
    let printed = printed_events(&lines);
    let (expected, shown) = script("tool_call");
    assert_eq!(printed.len(), shown);
    assert_eq!(printed, expected);

    let store = Store::open(&db).unwrap();
    assert_eq!(store.recovered().turns, 1);
    assert_eq!(store.recovered().calls, 1);
    let mut stored = store.turn_events("turn_1").unwrap();
    stored.extend(store.turn_events("turn_2").unwrap());
    assert_eq!(stored, folded(&printed));

    let interrupted = store
        .history(&HistoryFilter {
            tool: Some("count_lines".into()),
            ..Default::default()
        })
        .unwrap()
        .items;
    assert_eq!(interrupted.len(), 1);
    assert_eq!(interrupted[0].status, CallStatus::Cancelled);
    assert_eq!(interrupted[0].duration_ms, None);
    assert_eq!(interrupted[0].description, "The count_lines tool.");
    let error = interrupted[0].error.clone().unwrap();
    assert_eq!(
        (error.code, error.message.as_str()),
        (ToolErrorCode::Cancelled, INTERRUPTED)
    );
    assert!(!store.conversation("conv_1").unwrap().running);

    // The conversation can be carried on: the interrupted call has an answer.
    let messages = store.load_messages("conv_1").unwrap();
    assert!(matches!(
        messages.last(),
        Some(Message::Tool { tool_call_id, content, .. })
            if tool_call_id == "call_c" && content.starts_with("error [cancelled]")
    ));
    assert_eq!(store.integrity_check().unwrap(), "ok");

    // A second open finds nothing more to close.
    drop(store);
    assert_eq!(Store::open(&db).unwrap().recovered().turns, 0);
}

#[test]
fn a_kill_while_text_streams_keeps_every_delta_shown() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tooltrail.sqlite3");
    let lines = run_child("streaming", &db, "READY", 1);
    let printed = printed_events(&lines);
    assert_eq!(printed, script("streaming").0);

    let store = Store::open(&db).unwrap();
    assert_eq!(store.recovered().turns, 1);
    let stored = store.turn_events("turn_2").unwrap();
    let deltas: Vec<_> = stored
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["The parser ", "is 120 lines ", "long, and"]);
    assert_eq!(
        stored,
        folded(&printed)
            .into_iter()
            .filter(|event| event.turn_id == "turn_2")
            .collect::<Vec<_>>()
    );
    let summary = store.conversation("conv_1").unwrap();
    assert!(!summary.running);
    assert_eq!(summary.turns, 2);
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn a_kill_in_the_middle_of_writing_never_damages_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tooltrail.sqlite3");
    let lines = run_child("burst", &db, "FLUSHED", 25);
    let flushed: Vec<_> = lines
        .iter()
        .filter_map(|line| line.split_once("FLUSHED ").map(|(_, turn)| turn))
        .collect();
    assert_eq!(integrity(&db), "ok");
    let store = Store::open(&db).unwrap();
    for turn in &flushed {
        let script_turn = turn.trim_start_matches("turn_").parse::<i64>().unwrap();
        let expected = sample_turn("conv_burst", turn, WS, T0 + script_turn, script_turn == 0);
        assert_eq!(
            store.turn_events(turn).unwrap(),
            folded(&expected.events),
            "{turn}"
        );
    }
    // Whatever was written after the last flush is either whole or closed as interrupted.
    let summary = store.conversation("conv_burst").unwrap();
    assert!(summary.turns as usize >= flushed.len());
    assert!(!summary.running);
}
