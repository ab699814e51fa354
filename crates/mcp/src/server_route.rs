//! What the built-in tools that reach a server by name (`read_resource`, `load_skill`) share:
//! the servers they may reach, the one a call's `server` argument names, the call recorded
//! under that server, and the gate its `approval` in `mcp.json` sets, as for its own tools.

use std::sync::Arc;

use serde_json::Value;
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolSource};
use tooltrail_tools::Gate;

use crate::config::Approval;
use crate::server::McpServer;

/// The servers a tool reaches by the name in its `server` argument.
pub(crate) struct ServerRoute {
    servers: Vec<Arc<McpServer>>,
}

impl std::fmt::Debug for ServerRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ServerRoute {
    pub(crate) fn new(servers: Vec<Arc<McpServer>>) -> Self {
        Self { servers }
    }

    pub(crate) fn names(&self) -> Vec<&str> {
        self.servers.iter().map(|server| server.name()).collect()
    }

    /// Whether every server runs such a call freely; the gate decides per call all the same.
    pub(crate) fn all_allowed(&self) -> bool {
        self.servers
            .iter()
            .all(|server| server.config().approval == Approval::Allow)
    }

    /// The server a call's `server` argument names, when it is one of ours.
    pub(crate) fn named(&self, args: &Value) -> Option<&Arc<McpServer>> {
        let name = args.get("server").and_then(Value::as_str)?;
        self.servers.iter().find(|server| server.name() == name)
    }

    /// A call goes to the server it names and is recorded as that server's call, so the
    /// history of a server shows what was read from it.
    pub(crate) fn source_of(&self, args: &Value) -> ToolSource {
        match self.named(args) {
            Some(server) => ToolSource::Mcp {
                server: server.name().to_string(),
            },
            None => ToolSource::Builtin,
        }
    }

    /// The gate of a call of `tool` on `target`, which reads `what` of the server: the
    /// server's `approval`, as for its tools (the model asking sends the server a request as
    /// much as a tool call does, and the server's answer goes to the model).
    pub(crate) fn gate(&self, args: &Value, tool: &str, target: &str, what: &str) -> Gate {
        let Some(server) = self.named(args) else {
            // Schema validation keeps this from happening; the call says what the servers are.
            return Gate::ReadOnly;
        };
        let name = server.name();
        match server.config().approval {
            Approval::Allow => Gate::Allowed {
                reason: format!("the MCP server {name:?} is set to \"allow\" in mcp.json"),
            },
            Approval::Ask => Gate::Ask {
                summary: format!("{tool} {name} {target}"),
                cwd: None,
                reason: format!("it reads {what} of the external MCP server {name:?}"),
            },
            // The user said no to this server's tools as a whole; what it serves goes with them.
            Approval::Never => Gate::Refuse(ToolError::new(
                ToolErrorCode::Denied,
                format!("the MCP server {name:?} is set to \"never\" in mcp.json"),
            )),
        }
    }
}
