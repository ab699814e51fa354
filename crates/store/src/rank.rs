//! Best-first search: BM25 over the matching calls, scored here rather than by FTS5's `bm25()`.
//!
//! FTS5's `bm25()` first counts every document that holds each query word, so one common word
//! ("fn", "src") makes a ranked search read that word's entire posting list, hundreds of
//! milliseconds in a large log. Here the candidates are the newest [`RANK_WINDOW`] matches (or
//! every match inside one conversation), their indexed text is tokenized the way FTS5's
//! `unicode61` tokenizer does it (letters and digits, case-folded), and only a query of several
//! words counts each word's documents, up to [`DF_CAP`]: a word in more documents than that
//! weighs next to nothing either way. A single-word query needs no counts at all, since its
//! weight is the same for every match.

use rusqlite::Connection;
use rusqlite::params_from_iter;
use rusqlite::types::Value as SqlValue;

use crate::cursor::{self, Cursor, Key, Page};
use crate::error::{Result, StoreError};
use crate::history::{self, HistoryFilter};
use crate::kinds::call::{HistoryRow, call_row};
use crate::search;

/// A ranked search outside one conversation ranks the newest this many matches.
pub const RANK_WINDOW: usize = 5_000;

/// Document counts stop here.
pub const DF_CAP: u64 = 50_000;

/// BM25's usual constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// One word of the query as the index sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Term {
    token: String,
    prefix: bool,
}

/// Calls `each` with every token of `text` as it stands (not yet case-folded): the runs of
/// letters and digits.
fn tokens(text: &str, mut each: impl FnMut(&str)) {
    let mut start = None;
    for (index, ch) in text.char_indices() {
        let inside = if ch.is_ascii() {
            ch.is_ascii_alphanumeric()
        } else {
            ch.is_alphanumeric()
        };
        match (inside, start) {
            (true, None) => start = Some(index),
            (false, Some(from)) => {
                each(&text[from..index]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        each(&text[from..]);
    }
}

impl Term {
    /// Whether `token` (as it stands in the text) is this term, ignoring case.
    fn matches(&self, token: &str) -> bool {
        let wanted = self.token.as_str();
        if token.is_ascii() {
            return if self.prefix {
                token.len() >= wanted.len()
                    && token.as_bytes()[..wanted.len()].eq_ignore_ascii_case(wanted.as_bytes())
            } else {
                token.eq_ignore_ascii_case(wanted)
            };
        }
        let folded = token.to_lowercase();
        if self.prefix {
            folded.starts_with(wanted)
        } else {
            folded == wanted
        }
    }
}

/// The terms of what a user typed; a trailing `*` makes the word's last token a prefix.
fn terms(text: &str) -> Vec<Term> {
    let mut terms: Vec<Term> = Vec::new();
    for word in text.split_whitespace() {
        let (word, prefix) = match word.strip_suffix('*') {
            Some(stem) => (stem, true),
            None => (word, false),
        };
        let mut found = Vec::new();
        tokens(word, |token| found.push(token.to_lowercase()));
        let last = found.len().saturating_sub(1);
        for (index, token) in found.into_iter().enumerate() {
            let term = Term {
                token,
                prefix: prefix && index == last,
            };
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
    }
    terms
}

/// The SQL of the candidates of `filter`: row id and indexed text, newest first.
pub(crate) fn candidates_query(filter: &HistoryFilter, fts: &str) -> (String, Vec<SqlValue>) {
    let (mut conditions, mut values) = history::call_filters(filter);
    let text = "c.id, c.tool || ' ' || c.arguments || ' ' || c.preview || ' ' \
                || coalesce(c.error_message, '')";
    if filter.conversation.is_some() {
        conditions.push(
            "EXISTS (SELECT 1 FROM tool_calls_fts WHERE tool_calls_fts MATCH ? AND rowid = c.id)"
                .into(),
        );
        values.push(SqlValue::Text(fts.to_string()));
        let sql = format!(
            "SELECT {text} FROM tool_calls c WHERE {}",
            conditions.join(" AND ")
        );
        return (sql, values);
    }
    conditions.insert(0, "tool_calls_fts MATCH ?".into());
    values.insert(0, SqlValue::Text(fts.to_string()));
    let sql = format!(
        "SELECT {text} FROM tool_calls_fts CROSS JOIN tool_calls c ON c.id = tool_calls_fts.rowid
         WHERE {} ORDER BY tool_calls_fts.rowid DESC LIMIT {RANK_WINDOW}",
        conditions.join(" AND ")
    );
    (sql, values)
}

/// How many finished calls hold `term`, up to [`DF_CAP`].
fn document_count(conn: &Connection, term: &Term) -> Result<u64> {
    let quoted = format!("\"{}\"{}", term.token, if term.prefix { "*" } else { "" });
    let count: i64 = conn
        .prepare_cached(&format!(
            "SELECT count(*) FROM (SELECT 1 FROM tool_calls_fts WHERE tool_calls_fts MATCH ?1
             LIMIT {DF_CAP})"
        ))?
        .query_row([quoted], |row| row.get(0))?;
    Ok(u64::try_from(count).unwrap_or(0))
}

/// Every finished call in the index.
fn indexed_calls(conn: &Connection) -> Result<u64> {
    let count: i64 = conn
        .prepare_cached(
            "SELECT coalesce(sum(calls), 0) FROM tool_stats
             WHERE workspace_id = -1 AND status <> 'running'",
        )?
        .query_row([], |row| row.get(0))?;
    Ok(u64::try_from(count).unwrap_or(0))
}

/// One page of `filter`'s matches, best first.
pub(crate) fn ranked_page(conn: &Connection, filter: &HistoryFilter) -> Result<Page<HistoryRow>> {
    let text = filter.search.as_deref().unwrap_or_default();
    let fts = search::fts_query(text)?;
    let terms = terms(text);
    let limit = cursor::clamp_limit(filter.limit);
    let offset = match filter.before.map(|cursor| cursor.0) {
        None => 0,
        Some(Key::Offset(rows)) => usize::try_from(rows).unwrap_or(usize::MAX),
        Some(_) => {
            let text = filter.before.map(|c| c.to_string()).unwrap_or_default();
            return Err(StoreError::BadCursor(text));
        }
    };

    // (row id, term frequencies, length in tokens)
    let mut documents: Vec<(i64, Vec<u32>, u32)> = Vec::new();
    let (sql, values) = candidates_query(filter, &fts);
    let mut statement = conn.prepare_cached(&sql)?;
    let mut rows = statement.query(params_from_iter(values))?;
    while let Some(row) = rows.next()? {
        let id: i64 = row.get(0)?;
        let text: String = row.get(1)?;
        let mut frequencies = vec![0u32; terms.len()];
        let mut length = 0u32;
        tokens(&text, |token| {
            length += 1;
            for (index, term) in terms.iter().enumerate() {
                if term.matches(token) {
                    frequencies[index] += 1;
                }
            }
        });
        documents.push((id, frequencies, length));
    }

    let weights: Vec<f64> = if terms.len() > 1 {
        let total = indexed_calls(conn)? as f64;
        terms
            .iter()
            .map(|term| {
                let df = document_count(conn, term)? as f64;
                Ok((1.0 + (total - df + 0.5) / (df + 0.5)).ln())
            })
            .collect::<Result<_>>()?
    } else {
        vec![1.0; terms.len()]
    };
    let average = documents
        .iter()
        .map(|(_, _, length)| f64::from(*length))
        .sum::<f64>()
        / documents.len().max(1) as f64;
    let mut scored: Vec<(f64, i64)> = documents
        .iter()
        .map(|(id, frequencies, length)| {
            let norm = K1 * (1.0 - B + B * f64::from(*length) / average.max(1.0));
            let score = frequencies
                .iter()
                .zip(&weights)
                .map(|(tf, weight)| {
                    let tf = f64::from(*tf);
                    weight * tf * (K1 + 1.0) / (tf + norm)
                })
                .sum::<f64>();
            (score, *id)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));

    let page: Vec<i64> = scored
        .iter()
        .skip(offset)
        .take(limit + 1)
        .map(|(_, id)| *id)
        .collect();
    let more = page.len() > limit;
    let mut items = Vec::with_capacity(limit.min(page.len()));
    for id in page.into_iter().take(limit) {
        if let Some(row) = call_row(conn, id)? {
            items.push(row);
        }
    }
    let next = more.then(|| Cursor(Key::Offset((offset + limit) as u64)));
    Ok(Page { items, next })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn all(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        tokens(text, |token| out.push(token.to_lowercase()));
        out
    }

    #[test]
    fn terms_match_tokens_in_any_case() {
        let exact = Term {
            token: "parser".into(),
            prefix: false,
        };
        let prefix = Term {
            token: "éc".into(),
            prefix: true,
        };
        assert!(exact.matches("Parser"));
        assert!(!exact.matches("parsers"));
        assert!(prefix.matches("École"));
        assert!(!prefix.matches("ecole"));
    }

    #[test]
    fn text_splits_like_the_index() {
        assert_eq!(
            all(r#"{"path":"src/Parser.rs"} fn parse_header_2(É)"#),
            [
                "path", "src", "parser", "rs", "fn", "parse", "header", "2", "é"
            ]
        );
    }

    #[test]
    fn query_words_become_terms() {
        let parsed = terms("main.rs pars* main");
        assert_eq!(
            parsed,
            [
                Term {
                    token: "main".into(),
                    prefix: false
                },
                Term {
                    token: "rs".into(),
                    prefix: false
                },
                Term {
                    token: "pars".into(),
                    prefix: true
                },
            ]
        );
    }
}
