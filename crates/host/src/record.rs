//! The record every front end writes through: one open store, one recorder, and the one
//! durability policy — an event is committed before it is shown, so a crash never loses
//! something a user saw, whether the turn runs in the terminal, the app or the HTTP API.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use tooltrail_agent::EventSink;
use tooltrail_protocol::Event;
use tooltrail_store::{Recorder, Store, StoreError};

/// The open store and its recorder.
pub struct Record {
    store: Arc<Store>,
    /// Started with the record on a database file; for a record in memory, with its first
    /// event, so that a process that records nothing (a one-off `tooltrail tool`) never makes
    /// the tables. Why it could not start, when it could not.
    recorder: OnceLock<Result<Recorder, String>>,
    /// Why the database file could not be used, when the record is kept in memory instead.
    problem: Option<String>,
    /// Whether a failed commit has been reported already (once per record is enough).
    warned: AtomicBool,
}

impl Record {
    /// The database in the data folder (`TOOLTRAIL_DATA_DIR` overrides it). When it cannot be
    /// opened, a store in memory takes its place for this process and [`Self::problem`] says
    /// why: questions still work and can be read back until the process ends.
    pub fn open_default() -> Result<Self, StoreError> {
        match Store::open_default().and_then(Self::from_store) {
            Ok(record) => Ok(record),
            Err(error) => {
                let mut record = Self::in_memory()?;
                record.problem = Some(format!(
                    "history is kept in memory only, because the database could not be opened: {error}"
                ));
                Ok(record)
            }
        }
    }

    /// The database at `path`, with no fallback.
    pub fn open(path: &std::path::Path) -> Result<Self, StoreError> {
        Self::from_store(Store::open(path)?)
    }

    /// A record of this process alone (`tooltrail ask --no-history`, tests).
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::from_store(Store::open_in_memory()?)
    }

    fn from_store(store: Store) -> Result<Self, StoreError> {
        let recorder = OnceLock::new();
        if !store.is_in_memory() {
            // On a file, the recorder takes the database's writer lock now, at open.
            let _ = recorder.set(Ok(store.recorder()?));
        }
        Ok(Self {
            store: Arc::new(store),
            recorder,
            problem: None,
            warned: AtomicBool::new(false),
        })
    }

    /// The store, to read from. Everything recorded so far is committed before any read, since
    /// [`Self::record`] commits as it goes.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// Why the record is in memory rather than on disk, when it is.
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    /// Commits `event` and returns once it is in the database. A failure is reported once (on
    /// stderr) and the answer goes on: losing the record must not lose the answer.
    pub fn record(&self, event: &Event) {
        let recorder = self
            .recorder
            .get_or_init(|| self.store.recorder().map_err(|error| error.to_string()));
        let written = match recorder {
            Ok(recorder) => {
                recorder.record(event.clone());
                recorder.flush().map_err(|error| error.to_string())
            }
            Err(error) => Err(error.clone()),
        };
        if let Err(error) = written
            && !self.warned.swap(true, Ordering::SeqCst)
        {
            crate::warning::warn(&format!(
                "the history could not be written ({error}); the answer goes on"
            ));
        }
    }

    /// Stops the recorder after committing everything, reporting what could not be written.
    pub fn close(self) -> Result<(), StoreError> {
        match self.recorder.into_inner() {
            Some(Ok(recorder)) => recorder.shutdown(),
            // Nothing was recorded, or nothing could be.
            Some(Err(_)) | None => Ok(()),
        }
    }
}

/// Commits each event, then shows it: the sink every front end hands the agent.
pub struct RecordingSink {
    record: Arc<Record>,
    screen: Box<dyn EventSink>,
    /// With telemetry on, the `traceparent` the model requests of this sink's turns carry.
    trace: Option<tooltrail_llm::trace::TraceSlot>,
}

impl RecordingSink {
    pub fn new(record: Arc<Record>, screen: Box<dyn EventSink>) -> Self {
        Self {
            record,
            screen,
            trace: None,
        }
    }

    pub(crate) fn with_trace(mut self, slot: tooltrail_llm::trace::TraceSlot) -> Self {
        self.trace = Some(slot);
        self
    }

    /// Runs a turn of this sink (`agent.run(.., &sink, ..)`) so that its requests to the model
    /// carry the trace context of the span they belong to, when telemetry is on.
    pub async fn traced<F: std::future::Future>(&self, turn: F) -> F::Output {
        match &self.trace {
            Some(slot) => tooltrail_llm::trace::with_trace(slot.clone(), turn).await,
            None => turn.await,
        }
    }
}

impl EventSink for RecordingSink {
    fn emit(&self, event: Event) {
        self.record.record(&event);
        self.screen.emit(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tooltrail_protocol::{EventBody, Message};

    /// Checks, as each event is shown, that the store already holds it.
    struct CheckingScreen {
        store: Arc<Store>,
        shown: std::sync::Mutex<Vec<usize>>,
    }

    impl EventSink for CheckingScreen {
        fn emit(&self, event: Event) {
            let stored = self
                .store
                .conversation_events(&event.conversation_id)
                .map(|events| events.len())
                .unwrap_or(0);
            if let Ok(mut shown) = self.shown.lock() {
                shown.push(stored);
            }
        }
    }

    #[test]
    fn every_event_is_committed_before_it_is_shown() {
        let record = Arc::new(Record::in_memory().unwrap());
        let screen = Arc::new(CheckingScreen {
            store: record.store().clone(),
            shown: std::sync::Mutex::new(Vec::new()),
        });
        struct Shared(Arc<CheckingScreen>);
        impl EventSink for Shared {
            fn emit(&self, event: Event) {
                self.0.emit(event);
            }
        }
        let sink = RecordingSink::new(record.clone(), Box::new(Shared(screen.clone())));
        let event = |seq, body| Event {
            conversation_id: "conv_1".into(),
            turn_id: "turn_1".into(),
            seq,
            time_ms: 1,
            body,
        };
        sink.emit(event(
            0,
            EventBody::TurnStarted {
                replay_of: None,
                workspace: "/ws".into(),
                model: "m".into(),
                user_message: "hi".into(),
            },
        ));
        sink.emit(event(
            1,
            EventBody::MessageAdded {
                message: Message::user("hi"),
            },
        ));
        assert_eq!(*screen.shown.lock().unwrap(), vec![1, 2]);
    }
}
