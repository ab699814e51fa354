//! Opening one SQLite connection with the settings every connection of the store shares.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Result, StoreError};

/// Page cache per connection: 16 MiB keeps the indexes of a large log warm. Negative values
/// are KiB to SQLite.
pub(crate) const CACHE_KIB: i64 = -16 * 1024;

/// How long a connection waits for another one's write lock before it gives up. Writes are
/// short (one event, or one batch of queued events), so this is only ever reached when something
/// holds the database for far longer than Tooltrail does.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a store's database lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    File(PathBuf),
    /// A database in this process's memory, shared by every connection that opens the same
    /// name through SQLite's `memdb` file system (which locks like a file, so the recorder's
    /// connection and the readers' wait for each other as they would on disk). Gone when the
    /// last connection closes.
    Memory(String),
}

impl Location {
    /// A new, empty in-memory database of its own.
    pub(crate) fn memory() -> Self {
        Self::Memory(format!(
            "file:/tooltrail-{}?vfs=memdb",
            uuid::Uuid::new_v4().simple()
        ))
    }

    /// The file, or `:memory:` for a database in memory.
    pub(crate) fn path(&self) -> &Path {
        match self {
            Self::File(path) => path,
            Self::Memory(_) => Path::new(":memory:"),
        }
    }
}

/// Opens the database (creating it) in WAL mode with foreign keys on. A database in memory
/// keeps SQLite's own journal: it has no file for a WAL, and nothing to lose in a crash.
///
/// WAL lets readers (the history view) and the recorder work at the same time without blocking
/// each other. `synchronous = NORMAL` commits without an fsync: a commit survives the process
/// being killed, and the database is never corrupted, but a power cut may lose the last moments
/// of a turn. Full fsyncs would make each event cost milliseconds.
pub(crate) fn open(location: &Location) -> Result<Connection> {
    let open_error = |source| StoreError::Open {
        path: location.path().to_path_buf(),
        source,
    };
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = match location {
        Location::File(path) => Connection::open_with_flags(path, flags),
        Location::Memory(uri) => {
            Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)
        }
    }
    .map_err(open_error)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(open_error)?;
    if matches!(location, Location::File(_)) && !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Corrupt(format!(
            "the database would not switch to WAL mode (it stayed in {mode} mode)"
        )));
    }
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(open_error)?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(open_error)?;
    conn.pragma_update(None, "cache_size", CACHE_KIB)
        .map_err(open_error)?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}
