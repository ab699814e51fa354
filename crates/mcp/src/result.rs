//! A tool result as the model and the audit log get it. Text content is joined for the model;
//! images, audio and resources are summarised for the model and kept whole in `data`.
//! `isError: true` becomes a `failed` error carrying the server's text.

use serde_json::{Value, json};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput};

use crate::handler::McpProgress;

/// Text of an embedded text resource given to the model, at most.
const MAX_EMBEDDED_TEXT: usize = 16 * 1024;

/// Turns a `tools/call` result (as JSON) into our result.
pub(crate) fn convert(
    server: &str,
    tool: &str,
    result: &Value,
    progress: &[McpProgress],
) -> Result<ToolOutput, ToolError> {
    let text = model_text(result);
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if is_error {
        let message = if text.trim().is_empty() {
            format!("the MCP tool {tool} of {server} reported an error without a message")
        } else {
            text
        };
        return Err(ToolError::new(ToolErrorCode::Failed, message));
    }
    let mut data = json!({
        "server": server,
        "tool": tool,
        "result": result,
    });
    if !progress.is_empty()
        && let Some(object) = data.as_object_mut()
    {
        object.insert(
            "progress".into(),
            serde_json::to_value(progress).unwrap_or(Value::Null),
        );
    }
    Ok(ToolOutput::new(text, data))
}

/// The text the model reads for a result.
pub(crate) fn model_text(result: &Value) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(blocks) = result.get("content").and_then(Value::as_array) {
        for block in blocks {
            parts.push(block_text(block));
        }
    }
    let parts: Vec<String> = parts.into_iter().filter(|part| !part.is_empty()).collect();
    if parts.is_empty() {
        // Structured content alone (allowed since 2025-06-18) is the answer.
        return match result.get("structuredContent") {
            Some(Value::Null) | None => String::new(),
            Some(structured) => structured.to_string(),
        };
    }
    parts.join("\n")
}

fn block_text(block: &Value) -> String {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let str_field = |name: &str| block.get(name).and_then(Value::as_str);
    match kind {
        "text" => str_field("text").unwrap_or_default().to_string(),
        "image" | "audio" => {
            let mime = str_field("mimeType").unwrap_or("unknown type");
            let size = str_field("data").map(decoded_len).unwrap_or(0);
            format!(
                "[{kind}: {mime}, {}; shown to the user, not to you]",
                human_size(size)
            )
        }
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
            let mime = resource.get("mimeType").and_then(Value::as_str);
            let mime_note = mime.map(|m| format!(", {m}")).unwrap_or_default();
            if let Some(text) = resource.get("text").and_then(Value::as_str) {
                let (shown, cut) = cut_text(text, MAX_EMBEDDED_TEXT);
                let cut_note = if cut { " (cut)" } else { "" };
                format!("[resource {uri}{mime_note}{cut_note}]\n{shown}")
            } else {
                let size = resource
                    .get("blob")
                    .and_then(Value::as_str)
                    .map(decoded_len)
                    .unwrap_or(0);
                format!(
                    "[resource {uri}{mime_note}, {} of binary data]",
                    human_size(size)
                )
            }
        }
        "resource_link" => {
            let uri = str_field("uri").unwrap_or("?");
            let name = str_field("name").unwrap_or("");
            let description = str_field("description")
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            format!("[resource link {uri} {name}{description}]").replace("  ", " ")
        }
        other => format!(
            "[{} content]",
            if other.is_empty() { "unknown" } else { other }
        ),
    }
}

/// Bytes a base64 text decodes to.
fn decoded_len(base64: &str) -> usize {
    let trimmed = base64.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

fn human_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

fn cut_text(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn text_is_joined_and_media_summarised() {
        let result = json!({"content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "mem://b", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c"},
            {"type": "text", "text": "last"}
        ]});
        let output = convert("s", "t", &result, &[]).unwrap();
        assert_eq!(
            output.text,
            "first\n[image: image/png, 8 bytes; shown to the user, not to you]\n\
             [resource file:///a.txt, text/plain]\nhello\n\
             [resource mem://b, 3 bytes of binary data]\n[resource link file:///c c]\nlast"
        );
        assert_eq!(output.data["result"], result);
        assert_eq!(output.data["server"], "s");
        assert!(output.data.get("progress").is_none());
    }

    #[test]
    fn errors_carry_the_server_text() {
        let result =
            json!({"isError": true, "content": [{"type": "text", "text": "no such file"}]});
        assert_eq!(
            convert("s", "t", &result, &[]).unwrap_err(),
            ToolError::new(ToolErrorCode::Failed, "no such file")
        );
        let silent = json!({"isError": true, "content": []});
        assert_eq!(
            convert("s", "t", &silent, &[]).unwrap_err().message,
            "the MCP tool t of s reported an error without a message"
        );
    }

    #[test]
    fn structured_content_alone_is_the_text_and_progress_is_kept() {
        let result = json!({"content": [], "structuredContent": {"sum": 3}});
        let progress = [McpProgress {
            server: "s".into(),
            tool: Some("t".into()),
            progress: 1.0,
            total: Some(2.0),
            message: None,
        }];
        let output = convert("s", "t", &result, &progress).unwrap();
        assert_eq!(output.text, r#"{"sum":3}"#);
        assert_eq!(output.data["progress"][0]["total"], 2.0);
    }
}
