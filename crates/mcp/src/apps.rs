//! MCP Apps (`io.modelcontextprotocol/ui`): what a tool's `_meta.ui` says of it, and its view's
//! page. A tool may have a view (an HTML `ui://` resource that shows its result), and may be
//! meant for its view alone: its `visibility` then lacks `"model"`, and such a tool is never
//! offered to the model, whose registry never holds it, so a model that guesses its name finds
//! no such tool.
//!
//! A view's page is read with `resources/read` and checked before anything shows it: one
//! content, of type `text/html;profile=mcp-app`, text or a base64 blob that is UTF-8, at most
//! [`MAX_VIEW_BYTES`]. What its `_meta.ui` declares (CSP domains, permissions) is kept as the
//! server wrote it, for the view's server to sanitise.
//!
//! This module knows nothing of servers, so the connection's handler, the resource hub and the
//! tools read it without importing the server back; a server's own view calls (the tool a
//! view calls, reading its page) are in `app_views.rs`, above them.

use base64::Engine as _;
use rmcp::model::{ResourceContents, Tool};
use serde_json::Value;

/// The MIME type of a view's page.
pub const VIEW_MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The most a view's page may weigh.
pub const MAX_VIEW_BYTES: usize = 5 * 1024 * 1024;

/// A view's page, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewResource {
    pub uri: String,
    pub html: String,
    /// `_meta.ui.csp`, as the server wrote it.
    pub csp: Option<Value>,
    /// `_meta.ui.permissions`, as the server wrote it.
    pub permissions: Option<Value>,
    /// `_meta.ui.prefersBorder`.
    pub prefers_border: Option<bool>,
}

/// The one content of `uri` as a view, or why it is none.
pub(crate) fn view_of(uri: &str, contents: Vec<ResourceContents>) -> Result<ViewResource, String> {
    let count = contents.len();
    let Some(content) = contents.into_iter().next().filter(|_| count == 1) else {
        return Err(format!("it gave {count} contents where a view has one"));
    };
    let (given_uri, mime_type, html, meta) = match content {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            meta,
        } => (uri, mime_type, Ok(text), meta),
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            meta,
        } => {
            let html = if blob.len() > MAX_VIEW_BYTES / 3 * 4 + 4 {
                Err(too_large(blob.len() / 4 * 3))
            } else {
                base64::engine::general_purpose::STANDARD
                    .decode(blob.as_bytes())
                    .map_err(|_| "its blob is not base64".to_string())
                    .and_then(|bytes| {
                        String::from_utf8(bytes)
                            .map_err(|_| "its page is not UTF-8 text".to_string())
                    })
            };
            (uri, mime_type, html, meta)
        }
        // A kind of content this version of the MCP library does not know.
        _ => return Err("its content is of a kind a view cannot be".to_string()),
    };
    if given_uri != uri {
        return Err(format!("it answered with {given_uri} instead"));
    }
    let mime_type = mime_type.unwrap_or_default();
    if !is_view_type(&mime_type) {
        let given = if mime_type.is_empty() {
            "of no type".to_string()
        } else {
            mime_type.chars().take(80).collect()
        };
        return Err(format!(
            "the page is {given}, not an MCP App view ({VIEW_MIME_TYPE}); the result is shown as text"
        ));
    }
    let html = html?;
    if html.len() > MAX_VIEW_BYTES {
        return Err(too_large(html.len()));
    }
    let ui = meta
        .as_ref()
        .and_then(|meta| meta.get("ui"))
        .and_then(Value::as_object);
    Ok(ViewResource {
        uri: uri.to_string(),
        html,
        csp: ui.and_then(|ui| ui.get("csp")).cloned(),
        permissions: ui.and_then(|ui| ui.get("permissions")).cloned(),
        prefers_border: ui
            .and_then(|ui| ui.get("prefersBorder"))
            .and_then(Value::as_bool),
    })
}

fn too_large(bytes: usize) -> String {
    format!("its page is {bytes} bytes, more than the {MAX_VIEW_BYTES} a view may have")
}

/// Whether `mime_type` is [`VIEW_MIME_TYPE`], in any case and with spaces around its parts.
fn is_view_type(mime_type: &str) -> bool {
    let parts: Vec<String> = mime_type
        .split(';')
        .map(|part| part.trim().to_ascii_lowercase().replace(' ', ""))
        .collect();
    parts.len() == 2 && parts[0] == "text/html" && parts[1] == "profile=mcp-app"
}

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

/// The MCP Apps extension as Tooltrail announces it in the handshake.
pub fn extension_capability() -> rmcp::model::ExtensionCapabilities {
    let mut settings = rmcp::model::JsonObject::new();
    settings.insert(
        "mimeTypes".to_string(),
        Value::Array(vec![Value::String(VIEW_MIME_TYPE.to_string())]),
    );
    let mut extensions = rmcp::model::ExtensionCapabilities::new();
    extensions.insert(EXTENSION_ID.to_string(), settings);
    extensions
}

/// The MCP Apps extension's name.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

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

    fn text(uri: &str, mime: Option<&str>, text: &str, meta: Value) -> ResourceContents {
        serde_json::from_value(json!({
            "uri": uri, "mimeType": mime, "text": text, "_meta": meta,
        }))
        .unwrap()
    }

    #[test]
    fn a_view_is_its_html_with_what_its_server_declared() {
        let meta = json!({ "ui": {
            "csp": { "connectDomains": ["https://api.example.com"] },
            "permissions": { "camera": {} },
            "prefersBorder": false,
        }});
        let view = view_of(
            "ui://a/v.html",
            vec![text(
                "ui://a/v.html",
                Some("text/html;profile=mcp-app"),
                "<p>hi</p>",
                meta,
            )],
        )
        .unwrap();
        assert_eq!(view.html, "<p>hi</p>");
        assert_eq!(
            view.csp,
            Some(json!({ "connectDomains": ["https://api.example.com"] }))
        );
        assert_eq!(view.permissions, Some(json!({ "camera": {} })));
        assert_eq!(view.prefers_border, Some(false));
        // The type in other spellings, and a page as a base64 blob.
        let blob: ResourceContents = serde_json::from_value(json!({
            "uri": "ui://a/v.html",
            "mimeType": "Text/HTML; Profile=MCP-App",
            "blob": base64::engine::general_purpose::STANDARD.encode("<p>blob</p>"),
        }))
        .unwrap();
        assert_eq!(
            view_of("ui://a/v.html", vec![blob]).unwrap().html,
            "<p>blob</p>"
        );
    }

    #[test]
    fn attack_views_a_resource_of_another_type_is_refused_with_a_sentence() {
        let uri = "ui://a/v.html";
        for (mime, said) in [
            (
                Some("text/plain"),
                "the page is text/plain, not an MCP App view",
            ),
            (
                Some("text/html"),
                "the page is text/html, not an MCP App view",
            ),
            (Some("text/html;profile=mcp-app;x=1"), "not an MCP App view"),
            (None, "the page is of no type, not an MCP App view"),
        ] {
            let error = view_of(uri, vec![text(uri, mime, "<p>", json!({}))]).unwrap_err();
            assert!(error.contains(said), "{mime:?}: {error}");
        }
        let two = vec![
            text(uri, Some(VIEW_MIME_TYPE), "<p>", json!({})),
            text(uri, Some(VIEW_MIME_TYPE), "<p>", json!({})),
        ];
        assert_eq!(
            view_of(uri, two).unwrap_err(),
            "it gave 2 contents where a view has one"
        );
        let elsewhere = vec![text(
            "ui://b/other.html",
            Some(VIEW_MIME_TYPE),
            "<p>",
            json!({}),
        )];
        assert_eq!(
            view_of(uri, elsewhere).unwrap_err(),
            "it answered with ui://b/other.html instead"
        );
    }

    #[test]
    fn attack_views_an_oversized_or_non_utf8_page_is_refused() {
        let uri = "ui://a/v.html";
        let huge = "x".repeat(MAX_VIEW_BYTES + 1);
        let error =
            view_of(uri, vec![text(uri, Some(VIEW_MIME_TYPE), &huge, json!({}))]).unwrap_err();
        assert!(error.starts_with("its page is 5242881 bytes"), "{error}");
        let binary: ResourceContents = serde_json::from_value(json!({
            "uri": uri,
            "mimeType": VIEW_MIME_TYPE,
            "blob": base64::engine::general_purpose::STANDARD.encode([0xff, 0xfe, 0x00]),
        }))
        .unwrap();
        assert_eq!(
            view_of(uri, vec![binary]).unwrap_err(),
            "its page is not UTF-8 text"
        );
        let not_base64: ResourceContents = serde_json::from_value(json!({
            "uri": uri, "mimeType": VIEW_MIME_TYPE, "blob": "%%%",
        }))
        .unwrap();
        assert_eq!(
            view_of(uri, vec![not_base64]).unwrap_err(),
            "its blob is not base64"
        );
        let huge_blob: ResourceContents = serde_json::from_value(json!({
            "uri": uri,
            "mimeType": VIEW_MIME_TYPE,
            "blob": "A".repeat(MAX_VIEW_BYTES * 2),
        }))
        .unwrap();
        assert!(
            view_of(uri, vec![huge_blob])
                .unwrap_err()
                .contains("more than")
        );
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
