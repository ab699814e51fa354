//! [`StoreSnippets`]: the snippet tools' [`SnippetBook`] on the record's database, for one
//! workspace.
//!
//! The tools crate knows only the trait (it may not depend on the store); this is where the two
//! meet. Store errors become tool errors the model reads: a search with no words is its mistake,
//! anything else is the database's.

use std::sync::Arc;

use tooltrail_store::{NewSnippet, Store, StoreError};
use tooltrail_tools::{
    SnippetBook, SnippetDraft, SnippetEntry, SnippetListing, ToolError, ToolErrorCode,
};

/// The snippets of `workspace` in `store`.
pub struct StoreSnippets {
    store: Arc<Store>,
    /// The workspace root, written as turns record it.
    workspace: String,
}

impl StoreSnippets {
    pub fn new(store: Arc<Store>, workspace: &std::path::Path) -> Self {
        Self {
            store,
            workspace: workspace.display().to_string(),
        }
    }
}

impl SnippetBook for StoreSnippets {
    fn save(&self, draft: &SnippetDraft) -> Result<bool, ToolError> {
        let saved = self
            .store
            .save_snippet(&NewSnippet {
                workspace: self.workspace.clone(),
                name: draft.name.clone(),
                content: draft.content.clone(),
                language: draft.language.clone(),
                description: draft.description.clone(),
            })
            .map_err(tool_error)?;
        Ok(saved.replaced)
    }

    fn load(&self, name: &str) -> Result<Option<SnippetEntry>, ToolError> {
        let snippet = self
            .store
            .snippet(&self.workspace, name)
            .map_err(tool_error)?;
        Ok(snippet.map(|snippet| SnippetEntry {
            name: snippet.name,
            language: snippet.language,
            description: snippet.description,
            content: snippet.content,
            updated_ms: snippet.updated_ms,
        }))
    }

    fn list(&self, query: Option<&str>, limit: usize) -> Result<Vec<SnippetListing>, ToolError> {
        let found = self
            .store
            .snippets(&self.workspace, query, limit)
            .map_err(tool_error)?;
        Ok(found
            .into_iter()
            .map(|snippet| SnippetListing {
                name: snippet.name,
                language: snippet.language,
                description: snippet.description,
                bytes: snippet.bytes,
            })
            .collect())
    }
}

fn tool_error(error: StoreError) -> ToolError {
    match error {
        StoreError::EmptySearch => ToolError::new(
            ToolErrorCode::InvalidArguments,
            "the query has no words to look for",
        ),
        // The store's sentences name the database file at most, never the workspace's files.
        other => ToolError::new(
            ToolErrorCode::Io,
            format!("the snippet store failed: {other}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use pretty_assertions::assert_eq;
    use std::path::Path;

    #[test]
    fn each_workspace_sees_only_its_own_snippets() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path().join("db.sqlite3")).unwrap());
        let a = StoreSnippets::new(Arc::clone(&store), Path::new("/ws/a"));
        let b = StoreSnippets::new(Arc::clone(&store), Path::new("/ws/b"));
        let draft = SnippetDraft {
            name: "retry".into(),
            content: "loop { backoff() }".into(),
            language: Some("rust".into()),
            description: None,
        };
        assert_eq!(a.save(&draft), Ok(false));
        assert_eq!(a.save(&draft), Ok(true));
        assert_eq!(
            a.list(Some("backoff"), 10),
            Ok(vec![SnippetListing {
                name: "retry".into(),
                language: Some("rust".into()),
                description: None,
                bytes: 18,
            }])
        );
        assert_eq!(
            a.load("retry").unwrap().map(|entry| entry.content),
            Some("loop { backoff() }".to_string())
        );
        assert_eq!(b.load("retry"), Ok(None));
        assert_eq!(b.list(None, 10), Ok(vec![]));
        assert_eq!(
            a.list(Some("--"), 10).map_err(|error| error.code),
            Err(ToolErrorCode::InvalidArguments)
        );
    }
}
