//! The system prompt section that offers the tools to a model without function calling.

use tooltrail_protocol::{ToolChoice, ToolSpec};

use crate::prompt_mode::parse::{CLOSE, OPEN};

/// The section appended to the system prompt, or `None` when no tool is offered.
///
/// A tool choice of `none` keeps the section as `auto` writes it, byte for byte: such a request
/// (the last of a turn, asking for the answer) then shares its whole prefix with the requests
/// before it, so a server's prompt cache serves it; the request's own last message says that
/// no tool may be called, and calls made all the same are not run.
///
/// Each tool is one line: its name, description and JSON-Schema parameters as compact JSON,
/// which is what models read best for the fewest tokens. The format is shown exactly once,
/// with a filled-in example, because small models copy examples more faithfully than they
/// follow descriptions.
pub(crate) fn tool_section(tools: &[ToolSpec], choice: Option<&ToolChoice>) -> Option<String> {
    if tools.is_empty() {
        return None;
    }
    let mut section = String::from(
        "# Tools\n\n\
         You can call the tools listed in <tools> below. To call one, write a block in exactly \
         this form, with the arguments as one JSON object that matches the tool's parameters:\n\n",
    );
    section.push_str(&format!(
        "{OPEN}<name>TOOL_NAME</name><arguments>{{\"parameter\": \"value\"}}</arguments>{CLOSE}\n\n"
    ));
    section.push_str(
        "You may write several such blocks in one answer; they run in the order written. After \
         your last block, stop and wait: the results come back in the next message, one block \
         per call, in the same order (a failed call's block holds its error):\n\n\
         <tool_use_result><name>TOOL_NAME</name><result>what the tool returned</result></tool_use_result>\n\n\
         Never write <tool_use_result> blocks yourself, and do not put <tool_use> blocks in code \
         blocks. When you need no tool, answer directly.\n",
    );
    match choice {
        Some(ToolChoice::Required) => {
            section.push_str("\nIn this answer you must call at least one tool.\n");
        }
        Some(ToolChoice::Function(name)) => {
            section.push_str(&format!(
                "\nIn this answer you must call the tool `{name}`.\n"
            ));
        }
        Some(ToolChoice::Auto | ToolChoice::None) | None => {}
    }
    section.push_str("\n<tools>\n");
    for tool in tools {
        let parameters = serde_json::to_string(&tool.parameters).unwrap_or_default();
        section.push_str(&format!(
            "<tool><name>{}</name><description>{}</description><parameters>{parameters}</parameters></tool>\n",
            tool.name,
            tool.description.trim(),
        ));
    }
    section.push_str("</tools>");
    Some(section)
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
             You can call the tools listed in <tools> below. To call one, write a block in exactly \
             this form, with the arguments as one JSON object that matches the tool's parameters:\n\n\
             <tool_use><name>TOOL_NAME</name><arguments>{\"parameter\": \"value\"}</arguments></tool_use>\n\n\
             You may write several such blocks in one answer; they run in the order written. After \
             your last block, stop and wait: the results come back in the next message, one block \
             per call, in the same order (a failed call's block holds its error):\n\n\
             <tool_use_result><name>TOOL_NAME</name><result>what the tool returned</result></tool_use_result>\n\n\
             Never write <tool_use_result> blocks yourself, and do not put <tool_use> blocks in code \
             blocks. When you need no tool, answer directly.\n\
             \n<tools>\n\
             <tool><name>read_file</name><description>Does read_file.</description><parameters>{\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"],\"type\":\"object\"}</parameters></tool>\n\
             <tool><name>count_lines</name><description>Does count_lines.</description><parameters>{\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"],\"type\":\"object\"}</parameters></tool>\n\
             </tools>"
        );
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
