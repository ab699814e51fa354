//! The conversation as the model sees it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One message of a conversation, in the order the model saw it.
///
/// Assistant content is always a string (possibly empty), never `null`: some OpenAI-compatible
/// servers reject a history whose assistant message has `content: null`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        #[serde(default)]
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(optional, as = "Option<Vec<ToolCall>>")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        /// The tool's name, kept for readers of the history; not sent to the model.
        #[serde(default)]
        name: String,
        content: String,
        /// Images and sounds the tool returned: image parts for a model that sees them, a
        /// sentence saying what came back for one that does not.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(optional, as = "Option<Vec<crate::media::Media>>")]
        media: Vec<crate::media::Media>,
    },
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self::System {
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::User {
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self::Assistant {
            content: content.into(),
            tool_calls,
        }
    }

    pub fn tool(
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Self::Tool {
            tool_call_id: tool_call_id.into(),
            name: name.into(),
            content: content.into(),
            media: Vec::new(),
        }
    }

    /// A tool result with the images and sounds the tool returned.
    pub fn tool_with_media(
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
        media: Vec<crate::media::Media>,
    ) -> Self {
        Self::Tool {
            tool_call_id: tool_call_id.into(),
            name: name.into(),
            content: content.into(),
            media,
        }
    }

    /// The role as OpenAI names it.
    pub fn role(&self) -> &'static str {
        match self {
            Self::System { .. } => "system",
            Self::User { .. } => "user",
            Self::Assistant { .. } => "assistant",
            Self::Tool { .. } => "tool",
        }
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ToolCall {
    /// The id the model gave the call, or one Tooltrail generated when the server sent none.
    pub id: String,
    pub name: String,
    /// The arguments as JSON text, exactly as assembled from the stream. Servers that send an
    /// object instead of a string have it serialised here, so this is always text.
    pub arguments: String,
}
