//! A server's resources: listing them (and their URI templates), reading one, subscribing to
//! its updates, and the built-in `read_resource` tool that lets the model follow a
//! `resource_link` a tool returned.
//!
//! Updates and list changes arrive as notifications on the connection (see `handler.rs`), which
//! hands them to the server's `ResourceHub` (`resource_hub.rs`); anyone holding a receiver from
//! [`McpServer::resource_notices`] hears of them. Subscriptions are remembered here, so a
//! server that restarts is subscribed again on the next read.

use std::sync::{Arc, PoisonError};

use async_trait::async_trait;
use base64::Engine as _;
use rmcp::model::{ReadResourceRequestParams, ResourceContents, SubscribeRequestParams};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tooltrail_protocol::{
    AttachedContent, Attachment, AttachmentSource, ResourceItem, ToolError, ToolErrorCode,
    ToolOutput, ToolSource, ToolSpec,
};
use tooltrail_tools::{Gate, Tool, ToolContext};

use crate::error::McpError;
use crate::manager::{McpManager, ServerFailure};
use crate::resource_hub::ResourceNotice;
use crate::server::{McpServer, describe};
use crate::server_route::ServerRoute;

/// The built-in tool's name.
pub const READ_RESOURCE: &str = "read_resource";
/// Text of one resource given to the model by `read_resource`, at most (in bytes).
const MAX_TOOL_TEXT: usize = 32 * 1024;
/// One content of a read resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResourceContent {
    pub uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    pub content: AttachedContent,
}

impl McpServer {
    /// Whether the server said in its handshake that it has resources (starting it if needed).
    pub async fn has_resources(&self) -> Result<bool, McpError> {
        let peer = self.peer().await?;
        Ok(peer
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some()))
    }

    /// Every resource and resource template the server offers, templates last.
    pub async fn resources(&self) -> Result<Vec<ResourceItem>, McpError> {
        if !self.has_resources().await? {
            return Ok(Vec::new());
        }
        let peer = self.peer().await?;
        let timeout = self.config().timeout;
        let server = self.name().to_string();
        let listed = tokio::time::timeout(timeout, peer.list_all_resources()).await;
        let resources = self.answer(listed, "list its resources")?;
        let listed = tokio::time::timeout(timeout, peer.list_all_resource_templates()).await;
        // A server with resources but no templates may not know the method at all.
        let templates = self
            .answer(listed, "list its resource templates")
            .unwrap_or_default();
        let mut items: Vec<ResourceItem> = resources
            .into_iter()
            .map(|resource| ResourceItem {
                server: server.clone(),
                uri: resource.uri,
                name: resource.name,
                title: resource.title,
                description: resource.description,
                mime_type: resource.mime_type,
                template: false,
            })
            .collect();
        items.extend(templates.into_iter().map(|template| ResourceItem {
            server: server.clone(),
            uri: template.uri_template,
            name: template.name,
            title: template.title,
            description: template.description,
            mime_type: template.mime_type,
            template: true,
        }));
        Ok(items)
    }

    /// Reads one resource: each of its contents as text (text, or a blob of a text type that is
    /// UTF-8) or as a size.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContent>, McpError> {
        let peer = self.peer().await?;
        let read = tokio::time::timeout(
            self.config().timeout,
            peer.read_resource(ReadResourceRequestParams::new(uri)),
        )
        .await;
        let result = self.answer(read, "read the resource")?;
        Ok(result.contents.into_iter().map(content_of).collect())
    }

    /// Reads a resource as one attachment: its contents' text joined, or its size when none
    /// of them is text. The user picked it (`@` in the composer, `--attach`), so it is read
    /// without asking; the text goes to the model and the record without the server's own
    /// secrets.
    pub async fn attachment(&self, uri: &str) -> Result<Attachment, McpError> {
        let mut contents = self.read_resource(uri).await?;
        let redactor = self.redactor();
        for content in &mut contents {
            if let AttachedContent::Text { text, .. } = &mut content.content
                && let std::borrow::Cow::Owned(clean) = redactor.redact(text)
            {
                *text = clean;
            }
        }
        let name = uri
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .filter(|name| !name.is_empty())
            .unwrap_or(uri)
            .to_string();
        Ok(Attachment {
            source: AttachmentSource::Resource {
                server: self.name().to_string(),
                uri: uri.to_string(),
            },
            name,
            mime_type: contents
                .iter()
                .find_map(|content| content.mime_type.clone()),
            content: joined(&contents),
        })
    }

    /// Asks the server to tell us when `uri` changes (`resources/subscribe`), once per URI.
    /// Servers that do not offer subscriptions are not asked, and that is no error.
    pub async fn subscribe(&self, uri: &str) -> Result<bool, McpError> {
        let peer = self.peer().await?;
        let can = peer.peer_info().is_some_and(|info| {
            info.capabilities
                .resources
                .as_ref()
                .is_some_and(|resources| resources.subscribe == Some(true))
        });
        if !can {
            return Ok(false);
        }
        let hub = &self.shared().resources;
        let fresh = hub
            .subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(uri.to_string());
        if !fresh {
            return Ok(true);
        }
        // Deprecated only for a protocol version servers do not speak yet.
        #[allow(deprecated)]
        let sent = tokio::time::timeout(
            self.config().timeout,
            peer.subscribe(SubscribeRequestParams::new(uri)),
        )
        .await;
        if let Err(error) = self.answer(sent, "subscribe to the resource") {
            hub.subscribed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(uri);
            return Err(error);
        }
        Ok(true)
    }

    /// What the server says about its resources from now on.
    pub fn resource_notices(&self) -> broadcast::Receiver<ResourceNotice> {
        self.shared().resources.notices.subscribe()
    }

    pub(crate) fn answer<T>(
        &self,
        answered: Result<Result<T, rmcp::ServiceError>, tokio::time::error::Elapsed>,
        action: &'static str,
    ) -> Result<T, McpError> {
        let failure = match answered {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(error)) => crate::connection::failure(error),
            Err(_) => crate::connection::RequestFailure::Timeout(self.config().timeout),
        };
        Err(McpError::Request {
            server: self.name().to_string(),
            action,
            // The server's own words may quote what it was sent.
            message: self.redactor().redact(&describe(&failure)).into_owned(),
        })
    }
}

impl McpManager {
    /// `read_resource` for the enabled servers that have resources (started as needed);
    /// `None` when none has.
    pub async fn resource_tool(&self) -> Option<ReadResourceTool> {
        let servers = self
            .servers()
            .filter(|server| !server.config().disabled)
            .map(|server| async move { server.has_resources().await.ok()?.then_some(server) });
        let with_resources = futures::future::join_all(servers)
            .await
            .into_iter()
            .flatten()
            .map(Arc::clone)
            .collect();
        ReadResourceTool::new(with_resources)
    }

    /// Every resource of every enabled server; the servers that could not list theirs beside.
    pub async fn all_resources(&self) -> (Vec<ResourceItem>, Vec<ServerFailure>) {
        let (listings, failures) = self.list_on_enabled(|server| server.resources()).await;
        let items = listings.into_iter().flat_map(|(_, found)| found).collect();
        (items, failures)
    }
}

fn content_of(contents: ResourceContents) -> ResourceContent {
    match contents {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            ..
        } => ResourceContent {
            uri,
            mime_type,
            content: AttachedContent::Text {
                text,
                truncated: false,
            },
        },
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob.trim())
                .unwrap_or_default();
            let texty = mime_type.as_deref().is_some_and(is_text_type);
            let content = match String::from_utf8(bytes) {
                Ok(text) if texty => AttachedContent::Text {
                    text,
                    truncated: false,
                },
                Ok(text) => AttachedContent::Binary {
                    bytes: text.len() as u64,
                },
                Err(error) => AttachedContent::Binary {
                    bytes: error.as_bytes().len() as u64,
                },
            };
            ResourceContent {
                uri,
                mime_type,
                content,
            }
        }
        // A kind of content newer than this client: said to be there, not read.
        other => ResourceContent {
            uri: serde_json::to_value(&other)
                .ok()
                .and_then(|value| value.get("uri").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_default(),
            mime_type: None,
            content: AttachedContent::Binary { bytes: 0 },
        },
    }
}

fn is_text_type(mime: &str) -> bool {
    let mime = mime.split(';').next().unwrap_or(mime).trim();
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json" | "application/xml" | "application/yaml" | "application/toml"
        )
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
}

/// Several contents as one: the texts joined by blank lines, or the total size when there is no
/// text among them.
fn joined(contents: &[ResourceContent]) -> AttachedContent {
    let texts: Vec<&str> = contents
        .iter()
        .filter_map(|content| match &content.content {
            AttachedContent::Text { text, .. } => Some(text.as_str()),
            AttachedContent::Binary { .. } => None,
        })
        .collect();
    if texts.is_empty() {
        let bytes = contents
            .iter()
            .map(|content| match content.content {
                AttachedContent::Binary { bytes } => bytes,
                AttachedContent::Text { .. } => 0,
            })
            .sum();
        return AttachedContent::Binary { bytes };
    }
    AttachedContent::Text {
        text: texts.join("\n\n"),
        truncated: false,
    }
}

/// `read_resource(server, uri)`: reads a resource of a connected server, so the model can
/// follow a `resource_link` a tool gave it. Offered when some server has resources.
#[derive(Debug)]
pub struct ReadResourceTool {
    spec: ToolSpec,
    route: ServerRoute,
}

impl ReadResourceTool {
    /// The tool for `servers` (those that have resources); `None` when there are none.
    pub fn new(servers: Vec<Arc<McpServer>>) -> Option<Self> {
        if servers.is_empty() {
            return None;
        }
        let route = ServerRoute::new(servers);
        let names = route.names();
        let spec = ToolSpec {
            name: READ_RESOURCE.to_string(),
            description: "Reads a resource of an MCP server by its URI, for example one a tool \
                          returned as a resource link. Returns its text, or says what kind of \
                          data it is when it is not text."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "server": {
                        "type": "string",
                        "enum": names,
                        "description": "The MCP server that has the resource."
                    },
                    "uri": {"type": "string", "description": "The resource's URI."}
                },
                "required": ["server", "uri"],
                "additionalProperties": false
            }),
            read_only: route.all_allowed(),
        };
        Some(Self { spec, route })
    }
}

#[async_trait]
impl Tool for ReadResourceTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn source(&self) -> ToolSource {
        ToolSource::Builtin
    }

    fn source_of(&self, args: &Value) -> ToolSource {
        self.route.source_of(args)
    }

    /// A read is gated by the server's `approval`, like its tools. (A resource the user
    /// attaches, with `@` in the composer or `--attach`, is read without asking: the user chose
    /// it, and the model never asked.)
    fn gate(&self, args: &Value, _ctx: &ToolContext) -> Gate {
        let uri = args.get("uri").and_then(Value::as_str).unwrap_or("");
        self.route.gate(args, READ_RESOURCE, uri, "a resource")
    }

    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let result = self.read(&args).await;
        match self.route.named(&args) {
            // What the server gave goes to the model and the record, without its secrets.
            Some(server) => server.redactor().redact_result(result),
            None => result,
        }
    }
}

impl ReadResourceTool {
    async fn read(&self, args: &Value) -> Result<ToolOutput, ToolError> {
        let name = args.get("server").and_then(Value::as_str).unwrap_or("");
        let uri = args.get("uri").and_then(Value::as_str).unwrap_or("");
        let Some(server) = self.route.named(args) else {
            return Err(ToolError::new(
                ToolErrorCode::InvalidArguments,
                format!(
                    "there is no MCP server {name:?} with resources; the servers are: {}",
                    self.route.names().join(", ")
                ),
            ));
        };
        // A skill's files are read checked, by `load_skill`, or not at all.
        if crate::skills::is_skill_file(uri) {
            return Err(ToolError::new(
                ToolErrorCode::InvalidArguments,
                format!(
                    "{uri} is a file of a skill: load it with {}",
                    crate::skills::LOAD_SKILL
                ),
            ));
        }
        let contents = server
            .read_resource(uri)
            .await
            .map_err(|error| ToolError::new(ToolErrorCode::Failed, error.to_string()))?;
        let mut parts = Vec::new();
        for content in &contents {
            let mime = content
                .mime_type
                .as_deref()
                .map(|mime| format!(", {mime}"))
                .unwrap_or_default();
            match &content.content {
                AttachedContent::Text { text, .. } => {
                    let mut end = text.len().min(MAX_TOOL_TEXT);
                    while !text.is_char_boundary(end) {
                        end -= 1;
                    }
                    let cut = if end < text.len() {
                        " (cut: only the start is shown)"
                    } else {
                        ""
                    };
                    parts.push(format!(
                        "[resource {}{mime}{cut}]\n{}",
                        content.uri,
                        &text[..end]
                    ));
                }
                AttachedContent::Binary { bytes } => parts.push(format!(
                    "[resource {}{mime}: {bytes} bytes of binary data, which you cannot see]",
                    content.uri
                )),
            }
        }
        if parts.is_empty() {
            parts.push(format!("The resource {uri} has no contents."));
        }
        Ok(ToolOutput::new(
            parts.join("\n\n"),
            json!({"server": name, "uri": uri, "contents": contents}),
        ))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn attack_approvals_the_model_reads_a_resource_only_as_its_server_allows() {
        use crate::config::Approval;
        let server = |name: &str, approval: Approval| {
            let mut config = crate::config::ServerConfig::stdio(name, "unused", &[]);
            config.approval = approval;
            crate::server::McpServer::new(
                config,
                crate::connection::ConnectOptions::default(),
                broadcast::channel(1).0,
            )
        };
        let tool = ReadResourceTool::new(vec![
            server("asks", Approval::Ask),
            server("free", Approval::Allow),
            server("off", Approval::Never),
        ])
        .unwrap();
        // One server that asks makes the tool as a whole one that asks.
        assert!(!tool.spec().read_only);
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::open(dir.path()).unwrap();
        let args = |name: &str| json!({"server": name, "uri": "demo://x"});
        assert_eq!(
            tool.gate(&args("asks"), &ctx),
            Gate::Ask {
                summary: "read_resource asks demo://x".into(),
                cwd: None,
                reason: "it reads a resource of the external MCP server \"asks\"".into(),
            }
        );
        assert!(matches!(
            tool.gate(&args("free"), &ctx),
            Gate::Allowed { .. }
        ));
        assert!(matches!(
            tool.gate(&args("off"), &ctx),
            Gate::Refuse(ToolError {
                code: ToolErrorCode::Denied,
                ..
            })
        ));
        assert_eq!(
            tool.source_of(&args("asks")),
            ToolSource::Mcp {
                server: "asks".into()
            }
        );
        assert_eq!(tool.source_of(&args("nope")), ToolSource::Builtin);
    }

    #[test]
    fn blobs_of_a_text_type_are_text_and_others_a_size() {
        let blob = |mime: &str| ResourceContents::BlobResourceContents {
            uri: "demo://b".into(),
            mime_type: Some(mime.into()),
            blob: base64::engine::general_purpose::STANDARD.encode("héllo"),
            meta: None,
        };
        assert_eq!(
            content_of(blob("text/plain")).content,
            AttachedContent::Text {
                text: "héllo".into(),
                truncated: false
            }
        );
        assert_eq!(
            content_of(blob("application/octet-stream")).content,
            AttachedContent::Binary { bytes: 6 }
        );
        assert!(is_text_type("application/ld+json"));
        assert!(!is_text_type("image/png"));
    }
}
