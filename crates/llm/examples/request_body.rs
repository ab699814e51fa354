//! Prints the JSON body of a sample tool request, as the client sends it in native or prompt
//! mode, for recording a real server's answer with curl (see `scripts/real-llm record`).
//!
//! ```text
//! cargo run -p tooltrail-llm --example request_body -- prompt [MAX_TOKENS]
//! cargo run -p tooltrail-llm --example request_body -- native [MAX_TOKENS]
//! ```

use serde_json::json;
use tooltrail_llm::{ChatRequest, ToolMode};
use tooltrail_protocol::{Message, ToolCall, ToolChoice, ToolSpec};

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args
        .next()
        .unwrap_or_else(|| "prompt".into())
        .parse::<ToolMode>();
    let max_tokens = args.next().and_then(|word| word.parse::<u32>().ok());
    let request = ChatRequest {
        messages: vec![
            Message::system(
                "You are a coding agent working in a project folder. Use the tools to look at \
                 files before you answer.",
            ),
            // One round done already, so that the model has an example of the format to copy.
            Message::user("Read the file notes.txt and tell me its first line."),
            Message::assistant(
                "",
                vec![ToolCall {
                    id: "call_0".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path": "notes.txt"}"#.into(),
                }],
            ),
            Message::tool("call_0", "read_file", "1: Buy milk\n2: Call Bob"),
            Message::assistant("The first line of notes.txt is: Buy milk", Vec::new()),
            Message::user("Read the file README.md and tell me its first line."),
        ],
        tools: vec![
            ToolSpec {
                name: "read_file".into(),
                description: "Read a text file of the workspace, with line numbers.".into(),
                parameters: json!({ "type": "object",
                    "properties": { "path": { "type": "string", "description": "workspace-relative path" } },
                    "required": ["path"] }),
                read_only: true,
            },
            ToolSpec {
                name: "count_lines".into(),
                description: "Count the lines of a file or of every file in a folder.".into(),
                parameters: json!({ "type": "object",
                    "properties": { "path": { "type": "string" } }, "required": ["path"] }),
                read_only: true,
            },
        ],
        tool_choice: Some(ToolChoice::Auto),
        temperature: None,
        max_tokens: max_tokens.or(Some(256)),
    };
    let body = match mode {
        Ok(ToolMode::Prompt) => request.to_prompt_body("gemma", true),
        Ok(ToolMode::Native) => request.to_body("gemma", true),
        Ok(ToolMode::Auto) | Err(_) => {
            eprintln!("usage: request_body native|prompt [MAX_TOKENS]");
            std::process::exit(2);
        }
    };
    println!("{body}");
}
