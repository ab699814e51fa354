//! An MCP server's tool as a Tooltrail [`Tool`]: same registry, validation, approval gate and
//! audit log as the built-in ones.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSource, ToolSpec};
use tooltrail_tools::{Gate, Tool, ToolContext};

use crate::config::Approval;
use crate::connection::{RequestFailure, call_request};
use crate::result::{convert, output_validator};
use crate::server::{McpServer, describe};

/// Stderr lines quoted to the model when a server dies mid-call.
const CRASH_STDERR_LINES: usize = 3;

/// One tool of one server, under the name the model sees (`server__tool`).
pub struct McpTool {
    spec: ToolSpec,
    server: Arc<McpServer>,
    /// The server's own name for the tool.
    remote_name: String,
    approval: Approval,
    /// What the server's annotations claim, shown when asking; never trusted.
    hint: Option<&'static str>,
    /// The tool's `outputSchema`, compiled: its structured content is checked against it.
    output_schema: Option<jsonschema::Validator>,
    /// What MCP Apps' `_meta.ui` says: its view, and who may call it.
    ui: crate::apps::ToolUi,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.spec.name)
            .field("server", &self.server.name())
            .field("remote_name", &self.remote_name)
            .field("approval", &self.approval)
            .finish()
    }
}

impl McpTool {
    pub(crate) fn new(server: Arc<McpServer>, name: String, tool: &rmcp::model::Tool) -> Self {
        let remote_name = tool.name.to_string();
        let approval = server.config().approval_for(&remote_name);
        let annotations = tool.annotations.as_ref();
        let read_only_hint = annotations.and_then(|a| a.read_only_hint);
        let destructive_hint = annotations.and_then(|a| a.destructive_hint);
        let hint = match (read_only_hint, destructive_hint) {
            (Some(true), _) => Some("the server says it only reads (a hint, not verified)"),
            (_, Some(true)) => Some("the server says it may delete or overwrite data"),
            (_, Some(false)) => {
                Some("the server says it adds but does not destroy (a hint, not verified)")
            }
            _ => None,
        };
        let description = match tool.description.as_deref().map(str::trim) {
            Some(text) if !text.is_empty() => {
                format!(
                    "{text}\n(Tool {remote_name:?} of the MCP server {:?}.)",
                    server.name()
                )
            }
            _ => format!(
                "Tool {remote_name:?} of the MCP server {:?}.",
                server.name()
            ),
        };
        let spec = ToolSpec {
            name,
            description,
            parameters: openai_parameters(&Value::Object((*tool.input_schema).clone())),
            // Only the user's own rule makes a tool run freely.
            read_only: approval == Approval::Allow,
        };
        let output_schema = tool
            .output_schema
            .as_ref()
            .and_then(|schema| output_validator(&Value::Object((**schema).clone())));
        Self {
            spec,
            server,
            remote_name,
            approval,
            hint,
            output_schema,
            ui: crate::apps::ui_of(tool),
        }
    }

    /// The server's own name for this tool.
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }

    pub fn server(&self) -> &Arc<McpServer> {
        &self.server
    }

    pub fn approval(&self) -> Approval {
        self.approval
    }

    /// What MCP Apps' `_meta.ui` says of the tool.
    pub fn ui(&self) -> &crate::apps::ToolUi {
        &self.ui
    }

    /// Whether the server was found to run this tool only as a task.
    pub fn is_task_only(&self) -> bool {
        self.server.runs_as_task(&self.remote_name)
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn source(&self) -> ToolSource {
        ToolSource::Mcp {
            server: self.server.name().to_string(),
        }
    }

    fn view(&self) -> Option<tooltrail_protocol::ViewLink> {
        self.ui
            .resource_uri
            .clone()
            .map(|resource_uri| tooltrail_protocol::ViewLink { resource_uri })
    }

    /// A tool set to `never` is not offered: every call to it would be refused.
    fn offered(&self) -> bool {
        self.approval != Approval::Never
    }

    fn gate(&self, args: &Value, _ctx: &ToolContext) -> Gate {
        match self.approval {
            Approval::Allow => Gate::Allowed {
                reason: format!(
                    "{} is set to \"allow\" for the MCP server {:?} in mcp.json",
                    self.remote_name,
                    self.server.name()
                ),
            },
            Approval::Never => Gate::Refuse(ToolError::new(
                ToolErrorCode::Denied,
                format!(
                    "the MCP tool {} is set to \"never\" in mcp.json",
                    self.spec.name
                ),
            )),
            Approval::Ask => {
                let mut reason = format!(
                    "{} is a tool of the external MCP server {:?}",
                    self.remote_name,
                    self.server.name()
                );
                if let Some(hint) = self.hint {
                    reason.push_str("; ");
                    reason.push_str(hint);
                }
                Gate::Ask {
                    summary: format!("{} {args}", self.spec.name),
                    cwd: None,
                    reason,
                }
            }
        }
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let result = self.call_server(args, ctx).await;
        // The answer goes to the model and the record: a server that quotes its own token
        // (its environment, the header it got) does not pass it on.
        self.server.redactor().redact_result(result)
    }
}

impl McpTool {
    async fn call_server(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::new(
                    ToolErrorCode::InvalidArguments,
                    format!("arguments must be a JSON object, got {other}"),
                ));
            }
        };
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new(
                ToolErrorCode::Cancelled,
                "the call was stopped",
            ));
        }
        let params = call_request(&self.remote_name, arguments, ctx.traceparent.as_deref());
        if self.server.runs_as_task(&self.remote_name) {
            return self.call_as_task(params, ctx).await;
        }
        let outcome = self
            .server
            .call_tool(params.clone(), &ctx.cancel, ctx.progress.clone())
            .await
            .map_err(|err| ToolError::new(ToolErrorCode::Failed, err.to_string()))?;
        // A tool the server runs only as a task says so on its first plain call (the tool
        // list does not carry its `taskSupport` through the MCP library): it is called as a
        // task from then on, this call first.
        let says_task = match &outcome.result {
            Err(RequestFailure::Rpc(error)) => needs_task(&error.message),
            Ok(result) if result.is_error == Some(true) => result
                .content
                .iter()
                .filter_map(|block| block.as_text())
                .any(|text| needs_task(&text.text)),
            Ok(_) | Err(_) => false,
        };
        if says_task {
            self.server.remember_task_only(&self.remote_name);
            return self.call_as_task(params, ctx).await;
        }
        if let Some(created) = &outcome.task {
            let result = self
                .server
                .follow_created(
                    &self.remote_name,
                    created,
                    &ctx.cancel,
                    ctx.progress.clone(),
                )
                .await
                .map_err(|err| ToolError::new(ToolErrorCode::Failed, err.to_string()))?;
            return finish(
                &self.server,
                &self.remote_name,
                Ran::AsTask,
                result,
                &[],
                self.output_schema.as_ref(),
            );
        }
        finish(
            &self.server,
            &self.remote_name,
            Ran::Plain,
            outcome.result,
            &outcome.progress,
            self.output_schema.as_ref(),
        )
    }

    async fn call_as_task(
        &self,
        params: rmcp::model::CallToolRequestParams,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let result = self
            .server
            .call_task(params, &ctx.cancel, ctx.progress.clone())
            .await
            .map_err(|err| ToolError::new(ToolErrorCode::Failed, err.to_string()))?;
        finish(
            &self.server,
            &self.remote_name,
            Ran::AsTask,
            result,
            &[],
            self.output_schema.as_ref(),
        )
    }
}

/// How a call ran: a plain request, or a task the server ran in the background.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ran {
    Plain,
    AsTask,
}

/// A call's outcome as the tool's result or error, in sentences the model reads.
pub(crate) fn finish(
    server: &McpServer,
    remote_name: &str,
    ran: Ran,
    result: Result<rmcp::model::CallToolResult, RequestFailure>,
    progress: &[crate::handler::McpProgress],
    output_schema: Option<&jsonschema::Validator>,
) -> Result<ToolOutput, ToolError> {
    let name = server.name();
    match result {
        Ok(result) => {
            let value = serde_json::to_value(&result).unwrap_or(Value::Null);
            convert(name, remote_name, &value, progress, output_schema)
        }
        Err(RequestFailure::Timeout(after)) => Err(ToolError::new(
            ToolErrorCode::Timeout,
            match ran {
                Ran::Plain => format!(
                    "the MCP server {name:?} did not answer within {} s; the call was cancelled",
                    after.as_secs()
                ),
                Ran::AsTask => format!(
                    "the MCP server {name:?} did not finish the task within {} s (the tool's \
                     time limit); the task was cancelled",
                    after.as_secs()
                ),
            },
        )),
        Err(RequestFailure::Cancelled) => Err(ToolError::new(
            ToolErrorCode::Cancelled,
            "the call was stopped and the server was told to cancel it",
        )),
        Err(RequestFailure::Closed) => {
            let tail = server.stderr().tail(CRASH_STDERR_LINES).join(" | ");
            let mut message = format!(
                "the MCP server {name:?} stopped during the call; it will be restarted on the \
                 next call"
            );
            if !tail.is_empty() {
                message.push_str(&format!(" (its last stderr lines: {tail})"));
            }
            Err(ToolError::new(ToolErrorCode::Failed, message))
        }
        Err(RequestFailure::Rpc(error)) => {
            let code = if error.code == rmcp::model::ErrorCode::INVALID_PARAMS {
                ToolErrorCode::InvalidArguments
            } else {
                ToolErrorCode::Failed
            };
            Err(ToolError::new(
                code,
                format!(
                    "the MCP server {name:?} answered with an error: {}",
                    error.message
                ),
            ))
        }
        Err(failure @ RequestFailure::Other(_)) => Err(ToolError::new(
            ToolErrorCode::Failed,
            format!("the MCP server {name:?} failed: {}", describe(&failure)),
        )),
    }
}

/// Whether a server's error says the tool must be called as a task (the TypeScript SDK's
/// "requires task augmentation"; the protocol's `taskSupport: "required"`).
fn needs_task(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    message.contains("task augmentation") || message.contains("tasksupport")
}

/// An input schema OpenAI-compatible endpoints accept: an object schema with `properties`.
pub(crate) fn openai_parameters(schema: &Value) -> Value {
    let mut schema = match schema {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    schema.insert("type".into(), Value::String("object".into()));
    if !schema.get("properties").is_some_and(Value::is_object) {
        schema.insert("properties".into(), Value::Object(Map::new()));
    }
    Value::Object(schema)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn parameters_are_always_an_object_schema() {
        assert_eq!(
            openai_parameters(&json!({})),
            json!({"type": "object", "properties": {}})
        );
        let schema =
            json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]});
        assert_eq!(openai_parameters(&schema), schema);
    }
}
