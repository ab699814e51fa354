//! `tooltrail export --otlp [filters]`: past questions from the record sent as OpenTelemetry
//! traces, for a user who turns telemetry on after the fact. Each question becomes the trace it
//! would have been live (the same ids, from the record's own), so exporting twice files the
//! same spans twice rather than new traces.
//!
//! Which questions: with no filter, or only `--conversation`, every question of those
//! conversations; with any other filter, the questions that made a matching call.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{Context, bail};
use tooltrail_host::{Host, Record};
use tooltrail_protocol::Event;
use tooltrail_store::{ConversationFilter, HistoryFilter, Store};
use tooltrail_telemetry::TraceBuilder;

use crate::history_cmd::FilterArgs;

/// Spans handed to the exporter at a time, so a large record goes out in batches.
const SPANS_PER_SEND: usize = 512;

pub async fn export(filter: &FilterArgs) -> anyhow::Result<ExitCode> {
    let record = Record::open_default().context("could not open the history database")?;
    let host = Host::new(record);
    let Some(telemetry) = host.telemetry() else {
        bail!(
            "telemetry is off, so there is nowhere to send traces: set OTEL_EXPORTER_OTLP_ENDPOINT, or endpoint in the [telemetry] table of config.toml"
        );
    };
    let turns = turns(host.store(), filter)?;
    let mut builder = TraceBuilder::new(telemetry.config().capture_content);
    let mut spans = Vec::new();
    let mut questions = 0usize;
    let mut sent = 0usize;
    for events in turns {
        let Some(last) = events.last().map(|event| event.time_ms) else {
            continue;
        };
        questions += 1;
        for event in &events {
            spans.extend(builder.observe(event, None));
        }
        // A question the record ends in the middle of (the process was stopped) ends there.
        let end = UNIX_EPOCH + Duration::from_millis(u64::try_from(last).unwrap_or(0));
        spans.extend(builder.finish_open(end));
        if spans.len() >= SPANS_PER_SEND {
            sent += spans.len();
            telemetry.send(std::mem::take(&mut spans));
        }
    }
    sent += spans.len();
    telemetry.send(spans);
    let endpoint = telemetry.config().endpoint.clone();
    telemetry.shutdown().map_err(anyhow::Error::from)?;
    host.shutdown().await;
    if questions == 0 {
        outln!("No recorded questions match.")?;
    } else {
        outln!(
            "Sent {sent} spans of {questions} question{} to {endpoint}.",
            if questions == 1 { "" } else { "s" }
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The events of each question the filter selects, oldest question first.
fn turns(store: &Store, filter: &FilterArgs) -> anyhow::Result<Vec<Vec<Event>>> {
    let calls_only = filter.tool.is_some()
        || filter.status.is_some()
        || filter.since.is_some()
        || filter.search.is_some()
        || filter.workspace.is_some();
    if !calls_only {
        let conversations = match &filter.conversation {
            Some(id) => vec![id.clone()],
            None => all_conversations(store)?,
        };
        let mut turns = Vec::new();
        for id in conversations.iter().rev() {
            let events = store.conversation_events(id)?;
            let mut by_turn: Vec<Vec<Event>> = Vec::new();
            for event in events {
                match by_turn.last_mut() {
                    Some(turn) if turn[0].turn_id == event.turn_id => turn.push(event),
                    Some(_) | None => by_turn.push(vec![event]),
                }
            }
            turns.extend(by_turn);
        }
        return Ok(turns);
    }
    let mut wanted = HistoryFilter {
        limit: tooltrail_store::MAX_LIMIT,
        ..filter.to_filter()?
    };
    let mut ids = BTreeSet::new();
    let mut order = Vec::new();
    loop {
        let page = store.history(&wanted)?;
        for row in page.items {
            if ids.insert(row.turn_id.clone()) {
                order.push(row.turn_id);
            }
        }
        match page.next {
            Some(next) => wanted.before = Some(next),
            None => break,
        }
    }
    order
        .iter()
        .rev()
        .map(|turn_id| store.turn_events(turn_id).map_err(anyhow::Error::from))
        .collect()
}

fn all_conversations(store: &Store) -> anyhow::Result<Vec<String>> {
    let mut filter = ConversationFilter {
        workspace: None,
        limit: tooltrail_store::MAX_LIMIT,
        before: None,
    };
    let mut ids = Vec::new();
    loop {
        let page = store.conversations(&filter)?;
        ids.extend(page.items.into_iter().map(|conversation| conversation.id));
        match page.next {
            Some(next) => filter.before = Some(next),
            None => return Ok(ids),
        }
    }
}
