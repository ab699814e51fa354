//! Full-text search: turning what a user typed into an FTS5 query, and searching messages.
//!
//! User text is never passed to FTS5 as query syntax (where `-`, `:`, `(` or `NEAR` mean
//! something): each word becomes a quoted phrase, so `main.rs` finds the phrase `main rs` and
//! `src/lib` the phrase `src lib`. A trailing `*` keeps its meaning, a prefix search.

use rusqlite::params_from_iter;
use rusqlite::types::Value as SqlValue;
use serde::{Deserialize, Serialize};
use tooltrail_protocol::Message;

use crate::cursor::{self, Cursor, Key, Page};
use crate::error::{Result, StoreError};
use crate::store::Store;

/// The FTS5 query for `text`: every word must occur.
pub fn fts_query(text: &str) -> Result<String> {
    let mut terms = Vec::new();
    for word in text.split_whitespace() {
        let (word, prefix) = match word.strip_suffix('*') {
            Some(stem) => (stem, true),
            None => (word, false),
        };
        // A word of punctuation alone has no tokens to look for.
        if !word.chars().any(char::is_alphanumeric) {
            continue;
        }
        let quoted = format!("\"{}\"", word.replace('"', "\"\""));
        terms.push(if prefix { format!("{quoted}*") } else { quoted });
    }
    if terms.is_empty() {
        return Err(StoreError::EmptySearch);
    }
    Ok(terms.join(" "))
}

/// A search of the conversations' messages (user questions, answers, tool results as the model
/// got them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MessageSearch {
    /// Words that must all occur; see [`fts_query`].
    pub text: String,
    pub conversation: Option<String>,
    pub workspace: Option<String>,
    /// Best matches first instead of newest first.
    pub ranked: bool,
    pub limit: usize,
    pub before: Option<Cursor>,
}

/// One message that matched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageHit {
    pub conversation_id: String,
    pub conversation_title: String,
    /// The message's place in its conversation, from 0.
    pub position: u64,
    pub time_ms: i64,
    pub message: Message,
}

impl Store {
    /// One page of messages matching `search`, newest first (or best first when ranked).
    pub fn search_messages(&self, search: &MessageSearch) -> Result<Page<MessageHit>> {
        let query = fts_query(&search.text)?;
        let limit = cursor::clamp_limit(search.limit);
        let mut conditions = vec!["messages_fts MATCH ?".to_string()];
        let mut values = vec![SqlValue::Text(query)];
        if let Some(conversation) = &search.conversation {
            conditions.push(
                "m.conversation_id = (SELECT id FROM conversations WHERE public_id = ?)".into(),
            );
            values.push(SqlValue::Text(conversation.clone()));
        }
        if let Some(workspace) = &search.workspace {
            conditions
                .push("conv.workspace_id = (SELECT id FROM workspaces WHERE path = ?)".into());
            values.push(SqlValue::Text(workspace.clone()));
        }
        let mut offset = 0;
        match (search.ranked, search.before.map(|cursor| cursor.0)) {
            (_, None) => {}
            (false, Some(Key::Id(id))) => {
                conditions.push("messages_fts.rowid < ?".into());
                values.push(SqlValue::Integer(id));
            }
            (true, Some(Key::Offset(rows))) => offset = rows,
            (_, Some(_)) => {
                let text = search.before.map(|c| c.to_string()).unwrap_or_default();
                return Err(StoreError::BadCursor(text));
            }
        }
        let order = if search.ranked {
            "messages_fts.rank"
        } else {
            "messages_fts.rowid DESC"
        };
        let sql = format!(
            "SELECT m.id, conv.public_id, conv.title, m.position, m.time_ms, m.body
             FROM messages_fts
             CROSS JOIN messages m ON m.id = messages_fts.rowid
             CROSS JOIN conversations conv ON conv.id = m.conversation_id
             WHERE {} ORDER BY {order} LIMIT {} OFFSET {offset}",
            conditions.join(" AND "),
            limit + 1
        );
        self.with_conn(|conn| {
            let mut statement = conn.prepare_cached(&sql)?;
            let mut rows = statement.query(params_from_iter(values))?;
            let mut items = Vec::new();
            let mut last_id = None;
            let mut more = false;
            while let Some(row) = rows.next()? {
                if items.len() == limit {
                    more = true;
                    break;
                }
                let id: i64 = row.get(0)?;
                let body: String = row.get(5)?;
                let position: i64 = row.get(3)?;
                items.push(MessageHit {
                    conversation_id: row.get(1)?,
                    conversation_title: row.get(2)?,
                    position: u64::try_from(position).unwrap_or(0),
                    time_ms: row.get(4)?,
                    message: serde_json::from_str(&body)?,
                });
                last_id = Some(id);
            }
            let next = match (more, last_id) {
                (true, Some(id)) => Some(Cursor(if search.ranked {
                    Key::Offset(offset + items.len() as u64)
                } else {
                    Key::Id(id)
                })),
                _ => None,
            };
            Ok(Page { items, next })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn words_become_quoted_phrases() {
        assert_eq!(fts_query("main.rs").unwrap(), r#""main.rs""#);
        assert_eq!(
            fts_query(r#"  say "hi"  NEAR -x "#).unwrap(),
            r#""say" """hi""" "NEAR" "-x""#
        );
        assert_eq!(fts_query("pars*").unwrap(), r#""pars"*"#);
    }

    #[test]
    fn text_without_words_is_refused() {
        assert!(matches!(fts_query("  -- * "), Err(StoreError::EmptySearch)));
        assert!(matches!(fts_query(""), Err(StoreError::EmptySearch)));
    }
}
