//! Where the database lives: `TOOLTRAIL_DATA_DIR` when set (tests, portable installs), else the
//! operating system's application-data folder. The folder itself is found by the settings crate
//! ([`tooltrail_settings::data_dir`]), which every crate that keeps data shares.

use std::path::PathBuf;

use crate::error::{Result, StoreError};

/// Overrides the data folder.
pub use tooltrail_settings::DATA_DIR_ENV;

/// The database's file name inside the data folder.
pub const DB_FILE_NAME: &str = "tooltrail.sqlite3";

/// The data folder: `TOOLTRAIL_DATA_DIR`, else `~/.local/share/tooltrail` on Linux,
/// `~/Library/Application Support/tooltrail` on macOS, `%APPDATA%\tooltrail\data` on Windows.
pub fn data_dir() -> Result<PathBuf> {
    tooltrail_settings::data_dir().map_err(|_| StoreError::NoDataDir)
}

/// The database file [`crate::Store::open_default`] opens.
pub fn default_db_path() -> Result<PathBuf> {
    Ok(data_dir()?.join(DB_FILE_NAME))
}
