//! The registry's own error: the one thing that can go wrong while tools are gathered (a call
//! going wrong is a [`tooltrail_protocol::ToolError`] for the model instead).

use tooltrail_protocol::ToolSource;

/// A tool was registered under a name another tool already has. The first one stays; the
/// second is not added, so the model is never offered a tool that silently stands in for
/// another.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "two tools are named \"{name}\" ({kept} and {refused}); the second was left out, since a \
     name can belong to one tool only"
)]
pub struct DuplicateTool {
    pub name: String,
    /// Where the tool that keeps the name comes from, as a reader would say it.
    pub kept: String,
    /// Where the tool that was left out comes from.
    pub refused: String,
}

/// "the built-in tool" or "the tool of the MCP server \"fs\"".
pub(crate) fn origin(source: &ToolSource) -> String {
    match source {
        ToolSource::Builtin => "the built-in tool".to_string(),
        ToolSource::Mcp { server } => format!("the tool of the MCP server \"{server}\""),
    }
}
