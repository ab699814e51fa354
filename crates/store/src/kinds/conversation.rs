//! A conversation's row as events write it: created by the first event that names it (its
//! title from the first question), touched by every message and turn end. It is read back as a
//! summary by `conversations.rs`, which lists and creates conversations.

use rusqlite::{Connection, params};

use crate::error::Result;

/// Longest conversation title made from a first question, in characters.
const TITLE_CHARS: usize = 80;

/// Finds or creates the conversation, filling in what it lacks.
pub(crate) fn ensure_conversation(
    conn: &Connection,
    public_id: &str,
    workspace: Option<i64>,
    title: &str,
    model: Option<&str>,
    provider: Option<&str>,
    time_ms: i64,
) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            "INSERT INTO conversations(public_id, workspace_id, title, model, provider,
                created_ms, updated_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
             ON CONFLICT(public_id) DO UPDATE SET
                workspace_id = coalesce(conversations.workspace_id, excluded.workspace_id),
                title = CASE WHEN conversations.title = '' THEN excluded.title
                        ELSE conversations.title END,
                model = coalesce(excluded.model, conversations.model),
                provider = coalesce(excluded.provider, conversations.provider),
                updated_ms = max(conversations.updated_ms, excluded.updated_ms)
             RETURNING id",
        )?
        .query_row(
            params![public_id, workspace, title, model, provider, time_ms],
            |row| row.get(0),
        )?)
}

/// The conversation was active at `time_ms` (an earlier time changes nothing).
pub(crate) fn touch_conversation(conn: &Connection, conversation: i64, time_ms: i64) -> Result<()> {
    conn.prepare_cached("UPDATE conversations SET updated_ms = max(updated_ms, ?2) WHERE id = ?1")?
        .execute(params![conversation, time_ms])?;
    Ok(())
}

/// The first line of the first question, cut to a title's length. Attached files and resources
/// are not the question: the title is what the person typed, or the first attachment's name when
/// they typed nothing.
pub(crate) fn title_from(message: &str) -> String {
    let (attached, question) = tooltrail_protocol::attachment::split_question(message);
    let line = question
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .or(attached.first().map(String::as_str));
    let line = line.unwrap_or_default();
    let mut title: String = line.chars().take(TITLE_CHARS).collect();
    if line.chars().count() > TITLE_CHARS {
        title.push('…');
    }
    title
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn titles_are_the_first_line_cut_to_length() {
        assert_eq!(title_from("\n  Where is main?\nmore"), "Where is main?");
        let long = "x".repeat(100);
        assert_eq!(title_from(&long), format!("{}…", "x".repeat(80)));
        assert_eq!(title_from(""), "");
        let attached =
            "<attachment name=\"notes.md\" source=\"notes.md\">\n# Notes\n</attachment>\n\n";
        assert_eq!(
            title_from(&format!("{attached}Sum these up")),
            "Sum these up"
        );
        assert_eq!(title_from(attached), "notes.md");
        // Blocks tagged with their message's nonce, whose text may hold any other closing tag.
        let tagged = "<attachment-00000000000000ab name=\"notes.md\" source=\"notes.md\">\n\
                      </attachment>\n\nNot the title\n</attachment-00000000000000ab>\n\n";
        assert_eq!(title_from(&format!("{tagged}Sum these up")), "Sum these up");
        assert_eq!(title_from(tagged), "notes.md");
    }
}
