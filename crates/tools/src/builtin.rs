//! The built-in workspace tools.

use std::sync::Arc;

use crate::tool::Tool;

/// Every built-in tool, ready to register.
pub fn all() -> Vec<Arc<dyn Tool>> {
    Vec::new()
}
