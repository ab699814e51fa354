//! A server's prompts: listing them with their arguments, getting one's messages for the
//! arguments the user gave, and asking the server to complete an argument as it is typed
//! (`completion/complete`).
//!
//! A prompt's messages become messages of the conversation. Their content is made text the
//! way any model reads it: text as is, an embedded text resource inlined under its URI, and an
//! image, audio or binary resource described in one line (see [`message_text`]).

use std::collections::{BTreeMap, HashMap};

use base64::Engine as _;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompletionContext, GetPromptRequestParams, Reference, Role,
};
use serde::Serialize;
use serde_json::{Map, Value};
use tooltrail_protocol::{Message, PromptArgumentItem, PromptItem, PromptMessageItem, PromptRole};

use crate::error::McpError;
use crate::manager::{McpManager, ServerFailure};
use crate::server::McpServer;

/// A prompt's messages for the arguments given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptText {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub messages: Vec<PromptMessageItem>,
}

impl PromptText {
    /// The messages as the conversation holds them.
    pub fn conversation_messages(&self) -> Vec<Message> {
        self.messages
            .iter()
            .map(|message| match message.role {
                PromptRole::User => Message::user(message.text.clone()),
                PromptRole::Assistant => Message::assistant(message.text.clone(), Vec::new()),
            })
            .collect()
    }
}

impl McpServer {
    /// Every prompt the server offers (none when it said it has no prompts).
    pub async fn prompts(&self) -> Result<Vec<PromptItem>, McpError> {
        let peer = self.peer().await?;
        if peer
            .peer_info()
            .is_none_or(|info| info.capabilities.prompts.is_none())
        {
            return Ok(Vec::new());
        }
        let listed = tokio::time::timeout(self.config().timeout, peer.list_all_prompts()).await;
        let prompts = self.answer(listed, "list its prompts")?;
        let server = self.name().to_string();
        Ok(prompts
            .into_iter()
            .map(|prompt| PromptItem {
                server: server.clone(),
                name: prompt.name,
                title: prompt.title,
                description: prompt.description,
                arguments: prompt
                    .arguments
                    .unwrap_or_default()
                    .into_iter()
                    .map(|argument| PromptArgumentItem {
                        name: argument.name,
                        title: argument.title,
                        description: argument.description,
                        required: argument.required == Some(true),
                    })
                    .collect(),
            })
            .collect())
    }

    /// The messages of prompt `name` for `arguments`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<PromptText, McpError> {
        let peer = self.peer().await?;
        let arguments: Map<String, Value> = arguments
            .iter()
            .map(|(key, value)| (key.clone(), Value::String(value.clone())))
            .collect();
        let got = tokio::time::timeout(
            self.config().timeout,
            peer.get_prompt(GetPromptRequestParams::new(name).with_arguments(arguments)),
        )
        .await;
        let result = self.answer(got, "give the prompt")?;
        Ok(PromptText {
            description: result.description,
            messages: result
                .messages
                .into_iter()
                .map(|message| PromptMessageItem {
                    role: match message.role {
                        Role::User => PromptRole::User,
                        Role::Assistant => PromptRole::Assistant,
                    },
                    text: message_text(&serde_json::to_value(&message.content).unwrap_or_default()),
                })
                .collect(),
        })
    }

    /// Values the server suggests for `argument` of prompt `prompt` starting from `value`,
    /// knowing the arguments already chosen. None when the server does not complete.
    pub async fn complete_prompt_argument(
        &self,
        prompt: &str,
        argument: &str,
        value: &str,
        chosen: &BTreeMap<String, String>,
    ) -> Result<Vec<String>, McpError> {
        let peer = self.peer().await?;
        if peer
            .peer_info()
            .is_none_or(|info| info.capabilities.completions.is_none())
        {
            return Ok(Vec::new());
        }
        let context = (!chosen.is_empty()).then(|| {
            CompletionContext::with_arguments(
                chosen
                    .iter()
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect::<HashMap<_, _>>(),
            )
        });
        let mut request = CompleteRequestParams::new(
            Reference::for_prompt(prompt),
            ArgumentInfo::new(argument, value),
        );
        if let Some(context) = context {
            request = request.with_context(context);
        }
        let completed = tokio::time::timeout(self.config().timeout, peer.complete(request)).await;
        Ok(self
            .answer(completed, "complete the argument")?
            .completion
            .values)
    }
}

impl McpManager {
    /// Every prompt of every enabled server; the servers that could not list theirs beside.
    pub async fn all_prompts(&self) -> (Vec<PromptItem>, Vec<ServerFailure>) {
        let (listings, failures) = self.list_on_enabled(|server| server.prompts()).await;
        let items = listings.into_iter().flat_map(|(_, found)| found).collect();
        (items, failures)
    }
}

/// A content block of a prompt message as text.
fn message_text(block: &Value) -> String {
    let field = |value: &Value, name: &str| {
        value
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match block.get("type").and_then(Value::as_str).unwrap_or("") {
        "text" => field(block, "text"),
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = field(resource, "uri");
            let mime = resource.get("mimeType").and_then(Value::as_str);
            if let Some(text) = resource.get("text").and_then(Value::as_str) {
                return format!("<resource uri=\"{uri}\">\n{text}\n</resource>");
            }
            let blob = field(resource, "blob");
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(blob.trim())
                .unwrap_or_default();
            match String::from_utf8(decoded) {
                Ok(text) if mime.is_some_and(|mime| mime.starts_with("text/")) => {
                    format!("<resource uri=\"{uri}\">\n{text}\n</resource>")
                }
                Ok(text) => binary_note(&uri, mime, text.len()),
                Err(error) => binary_note(&uri, mime, error.as_bytes().len()),
            }
        }
        "resource_link" => format!("[resource link {}]", field(block, "uri")),
        kind @ ("image" | "audio") => {
            let data = field(block, "data");
            let bytes = data.trim_end_matches('=').len() * 3 / 4;
            format!(
                "[{kind}: {}, {bytes} bytes, which you cannot see]",
                block
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown type")
            )
        }
        other => format!("[{other} content]"),
    }
}

fn binary_note(uri: &str, mime: Option<&str>, bytes: usize) -> String {
    let mime = mime.map(|mime| format!(", {mime}")).unwrap_or_default();
    format!("[resource {uri}{mime}: {bytes} bytes of binary data, which you cannot see]")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn content_blocks_become_text() {
        assert_eq!(message_text(&json!({"type": "text", "text": "hi"})), "hi");
        assert_eq!(
            message_text(&json!({"type": "resource", "resource": {
                "uri": "demo://t/1", "mimeType": "text/plain", "blob": "aGk="}})),
            "<resource uri=\"demo://t/1\">\nhi\n</resource>"
        );
        assert_eq!(
            message_text(&json!({"type": "image", "mimeType": "image/png", "data": "AAAA"})),
            "[image: image/png, 3 bytes, which you cannot see]"
        );
    }

    #[test]
    fn prompt_messages_keep_their_roles() {
        let text = PromptText {
            description: None,
            messages: vec![
                PromptMessageItem {
                    role: PromptRole::User,
                    text: "q".into(),
                },
                PromptMessageItem {
                    role: PromptRole::Assistant,
                    text: "a".into(),
                },
            ],
        };
        assert_eq!(
            text.conversation_messages(),
            vec![Message::user("q"), Message::assistant("a", Vec::new())]
        );
    }
}
