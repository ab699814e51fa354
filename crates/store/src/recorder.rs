//! The recorder: events in, committed rows out, on a thread of its own.
//!
//! [`Recorder::record`] only queues (an unbounded channel), so the model's stream never waits
//! for the disk. The thread commits each event as soon as it takes it; when events arrive faster
//! than one commit takes (a burst of text deltas), it commits the ones already waiting together,
//! each in a savepoint of its own so that one bad event does not lose its neighbours.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};
use tooltrail_protocol::Event;

use crate::connection::{self, Location};
use crate::error::{Result, StoreError};
use crate::recovery::WriterLock;
use crate::writer;

/// Most events committed together when they queue up.
const MAX_BATCH: usize = 512;

/// A pause in the events this long folds the WAL back into the database.
const IDLE_BEFORE_CHECKPOINT: Duration = Duration::from_millis(250);

/// WAL pages (4 KiB each) after which SQLite checkpoints within a commit regardless.
const WAL_BACKSTOP_PAGES: i64 = 16_384;

enum Command {
    Record(Box<Event>),
    Flush(SyncSender<Result<()>>),
}

/// Records events as they happen. Create one with [`crate::Store::recorder`].
///
/// Dropping it waits for every queued event to be committed; [`Recorder::shutdown`] does the
/// same and reports events that could not be written.
#[derive(Debug)]
pub struct Recorder {
    sender: Option<Sender<Command>>,
    thread: Option<JoinHandle<()>>,
    /// Events that could not be queued because the thread had stopped.
    lost: AtomicUsize,
    // Held until the thread has finished writing; dropped after it (fields drop in order). A
    // database in memory dies with its process, so nothing needs telling that this one lives.
    _lock: Option<WriterLock>,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Record(event) => write!(f, "Record({})", event.body.kind()),
            Self::Flush(_) => f.write_str("Flush"),
        }
    }
}

impl Recorder {
    pub(crate) fn start(location: &Location) -> Result<Self> {
        let writer_id = format!("w{}", uuid::Uuid::new_v4().simple());
        let lock = match location {
            Location::File(db_path) => Some(WriterLock::acquire(db_path, &writer_id)?),
            Location::Memory(_) => None,
        };
        let conn = connection::open(location)?;
        let (sender, receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("tooltrail-recorder".to_string())
            .spawn(move || run(conn, &writer_id, receiver))
            .map_err(|source| StoreError::File {
                path: location.path().to_path_buf(),
                source,
            })?;
        Ok(Self {
            sender: Some(sender),
            thread: Some(thread),
            lost: AtomicUsize::new(0),
            _lock: lock,
        })
    }

    /// Queues `event` for writing. Never blocks; failures show in the next [`Self::flush`].
    pub fn record(&self, event: Event) {
        let sent = self
            .sender
            .as_ref()
            .is_some_and(|sender| sender.send(Command::Record(Box::new(event))).is_ok());
        if !sent {
            self.lost.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Waits until every event recorded so far is committed. Reports the events that failed
    /// since the last flush, if any did.
    pub fn flush(&self) -> Result<()> {
        if self.lost.swap(0, Ordering::Relaxed) > 0 {
            return Err(StoreError::RecorderStopped);
        }
        let (reply, answer) = mpsc::sync_channel(1);
        let sender = self.sender.as_ref().ok_or(StoreError::RecorderStopped)?;
        sender
            .send(Command::Flush(reply))
            .map_err(|_| StoreError::RecorderStopped)?;
        answer.recv().map_err(|_| StoreError::RecorderStopped)?
    }

    /// Commits everything queued, stops the thread and reports what failed.
    pub fn shutdown(mut self) -> Result<()> {
        self.stop()
    }

    fn stop(&mut self) -> Result<()> {
        let flushed = match self.sender {
            Some(_) => self.flush(),
            None => Ok(()),
        };
        drop(self.sender.take());
        if let Some(thread) = self.thread.take() {
            thread.join().map_err(|_| StoreError::RecorderStopped)?;
        }
        flushed
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The thread: take what is queued, commit it, answer flushes; fold the WAL back into the
/// database when the stream pauses.
fn run(mut conn: Connection, writer_id: &str, receiver: Receiver<Command>) {
    let mut failures: Vec<String> = Vec::new();
    // SQLite would otherwise checkpoint inside whichever commit crosses 1000 WAL pages, and
    // that event would wait for the copy and its fsyncs. Checkpointing in the pauses between
    // events keeps them off the stream; the larger automatic limit is the backstop for a
    // stream that never pauses.
    let _ = conn.pragma_update(None, "wal_autocheckpoint", WAL_BACKSTOP_PAGES);
    let mut written = false;
    loop {
        let first = if written {
            match receiver.recv_timeout(IDLE_BEFORE_CHECKPOINT) {
                Ok(command) => command,
                Err(RecvTimeoutError::Timeout) => {
                    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                    written = false;
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match receiver.recv() {
                Ok(command) => command,
                Err(_) => break,
            }
        };
        let mut events = Vec::new();
        let mut replies = Vec::new();
        let mut next = Some(first);
        while let Some(command) = next.take() {
            match command {
                Command::Record(event) => events.push(event),
                Command::Flush(reply) => replies.push(reply),
            }
            if events.len() < MAX_BATCH {
                next = receiver.try_recv().ok();
            }
        }
        written |= !events.is_empty();
        if !events.is_empty()
            && let Err(error) = write_batch(&mut conn, writer_id, &events, &mut failures)
        {
            failures.extend(
                events
                    .iter()
                    .map(|event| describe_failure(event, &error.to_string())),
            );
        }
        for reply in replies {
            let result = match failures.first() {
                None => Ok(()),
                Some(first) => Err(StoreError::RecordFailed {
                    count: failures.len(),
                    first: first.clone(),
                }),
            };
            failures.clear();
            let _ = reply.send(result);
        }
    }
    if written {
        let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
    }
}

fn write_batch(
    conn: &mut Connection,
    writer_id: &str,
    events: &[Box<Event>],
    failures: &mut Vec<String>,
) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for event in events {
        tx.execute_batch("SAVEPOINT event")?;
        match writer::apply(&tx, Some(writer_id), event) {
            Ok(()) => tx.execute_batch("RELEASE event")?,
            Err(error) => {
                tx.execute_batch("ROLLBACK TO event; RELEASE event")?;
                failures.push(describe_failure(event, &error.to_string()));
            }
        }
    }
    tx.commit()?;
    Ok(())
}

fn describe_failure(event: &Event, error: &str) -> String {
    format!(
        "event {} ({}) of turn {} was refused: {error}",
        event.seq,
        event.body.kind(),
        event.turn_id
    )
}
