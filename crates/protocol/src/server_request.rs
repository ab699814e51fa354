//! What an MCP server may ask of the user while one of its tools runs: input (elicitation, as a
//! form or a web page to open) and the use of the user's model (sampling).
//!
//! A form is described here field by field, already read from the server's JSON Schema, so that
//! every front end (the app's card, the terminal prompt) builds the same form and none of them
//! parses schemas.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// What the server wants the user to give.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum ElicitationRequest {
    /// Fill in a form; the answer goes back to the server.
    Form { fields: Vec<FormField> },
    /// Open a web page (a sign-in, a payment) and come back; nothing typed goes to the server.
    Url { url: String },
}

/// One field of an elicitation form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct FormField {
    /// The key the answer carries the value under.
    pub name: String,
    /// The label: the schema's title, else the key.
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub description: Option<String>,
    pub required: bool,
    pub kind: FieldKind,
    /// The value the form starts with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub default: Option<Value>,
}

/// What a field holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FieldKind {
    /// Free text; `format` is the schema's (`email`, `uri`, `date`, `date-time`) when given.
    Text {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        format: Option<String>,
    },
    /// A number; `integer` when only whole numbers are allowed.
    Number {
        integer: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        minimum: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        maximum: Option<f64>,
    },
    Boolean,
    /// One of the options (or several, when `multiple`).
    Choice {
        options: Vec<FieldOption>,
        multiple: bool,
    },
}

/// One option of a choice: the value sent and the label shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct FieldOption {
    pub value: String,
    pub label: String,
}

/// How the user answered an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationAction {
    /// Gave the input (a form's values; for a page, that it was opened and done).
    Accept,
    /// Said no.
    Decline,
    /// Closed the request without choosing.
    Cancel,
}

impl ElicitationAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Accept => "accept",
            Self::Decline => "decline",
            Self::Cancel => "cancel",
        }
    }
}

/// One message a server asks the model to continue from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SamplingMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The text; an image or audio part is described in words.
    pub text: String,
}

/// Reads an elicitation form's fields from its JSON Schema (an object of primitive
/// properties, as MCP allows). Properties of another shape are shown as text.
pub fn form_fields(schema: &Value) -> Vec<FormField> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| FormField {
            name: name.clone(),
            title: property
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or(name)
                .to_string(),
            description: property
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string),
            required: required.contains(&name.as_str()),
            kind: field_kind(property),
            default: property.get("default").cloned(),
        })
        .collect()
}

fn field_kind(property: &Value) -> FieldKind {
    let kind = property.get("type").and_then(Value::as_str).unwrap_or("");
    if kind == "array" {
        let items = property.get("items").unwrap_or(&Value::Null);
        return FieldKind::Choice {
            options: options_of(items),
            multiple: true,
        };
    }
    let options = options_of(property);
    if !options.is_empty() {
        return FieldKind::Choice {
            options,
            multiple: false,
        };
    }
    match kind {
        "boolean" => FieldKind::Boolean,
        "number" | "integer" => FieldKind::Number {
            integer: kind == "integer",
            minimum: property.get("minimum").and_then(Value::as_f64),
            maximum: property.get("maximum").and_then(Value::as_f64),
        },
        _ => FieldKind::Text {
            format: property
                .get("format")
                .and_then(Value::as_str)
                .map(str::to_string),
        },
    }
}

/// The options of an enum in any of the shapes MCP allows: `enum` (with `enumNames` for
/// labels), or `oneOf` / `anyOf` of `{const, title}`.
fn options_of(schema: &Value) -> Vec<FieldOption> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        return values
            .iter()
            .enumerate()
            .map(|(at, value)| {
                let value = text_of(value);
                let label = names
                    .and_then(|names| names.get(at))
                    .and_then(Value::as_str)
                    .map_or_else(|| value.clone(), str::to_string);
                FieldOption { value, label }
            })
            .collect();
    }
    let Some(choices) = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    choices
        .iter()
        .filter_map(|choice| {
            let value = text_of(choice.get("const")?);
            let label = choice
                .get("title")
                .and_then(Value::as_str)
                .map_or_else(|| value.clone(), str::to_string);
            Some(FieldOption { value, label })
        })
        .collect()
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_schema_becomes_fields_of_every_kind() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "description": "Your name"},
                "age": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
                "ok": {"type": "boolean"},
                "pet": {"type": "string", "enum": ["c", "d"], "enumNames": ["Cats", "Dogs"]},
                "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}]},
                "tools": {"type": "array", "items": {"type": "string", "enum": ["Guitar"]}}
            },
            "required": ["name"]
        });
        let mut fields = form_fields(&schema);
        // The schema's order where serde_json keeps it; by name otherwise.
        fields.sort_by(|a, b| a.name.cmp(&b.name));
        let names: Vec<(&str, bool)> = fields
            .iter()
            .map(|field| (field.name.as_str(), field.required))
            .collect();
        assert_eq!(
            names,
            vec![
                ("age", false),
                ("hero", false),
                ("name", true),
                ("ok", false),
                ("pet", false),
                ("tools", false)
            ]
        );
        assert_eq!(
            fields[0].kind,
            FieldKind::Number {
                integer: true,
                minimum: Some(1.0),
                maximum: Some(100.0)
            }
        );
        assert_eq!(fields[0].default, Some(json!(42)));
        assert_eq!(fields[0].title, "age");
        assert_eq!(
            fields[1].kind,
            FieldKind::Choice {
                options: vec![FieldOption {
                    value: "h1".into(),
                    label: "Superman".into()
                }],
                multiple: false
            }
        );
        assert_eq!(fields[2].title, "Name");
        assert_eq!(fields[2].kind, FieldKind::Text { format: None });
        assert_eq!(fields[3].kind, FieldKind::Boolean);
        assert_eq!(
            fields[4].kind,
            FieldKind::Choice {
                options: vec![
                    FieldOption {
                        value: "c".into(),
                        label: "Cats".into()
                    },
                    FieldOption {
                        value: "d".into(),
                        label: "Dogs".into()
                    }
                ],
                multiple: false
            }
        );
        assert!(matches!(
            fields[5].kind,
            FieldKind::Choice { multiple: true, .. }
        ));
    }
}
