//! What a server's MCP App views ask of it: the tool a view calls, checked against what the
//! tool's `_meta.ui` allows, and the view's page, read once and kept in the server's resource
//! hub. What the extension itself says (a tool's `_meta.ui`, a page's checks) is in `apps.rs`,
//! below the server, the connection's handler and the resource hub, which all read it; these
//! calls sit above the server and its tools.

use std::sync::Arc;

use rmcp::model::ReadResourceRequestParams;

use crate::apps::{ViewResource, ui_of, view_of};
use crate::error::McpError;
use crate::naming::Namer;
use crate::server::McpServer;
use crate::tool::McpTool;

impl McpServer {
    /// The tool `remote_name` of this server as one of its views calls it: only a
    /// tool whose `_meta.ui.visibility` includes `"app"`, and only of that same server. It is
    /// named and approved as when the model calls it (`server__tool`, the server's `approval`
    /// in `mcp.json`). A name the server does not list is looked up again once, since the
    /// server may have changed its tools.
    pub async fn tool_for_view(
        self: &Arc<Self>,
        remote_name: &str,
    ) -> Result<Arc<McpTool>, McpError> {
        let find = |tools: Option<Vec<rmcp::model::Tool>>| {
            tools.and_then(|tools| tools.into_iter().find(|tool| tool.name == remote_name))
        };
        let found = match find(self.known_tools()) {
            Some(tool) => Some(tool),
            None => find(Some(self.list_tools().await?)),
        };
        let Some(tool) = found else {
            return Err(McpError::NotForViews(format!(
                "the view asked for the tool {remote_name:?}, which its server {:?} does not \
                 have; a view may call only its own server's tools",
                self.name()
            )));
        };
        if !ui_of(&tool).for_app {
            return Err(McpError::NotForViews(format!(
                "the tool {remote_name:?} of {:?} is not meant to be called by views (its \
                 visibility does not include \"app\")",
                self.name()
            )));
        }
        let name = Namer::new(std::iter::empty()).name(self.name(), &tool.name);
        Ok(Arc::new(McpTool::new(Arc::clone(self), name, &tool)))
    }

    /// Reads the view at `uri` and checks it (see the module's docs); a page that is not one
    /// is refused with a sentence. A page read before is given again without asking the
    /// server, until the server says it or its resources changed, or it is started again.
    pub async fn view_resource(&self, uri: &str) -> Result<ViewResource, McpError> {
        let hub = &self.shared().resources;
        if let Some(view) = hub.view(uri) {
            return Ok(view);
        }
        let refuse = |reason: String| McpError::View {
            server: self.name().to_string(),
            uri: uri.to_string(),
            reason,
        };
        if !uri.starts_with("ui://") {
            return Err(refuse("a view's address starts with ui://".to_string()));
        }
        let peer = self.peer().await?;
        let read = tokio::time::timeout(
            self.config().timeout,
            peer.read_resource(ReadResourceRequestParams::new(uri)),
        )
        .await;
        let result = self.answer(read, "read a view")?;
        let view = view_of(uri, result.contents).map_err(refuse)?;
        hub.keep_view(&view);
        Ok(view)
    }
}
