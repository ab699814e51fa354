//! Where events go. The agent knows only this trait; the CLI prints, the app forwards to its
//! window and the store records, each by implementing it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use tooltrail_protocol::{Event, EventBody};

/// Receives every event of a turn, in order. Must not block for long: it is called from the
/// turn's task while the model streams.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: Event);
}

/// Drops every event.
#[derive(Debug, Default)]
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _event: Event) {}
}

/// Keeps every event; for tests and for callers that want the whole turn afterwards.
#[derive(Debug, Default)]
pub struct CollectingSink {
    events: Mutex<Vec<Event>>,
}

impl CollectingSink {
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of the events so far.
    pub fn events(&self) -> Vec<Event> {
        match self.events.lock() {
            Ok(events) => events.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl EventSink for CollectingSink {
    fn emit(&self, event: Event) {
        match self.events.lock() {
            Ok(mut events) => events.push(event),
            Err(poisoned) => poisoned.into_inner().push(event),
        }
    }
}

/// Stamps bodies with the conversation, turn, sequence number and time, then hands them on.
pub(crate) struct Emitter<'a> {
    conversation_id: String,
    turn_id: String,
    seq: AtomicU64,
    sink: &'a dyn EventSink,
}

impl<'a> Emitter<'a> {
    pub(crate) fn new(conversation_id: String, turn_id: String, sink: &'a dyn EventSink) -> Self {
        Self::continuing(conversation_id, turn_id, sink, 0)
    }

    /// An emitter that goes on with a turn whose events so far end before `seq` (a view turn,
    /// whose calls come one at a time).
    pub(crate) fn continuing(
        conversation_id: String,
        turn_id: String,
        sink: &'a dyn EventSink,
        seq: u64,
    ) -> Self {
        Self {
            conversation_id,
            turn_id,
            seq: AtomicU64::new(seq),
            sink,
        }
    }

    /// The sequence number the next event gets.
    pub(crate) fn next_seq(&self) -> u64 {
        self.seq.load(Ordering::SeqCst)
    }

    pub(crate) fn conversation_id(&self) -> &str {
        &self.conversation_id
    }

    pub(crate) fn turn_id(&self) -> &str {
        &self.turn_id
    }

    pub(crate) fn emit(&self, body: EventBody) {
        self.emit_at(body, now_ms());
    }

    /// Emits `body` stamped with `time_ms` (milliseconds since the Unix epoch), for events that
    /// happened at one moment but are put on record one after the other.
    pub(crate) fn emit_at(&self, body: EventBody, time_ms: i64) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst);
        self.sink.emit(Event {
            conversation_id: self.conversation_id.clone(),
            turn_id: self.turn_id.clone(),
            seq,
            time_ms,
            body,
        });
    }
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
