//! What a question carries besides its text, for every front end: attachments (a file of the
//! workspace, or a resource of one of its MCP servers) and an MCP server's prompt, and the
//! listings a front end offers them from.
//!
//! The servers are the ones the folder's questions use (see [`crate::toolbox`]), started when
//! the folder's tools are gathered. A question's messages are built by [`question_messages`]:
//! the prompt's messages first, the user's text after them (joined to the prompt's last user
//! message, since some chat templates refuse two user messages in a row), and the attachments
//! in `<attachment-NONCE>` blocks at the head of that last user message (a nonce per message,
//! drawn from the system's random source, that no content can close), cut to half the room the
//! model's window leaves once the answer, the tools and the conversation have theirs
//! ([`attachment_room`]), so the question and the turn's results still fit.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::broadcast;
use tooltrail_agent::Agent;
use tooltrail_llm::{estimate_message, estimate_tokens};
use tooltrail_mcp::{McpError, McpServer, PromptText, ResourceNotice};
use tooltrail_protocol::{
    AttachedContent, Attachment, AttachmentSource, Message, PromptItem, ResourceItem,
    fit_attachments, question_with,
};

use tooltrail_sandbox::{PathError, Workspace};
use ts_rs::TS;

use crate::error::HostError;
use crate::host::Host;

/// A file read for an attachment, at most; the rest is left out (and the model told so).
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// What the servers of a folder offer, and the servers that could not say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct Offered<T> {
    pub items: Vec<T>,
    /// One sentence per server that failed.
    pub problems: Vec<String>,
}

impl Host {
    /// The servers of `workspace`, started as a question would start them.
    async fn servers_of(&self, workspace: &Path) -> Vec<Arc<McpServer>> {
        self.warm_up(workspace).await;
        self.toolbox().mcp_servers(workspace).await
    }

    async fn server_of(&self, workspace: &Path, name: &str) -> Result<Arc<McpServer>, HostError> {
        self.servers_of(workspace)
            .await
            .into_iter()
            .find(|server| server.name() == name)
            .ok_or_else(|| {
                HostError::Content(format!("there is no MCP server named {name:?} in mcp.json"))
            })
    }

    /// Every resource and template of the folder's enabled servers.
    pub async fn mcp_resources(&self, workspace: &Path) -> Offered<ResourceItem> {
        self.offered(workspace, |server| async move { server.resources().await })
            .await
    }

    /// Every prompt of the folder's enabled servers.
    pub async fn mcp_prompts(&self, workspace: &Path) -> Offered<PromptItem> {
        self.offered(workspace, |server| async move { server.prompts().await })
            .await
    }

    /// What `list` gets of each of the folder's enabled servers, and a sentence for each that
    /// could not say.
    async fn offered<T, Listed>(
        &self,
        workspace: &Path,
        list: impl Fn(Arc<McpServer>) -> Listed,
    ) -> Offered<T>
    where
        Listed: Future<Output = Result<Vec<T>, McpError>>,
    {
        let mut offered = Offered {
            items: Vec::new(),
            problems: Vec::new(),
        };
        for server in self.servers_of(workspace).await {
            if server.config().disabled {
                continue;
            }
            match list(server).await {
                Ok(items) => offered.items.extend(items),
                Err(error) => offered
                    .problems
                    .push(tooltrail_protocol::sentence(&error.to_string())),
            }
        }
        offered
    }

    /// Reads one attachment: a file of `workspace`, or a resource of one of its servers (and
    /// subscribes to that resource's updates where the server offers them).
    ///
    /// No approval is asked here, whatever the server's `approval`: an attachment is the user's
    /// own pick (`@` in the composer, `--attach`), made before the model is asked anything, so
    /// choosing it is the consent. A read the model asks for goes through `read_resource`,
    /// which the server's `approval` gates like its tools.
    pub async fn attach(
        &self,
        workspace: &Path,
        source: &AttachmentSource,
    ) -> Result<Attachment, HostError> {
        match source {
            AttachmentSource::File { path } => read_file(workspace, path),
            AttachmentSource::Resource { server, uri } => {
                let server = self.server_of(workspace, server).await?;
                let attachment = server
                    .attachment(uri)
                    .await
                    .map_err(|error| HostError::Content(error.to_string()))?;
                // Updates are a convenience: a server that refuses still gave the resource.
                let _ = server.subscribe(uri).await;
                Ok(attachment)
            }
            AttachmentSource::View { tool, text, .. } => Ok(view_context(source, tool, text)),
        }
    }

    /// What the servers of `workspace` say about their resources from now on.
    pub async fn resource_notices(
        &self,
        workspace: &Path,
    ) -> Vec<broadcast::Receiver<ResourceNotice>> {
        self.servers_of(workspace)
            .await
            .iter()
            .map(|server| server.resource_notices())
            .collect()
    }

    /// The messages of prompt `prompt` of server `server` for `arguments`.
    pub async fn mcp_prompt(
        &self,
        workspace: &Path,
        server: &str,
        prompt: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<PromptText, HostError> {
        self.server_of(workspace, server)
            .await?
            .get_prompt(prompt, arguments)
            .await
            .map_err(|error| HostError::Content(error.to_string()))
    }

    /// The server's suggestions for an argument of a prompt, as typed so far.
    pub async fn complete_prompt_argument(
        &self,
        workspace: &Path,
        server: &str,
        prompt: &str,
        argument: &str,
        value: &str,
        chosen: &BTreeMap<String, String>,
    ) -> Result<Vec<String>, HostError> {
        self.server_of(workspace, server)
            .await?
            .complete_prompt_argument(prompt, argument, value, chosen)
            .await
            .map_err(|error| HostError::Content(error.to_string()))
    }
}

/// `SERVER:URI` names a resource when `SERVER` is one of `servers`; anything else is a file.
pub fn parse_attachment(spec: &str, servers: &[String]) -> AttachmentSource {
    if let Some((server, uri)) = spec.split_once(':')
        && servers.iter().any(|name| name == server)
        && !uri.is_empty()
    {
        return AttachmentSource::Resource {
            server: server.to_string(),
            uri: uri.to_string(),
        };
    }
    AttachmentSource::File {
        path: spec.to_string(),
    }
}

/// Reads `path` (relative to `workspace`, or absolute inside it) as an attachment: its text when
/// it is UTF-8, its size otherwise.
pub fn read_file(workspace: &Path, path: &str) -> Result<Attachment, HostError> {
    let unreadable =
        |error: PathError| HostError::Content(format!("could not read {path}: {error}"));
    let folder = Workspace::open(workspace)
        .map_err(|error| HostError::Content(format!("could not read {path}: {error}")))?;
    // Resolved for the message, then read through the folder's handle, which the system
    // confines beneath the folder whatever changes on the way.
    let outside = || {
        HostError::Content(format!(
            "{path} is outside the folder asked about ({}); attach files of that folder",
            folder.root().display()
        ))
    };
    let resolved = match folder.resolve(path) {
        Ok(resolved) => resolved,
        Err(PathError::Outside(_) | PathError::AbsoluteOutside) => return Err(outside()),
        Err(error) => return Err(unreadable(error)),
    };
    let (file, meta) = match folder.open_read(&resolved) {
        Ok(opened) => opened,
        Err(PathError::Outside(_)) => return Err(outside()),
        Err(error) => return Err(unreadable(error)),
    };
    if !meta.is_file() {
        return Err(HostError::Content(format!("{path} is not a file")));
    }
    let size = meta.len();
    let mut bytes = Vec::new();
    {
        use std::io::Read as _;
        file.take(MAX_FILE_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|error| HostError::Content(format!("could not read {path}: {error}")))?;
    }
    let relative = resolved.relative().to_string();
    let full = resolved.path();
    let name = full
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| relative.clone());
    let cut = size > MAX_FILE_BYTES;
    let content = match String::from_utf8(bytes) {
        Ok(text) => AttachedContent::Text {
            text,
            truncated: cut,
        },
        // A cut may split the last character: the text before it still reads.
        Err(error) if cut && error.utf8_error().error_len().is_none() => {
            let valid = error.utf8_error().valid_up_to();
            let mut bytes = error.into_bytes();
            bytes.truncate(valid);
            AttachedContent::Text {
                text: String::from_utf8_lossy(&bytes).into_owned(),
                truncated: true,
            }
        }
        Err(_) => AttachedContent::Binary { bytes: size },
    };
    Ok(Attachment {
        source: AttachmentSource::File { path: relative },
        name,
        mime_type: None,
        content,
    })
}

/// The most an MCP App view may ask the model to know with one question.
const VIEW_CONTEXT_BYTES: usize = 16 * 1024;

/// What a view asked the model to know (`ui/update-model-context`), as an attachment: the view
/// wrote it, the user sent it with the question (and could have removed it).
fn view_context(source: &AttachmentSource, tool: &str, text: &str) -> Attachment {
    let mut end = text.len().min(VIEW_CONTEXT_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let kept = &text[..end];
    Attachment {
        source: source.clone(),
        name: format!("view of {tool}"),
        mime_type: None,
        content: AttachedContent::Text {
            text: kept.to_string(),
            truncated: kept.len() < text.len(),
        },
    }
}

/// Tokens kept for the system prompt and the templates' markers around messages.
const SYSTEM_ALLOWANCE: u32 = 512;

/// What a request of `agent` takes before any attachment: the tools it offers, the
/// conversation so far, and the system prompt.
pub fn tokens_taken(agent: &Agent, history: &[Message]) -> u32 {
    let tools = serde_json::to_string(&agent.tools().offered_specs()).unwrap_or_default();
    history
        .iter()
        .map(estimate_message)
        .fold(estimate_tokens(&tools), u32::saturating_add)
        .saturating_add(SYSTEM_ALLOWANCE)
}

/// How many characters of attachments a question gets in a window of `window_tokens`, when
/// the answer may take `max_tokens` and the rest of the request takes `taken_tokens`: half of
/// what is left (the turn's tool results need the other half), at three characters a token,
/// the low guess the token estimate makes too.
pub fn attachment_room(window_tokens: u32, max_tokens: Option<u32>, taken_tokens: u32) -> usize {
    let answer = max_tokens
        .unwrap_or_else(|| (window_tokens / 4).clamp(512, 8192))
        .min(window_tokens / 2)
        .max(1);
    let free = window_tokens
        .saturating_sub(answer)
        .saturating_sub(taken_tokens);
    usize::try_from(free / 2).unwrap_or(usize::MAX) * 3
}

/// The messages a question adds to its conversation: `prompt`'s messages, then `text`, with the
/// attachments (cut to `room` characters) at the head of the last user message.
pub fn question_messages(
    prompt: Option<&PromptText>,
    text: &str,
    mut attachments: Vec<Attachment>,
    room: usize,
) -> Result<Vec<Message>, HostError> {
    let mut messages = prompt
        .map(PromptText::conversation_messages)
        .unwrap_or_default();
    let text = text.trim();
    match messages.last_mut() {
        Some(Message::User { content }) if !text.is_empty() => {
            content.push_str("\n\n");
            content.push_str(text);
        }
        Some(Message::User { .. }) => {}
        Some(Message::Assistant { .. } | Message::System { .. } | Message::Tool { .. }) | None => {
            if text.is_empty() {
                return Err(HostError::Content(if messages.is_empty() {
                    "the question is empty".to_string()
                } else {
                    "the prompt ends with an answer; add the question that follows it".to_string()
                }));
            }
            messages.push(Message::user(text));
        }
    }
    fit_attachments(&mut attachments, room);
    if let Some(Message::User { content }) = messages.last_mut()
        && !attachments.is_empty()
    {
        *content = question_with(content, &attachments, || {
            uuid::Uuid::new_v4().as_u64_pair().0
        });
    }
    Ok(messages)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use tooltrail_protocol::{PromptMessageItem, PromptRole};

    use super::*;

    #[test]
    fn server_names_make_resources_and_the_rest_files() {
        let servers = vec!["everything".to_string()];
        assert_eq!(
            parse_attachment("everything:demo://a/b", &servers),
            AttachmentSource::Resource {
                server: "everything".into(),
                uri: "demo://a/b".into()
            }
        );
        assert_eq!(
            parse_attachment("notes.txt", &servers),
            AttachmentSource::File {
                path: "notes.txt".into()
            }
        );
        assert_eq!(
            parse_attachment("other:thing", &servers),
            AttachmentSource::File {
                path: "other:thing".into()
            }
        );
    }

    #[test]
    fn files_are_read_inside_the_folder_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.txt"), "alpha\n").unwrap();
        std::fs::write(dir.path().join("b.bin"), [0xff, 0x00, 0xfe]).unwrap();
        let read = read_file(dir.path(), "src/a.txt").unwrap();
        assert_eq!(
            read,
            Attachment {
                source: AttachmentSource::File {
                    path: "src/a.txt".into()
                },
                name: "a.txt".into(),
                mime_type: None,
                content: AttachedContent::Text {
                    text: "alpha\n".into(),
                    truncated: false
                }
            }
        );
        assert_eq!(
            read_file(dir.path(), "b.bin").unwrap().content,
            AttachedContent::Binary { bytes: 3 }
        );
        let outside = read_file(&dir.path().join("src"), "../b.bin")
            .unwrap_err()
            .to_string();
        assert!(
            outside.starts_with("../b.bin is outside the folder"),
            "{outside}"
        );
    }

    #[test]
    fn prompt_text_and_attachments_make_one_last_user_message() {
        let prompt = PromptText {
            description: None,
            messages: vec![
                PromptMessageItem {
                    role: PromptRole::User,
                    text: "Review this.".into(),
                },
                PromptMessageItem {
                    role: PromptRole::Assistant,
                    text: "Send it.".into(),
                },
            ],
        };
        let attachment = Attachment {
            source: AttachmentSource::File {
                path: "a.txt".into(),
            },
            name: "a.txt".into(),
            mime_type: None,
            content: AttachedContent::Text {
                text: "alpha".into(),
                truncated: false,
            },
        };
        let messages =
            question_messages(Some(&prompt), " Here. ", vec![attachment.clone()], 100).unwrap();
        assert_eq!(
            messages[..2],
            [
                Message::user("Review this."),
                Message::assistant("Send it.", Vec::new()),
            ]
        );
        let Message::User { content } = &messages[2] else {
            panic!("the question is the user's: {messages:?}");
        };
        let (head, rest) = content.split_once(' ').unwrap();
        let nonce = head.strip_prefix("<attachment-").unwrap();
        assert_eq!(nonce.len(), 16, "{content}");
        assert_eq!(
            rest,
            format!("name=\"a.txt\" source=\"a.txt\">\nalpha\n</attachment-{nonce}>\n\nHere.")
        );
        // Each message draws its own.
        let again = question_messages(None, "Here.", vec![attachment], 100).unwrap();
        assert_ne!(again[0], messages[2]);
        assert_eq!(
            question_messages(Some(&prompt), "", Vec::new(), 100)
                .unwrap_err()
                .to_string(),
            "the prompt ends with an answer; add the question that follows it"
        );
    }
}
