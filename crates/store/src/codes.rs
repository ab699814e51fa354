//! How protocol values are written into columns and read back.
//!
//! Every match here is exhaustive, so a new protocol variant fails to compile until it has a
//! stored form.

use serde_json::Value;
use tooltrail_protocol::{
    ApprovalBy, ApprovalRecord, EventBody, ToolErrorCode, ToolSource, TurnEnd,
};

use crate::error::{Result, StoreError};

/// The `kind` column of `events`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    TurnStarted = 0,
    MessageAdded = 1,
    TextDelta = 2,
    ToolCallDelta = 3,
    ApprovalRequested = 4,
    ToolCallStarted = 5,
    ToolCallFinished = 6,
    RoundLimitReached = 7,
    Usage = 8,
    Error = 9,
    TurnFinished = 10,
    ToolCallProgress = 11,
    ToolModeUsed = 12,
    ContextUsage = 13,
    AnswerTruncated = 14,
    UserQuestion = 15,
    RepetitionStopped = 16,
    ElicitationRequested = 17,
    ElicitationAnswered = 18,
    SamplingRequested = 19,
    SamplingAnswered = 20,
    PromptProgress = 21,
    ViewOpened = 22,
    ViewClosed = 23,
}

impl EventKind {
    pub(crate) fn of(body: &EventBody) -> Self {
        match body {
            EventBody::TurnStarted { .. } => Self::TurnStarted,
            EventBody::MessageAdded { .. } => Self::MessageAdded,
            EventBody::TextDelta { .. } => Self::TextDelta,
            EventBody::ToolCallDelta { .. } => Self::ToolCallDelta,
            EventBody::ApprovalRequested { .. } => Self::ApprovalRequested,
            EventBody::ToolCallStarted { .. } => Self::ToolCallStarted,
            EventBody::ToolCallProgress { .. } => Self::ToolCallProgress,
            EventBody::PromptProgress { .. } => Self::PromptProgress,
            EventBody::ToolCallFinished { .. } => Self::ToolCallFinished,
            EventBody::ToolModeUsed { .. } => Self::ToolModeUsed,
            EventBody::RoundLimitReached { .. } => Self::RoundLimitReached,
            EventBody::Usage(_) => Self::Usage,
            EventBody::ContextUsage { .. } => Self::ContextUsage,
            EventBody::UserQuestion { .. } => Self::UserQuestion,
            EventBody::ElicitationRequested { .. } => Self::ElicitationRequested,
            EventBody::ElicitationAnswered { .. } => Self::ElicitationAnswered,
            EventBody::SamplingRequested { .. } => Self::SamplingRequested,
            EventBody::SamplingAnswered { .. } => Self::SamplingAnswered,
            EventBody::AnswerTruncated { .. } => Self::AnswerTruncated,
            EventBody::RepetitionStopped { .. } => Self::RepetitionStopped,
            EventBody::Error { .. } => Self::Error,
            EventBody::TurnFinished { .. } => Self::TurnFinished,
            EventBody::ViewOpened { .. } => Self::ViewOpened,
            EventBody::ViewClosed { .. } => Self::ViewClosed,
        }
    }

    pub(crate) fn code(self) -> i64 {
        self as i64
    }

    pub(crate) fn from_code(code: i64) -> Result<Self> {
        Ok(match code {
            0 => Self::TurnStarted,
            1 => Self::MessageAdded,
            2 => Self::TextDelta,
            3 => Self::ToolCallDelta,
            4 => Self::ApprovalRequested,
            5 => Self::ToolCallStarted,
            6 => Self::ToolCallFinished,
            7 => Self::RoundLimitReached,
            8 => Self::Usage,
            9 => Self::Error,
            10 => Self::TurnFinished,
            11 => Self::ToolCallProgress,
            21 => Self::PromptProgress,
            22 => Self::ViewOpened,
            23 => Self::ViewClosed,
            12 => Self::ToolModeUsed,
            13 => Self::ContextUsage,
            14 => Self::AnswerTruncated,
            15 => Self::UserQuestion,
            16 => Self::RepetitionStopped,
            17 => Self::ElicitationRequested,
            18 => Self::ElicitationAnswered,
            19 => Self::SamplingRequested,
            20 => Self::SamplingAnswered,
            other => {
                return Err(StoreError::Corrupt(format!("unknown event kind {other}")));
            }
        })
    }
}

/// `builtin`, or `mcp:` and the server's name.
pub(crate) fn source_to_text(source: &ToolSource) -> String {
    match source {
        ToolSource::Builtin => "builtin".to_string(),
        ToolSource::Mcp { server } => format!("mcp:{server}"),
    }
}

pub(crate) fn source_from_text(text: &str) -> ToolSource {
    match text.strip_prefix("mcp:") {
        Some(server) => ToolSource::Mcp {
            server: server.to_string(),
        },
        None => ToolSource::Builtin,
    }
}

/// The `approval_by` and `approval_rule` columns.
pub(crate) fn approval_by_to_columns(by: &ApprovalBy) -> (&'static str, Option<&str>) {
    match by {
        ApprovalBy::Policy => ("policy", None),
        ApprovalBy::User => ("user", None),
        ApprovalBy::Conversation => ("conversation", None),
        ApprovalBy::Rule { id } => ("rule", Some(id.as_str())),
        ApprovalBy::Setting => ("setting", None),
        ApprovalBy::Replay => ("replay", None),
    }
}

pub(crate) fn approval_from_columns(
    allowed: bool,
    by: &str,
    rule: Option<String>,
    reason: Option<String>,
) -> Result<ApprovalRecord> {
    let by = match by {
        "policy" => ApprovalBy::Policy,
        "user" => ApprovalBy::User,
        "conversation" => ApprovalBy::Conversation,
        "rule" => ApprovalBy::Rule {
            id: rule.unwrap_or_default(),
        },
        "setting" => ApprovalBy::Setting,
        "replay" => ApprovalBy::Replay,
        other => {
            return Err(StoreError::Corrupt(format!(
                "unknown approval decider {other:?}"
            )));
        }
    };
    Ok(ApprovalRecord {
        allowed,
        by,
        reason,
    })
}

pub(crate) fn turn_end_to_text(end: TurnEnd) -> &'static str {
    match end {
        TurnEnd::Completed => "completed",
        TurnEnd::RoundLimit => "round_limit",
        TurnEnd::Cancelled => "cancelled",
        TurnEnd::Error => "error",
    }
}

pub(crate) fn turn_end_from_text(text: &str) -> Result<TurnEnd> {
    Ok(match text {
        "completed" => TurnEnd::Completed,
        "round_limit" => TurnEnd::RoundLimit,
        "cancelled" => TurnEnd::Cancelled,
        "error" => TurnEnd::Error,
        other => {
            return Err(StoreError::Corrupt(format!("unknown turn end {other:?}")));
        }
    })
}

/// A stored error code. A code this build does not know (written by a newer one) reads as
/// `failed`, keeping its message.
pub(crate) fn error_code_from_text(text: &str) -> ToolErrorCode {
    serde_json::from_value(Value::String(text.to_string())).unwrap_or(ToolErrorCode::Failed)
}

/// The longest prefix of `text` that is at most `max` bytes and ends on a character boundary.
pub(crate) fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// SQLite integers are signed; counts and durations past `i64::MAX` do not occur.
pub(crate) fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn sources_round_trip() {
        for source in [
            ToolSource::Builtin,
            ToolSource::Mcp {
                server: "git:main".into(),
            },
        ] {
            assert_eq!(source_from_text(&source_to_text(&source)), source);
        }
    }

    #[test]
    fn approvals_round_trip() {
        for by in [
            ApprovalBy::Policy,
            ApprovalBy::User,
            ApprovalBy::Conversation,
            ApprovalBy::Rule { id: "r7".into() },
            ApprovalBy::Setting,
        ] {
            let (text, rule) = approval_by_to_columns(&by);
            let record =
                approval_from_columns(true, text, rule.map(str::to_string), Some("why".into()))
                    .unwrap();
            assert_eq!(record.by, by);
        }
    }

    #[test]
    fn error_codes_read_back_and_unknown_ones_become_failed() {
        assert_eq!(error_code_from_text("not_found"), ToolErrorCode::NotFound);
        assert_eq!(
            error_code_from_text("from_the_future"),
            ToolErrorCode::Failed
        );
    }

    #[test]
    fn prefixes_end_on_character_boundaries() {
        assert_eq!(prefix("héllo", 2), "h");
        assert_eq!(prefix("héllo", 3), "hé");
        assert_eq!(prefix("abc", 10), "abc");
    }

    #[test]
    fn event_kinds_round_trip() {
        for code in 0..=23 {
            assert_eq!(EventKind::from_code(code).unwrap().code(), code);
        }
        assert!(EventKind::from_code(24).is_err());
    }
}
