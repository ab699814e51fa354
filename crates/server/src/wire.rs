//! The request as OpenAI clients send it (plus `session_id`, docs/requirements.md), read
//! leniently: what Tooltrail does not use (`n`, `top_p`, `stream_options`, ...) is ignored,
//! content may be a string or a list of text parts, and `developer` is read as `system`.

use serde::Deserialize;
use serde_json::Value;
use tooltrail_protocol::{Message, ToolCall, ToolChoice, ToolSpec};

use crate::error::ApiError;

/// `POST /v1/chat/completions`.
#[derive(Debug, Clone, Deserialize)]
pub struct ChatCompletionRequest {
    #[serde(default)]
    pub model: Option<String>,
    pub messages: Vec<WireMessage>,
    #[serde(default)]
    pub tools: Option<Vec<WireTool>>,
    #[serde(default)]
    pub tool_choice: Option<Value>,
    #[serde(default)]
    pub stream: Option<bool>,
    #[serde(default)]
    pub temperature: Option<f32>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    #[serde(default)]
    pub max_completion_tokens: Option<u32>,
    /// The session whose conversation and workspace this request continues (not OpenAI's).
    #[serde(default)]
    pub session_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WireMessage {
    pub role: String,
    #[serde(default)]
    pub content: Option<Value>,
    #[serde(default)]
    pub tool_calls: Option<Vec<WireToolCall>>,
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WireToolCall {
    pub id: String,
    pub function: WireFunctionCall,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WireFunctionCall {
    pub name: String,
    #[serde(default)]
    pub arguments: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WireTool {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    pub function: WireFunction,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WireFunction {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub parameters: Option<Value>,
}

impl ChatCompletionRequest {
    pub fn parse(body: &[u8]) -> Result<Self, ApiError> {
        serde_json::from_slice(body).map_err(|error| {
            ApiError::invalid(
                "invalid_request",
                format!("The request body is not a chat completion request: {error}."),
            )
        })
    }

    pub fn streams(&self) -> bool {
        self.stream.unwrap_or(false)
    }

    /// The client's declared tools as specs (their own schema and description).
    pub fn declared(&self) -> Result<Vec<ToolSpec>, ApiError> {
        let Some(tools) = &self.tools else {
            return Ok(Vec::new());
        };
        tools
            .iter()
            .map(|tool| {
                if tool.kind.as_deref().is_some_and(|kind| kind != "function") {
                    return Err(ApiError::invalid(
                        "invalid_request",
                        "Only tools of type `function` are supported.",
                    ));
                }
                if tool.function.name.trim().is_empty() {
                    return Err(ApiError::invalid(
                        "invalid_request",
                        "Every tool needs a function name.",
                    ));
                }
                Ok(ToolSpec {
                    name: tool.function.name.clone(),
                    description: tool.function.description.clone().unwrap_or_default(),
                    parameters: tool
                        .function
                        .parameters
                        .clone()
                        .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
                    read_only: false,
                })
            })
            .collect()
    }

    /// `tool_choice` as the protocol has it; `None` when absent.
    pub fn choice(&self) -> Result<Option<ToolChoice>, ApiError> {
        let Some(choice) = &self.tool_choice else {
            return Ok(None);
        };
        let parsed = match choice {
            Value::String(mode) => match mode.as_str() {
                "auto" => Some(ToolChoice::Auto),
                "none" => Some(ToolChoice::None),
                "required" => Some(ToolChoice::Required),
                _ => None,
            },
            Value::Object(object) => object
                .get("function")
                .and_then(|function| function.get("name"))
                .and_then(Value::as_str)
                .map(|name| ToolChoice::Function(name.to_string())),
            Value::Null => return Ok(None),
            Value::Bool(_) | Value::Number(_) | Value::Array(_) => None,
        };
        parsed.map(Some).ok_or_else(|| {
            ApiError::invalid(
                "invalid_request",
                "`tool_choice` must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}.",
            )
        })
    }

    /// The messages as the protocol has them, in order.
    pub fn messages(&self) -> Result<Vec<Message>, ApiError> {
        self.messages.iter().map(WireMessage::to_message).collect()
    }
}

impl WireMessage {
    fn text(&self) -> String {
        match &self.content {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            // Content parts: the text ones, joined; images and audio are not for these models.
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            Some(other) => other.to_string(),
        }
    }

    fn to_message(&self) -> Result<Message, ApiError> {
        Ok(match self.role.as_str() {
            "system" | "developer" => Message::system(self.text()),
            "user" => Message::user(self.text()),
            "assistant" => Message::assistant(
                self.text(),
                self.tool_calls
                    .iter()
                    .flatten()
                    .map(|call| ToolCall {
                        id: call.id.clone(),
                        name: call.function.name.clone(),
                        arguments: match &call.function.arguments {
                            None | Some(Value::Null) => String::new(),
                            Some(Value::String(text)) => text.clone(),
                            Some(other) => other.to_string(),
                        },
                    })
                    .collect(),
            ),
            "tool" => {
                let Some(id) = self.tool_call_id.clone() else {
                    return Err(ApiError::invalid(
                        "invalid_request",
                        "A `tool` message needs the `tool_call_id` it answers.",
                    ));
                };
                Message::tool(id, self.name.clone().unwrap_or_default(), self.text())
            }
            other => {
                return Err(ApiError::invalid(
                    "invalid_request",
                    format!("Unknown message role `{other}`."),
                ));
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn messages_of_every_role_and_content_shape_are_read() {
        let request = ChatCompletionRequest::parse(
            json!({
                "model": "m",
                "messages": [
                    {"role": "developer", "content": "Be brief."},
                    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "42"}
                ],
                "stream_options": {"include_usage": true}
            })
            .to_string()
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(
            request.messages().unwrap(),
            vec![
                Message::system("Be brief."),
                Message::user("a\nb"),
                Message::assistant(
                    "",
                    vec![ToolCall {
                        id: "call_1".into(),
                        name: "f".into(),
                        arguments: "{\"x\":1}".into()
                    }]
                ),
                Message::tool("call_1", "", "42"),
            ]
        );
    }

    #[test]
    fn tool_choice_takes_openai_shapes() {
        let parse = |choice: Value| {
            ChatCompletionRequest::parse(
                json!({"messages": [], "tool_choice": choice})
                    .to_string()
                    .as_bytes(),
            )
            .unwrap()
            .choice()
        };
        assert_eq!(parse(json!("auto")).unwrap(), Some(ToolChoice::Auto));
        assert_eq!(parse(json!("none")).unwrap(), Some(ToolChoice::None));
        assert_eq!(
            parse(json!({"type": "function", "function": {"name": "read_file"}})).unwrap(),
            Some(ToolChoice::Function("read_file".into()))
        );
        assert_eq!(
            parse(json!("sometimes")).unwrap_err().code,
            "invalid_request"
        );
    }
}
