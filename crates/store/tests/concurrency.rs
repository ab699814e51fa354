//! Several handles on one database: readers while a recorder writes, and opens while another
//! process's turn runs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::fixture;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use fixture::{Script, T0, sample_turn};
use pretty_assertions::assert_eq;
use serde_json::json;
use tooltrail_store::{CallStatus, HistoryFilter, MessageSearch, StatsFilter, Store};

const WS: &str = "/home/dev/src/app";

#[test]
fn readers_never_block_the_recorder() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tooltrail.sqlite3");
    let store = Store::open(&path).unwrap();
    let recorder = store.recorder().unwrap();
    let done = Arc::new(AtomicBool::new(false));

    let readers: Vec<_> = (0..2)
        .map(|_| {
            let path = path.clone();
            let done = done.clone();
            std::thread::spawn(move || {
                let reader = Store::open(&path).unwrap();
                let mut seen = 0;
                let mut reads = 0;
                while !done.load(Ordering::Relaxed) {
                    let total = reader.stats(&StatsFilter::default()).unwrap().total;
                    assert!(total >= seen, "the count went back from {seen} to {total}");
                    seen = total;
                    reader.history(&HistoryFilter::default()).unwrap();
                    reader
                        .history(&HistoryFilter {
                            search: Some("parser".into()),
                            ..Default::default()
                        })
                        .unwrap();
                    reader
                        .search_messages(&MessageSearch {
                            text: "header".into(),
                            ..Default::default()
                        })
                        .unwrap();
                    reads += 1;
                }
                reads
            })
        })
        .collect();

    let turns = 60;
    for turn in 0..turns {
        let script = sample_turn(
            &format!("conv_{}", turn % 7),
            &format!("turn_{turn}"),
            WS,
            T0 + turn * 1000,
            turn < 7,
        );
        for event in script.events {
            recorder.record(event);
        }
        recorder.flush().unwrap();
    }
    done.store(true, Ordering::Relaxed);
    for reader in readers {
        assert!(reader.join().unwrap() > 0);
    }
    recorder.shutdown().unwrap();
    assert_eq!(
        store.stats(&StatsFilter::default()).unwrap().total,
        2 * turns as u64
    );
}

#[test]
fn a_long_read_does_not_stop_commits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tooltrail.sqlite3");
    let store = Store::open(&path).unwrap();
    let recorder = store.recorder().unwrap();
    let first = sample_turn("conv_1", "turn_1", WS, T0, true);
    for event in first.events {
        recorder.record(event);
    }
    recorder.flush().unwrap();

    // A reader in the middle of a long read holds its snapshot the whole time.
    let mut reader = rusqlite::Connection::open(&path).unwrap();
    let snapshot = reader.transaction().unwrap();
    let before: i64 = snapshot
        .query_row("SELECT count(*) FROM tool_calls", [], |row| row.get(0))
        .unwrap();
    assert_eq!(before, 2);

    let (done, finished) = mpsc::channel();
    let writer = std::thread::spawn(move || {
        let second = sample_turn("conv_1", "turn_2", WS, T0 + 1000, false);
        for event in second.events {
            recorder.record(event);
        }
        done.send(recorder.flush()).unwrap();
        recorder
    });
    // A generous bound: this checks that the commit happens while the read is open, not how
    // fast it is.
    finished
        .recv_timeout(Duration::from_secs(30))
        .expect("the recorder waited for the reader")
        .unwrap();
    let still: i64 = snapshot
        .query_row("SELECT count(*) FROM tool_calls", [], |row| row.get(0))
        .unwrap();
    assert_eq!(still, 2, "the reader's snapshot moved");
    drop(snapshot);
    writer.join().unwrap().shutdown().unwrap();
    assert_eq!(store.stats(&StatsFilter::default()).unwrap().total, 4);
}

#[test]
fn an_open_leaves_a_live_recorders_turn_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tooltrail.sqlite3");
    let store = Store::open(&path).unwrap();
    let recorder = store.recorder().unwrap();
    let mut script = Script::new("conv_1", "turn_1", T0);
    script
        .start(WS, "q")
        .started(1, "call_1", "read_file", json!({"path": "a"}));
    for event in &script.events {
        recorder.record(event.clone());
    }
    recorder.flush().unwrap();

    // Another process (the app, a second terminal) opens the same database meanwhile.
    let other = Store::open(&path).unwrap();
    assert_eq!(other.recovered().turns, 0);
    let running = other
        .history(&HistoryFilter {
            status: Some(CallStatus::Running),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(running.items.len(), 1);
    assert!(other.conversation("conv_1").unwrap().running);

    // The recorder goes away with its turn unfinished: the next open closes it.
    drop(recorder);
    let later = Store::open(&path).unwrap();
    assert_eq!(later.recovered().turns, 1);
    assert_eq!(later.recovered().calls, 1);
    let row = &later.history(&HistoryFilter::default()).unwrap().items[0];
    assert_eq!(row.status, CallStatus::Cancelled);
    assert!(!later.conversation("conv_1").unwrap().running);
}
