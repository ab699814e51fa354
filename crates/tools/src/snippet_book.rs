//! [`SnippetBook`]: where the snippet tools keep their snippets.
//!
//! The tools crate must not depend on the store, so the snippet tools see only this trait; the
//! host implements it on the record's database for the workspace of the context, and a context
//! without one (`ToolContext::snippets` is `None`) makes the tools answer that snippets are not
//! available. Calls are blocking: the tools run them on the blocking pool.

use serde::{Deserialize, Serialize};
use tooltrail_protocol::ToolError;

/// A snippet to save.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnippetDraft {
    pub name: String,
    pub content: String,
    pub language: Option<String>,
    pub description: Option<String>,
}

/// A saved snippet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnippetEntry {
    pub name: String,
    pub language: Option<String>,
    pub description: Option<String>,
    pub content: String,
    pub updated_ms: i64,
}

/// A snippet as a list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnippetListing {
    pub name: String,
    pub language: Option<String>,
    pub description: Option<String>,
    /// The content's length in bytes.
    pub bytes: u64,
}

/// The snippets of one workspace. Errors are for the model: a code and a sentence.
pub trait SnippetBook: Send + Sync {
    /// Saves `draft`; returns true when it replaced a snippet of the same name.
    fn save(&self, draft: &SnippetDraft) -> Result<bool, ToolError>;

    /// The snippet called `name`, if there is one.
    fn load(&self, name: &str) -> Result<Option<SnippetEntry>, ToolError>;

    /// At most `limit` snippets: all by name, or those matching every word of `query`, best
    /// first.
    fn list(&self, query: Option<&str>, limit: usize) -> Result<Vec<SnippetListing>, ToolError>;
}
