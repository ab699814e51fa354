//! Snippets: named pieces of text (code, commands, notes) kept per workspace, so that a later
//! conversation in the same folder can find them again. A name is unique in its workspace and
//! saving it again replaces the snippet; search goes through `snippets_fts` (see migrations.rs).

use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::conversations::now_ms;
use crate::error::{Result, StoreError};
use crate::kinds::workspace::workspace_id;
use crate::search::fts_query;
use crate::store::Store;

/// A snippet to save.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSnippet {
    /// The workspace root, as turns record it.
    pub workspace: String,
    pub name: String,
    pub content: String,
    pub language: Option<String>,
    pub description: Option<String>,
}

/// A stored snippet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Snippet {
    pub name: String,
    pub language: Option<String>,
    pub description: Option<String>,
    pub content: String,
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// A snippet as a list shows it: everything but the content, and the content's size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SnippetSummary {
    pub name: String,
    pub language: Option<String>,
    pub description: Option<String>,
    /// The content's length in bytes.
    pub bytes: u64,
    pub updated_ms: i64,
}

/// What [`Store::save_snippet`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedSnippet {
    pub snippet: Snippet,
    /// True when a snippet of that name was there before and is now replaced.
    pub replaced: bool,
}

const SUMMARY_COLUMNS: &str =
    "s.name, s.language, s.description, length(CAST(s.content AS BLOB)), s.updated_ms";

impl Store {
    /// Saves a snippet, replacing the one of the same name in its workspace.
    pub fn save_snippet(&self, snippet: &NewSnippet) -> Result<SavedSnippet> {
        self.with_conn(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let workspace = workspace_id(&tx, &snippet.workspace)?
                .ok_or_else(|| StoreError::Corrupt("a snippet needs a workspace".to_string()))?;
            let now = now_ms();
            let existing: Option<i64> = tx
                .query_row(
                    "SELECT id FROM snippets WHERE workspace_id = ?1 AND name = ?2",
                    params![workspace, snippet.name],
                    |row| row.get(0),
                )
                .optional()?;
            // An update rather than INSERT OR REPLACE: a replace would delete the row and lose
            // when the name was first saved.
            match existing {
                Some(id) => tx.execute(
                    "UPDATE snippets SET language = ?2, description = ?3, content = ?4, \
                     updated_ms = ?5 WHERE id = ?1",
                    params![
                        id,
                        snippet.language,
                        snippet.description,
                        snippet.content,
                        now
                    ],
                )?,
                None => tx.execute(
                    "INSERT INTO snippets(workspace_id, name, language, description, content, \
                     created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                    params![
                        workspace,
                        snippet.name,
                        snippet.language,
                        snippet.description,
                        snippet.content,
                        now
                    ],
                )?,
            };
            let saved = find(&tx, &snippet.workspace, &snippet.name)?
                .ok_or_else(|| StoreError::SnippetNotFound(snippet.name.clone()))?;
            tx.commit()?;
            Ok(SavedSnippet {
                snippet: saved,
                replaced: existing.is_some(),
            })
        })
    }

    /// The snippet called `name` in `workspace`, if there is one.
    pub fn snippet(&self, workspace: &str, name: &str) -> Result<Option<Snippet>> {
        self.with_conn(|conn| find(conn, workspace, name))
    }

    /// The snippets of `workspace`, at most `limit`: by name, or, with a `query` (words that
    /// must all occur in the name, language, description or content; see [`fts_query`]), best
    /// match first.
    pub fn snippets(
        &self,
        workspace: &str,
        query: Option<&str>,
        limit: usize,
    ) -> Result<Vec<SnippetSummary>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with_conn(|conn| {
            let mut rows = Vec::new();
            match query {
                None => {
                    let sql = format!(
                        "SELECT {SUMMARY_COLUMNS} FROM snippets s \
                         JOIN workspaces w ON w.id = s.workspace_id \
                         WHERE w.path = ?1 ORDER BY s.name LIMIT ?2"
                    );
                    let mut statement = conn.prepare(&sql)?;
                    for row in statement.query_map(params![workspace, limit], summary)? {
                        rows.push(row?);
                    }
                }
                Some(text) => {
                    // A workspace holds few snippets, so FTS5's own bm25 ranking is cheap here
                    // (unlike the call log; see rank.rs).
                    let sql = format!(
                        "SELECT {SUMMARY_COLUMNS} FROM snippets_fts f \
                         JOIN snippets s ON s.id = f.rowid \
                         JOIN workspaces w ON w.id = s.workspace_id \
                         WHERE snippets_fts MATCH ?1 AND w.path = ?2 \
                         ORDER BY f.rank, s.name LIMIT ?3"
                    );
                    let mut statement = conn.prepare(&sql)?;
                    let fts = fts_query(text)?;
                    for row in statement.query_map(params![fts, workspace, limit], summary)? {
                        rows.push(row?);
                    }
                }
            }
            Ok(rows)
        })
    }

    /// Deletes the snippet called `name` in `workspace`.
    pub fn delete_snippet(&self, workspace: &str, name: &str) -> Result<()> {
        self.with_conn(|conn| {
            let deleted = conn.execute(
                "DELETE FROM snippets WHERE name = ?2 \
                 AND workspace_id = (SELECT id FROM workspaces WHERE path = ?1)",
                params![workspace, name],
            )?;
            if deleted == 0 {
                return Err(StoreError::SnippetNotFound(name.to_string()));
            }
            Ok(())
        })
    }
}

fn summary(row: &rusqlite::Row<'_>) -> rusqlite::Result<SnippetSummary> {
    Ok(SnippetSummary {
        name: row.get(0)?,
        language: row.get(1)?,
        description: row.get(2)?,
        bytes: row.get::<_, u32>(3)?.into(),
        updated_ms: row.get(4)?,
    })
}

fn find(conn: &rusqlite::Connection, workspace: &str, name: &str) -> Result<Option<Snippet>> {
    Ok(conn
        .query_row(
            "SELECT s.name, s.language, s.description, s.content, s.created_ms, s.updated_ms \
             FROM snippets s JOIN workspaces w ON w.id = s.workspace_id \
             WHERE w.path = ?1 AND s.name = ?2",
            params![workspace, name],
            |row| {
                Ok(Snippet {
                    name: row.get(0)?,
                    language: row.get(1)?,
                    description: row.get(2)?,
                    content: row.get(3)?,
                    created_ms: row.get(4)?,
                    updated_ms: row.get(5)?,
                })
            },
        )
        .optional()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn new_snippet(workspace: &str, name: &str, content: &str) -> NewSnippet {
        NewSnippet {
            workspace: workspace.to_string(),
            name: name.to_string(),
            content: content.to_string(),
            language: Some("rust".to_string()),
            description: None,
        }
    }

    fn names(list: &[SnippetSummary]) -> Vec<&str> {
        list.iter().map(|snippet| snippet.name.as_str()).collect()
    }

    #[test]
    fn a_saved_snippet_loads_back_whole_and_saving_its_name_again_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("db.sqlite3")).unwrap();
        let first = store
            .save_snippet(&new_snippet("/ws/a", "parse", "fn tokenize() {}"))
            .unwrap();
        assert!(!first.replaced);
        assert_eq!(
            store.snippet("/ws/a", "parse").unwrap(),
            Some(first.snippet.clone())
        );

        let again = store
            .save_snippet(&NewSnippet {
                description: Some("the header parser".to_string()),
                language: None,
                ..new_snippet("/ws/a", "parse", "fn parse_header() {}")
            })
            .unwrap();
        assert_eq!(
            again,
            SavedSnippet {
                snippet: Snippet {
                    name: "parse".to_string(),
                    language: None,
                    description: Some("the header parser".to_string()),
                    content: "fn parse_header() {}".to_string(),
                    created_ms: first.snippet.created_ms,
                    updated_ms: again.snippet.updated_ms,
                },
                replaced: true,
            }
        );
        assert_eq!(
            store.snippets("/ws/a", None, 10).unwrap(),
            vec![SnippetSummary {
                name: "parse".to_string(),
                language: None,
                description: Some("the header parser".to_string()),
                bytes: 20,
                updated_ms: again.snippet.updated_ms,
            }]
        );
        assert_eq!(store.snippet("/ws/a", "nope").unwrap(), None);
        // The index follows the replacement: the old content's words no longer find it.
        assert!(
            store
                .snippets("/ws/a", Some("tokenize"), 10)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            names(&store.snippets("/ws/a", Some("header"), 10).unwrap()),
            vec!["parse"]
        );
    }

    #[test]
    fn lists_and_searches_see_only_their_own_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("db.sqlite3")).unwrap();
        store
            .save_snippet(&new_snippet("/ws/a", "retry", "loop { backoff() }"))
            .unwrap();
        store
            .save_snippet(&NewSnippet {
                description: Some("how we retry uploads".to_string()),
                ..new_snippet("/ws/a", "upload", "client.put(body)")
            })
            .unwrap();
        store
            .save_snippet(&new_snippet("/ws/a", "unrelated", "println!()"))
            .unwrap();
        store
            .save_snippet(&new_snippet("/ws/b", "retry_b", "retry in b"))
            .unwrap();

        assert_eq!(
            names(&store.snippets("/ws/a", None, 10).unwrap()),
            vec!["retry", "unrelated", "upload"]
        );
        assert_eq!(names(&store.snippets("/ws/a", None, 2).unwrap()).len(), 2);
        let mut found = names(&store.snippets("/ws/a", Some("retry"), 10).unwrap())
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>();
        found.sort();
        assert_eq!(found, vec!["retry", "upload"]);
        assert_eq!(
            names(&store.snippets("/ws/a", Some("backoff"), 10).unwrap()),
            vec!["retry"]
        );
        assert_eq!(
            names(&store.snippets("/ws/a", Some("back*"), 10).unwrap()),
            vec!["retry"]
        );
        assert_eq!(
            names(&store.snippets("/ws/b", Some("retry"), 10).unwrap()),
            vec!["retry_b"]
        );
        assert_eq!(store.snippet("/ws/b", "retry").unwrap(), None);
        assert!(store.snippets("/ws/none", None, 10).unwrap().is_empty());
        assert!(matches!(
            store.snippets("/ws/a", Some("--"), 10),
            Err(StoreError::EmptySearch)
        ));
    }

    #[test]
    fn a_deleted_snippet_is_gone_from_lists_and_searches() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("db.sqlite3")).unwrap();
        store
            .save_snippet(&new_snippet("/ws/a", "gone", "temporary words"))
            .unwrap();
        store
            .save_snippet(&new_snippet("/ws/b", "gone", "temporary words"))
            .unwrap();
        store.delete_snippet("/ws/a", "gone").unwrap();
        assert_eq!(store.snippet("/ws/a", "gone").unwrap(), None);
        assert!(
            store
                .snippets("/ws/a", Some("temporary"), 10)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            names(&store.snippets("/ws/b", Some("temporary"), 10).unwrap()),
            vec!["gone"]
        );
        assert_eq!(
            store
                .delete_snippet("/ws/a", "gone")
                .map_err(|e| e.to_string()),
            Err("No snippet named \"gone\" is saved for this folder.".to_string())
        );
    }
}
