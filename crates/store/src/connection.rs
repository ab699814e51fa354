//! Opening one SQLite connection with the settings every connection of the store shares.

use std::path::Path;
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

/// Opens `path` (creating it) in WAL mode with foreign keys on.
///
/// WAL lets readers (the history view) and the recorder work at the same time without blocking
/// each other. `synchronous = NORMAL` commits without an fsync: a commit survives the process
/// being killed, and the database is never corrupted, but a power cut may lose the last moments
/// of a turn. Full fsyncs would make each event cost milliseconds.
pub(crate) fn open(path: &Path) -> Result<Connection> {
    let open_error = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(open_error)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(open_error)?;
    if !mode.eq_ignore_ascii_case("wal") {
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
