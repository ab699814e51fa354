//! Whether the terminal reads escape sequences (colours, clearing a line). Every Unix terminal
//! does; Windows' console does once asked to (virtual terminal processing, Windows 10 and
//! later), and where it refuses, the command line writes plain text rather than `←[32m`.

use std::sync::OnceLock;

/// Whether escape sequences written to stdout and stderr are read as such; asked once.
pub fn escapes_work() -> bool {
    static WORK: OnceLock<bool> = OnceLock::new();
    *WORK.get_or_init(|| anstyle_query::windows::enable_ansi_colors().unwrap_or(true))
}
