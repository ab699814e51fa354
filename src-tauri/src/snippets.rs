//! The open folder's snippets, as the Snippets screen lists, shows and deletes them: the same
//! rows the snippet tools and `tooltrail snippets` read, in the same database.

use tauri::State;
use tooltrail_host::Host;
use tooltrail_store::{Snippet, SnippetSummary, Store};

use crate::error::CommandResult;
use crate::workspace::WorkspaceState;

/// How many snippets the screen lists at most (a folder holds few; the search finds the rest).
pub const SNIPPETS_LISTED: usize = 500;

/// The folder's snippets by name, or, with `query` (words that must all occur in the name,
/// language, description or content; `word*` for a prefix), best match first.
pub fn list(
    store: &Store,
    workspace: &str,
    query: Option<&str>,
) -> CommandResult<Vec<SnippetSummary>> {
    let query = query.map(str::trim).filter(|text| !text.is_empty());
    Ok(store.snippets(workspace, query, SNIPPETS_LISTED)?)
}

/// One snippet with its content.
pub fn get(store: &Store, workspace: &str, name: &str) -> CommandResult<Snippet> {
    store
        .snippet(workspace, name)?
        .ok_or_else(|| tooltrail_store::StoreError::SnippetNotFound(name.to_string()).into())
}

#[tauri::command]
pub fn list_snippets(
    workspace: State<'_, WorkspaceState>,
    host: State<'_, Host>,
    query: Option<String>,
) -> CommandResult<Vec<SnippetSummary>> {
    list(host.store(), &workspace.folder()?, query.as_deref())
}

#[tauri::command]
pub fn get_snippet(
    workspace: State<'_, WorkspaceState>,
    host: State<'_, Host>,
    name: String,
) -> CommandResult<Snippet> {
    get(host.store(), &workspace.folder()?, &name)
}

#[tauri::command]
pub fn delete_snippet(
    workspace: State<'_, WorkspaceState>,
    host: State<'_, Host>,
    name: String,
) -> CommandResult<()> {
    Ok(host.store().delete_snippet(&workspace.folder()?, &name)?)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use tooltrail_store::NewSnippet;

    use super::*;
    use crate::error::CommandError;

    fn save(store: &Store, workspace: &str, name: &str, content: &str) {
        store
            .save_snippet(&NewSnippet {
                workspace: workspace.to_string(),
                name: name.to_string(),
                content: content.to_string(),
                language: Some("sh".to_string()),
                description: None,
            })
            .unwrap();
    }

    fn names(list: &[SnippetSummary]) -> Vec<&str> {
        list.iter().map(|snippet| snippet.name.as_str()).collect()
    }

    #[test]
    fn the_screen_sees_the_open_folders_snippets_and_a_blank_search_lists_them_all() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("db.sqlite3")).unwrap();
        save(&store, "/ws/a", "build", "cargo build --release");
        save(&store, "/ws/a", "test", "cargo test --workspace");
        save(&store, "/ws/b", "other", "cargo build");

        assert_eq!(
            names(&list(&store, "/ws/a", None).unwrap()),
            vec!["build", "test"]
        );
        assert_eq!(
            names(&list(&store, "/ws/a", Some("  ")).unwrap()),
            vec!["build", "test"]
        );
        assert_eq!(
            names(&list(&store, "/ws/a", Some("release")).unwrap()),
            vec!["build"]
        );
        assert_eq!(
            get(&store, "/ws/a", "test").unwrap().content,
            "cargo test --workspace"
        );
    }

    #[test]
    fn a_missing_snippet_and_a_search_without_words_are_sentences() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("db.sqlite3")).unwrap();
        save(&store, "/ws/a", "build", "cargo build");
        assert_eq!(
            get(&store, "/ws/b", "build"),
            Err(CommandError::new(
                "not_found",
                "No snippet named \"build\" is saved for this folder."
            ))
        );
        let error = list(&store, "/ws/a", Some("--")).unwrap_err();
        assert_eq!(error.code, "bad_input");
        assert!(error.message.ends_with('.'), "{}", error.message);
    }
}
