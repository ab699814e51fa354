//! The system prompt section that offers the tools to a model without function calling.

use serde_json::Value;
use tooltrail_protocol::{ToolChoice, ToolSpec};

use crate::prompt_mode::parse::{CLOSE, OPEN};

/// The section appended to the system prompt, or `None` when no tool is offered.
///
/// A tool choice of `none` keeps the section as `auto` writes it, byte for byte: such a request
/// (the last of a turn, asking for the answer) then shares its whole prefix with the requests
/// before it, so a server's prompt cache serves it; the request's own last message says that
/// no tool may be called, and calls made all the same are not run.
///
/// Each tool is a signature (`name(path: string, limit?: integer)`, see [`signature`]) and its
/// description on the next line: what models read as readily as JSON Schema, in about half the
/// tokens, which is the whole prefix a small local model computes before its first answer. The
/// format of a call is shown exactly once, with a filled-in example, because small models copy
/// examples more faithfully than they follow descriptions.
pub(crate) fn tool_section(tools: &[ToolSpec], choice: Option<&ToolChoice>) -> Option<String> {
    if tools.is_empty() {
        return None;
    }
    let mut section = format!(
        "# Tools\n\n\
         To call a tool, write a block in exactly this form, the arguments one JSON object:\n\
         {OPEN}<name>TOOL_NAME</name><arguments>{{\"parameter\": \"value\"}}</arguments>{CLOSE}\n\
         Several blocks run in the order written. After your last block, stop: the results come \
         in the next message, one block per call, in order (a failed call's holds its error):\n\
         <tool_use_result><name>TOOL_NAME</name><result>what it returned</result></tool_use_result>\n\
         Never write <tool_use_result> yourself, nor put {OPEN} in code blocks. When you need no \
         tool, answer directly.\n"
    );
    match choice {
        Some(ToolChoice::Required) => {
            section.push_str("In this answer you must call at least one tool.\n");
        }
        Some(ToolChoice::Function(name)) => {
            section.push_str(&format!(
                "In this answer you must call the tool `{name}`.\n"
            ));
        }
        Some(ToolChoice::Auto | ToolChoice::None) | None => {}
    }
    section.push_str("\nThe tools (`?`: may be left out):\n<tools>\n");
    for tool in tools {
        section.push_str(&signature(&tool.name, &tool.parameters));
        let description = tool.description.trim();
        if !description.is_empty() {
            section.push_str("\n  ");
            section.push_str(&description.replace('\n', "\n  "));
        }
        section.push('\n');
    }
    section.push_str("</tools>");
    Some(section)
}

/// A tool's name and parameters as a signature: `read_file(path: string, limit?: integer /*
/// Lines (default 100). */)`. A parameter whose type has no short form (an object, a union) is
/// written as its JSON Schema; parameters not given as properties are the whole schema.
fn signature(name: &str, parameters: &Value) -> String {
    let Some(schema) = parameters.as_object() else {
        return format!("{name}(arguments: {parameters})");
    };
    let plain = schema.keys().all(|key| {
        matches!(
            key.as_str(),
            "type"
                | "properties"
                | "required"
                | "additionalProperties"
                | "$schema"
                | "title"
                | "description"
        )
    });
    if !plain {
        return format!("{name}(arguments: {parameters})");
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out: Vec<String> = Vec::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        // Required ones first, as a call is written.
        let (first, rest): (Vec<_>, Vec<_>) = properties
            .iter()
            .partition(|(key, _)| required.contains(&key.as_str()));
        for (key, property) in first.into_iter().chain(rest) {
            let optional = if required.contains(&key.as_str()) {
                ""
            } else {
                "?"
            };
            out.push(format!("{key}{optional}: {}", parameter(property)));
        }
    }
    format!("{name}({})", out.join(", "))
}

/// One parameter's type, with its description and default as a comment.
fn parameter(property: &Value) -> String {
    let mut text = short_type(property).unwrap_or_else(|| {
        let mut schema = property.clone();
        if let Value::Object(fields) = &mut schema {
            fields.remove("description");
            fields.remove("default");
        }
        schema.to_string()
    });
    let description = property
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim);
    let default = property.get("default").map(Value::to_string);
    let note = match (description.filter(|text| !text.is_empty()), default) {
        (Some(description), Some(default)) if !description.contains("default") => {
            format!("{description} (default {default})")
        }
        (Some(description), _) => description.to_string(),
        (None, Some(default)) => format!("default {default}"),
        (None, None) => String::new(),
    };
    if !note.is_empty() {
        text.push_str(&format!(" /* {} */", note.replace("*/", "* /")));
    }
    text
}

/// `string`, `integer[]`, `"a"|"b"`: a type that reads the same as its schema, when it has one.
fn short_type(property: &Value) -> Option<String> {
    let allowed = |key: &str| {
        matches!(
            key,
            "type" | "description" | "default" | "enum" | "items" | "title"
        )
    };
    if !property.as_object()?.keys().all(|key| allowed(key)) {
        return None;
    }
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        if values
            .iter()
            .all(|value| !value.is_object() && !value.is_array())
        {
            let values: Vec<String> = values.iter().map(Value::to_string).collect();
            return Some(values.join("|"));
        }
        return None;
    }
    match property.get("type")? {
        Value::String(kind) if kind == "array" => {
            let items = property.get("items")?;
            let item = short_type(items).filter(|_| items.get("description").is_none())?;
            Some(if item.contains('|') {
                format!("({item})[]")
            } else {
                format!("{item}[]")
            })
        }
        Value::String(kind) if kind == "object" => None,
        Value::String(kind) => Some(kind.clone()),
        Value::Array(kinds) => {
            let kinds: Option<Vec<&str>> = kinds.iter().map(Value::as_str).collect();
            let kinds = kinds?;
            (!kinds.iter().any(|kind| matches!(*kind, "object" | "array"))).then(|| kinds.join("|"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn tool(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: format!("Does {name}. "),
            parameters: json!({ "type": "object",
                "properties": { "path": { "type": "string" } }, "required": ["path"] }),
            read_only: true,
        }
    }

    #[test]
    fn the_section_lists_every_tool_and_the_format() {
        let section = tool_section(
            &[tool("read_file"), tool("count_lines")],
            Some(&ToolChoice::Auto),
        )
        .unwrap();
        assert_eq!(
            section,
            "# Tools\n\n\
             To call a tool, write a block in exactly this form, the arguments one JSON object:\n\
             <tool_use><name>TOOL_NAME</name><arguments>{\"parameter\": \"value\"}</arguments></tool_use>\n\
             Several blocks run in the order written. After your last block, stop: the results come \
             in the next message, one block per call, in order (a failed call's holds its error):\n\
             <tool_use_result><name>TOOL_NAME</name><result>what it returned</result></tool_use_result>\n\
             Never write <tool_use_result> yourself, nor put <tool_use> in code blocks. When you need \
             no tool, answer directly.\n\
             \nThe tools (`?`: may be left out):\n<tools>\n\
             read_file(path: string)\n  Does read_file.\n\
             count_lines(path: string)\n  Does count_lines.\n\
             </tools>"
        );
    }

    #[test]
    fn a_signature_says_each_parameter_and_falls_back_to_its_schema() {
        let parameters = json!({
            "type": "object",
            "properties": {
                "limit": { "type": "integer", "description": "Lines.", "default": 100 },
                "kind": { "enum": ["function", "type"] },
                "paths": { "type": "array", "items": { "type": "string" } },
                "filter": { "type": "object", "properties": { "a": { "type": "string" } } },
                "nullable": { "type": ["string", "null"] },
                "path": { "type": "string", "description": "`.` for all" },
            },
            "required": ["path"],
        });
        assert_eq!(
            signature("t", &parameters),
            "t(path: string /* `.` for all */, filter?: {\"properties\":{\"a\":{\"type\":\"string\"}},\"type\":\"object\"}, \
             kind?: \"function\"|\"type\", limit?: integer /* Lines. (default 100) */, \
             nullable?: string|null, paths?: string[])"
        );
        assert_eq!(signature("empty", &json!({"type": "object"})), "empty()");
        let union = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
        assert_eq!(
            signature("u", &union),
            "u(arguments: {\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]})"
        );
        // A description cannot close the comment early.
        let sly = json!({"type": "object", "properties": {"x": {"type": "string", "description": "a */ b"}}});
        assert_eq!(signature("s", &sly), "s(x?: string /* a * / b */)");
    }

    #[test]
    fn tool_choice_becomes_a_sentence() {
        let tools = [tool("read_file")];
        let required = tool_section(&tools, Some(&ToolChoice::Required)).unwrap();
        assert!(required.contains("\nIn this answer you must call at least one tool.\n"));
        let named = tool_section(&tools, Some(&ToolChoice::Function("read_file".into()))).unwrap();
        assert!(named.contains("\nIn this answer you must call the tool `read_file`.\n"));
        assert_eq!(
            tool_section(&tools, Some(&ToolChoice::None)),
            tool_section(&tools, Some(&ToolChoice::Auto)),
            "an answer-now request keeps the prefix of the requests before it"
        );
        assert_eq!(tool_section(&[], Some(&ToolChoice::Required)), None);
        assert!(tool_section(&tools, None).is_some());
    }
}
