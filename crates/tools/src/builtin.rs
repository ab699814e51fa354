//! The built-in workspace tools, with the names and parameters of SPEC §2.

use std::sync::Arc;

use crate::tool::Tool;

mod read_file;
mod search_files;

/// Every built-in tool, ready to register.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(search_files::SearchFiles::new()),
        Arc::new(read_file::ReadFile::new()),
    ]
}
