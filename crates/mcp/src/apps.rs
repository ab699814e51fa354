//! MCP Apps (`io.modelcontextprotocol/ui`): what a tool's `_meta.ui` says of it. A tool may have
//! a view (an HTML `ui://` resource that shows its result), and may be meant for its view alone:
//! its `visibility` then lacks `"model"`, and such a tool is never offered to the model, whose
//! registry never holds it, so a model that guesses its name finds no such tool.

use rmcp::model::Tool;
use serde_json::Value;

/// The deprecated flat key that named a tool's view before `_meta.ui.resourceUri`.
const FLAT_RESOURCE_URI: &str = "ui/resourceUri";

/// What `_meta.ui` says of a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUi {
    /// Its view: a `ui://` resource. Another scheme is no view.
    pub resource_uri: Option<String>,
    /// Whether the model may be offered it.
    pub for_model: bool,
    /// Whether its server's views may call it.
    pub for_app: bool,
}

/// What `tool`'s `_meta` says of its view and who may call it. A missing `visibility` means
/// both; an array means what it lists (unknown entries are ignored, so an empty one means
/// neither); anything else is read as missing.
pub fn ui_of(tool: &Tool) -> ToolUi {
    let meta = tool.meta.as_ref();
    let ui = meta.and_then(|meta| meta.get("ui"));
    let resource_uri = ui
        .and_then(|ui| ui.get("resourceUri"))
        .or_else(|| meta.and_then(|meta| meta.get(FLAT_RESOURCE_URI)))
        .and_then(Value::as_str)
        .filter(|uri| uri.starts_with("ui://"))
        .map(str::to_string);
    let visibility = ui
        .and_then(|ui| ui.get("visibility"))
        .and_then(Value::as_array);
    let (for_model, for_app) = match visibility {
        None => (true, true),
        Some(listed) => {
            let has = |who: &str| listed.iter().any(|entry| entry.as_str() == Some(who));
            (has("model"), has("app"))
        }
    };
    ToolUi {
        resource_uri,
        for_model,
        for_app,
    }
}

/// Whether `tool` may be offered to the model.
pub fn offered_to_model(tool: &Tool) -> bool {
    ui_of(tool).for_model
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn tool(meta: Value) -> Tool {
        serde_json::from_value(json!({
            "name": "t",
            "inputSchema": { "type": "object" },
            "_meta": meta,
        }))
        .unwrap()
    }

    #[test]
    fn a_view_is_read_from_the_nested_key_then_the_flat_one() {
        let nested = ui_of(&tool(
            json!({ "ui": { "resourceUri": "ui://a/view.html" } }),
        ));
        assert_eq!(nested.resource_uri.as_deref(), Some("ui://a/view.html"));
        let flat = ui_of(&tool(json!({ "ui/resourceUri": "ui://a/old.html" })));
        assert_eq!(flat.resource_uri.as_deref(), Some("ui://a/old.html"));
        let both = ui_of(&tool(json!({
            "ui": { "resourceUri": "ui://a/new.html" },
            "ui/resourceUri": "ui://a/old.html",
        })));
        assert_eq!(both.resource_uri.as_deref(), Some("ui://a/new.html"));
        let elsewhere = ui_of(&tool(
            json!({ "ui": { "resourceUri": "https://a.example/view" } }),
        ));
        assert_eq!(elsewhere.resource_uri, None);
    }

    #[test]
    fn visibility_says_who_may_call_a_tool() {
        let seen = |meta: Value| {
            let ui = ui_of(&tool(meta));
            (ui.for_model, ui.for_app)
        };
        assert_eq!(seen(json!({})), (true, true));
        assert_eq!(seen(json!({ "ui": {} })), (true, true));
        assert_eq!(
            seen(json!({ "ui": { "visibility": ["app"] } })),
            (false, true)
        );
        assert_eq!(
            seen(json!({ "ui": { "visibility": ["model"] } })),
            (true, false)
        );
        assert_eq!(
            seen(json!({ "ui": { "visibility": ["model", "app"] } })),
            (true, true)
        );
        assert_eq!(seen(json!({ "ui": { "visibility": [] } })), (false, false));
        assert_eq!(
            seen(json!({ "ui": { "visibility": ["MODEL", 3, "robot"] } })),
            (false, false)
        );
        assert_eq!(
            seen(json!({ "ui": { "visibility": "model" } })),
            (true, true)
        );
        let plain: Tool = serde_json::from_value(json!({
            "name": "plain",
            "inputSchema": { "type": "object" },
        }))
        .unwrap();
        assert!(offered_to_model(&plain));
    }
}
