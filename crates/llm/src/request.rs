//! What is sent: the request type and its OpenAI wire shape.

use serde_json::{Map, Value, json};
use tooltrail_protocol::{Message, ToolCall, ToolChoice, ToolSpec};

/// One chat completion request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    /// Sent as the `tools` field when not empty.
    pub tools: Vec<ToolSpec>,
    pub tool_choice: Option<ToolChoice>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
}

impl ChatRequest {
    /// A request with these messages and nothing else set.
    pub fn new(messages: Vec<Message>) -> Self {
        Self {
            messages,
            ..Self::default()
        }
    }

    /// The JSON body sent to `/chat/completions`.
    ///
    /// Built by hand rather than derived, because the wire shape differs from the protocol
    /// types on purpose: assistant content is always a string (some servers answer 500 to
    /// `null`), a tool message carries no `name`, and a tool's `read_only` flag is ours alone.
    pub fn to_body(&self, model: &str, stream: bool) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(model));
        body.insert(
            "messages".into(),
            Value::Array(self.messages.iter().map(message_json).collect()),
        );
        if !self.tools.is_empty() {
            body.insert(
                "tools".into(),
                Value::Array(self.tools.iter().map(tool_json).collect()),
            );
        }
        if let Some(choice) = &self.tool_choice {
            body.insert("tool_choice".into(), tool_choice_json(choice));
        }
        if let Some(temperature) = self.temperature {
            body.insert("temperature".into(), json!(temperature));
        }
        if let Some(max_tokens) = self.max_tokens {
            body.insert("max_tokens".into(), json!(max_tokens));
        }
        body.insert("stream".into(), json!(stream));
        if stream {
            body.insert("stream_options".into(), json!({ "include_usage": true }));
        }
        Value::Object(body)
    }
}

fn message_json(message: &Message) -> Value {
    match message {
        Message::System { content } => json!({ "role": "system", "content": content }),
        Message::User { content } => json!({ "role": "user", "content": content }),
        Message::Assistant {
            content,
            tool_calls,
        } => {
            let mut value = json!({ "role": "assistant", "content": content });
            if !tool_calls.is_empty() {
                value["tool_calls"] = Value::Array(tool_calls.iter().map(tool_call_json).collect());
            }
            value
        }
        Message::Tool {
            tool_call_id,
            name: _,
            content,
        } => json!({ "role": "tool", "tool_call_id": tool_call_id, "content": content }),
    }
}

fn tool_call_json(call: &ToolCall) -> Value {
    // Some servers (llama.cpp's) reject a history holding arguments that are not JSON; the
    // call's result already tells the model what was wrong with them.
    let arguments = if serde_json::from_str::<serde::de::IgnoredAny>(&call.arguments).is_ok() {
        call.arguments.as_str()
    } else {
        "{}"
    };
    json!({
        "id": call.id,
        "type": "function",
        "function": { "name": call.name, "arguments": arguments },
    })
}

/// One tool as the `tools` field of a request carries it.
pub fn tool_json(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    })
}

fn tool_choice_json(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Function(name) => json!({ "type": "function", "function": { "name": name } }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn history_uses_the_openai_wire_shape() {
        let request = ChatRequest {
            messages: vec![
                Message::system("be brief"),
                Message::user("hi"),
                Message::assistant(
                    "",
                    vec![ToolCall {
                        id: "call_1".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"a"}"#.into(),
                    }],
                ),
                Message::tool("call_1", "read_file", "text"),
                Message::assistant("done", Vec::new()),
            ],
            tools: Vec::new(),
            tool_choice: None,
            temperature: None,
            max_tokens: None,
        };
        assert_eq!(
            request.to_body("m", false),
            json!({
                "model": "m",
                "messages": [
                    { "role": "system", "content": "be brief" },
                    { "role": "user", "content": "hi" },
                    { "role": "assistant", "content": "", "tool_calls": [
                        { "id": "call_1", "type": "function",
                          "function": { "name": "read_file", "arguments": "{\"path\":\"a\"}" } }
                    ] },
                    { "role": "tool", "tool_call_id": "call_1", "content": "text" },
                    { "role": "assistant", "content": "done" },
                ],
                "stream": false,
            })
        );
    }

    #[test]
    fn history_calls_whose_arguments_are_not_json_are_sent_as_empty_objects() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "read_file".into(),
            arguments: "{path: README".into(),
        };
        assert_eq!(
            tool_call_json(&call),
            json!({ "id": "call_1", "type": "function",
                    "function": { "name": "read_file", "arguments": "{}" } })
        );
    }

    #[test]
    fn tools_choice_and_sampling_fields() {
        let request = ChatRequest {
            messages: vec![Message::user("hi")],
            tools: vec![ToolSpec {
                name: "count_lines".into(),
                description: "Count lines".into(),
                parameters: json!({ "type": "object" }),
                read_only: true,
            }],
            tool_choice: Some(ToolChoice::Function("count_lines".into())),
            temperature: Some(0.5),
            max_tokens: Some(64),
        };
        assert_eq!(
            request.to_body("m", true),
            json!({
                "model": "m",
                "messages": [{ "role": "user", "content": "hi" }],
                "tools": [{ "type": "function", "function": {
                    "name": "count_lines", "description": "Count lines",
                    "parameters": { "type": "object" } } }],
                "tool_choice": { "type": "function", "function": { "name": "count_lines" } },
                "temperature": 0.5,
                "max_tokens": 64,
                "stream": true,
                "stream_options": { "include_usage": true },
            })
        );
    }

    #[test]
    fn tool_choice_words() {
        let words: Vec<Value> = [ToolChoice::Auto, ToolChoice::None, ToolChoice::Required]
            .iter()
            .map(tool_choice_json)
            .collect();
        assert_eq!(words, vec![json!("auto"), json!("none"), json!("required")]);
    }
}
