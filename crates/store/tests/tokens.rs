//! Tokens per day from the recorded `usage` events, as the stats screen shows them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support::fixture;

use fixture::Script;
use pretty_assertions::assert_eq;
use tooltrail_protocol::{EventBody, TurnEnd, Usage};
use tooltrail_store::{DayTokens, Store, TokenFilter};

const DAY: i64 = 86_400_000;
const HOUR: i64 = 3_600_000;
/// 2026-03-02 00:00 UTC.
const MIDNIGHT_UTC: i64 = 1_772_409_600_000;
/// Beijing time: UTC+8.
const UTC8: i32 = 480;

fn turn(
    store: &Store,
    conversation: &str,
    turn: &str,
    workspace: &str,
    model: &str,
    time_ms: i64,
    usage: &[(u32, u32)],
) {
    let mut script = Script::new(conversation, turn, time_ms);
    script.push(EventBody::TurnStarted {
        replay_of: None,
        workspace: workspace.into(),
        model: model.into(),
        user_message: "How big is it?".into(),
    });
    for (prompt, completion) in usage {
        script.push(EventBody::Usage(Usage {
            prompt_tokens: *prompt,
            completion_tokens: *completion,
            total_tokens: prompt + completion,
        }));
    }
    script.push(EventBody::TurnFinished {
        reason: TurnEnd::Completed,
        rounds: u32::try_from(usage.len()).unwrap(),
        text: String::new(),
    });
    let recorder = store.recorder().unwrap();
    for event in &script.events {
        recorder.record(event.clone());
    }
    recorder.shutdown().unwrap();
}

fn day(day_start_ms: i64, model: &str, prompt: u64, completion: u64, requests: u64) -> DayTokens {
    DayTokens {
        day_start_ms,
        model: model.into(),
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        requests,
    }
}

#[test]
fn tokens_add_up_per_local_day_and_model() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("tooltrail.sqlite3")).unwrap();
    // 15:30 UTC is 23:30 in Beijing: still March 2 there. 16:30 UTC is already March 3.
    turn(
        &store,
        "c1",
        "t1",
        "/ws/a",
        "qwen3",
        MIDNIGHT_UTC + 15 * HOUR + 30 * 60_000,
        &[(1000, 50), (1400, 80)],
    );
    turn(
        &store,
        "c1",
        "t2",
        "/ws/a",
        "qwen3",
        MIDNIGHT_UTC + 16 * HOUR + 30 * 60_000,
        &[(2000, 100)],
    );
    turn(
        &store,
        "c2",
        "t3",
        "/ws/a",
        "gpt-4o-mini",
        MIDNIGHT_UTC + 17 * HOUR,
        &[(300, 20)],
    );
    turn(
        &store,
        "c3",
        "t4",
        "/ws/b",
        "qwen3",
        MIDNIGHT_UTC + 17 * HOUR,
        &[(7, 3)],
    );

    let beijing_march_2 = MIDNIGHT_UTC - 8 * HOUR;
    let beijing_march_3 = beijing_march_2 + DAY;
    let filter = TokenFilter {
        workspace: Some("/ws/a".into()),
        utc_offset_minutes: UTC8,
        ..TokenFilter::default()
    };
    assert_eq!(
        store.tokens_per_day(&filter).unwrap(),
        vec![
            day(beijing_march_2, "qwen3", 2400, 130, 2),
            day(beijing_march_3, "gpt-4o-mini", 300, 20, 1),
            day(beijing_march_3, "qwen3", 2000, 100, 1),
        ]
    );

    // In UTC all of it is March 2; every workspace counts without a filter.
    let everywhere = store.tokens_per_day(&TokenFilter::default()).unwrap();
    assert_eq!(
        everywhere,
        vec![
            day(MIDNIGHT_UTC, "gpt-4o-mini", 300, 20, 1),
            day(MIDNIGHT_UTC, "qwen3", 4407, 233, 4),
        ]
    );

    // A period counts the requests made in it.
    let since = TokenFilter {
        since: Some(MIDNIGHT_UTC + 16 * HOUR),
        until: Some(MIDNIGHT_UTC + 17 * HOUR),
        ..TokenFilter::default()
    };
    assert_eq!(
        store.tokens_per_day(&since).unwrap(),
        vec![day(MIDNIGHT_UTC, "qwen3", 2000, 100, 1)]
    );
}
