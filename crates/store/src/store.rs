//! The handle callers hold: one database file, one connection for reads and small writes.
//! Queries live beside the concept they serve (`history.rs`, `conversations.rs`, …) as further
//! `impl Store` blocks.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, TransactionBehavior};
use tooltrail_protocol::Event;

use crate::connection::{self, Location};
use crate::error::{Result, StoreError};
use crate::recorder::Recorder;
use crate::recovery::{self, Recovered};
use crate::{migrations, owner_only, paths, writer};

/// An open store. Cheap to share behind an `Arc`; its connection is used by one caller at a
/// time. Open one `Store` per thread that reads a lot, or several: WAL lets them all read while
/// a [`Recorder`] writes.
#[derive(Debug)]
pub struct Store {
    location: Location,
    conn: Mutex<Connection>,
    recovered: Recovered,
    /// A store in memory is made on its first use, not when opened: a one-off tool run from
    /// the command line opens one and mostly never uses it, and making its tables is about
    /// 5 ms of its start-up. Only read and set with the connection locked.
    unmade: AtomicBool,
}

impl Store {
    /// Opens the database in the data folder (see [`paths::data_dir`]), creating it.
    pub fn open_default() -> Result<Self> {
        Self::open(paths::default_db_path()?)
    }

    /// Opens (creating, migrating) the database at `path`, and closes the turns and calls that
    /// a process which died while writing them left open (see [`Recovered`]).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        owner_only::restrict(&path)?;
        let location = Location::File(path.clone());
        let mut conn = connection::open(&location)?;
        migrations::migrate(&mut conn, &path)?;
        let recovered = recovery::recover(&mut conn, &path)?;
        Ok(Self {
            location,
            conn: Mutex::new(conn),
            recovered,
            unmade: AtomicBool::new(false),
        })
    }

    /// A new, empty store in this process's memory: everything a store on disk does, gone
    /// when the last handle (and its recorders) is dropped. For a front end that could not
    /// open the database file, so that it still has one way to keep and read conversations.
    /// Its tables are made on first use (a read, a write or [`Self::recorder`]); a failure
    /// then is that call's error.
    pub fn open_in_memory() -> Result<Self> {
        let location = Location::memory();
        let conn = connection::open(&location)?;
        Ok(Self {
            location,
            conn: Mutex::new(conn),
            recovered: Recovered::default(),
            unmade: AtomicBool::new(true),
        })
    }

    /// The database file (`:memory:` for a store in memory).
    pub fn path(&self) -> &Path {
        self.location.path()
    }

    /// Whether this store is in memory rather than in a file.
    pub fn is_in_memory(&self) -> bool {
        matches!(self.location, Location::Memory(_))
    }

    /// What this open closed on behalf of processes that died mid-turn.
    pub fn recovered(&self) -> Recovered {
        self.recovered
    }

    /// Starts a recorder writing to this database on a thread of its own.
    pub fn recorder(&self) -> Result<Recorder> {
        // The recorder writes to the tables, so they must be there.
        self.with_conn(|_| Ok(()))?;
        Recorder::start(&self.location)
    }

    /// Writes `events` in one transaction, as a recorder would have one by one: for restoring
    /// an export (`export_conversation` as JSONL gives back exactly these events) and for
    /// filling a database fast. Returns how many were written. Turns the events leave
    /// unfinished are closed as interrupted on the next open.
    pub fn import(&self, events: impl IntoIterator<Item = Event>) -> Result<u64> {
        self.with_conn(|conn| {
            // A large import touches more pages than the usual cache holds; pages pushed out
            // mid-transaction would be written to the WAL again each time they change.
            conn.pragma_update(None, "cache_size", IMPORT_CACHE_KIB)?;
            let imported = import_into(conn, events);
            conn.pragma_update(None, "cache_size", connection::CACHE_KIB)?;
            imported
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the connection leaves nothing half-done in it that matters:
        // SQLite rolls back an unfinished transaction when the next one begins.
        match self.conn.lock() {
            Ok(conn) => conn,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub(crate) fn with_conn<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        let mut conn = self.lock();
        if self.unmade.load(Ordering::Acquire) {
            migrations::migrate(&mut conn, self.location.path())?;
            self.unmade.store(false, Ordering::Release);
        }
        f(&mut conn)
    }
}

/// Page cache during [`Store::import`], in KiB (negative: SQLite's unit for sizes in KiB).
const IMPORT_CACHE_KIB: i64 = -512 * 1024;

fn import_into(conn: &mut Connection, events: impl IntoIterator<Item = Event>) -> Result<u64> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut count = 0;
    for event in events {
        writer::apply(&tx, None, &event)?;
        count += 1;
    }
    tx.commit()?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tooltrail_protocol::{EventBody, Message};

    fn event(seq: u64, body: EventBody) -> Event {
        Event {
            conversation_id: "conv_1".into(),
            turn_id: "turn_1".into(),
            seq,
            time_ms: 1_714_555_800_000,
            body,
        }
    }

    #[test]
    fn a_store_in_memory_records_and_reads_like_one_on_disk_and_is_its_own() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(store.path(), Path::new(":memory:"));
        let recorder = store.recorder().unwrap();
        recorder.record(event(
            0,
            EventBody::TurnStarted {
                replay_of: None,
                workspace: "/src/app".into(),
                model: "m".into(),
                user_message: "Where is main?".into(),
            },
        ));
        recorder.record(event(
            1,
            EventBody::MessageAdded {
                message: Message::user("Where is main?"),
            },
        ));
        recorder.flush().unwrap();
        assert_eq!(
            store.conversation("conv_1").unwrap().title,
            "Where is main?"
        );
        assert_eq!(
            store.load_messages("conv_1").unwrap(),
            vec![Message::user("Where is main?")]
        );
        assert_eq!(store.conversation_events("conv_1").unwrap().len(), 2);

        // Another store in memory starts empty: each is a database of its own.
        let other = Store::open_in_memory().unwrap();
        assert!(other.conversation("conv_1").is_err());
    }
}
