//! Where the database lives: `TOOLTRAIL_DATA_DIR` when set (tests, portable installs), else the
//! operating system's application-data folder.

use std::path::PathBuf;

use crate::error::{Result, StoreError};

/// Overrides the data folder.
pub const DATA_DIR_ENV: &str = "TOOLTRAIL_DATA_DIR";

/// The database's file name inside the data folder.
pub const DB_FILE_NAME: &str = "tooltrail.sqlite3";

/// The data folder: `TOOLTRAIL_DATA_DIR`, else `~/.local/share/tooltrail` on Linux,
/// `~/Library/Application Support/tooltrail` on macOS, `%APPDATA%\tooltrail\data` on Windows.
pub fn data_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|dir| !dir.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("", "", "tooltrail")
        .map(|dirs| dirs.data_dir().to_path_buf())
        .ok_or(StoreError::NoDataDir)
}

/// The database file [`crate::Store::open_default`] opens.
pub fn default_db_path() -> Result<PathBuf> {
    Ok(data_dir()?.join(DB_FILE_NAME))
}
