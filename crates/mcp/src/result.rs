//! A tool result as the model and the audit log get it.
//!
//! Text content is joined for the model. Images and sounds become [`Media`] beside the text:
//! a model that sees images gets them as image parts, one that does not is told what came
//! back (the llm crate words it); the text marks where each was. Embedded resources keep
//! their MIME type: text is inlined whole (the turn's budget cuts it to the window), an image
//! blob is media like an image, other binary is described. The whole result stays in `data`,
//! which the record keeps with the call. `isError: true` becomes a `failed` error carrying the
//! server's text, and so does `structuredContent` that does not match the tool's
//! `outputSchema`.

use serde_json::{Value, json};
use tooltrail_protocol::media::human_size;
use tooltrail_protocol::{Media, MediaKind, ToolError, ToolErrorCode, ToolOutput};

use crate::handler::McpProgress;

/// Turns a `tools/call` result (as JSON) into our result, checking its structured content
/// against `output_schema` when the tool declared one.
pub(crate) fn convert(
    server: &str,
    tool: &str,
    result: &Value,
    progress: &[McpProgress],
    output_schema: Option<&jsonschema::Validator>,
) -> Result<ToolOutput, ToolError> {
    let (text, media) = model_content(result);
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
    if let Some(validator) = output_schema {
        check_structured(server, tool, result, validator)?;
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
    Ok(ToolOutput::new(text, data).with_media(media))
}

/// A tool with an output schema must return structured content that matches it (MCP
/// 2025-06-18, "Output Schema"); what does not is an error the model reads, so that it does
/// not build on data the tool did not promise.
fn check_structured(
    server: &str,
    tool: &str,
    result: &Value,
    validator: &jsonschema::Validator,
) -> Result<(), ToolError> {
    let Some(structured) = result
        .get("structuredContent")
        .filter(|value| !value.is_null())
    else {
        return Err(ToolError::new(
            ToolErrorCode::Failed,
            format!(
                "the MCP tool {tool} of {server} declares an output schema but returned no \
                 structured content"
            ),
        ));
    };
    let problems: Vec<String> = validator
        .iter_errors(structured)
        .take(3)
        .map(|error| {
            let path = error.instance_path().to_string();
            if path.is_empty() {
                error.to_string()
            } else {
                format!("{}: {error}", path.trim_start_matches('/'))
            }
        })
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    Err(ToolError::new(
        ToolErrorCode::Failed,
        format!(
            "the MCP tool {tool} of {server} returned structured content that does not match \
             its output schema ({}); do not rely on it",
            problems.join("; ")
        ),
    ))
}

/// A validator for a tool's `outputSchema`; `None` when it does not compile (the result is
/// then taken as it comes).
pub(crate) fn output_validator(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(schema)
        .ok()
}

/// The text the model reads for a result.
pub(crate) fn model_text(result: &Value) -> String {
    model_content(result).0
}

/// The text the model reads, and the images and sounds beside it.
fn model_content(result: &Value) -> (String, Vec<Media>) {
    let mut parts: Vec<String> = Vec::new();
    let mut media: Vec<Media> = Vec::new();
    if let Some(blocks) = result.get("content").and_then(Value::as_array) {
        for block in blocks {
            parts.push(block_text(block, &mut media));
        }
    }
    let parts: Vec<String> = parts.into_iter().filter(|part| !part.is_empty()).collect();
    if parts.is_empty() {
        // Structured content alone (allowed since 2025-06-18) is the answer.
        let text = match result.get("structuredContent") {
            Some(Value::Null) | None => String::new(),
            Some(structured) => structured.to_string(),
        };
        return (text, media);
    }
    (parts.join("\n"), media)
}

fn block_text(block: &Value, media: &mut Vec<Media>) -> String {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let str_field = |name: &str| block.get(name).and_then(Value::as_str);
    match kind {
        "text" => str_field("text").unwrap_or_default().to_string(),
        "image" | "audio" => {
            let item = Media {
                kind: if kind == "image" {
                    MediaKind::Image
                } else {
                    MediaKind::Audio
                },
                mime_type: str_field("mimeType").unwrap_or("unknown type").to_string(),
                data: str_field("data").unwrap_or_default().to_string(),
            };
            let text = format!(
                "[{kind} {}: {}, {}]",
                media.len() + 1,
                item.mime_type,
                human_size(item.size())
            );
            media.push(item);
            text
        }
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
            let mime = resource.get("mimeType").and_then(Value::as_str);
            let mime_note = mime.map(|m| format!(", {m}")).unwrap_or_default();
            if let Some(text) = resource.get("text").and_then(Value::as_str) {
                format!("[resource {uri}{mime_note}]\n{text}")
            } else {
                let blob = resource
                    .get("blob")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let item = Media {
                    kind: MediaKind::Image,
                    mime_type: mime.unwrap_or_default().to_string(),
                    data: blob.to_string(),
                };
                if mime.is_some_and(|m| m.starts_with("image/")) {
                    let text = format!(
                        "[resource {uri}{mime_note}: image {}, {}]",
                        media.len() + 1,
                        human_size(item.size())
                    );
                    media.push(item);
                    text
                } else {
                    format!(
                        "[resource {uri}{mime_note}, {} of binary data, kept with the call for the \
                         user; its bytes are not shown to you]",
                        human_size(item.size())
                    )
                }
            }
        }
        "resource_link" => {
            let uri = str_field("uri").unwrap_or("?");
            let name = str_field("name").unwrap_or("");
            let mime = str_field("mimeType")
                .map(|m| format!(", {m}"))
                .unwrap_or_default();
            let description = str_field("description")
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            format!("[resource link {uri} {name}{mime}{description}]").replace("  ", " ")
        }
        other => format!(
            "[{} content]",
            if other.is_empty() { "unknown" } else { other }
        ),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn text_is_joined_media_kept_and_resources_keep_their_type() {
        let result = json!({"content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "mem://b", "mimeType": "application/gzip", "blob": "AAAA"}},
            {"type": "resource", "resource": {"uri": "mem://c", "mimeType": "image/gif", "blob": "R0lGOD=="}},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///c", "name": "c"},
            {"type": "text", "text": "last"}
        ]});
        let output = convert("s", "t", &result, &[], None).unwrap();
        assert_eq!(
            output.text,
            "first\n[image 1: image/png, 8 bytes]\n\
             [resource file:///a.txt, text/plain]\nhello\n\
             [resource mem://b, application/gzip, 3 bytes of binary data, kept with the call for \
             the user; its bytes are not shown to you]\n\
             [resource mem://c, image/gif: image 2, 4 bytes]\n\
             [audio 3: audio/wav, 4 bytes]\n\
             [resource link file:///c c]\nlast"
        );
        let kinds: Vec<(MediaKind, &str)> = output
            .media
            .iter()
            .map(|item| (item.kind, item.mime_type.as_str()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (MediaKind::Image, "image/png"),
                (MediaKind::Image, "image/gif"),
                (MediaKind::Audio, "audio/wav")
            ]
        );
        assert_eq!(output.media[0].data, "iVBORw0KGgo=");
        assert_eq!(output.data["result"], result);
        assert_eq!(output.data["server"], "s");
        assert!(output.data.get("progress").is_none());
    }

    #[test]
    fn errors_carry_the_server_text() {
        let result =
            json!({"isError": true, "content": [{"type": "text", "text": "no such file"}]});
        assert_eq!(
            convert("s", "t", &result, &[], None).unwrap_err(),
            ToolError::new(ToolErrorCode::Failed, "no such file")
        );
        let silent = json!({"isError": true, "content": []});
        assert_eq!(
            convert("s", "t", &silent, &[], None).unwrap_err().message,
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
        let output = convert("s", "t", &result, &progress, None).unwrap();
        assert_eq!(output.text, r#"{"sum":3}"#);
        assert_eq!(output.data["progress"][0]["total"], 2.0);
    }

    #[test]
    fn structured_content_must_match_the_output_schema() {
        let schema = json!({
            "type": "object",
            "properties": {"temperature": {"type": "number"}, "conditions": {"type": "string"}},
            "required": ["temperature", "conditions"]
        });
        let validator = output_validator(&schema).unwrap();
        let good = json!({"content": [], "structuredContent": {"temperature": 33, "conditions": "Cloudy"}});
        assert!(convert("s", "w", &good, &[], Some(&validator)).is_ok());
        let bad = json!({"content": [], "structuredContent": {"temperature": "hot"}});
        let error = convert("s", "w", &bad, &[], Some(&validator)).unwrap_err();
        assert_eq!(error.code, ToolErrorCode::Failed);
        assert!(
            error.message.starts_with(
                "the MCP tool w of s returned structured content that does not match its output \
                 schema ("
            ),
            "{}",
            error.message
        );
        assert!(error.message.contains("temperature"), "{}", error.message);
        let missing = json!({"content": [{"type": "text", "text": "33"}]});
        assert_eq!(
            convert("s", "w", &missing, &[], Some(&validator))
                .unwrap_err()
                .message,
            "the MCP tool w of s declares an output schema but returned no structured content"
        );
    }
}
