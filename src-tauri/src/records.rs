//! Going back over the record: recorded tool calls with their filters, figures and exports,
//! message search, naming and deleting conversations, and the open folder's standing rules.
//! Everything reads the same database the `tooltrail` command line does.

use serde::{Deserialize, Serialize};
use tooltrail_host::rules::{self as command_rules, shell_words};
use tooltrail_protocol::{ApprovalBy, Message};
use tooltrail_store::{
    ApprovalRule, CallStatus, Cursor, Format, HistoryFilter, HistoryRow, MessageSearch, RuleKind,
    Stats, StatsFilter, Store, StoreError, ToolCallRecord,
};
use tooltrail_store::{DayTokens, TokenFilter};
use ts_rs::TS;

use crate::error::{CommandError, CommandResult, sentence};

/// Why an export stopped: the record could not be read, or the file could not be written.
enum Exported {
    Store(StoreError),
    Io(std::io::Error),
}

impl From<std::io::Error> for Exported {
    fn from(error: std::io::Error) -> Self {
        Self::Io(error)
    }
}

impl From<StoreError> for CommandError {
    fn from(error: StoreError) -> Self {
        let code = match &error {
            StoreError::ConversationNotFound(_)
            | StoreError::CallNotFound(_)
            | StoreError::RuleNotFound(_)
            | StoreError::SnippetNotFound(_) => "not_found",
            StoreError::EmptySearch | StoreError::BadCursor(_) | StoreError::BadStatus(_) => {
                "bad_input"
            }
            _ => "history",
        };
        CommandError::new(code, sentence(&error.to_string()))
    }
}

/// How many conversations the sidebar lists.
pub const CONVERSATIONS_LISTED: usize = 200;

/// A line in the conversations list.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, TS)]
pub struct ConversationSummary {
    pub id: String,
    /// The first question, shortened (or the name the user gave it).
    pub title: String,
    pub workspace: String,
    pub updated_ms: i64,
    pub turns: u64,
    pub running: bool,
}

impl ConversationSummary {
    /// `running`: whether this process runs a turn of it now (the store knows only that a turn
    /// is open).
    pub fn of(summary: tooltrail_store::ConversationSummary, running: bool) -> Self {
        Self {
            running: running || summary.running,
            id: summary.id,
            title: summary.title,
            workspace: summary.workspace.unwrap_or_default(),
            updated_ms: summary.updated_ms,
            turns: summary.turns,
        }
    }
}

/// A conversation as the window redraws it.
#[derive(Debug, Clone, Serialize, PartialEq, TS)]
pub struct LoadedConversation {
    pub events: Vec<tooltrail_protocol::Event>,
}

/// Which recorded calls to list, as the history screen asks. Every field may be left out.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[serde(default)]
#[ts(optional_fields = nullable)]
pub struct HistoryQuery {
    /// Every folder's calls instead of the open folder's.
    #[ts(optional, as = "Option<bool>")]
    pub all_workspaces: bool,
    pub tool: Option<String>,
    pub status: Option<CallStatus>,
    /// Calls started at or after this time (ms since the epoch).
    pub since: Option<i64>,
    /// Calls started before this time.
    pub until: Option<i64>,
    /// Words that must all occur in the tool, arguments, result or error; `word*` for a prefix.
    pub search: Option<String>,
    /// Rows per page (0 or absent: 50; at most 1000).
    #[ts(optional, as = "Option<usize>")]
    pub limit: usize,
    /// The `next` of the previous page.
    pub before: Option<Cursor>,
}

impl HistoryQuery {
    /// The store's filter, narrowed to `workspace` unless every folder is asked for.
    pub fn filter(&self, workspace: &str) -> HistoryFilter {
        HistoryFilter {
            workspace: (!self.all_workspaces).then(|| workspace.to_string()),
            conversation: None,
            tool: self.tool.clone().filter(|tool| !tool.is_empty()),
            status: self.status,
            since: self.since,
            until: self.until,
            search: self
                .search
                .as_deref()
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .map(str::to_string),
            ranked: false,
            limit: self.limit,
            before: self.before,
        }
    }
}

#[derive(Debug, Clone, Serialize, TS)]
pub struct HistoryPage {
    pub items: Vec<HistoryRow>,
    /// Pass as `before` for the next page; `None` on the last.
    pub next: Option<Cursor>,
}

pub fn calls(store: &Store, workspace: &str, query: &HistoryQuery) -> CommandResult<HistoryPage> {
    let page = store.history(&query.filter(workspace))?;
    Ok(HistoryPage {
        items: page.items,
        next: page.next,
    })
}

/// Which calls the figures count. Every field may be left out.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[serde(default)]
#[ts(optional_fields = nullable)]
pub struct StatsQuery {
    #[ts(optional, as = "Option<bool>")]
    pub all_workspaces: bool,
    pub since: Option<i64>,
    pub until: Option<i64>,
}

/// Which requests' tokens the stats screen adds up. Every field may be left out.
#[derive(Debug, Clone, Default, Deserialize, TS)]
#[serde(default)]
#[ts(optional_fields = nullable)]
pub struct TokensQuery {
    #[ts(optional, as = "Option<bool>")]
    pub all_workspaces: bool,
    pub since: Option<i64>,
    pub until: Option<i64>,
    /// Minutes to add to UTC for the user's local time, whose calendar days are counted.
    #[ts(optional, as = "Option<i32>")]
    pub utc_offset_minutes: i32,
}

pub fn tokens(
    store: &Store,
    workspace: &str,
    query: &TokensQuery,
) -> CommandResult<Vec<DayTokens>> {
    Ok(store.tokens_per_day(&TokenFilter {
        workspace: (!query.all_workspaces).then(|| workspace.to_string()),
        since: query.since,
        until: query.until,
        utc_offset_minutes: query.utc_offset_minutes,
    })?)
}

pub fn stats(store: &Store, workspace: &str, query: &StatsQuery) -> CommandResult<Stats> {
    Ok(store.stats(&StatsFilter {
        workspace: (!query.all_workspaces).then(|| workspace.to_string()),
        conversation: None,
        since: query.since,
        until: query.until,
    })?)
}

/// A standing rule as the window shows it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct RuleView {
    pub id: String,
    pub workspace: String,
    pub kind: RuleKind,
    pub tool: String,
    /// The command's first words.
    pub prefix: Vec<String>,
    /// The prefix as one would type it.
    pub command: String,
    pub created_ms: i64,
    pub revoked_ms: Option<i64>,
}

impl From<ApprovalRule> for RuleView {
    fn from(rule: ApprovalRule) -> Self {
        Self {
            command: shell_words(&rule.prefix),
            id: rule.id,
            workspace: rule.workspace,
            kind: rule.kind,
            tool: rule.tool,
            prefix: rule.prefix,
            created_ms: rule.created_ms,
            revoked_ms: rule.revoked_ms,
        }
    }
}

/// One call with its full result, and the stored rule that decided it, if one did.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ToolCallDetail {
    #[serde(flatten)]
    pub record: ToolCallRecord,
    pub rule: Option<RuleView>,
}

pub fn call(store: &Store, id: &str) -> CommandResult<ToolCallDetail> {
    let record = store.tool_call(id)?;
    let rule = match &record.row.approval.by {
        ApprovalBy::Rule { id } => store
            .rules(None, true)?
            .into_iter()
            .find(|rule| &rule.id == id)
            .map(RuleView::from),
        _ => None,
    };
    Ok(ToolCallDetail { record, rule })
}

/// How many calls an export wrote, and where.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ExportResult {
    pub path: String,
    pub count: u64,
}

pub fn export(
    store: &Store,
    workspace: &str,
    query: &HistoryQuery,
    format: Format,
    path: &std::path::Path,
) -> CommandResult<ExportResult> {
    let cannot = |error: std::io::Error| {
        CommandError::new(
            "export",
            format!(
                "The export could not be written to {}: {error}.",
                path.display()
            ),
        )
    };
    // A temporary file beside the target with a random name, made exclusively, renamed when
    // complete: a failed export leaves no half-written file under the chosen name, and a link
    // planted beside it cannot lead the export elsewhere.
    let count = tooltrail_atomic_write::replace_with(path, |file| {
        let mut out = std::io::BufWriter::new(file);
        let count = store
            .export_history(&query.filter(workspace), format, &mut out)
            .map_err(Exported::Store)?;
        std::io::Write::flush(&mut out)?;
        Ok::<_, Exported>(count)
    })
    .map_err(|error| match error {
        Exported::Store(error) => error.into(),
        Exported::Io(error) => cannot(error),
    })?;
    Ok(ExportResult {
        path: path.display().to_string(),
        count,
    })
}

/// A message that matched a search, cut down to the words around the match.
#[derive(Debug, Clone, Serialize, TS)]
pub struct MessageHitView {
    pub conversation_id: String,
    pub conversation_title: String,
    /// The message's place in its conversation, from 0.
    pub position: u64,
    pub time_ms: i64,
    pub role: MessageRole,
    /// A short piece of the message around the match.
    pub snippet: String,
}

/// Who wrote a message, as [`Message`]'s `role` tag names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum MessageRole {
    System,
    User,
    Assistant,
    Tool,
}

/// Messages found per search.
const SEARCH_LIMIT: usize = 30;
/// Characters of a snippet.
const SNIPPET_CHARS: usize = 160;

pub fn search_messages(
    store: &Store,
    workspace: &str,
    text: &str,
) -> CommandResult<Vec<MessageHitView>> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let page = store.search_messages(&MessageSearch {
        text: text.to_string(),
        workspace: Some(workspace.to_string()),
        limit: SEARCH_LIMIT,
        ..MessageSearch::default()
    })?;
    let words: Vec<String> = text
        .split_whitespace()
        .map(|word| word.trim_end_matches('*').to_lowercase())
        .filter(|word| !word.is_empty())
        .collect();
    Ok(page
        .items
        .into_iter()
        .map(|hit| {
            let (role, content) = match &hit.message {
                Message::System { content } => (MessageRole::System, content.as_str()),
                Message::User { content } => (MessageRole::User, content.as_str()),
                Message::Assistant { content, .. } => (MessageRole::Assistant, content.as_str()),
                Message::Tool { content, .. } => (MessageRole::Tool, content.as_str()),
            };
            MessageHitView {
                conversation_id: hit.conversation_id,
                conversation_title: hit.conversation_title,
                position: hit.position,
                time_ms: hit.time_ms,
                role,
                snippet: snippet(content, &words),
            }
        })
        .collect())
}

/// About [`SNIPPET_CHARS`] characters of `text` on one line, around the first of `words` found.
fn snippet(text: &str, words: &[String]) -> String {
    let flat: Vec<char> = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .collect();
    let lower: String = flat.iter().collect::<String>().to_lowercase();
    let at = words
        .iter()
        .filter_map(|word| lower.find(word.as_str()))
        .min()
        .map(|byte| lower[..byte].chars().count())
        .unwrap_or(0);
    let start = at.saturating_sub(SNIPPET_CHARS / 3);
    let end = (start + SNIPPET_CHARS).min(flat.len());
    let mut out: String = flat[start..end].iter().collect();
    if start > 0 {
        out.insert(0, '…');
    }
    if end < flat.len() {
        out.push('…');
    }
    out
}

pub fn rename(store: &Store, id: &str, title: &str) -> CommandResult<()> {
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    if title.is_empty() {
        return Err(CommandError::new(
            "bad_input",
            "A conversation needs a title.",
        ));
    }
    Ok(store.rename_conversation(id, &title)?)
}

/// The live rules of `workspace`, newest first.
pub fn rules(store: &Store, workspace: &str) -> CommandResult<Vec<RuleView>> {
    let mut rules: Vec<RuleView> = store
        .rules(Some(workspace), false)?
        .into_iter()
        .map(RuleView::from)
        .collect();
    rules.sort_by_key(|rule| std::cmp::Reverse(rule.created_ms));
    Ok(rules)
}

pub fn add_rule(
    store: &Store,
    workspace: &str,
    kind: RuleKind,
    command: &str,
) -> CommandResult<RuleView> {
    if command.trim().is_empty() {
        return Err(CommandError::new(
            "bad_input",
            "Give the command's first words, such as `cargo test`.",
        ));
    }
    command_rules::add(store, workspace, kind, command)
        .map(RuleView::from)
        .map_err(|message| CommandError::new("bad_rule", sentence(&message)))
}

pub fn revoke_rule(store: &Store, id: &str) -> CommandResult<RuleView> {
    Ok(store.revoke_rule(id)?.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn snippets_centre_on_the_match_on_one_line() {
        let text = format!(
            "{}\nthe needle is here\n{}",
            "a ".repeat(200),
            "b ".repeat(200)
        );
        let cut = snippet(&text, &["needle".to_string()]);
        assert!(cut.starts_with('…') && cut.ends_with('…'), "{cut}");
        assert!(cut.contains("the needle is here"), "{cut}");
        assert!(!cut.contains('\n'));
        assert_eq!(snippet("short one", &["zzz".to_string()]), "short one");
    }

    #[test]
    fn the_query_is_narrowed_to_the_open_folder_unless_all_are_asked_for() {
        let query = HistoryQuery {
            search: Some("  ".into()),
            tool: Some(String::new()),
            ..HistoryQuery::default()
        };
        let filter = query.filter("/w");
        assert_eq!(filter.workspace.as_deref(), Some("/w"));
        assert_eq!((filter.search, filter.tool), (None, None));
        let all = HistoryQuery {
            all_workspaces: true,
            ..HistoryQuery::default()
        };
        assert_eq!(all.filter("/w").workspace, None);
    }
}
