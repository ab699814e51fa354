//! What a user hands the model with a question besides its text: files of the workspace and
//! resources of MCP servers (attachments), and the messages of an MCP server's prompt; and how
//! a front end lists what can be attached or used.
//!
//! Attachments go to the model inside the user message, each in an `<attachment>` block before
//! the question ([`question_with`]), so every model sees them the same way and the request's
//! budget counts them like any other text. Their text is cut to the room a front end gives them
//! ([`fit_attachments`]), saying so, rather than letting one large file push the question out
//! of the model's window.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where an attachment comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AttachmentSource {
    /// A file of the workspace; the path is relative to the workspace folder.
    File { path: String },
    /// A resource of an MCP server.
    Resource { server: String, uri: String },
    /// What an MCP App view asked the model to know (`ui/update-model-context`): its latest
    /// words, carried into the next question the user sends, where the user can remove it.
    View {
        server: String,
        /// The tool whose view it is, as the record names it.
        tool: String,
        text: String,
    },
}

impl AttachmentSource {
    /// How the attachment is named to the model and on the command line: the file's path, or
    /// `server:uri`.
    pub fn label(&self) -> String {
        match self {
            Self::File { path } => path.clone(),
            Self::Resource { server, uri } => format!("{server}:{uri}"),
            Self::View { tool, .. } => format!("view of {tool}"),
        }
    }
}

/// What was read from an attachment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AttachedContent {
    /// Text, whole unless `truncated`.
    Text {
        text: String,
        #[serde(default)]
        truncated: bool,
    },
    /// Bytes that are not text: the model is told what they are, not given them.
    Binary { bytes: u64 },
}

/// One attachment of a question, read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Attachment {
    pub source: AttachmentSource,
    /// A short name to show (the file name, or the resource's name).
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mime_type: Option<String>,
    pub content: AttachedContent,
}

/// A resource, or a template of resources, that a server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ResourceItem {
    pub server: String,
    /// The resource's URI, or for a template its URI template (`demo://text/{id}`).
    pub uri: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mime_type: Option<String>,
    /// Set for a URI template, whose variables must be filled before it can be read.
    #[serde(default)]
    pub template: bool,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PromptArgumentItem {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    #[serde(default)]
    pub required: bool,
}

/// A prompt a server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PromptItem {
    pub server: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    pub arguments: Vec<PromptArgumentItem>,
}

/// Who says a prompt's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum PromptRole {
    User,
    Assistant,
}

/// One message of a prompt, as text (images and resources in it are described or inlined).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PromptMessageItem {
    pub role: PromptRole,
    pub text: String,
}

/// What the line that says an attachment was cut adds to its text.
const CUT_NOTE: &str = "\n[… the rest is left out: it would not fit in the model's window]";

/// Cuts the text of `attachments` so that together they hold at most `max_chars` characters
/// (counted in `char`s), the later ones first giving up what they must; each cut one is
/// marked `truncated` and ends with a line saying so.
pub fn fit_attachments(attachments: &mut [Attachment], max_chars: usize) {
    let mut left = max_chars;
    for attachment in attachments.iter_mut() {
        let AttachedContent::Text { text, truncated } = &mut attachment.content else {
            continue;
        };
        let count = text.chars().count();
        if count <= left {
            left -= count;
            continue;
        }
        let keep = left.saturating_sub(CUT_NOTE.chars().count());
        let end = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
        text.truncate(end);
        text.push_str(CUT_NOTE);
        *truncated = true;
        left = 0;
    }
}

/// The user message for `question` with `attachments` before it, one `<attachment>` block each.
pub fn question_with(question: &str, attachments: &[Attachment]) -> String {
    let mut out = String::new();
    for attachment in attachments {
        let mime = attachment
            .mime_type
            .as_deref()
            .map(|mime| format!(" type=\"{}\"", escape_attr(mime)))
            .unwrap_or_default();
        out.push_str(&format!(
            "<attachment name=\"{}\" source=\"{}\"{mime}>\n",
            escape_attr(&attachment.name),
            escape_attr(&attachment.source.label()),
        ));
        match &attachment.content {
            AttachedContent::Text { text, .. } => {
                out.push_str(text);
                if !text.ends_with('\n') {
                    out.push('\n');
                }
            }
            AttachedContent::Binary { bytes } => out.push_str(&format!(
                "[{bytes} bytes of binary data that you cannot see; the user attached them]\n"
            )),
        }
        out.push_str("</attachment>\n\n");
    }
    out.push_str(question);
    out
}

/// The attachments' names at the head of a user message that [`question_with`] made, and the
/// question after them: what a person typed, for a title or a list, without the attached text.
pub fn split_question(message: &str) -> (Vec<String>, &str) {
    let mut names = Vec::new();
    let mut rest = message;
    while let Some(block) = rest.strip_prefix("<attachment name=\"") {
        let Some((name, _)) = block.split_once('"') else {
            break;
        };
        let Some(end) = block.find("\n</attachment>\n\n") else {
            break;
        };
        names.push(unescape_attr(name));
        rest = &block[end + "\n</attachment>\n\n".len()..];
    }
    (names, rest)
}

fn unescape_attr(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&amp;", "&")
}

fn escape_attr(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn text(name: &str, body: &str) -> Attachment {
        Attachment {
            source: AttachmentSource::File { path: name.into() },
            name: name.into(),
            mime_type: Some("text/plain".into()),
            content: AttachedContent::Text {
                text: body.into(),
                truncated: false,
            },
        }
    }

    #[test]
    fn the_question_is_told_apart_from_its_attachments() {
        let message = question_with(
            "What do these say?",
            &[text("a \"b\".txt", "alpha"), text("c.txt", "gamma\n")],
        );
        let (names, question) = split_question(&message);
        assert_eq!(names, vec!["a \"b\".txt".to_owned(), "c.txt".to_owned()]);
        assert_eq!(question, "What do these say?");
        assert_eq!(
            split_question("Plain question"),
            (Vec::new(), "Plain question")
        );
    }

    #[test]
    fn attachments_come_before_the_question_in_blocks() {
        let resource = Attachment {
            source: AttachmentSource::Resource {
                server: "everything".into(),
                uri: "demo://blob/1".into(),
            },
            name: "Blob \"1\"".into(),
            mime_type: None,
            content: AttachedContent::Binary { bytes: 12 },
        };
        assert_eq!(
            question_with("What is in it?", &[text("src/a.txt", "alpha"), resource]),
            "<attachment name=\"src/a.txt\" source=\"src/a.txt\" type=\"text/plain\">\nalpha\n\
             </attachment>\n\n<attachment name=\"Blob &quot;1&quot;\" \
             source=\"everything:demo://blob/1\">\n[12 bytes of binary data that you cannot see; \
             the user attached them]\n</attachment>\n\nWhat is in it?"
        );
    }

    #[test]
    fn text_beyond_the_room_is_cut_and_marked() {
        let mut attachments = vec![text("a", "αβγδ"), text("b", &"x".repeat(200))];
        fit_attachments(&mut attachments, 120);
        assert_eq!(
            attachments[0].content,
            AttachedContent::Text {
                text: "αβγδ".into(),
                truncated: false
            }
        );
        let AttachedContent::Text { text, truncated } = &attachments[1].content else {
            panic!("text stays text");
        };
        assert!(truncated);
        assert_eq!(text.chars().count(), 116);
        assert!(text.ends_with(CUT_NOTE));
        assert!(text.starts_with("xxxx"));
    }
}
