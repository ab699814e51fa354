//! The conversation rewritten for a model without function calling.
//!
//! Such a model knows only system, user and assistant messages with text, and many chat
//! templates insist that user and assistant turns alternate. So an assistant message's calls
//! become `<tool_use>` blocks at the end of its text, exactly as the model would have written
//! them, and the tool results that follow become one user message of `<tool_use_result>`
//! blocks, in the order of the calls, errors included as the tools worded them. User messages
//! that end up next to each other are joined.

use std::collections::HashMap;

use tooltrail_protocol::media::unseen_sentence;
use tooltrail_protocol::{Media, MediaKind, Message, ToolCall};

use crate::prompt_mode::parse::{CLOSE, OPEN};

/// `messages` in prompt-mode form, with `section` (the tool list and format) appended to the
/// first system message, or in a new system message first when there is none.
#[cfg(test)]
pub(crate) fn prompt_messages(messages: &[Message], section: Option<&str>) -> Vec<Message> {
    prompt_messages_seeing(messages, section, false).0
}

/// [`prompt_messages`], and for a model that sees images (`vision`), the images each
/// rewritten message carries, by its index. Images a model cannot see, and sounds, are
/// described in words inside their result.
pub(crate) fn prompt_messages_seeing(
    messages: &[Message],
    section: Option<&str>,
    vision: bool,
) -> (Vec<Message>, Vec<(usize, Vec<Media>)>) {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len() + 1);
    let mut images: Vec<(usize, Vec<Media>)> = Vec::new();
    // The calls of the latest assistant message: id → (position, name).
    let mut calls: HashMap<&str, (usize, &str)> = HashMap::new();
    let mut index = 0;
    while index < messages.len() {
        match &messages[index] {
            Message::System { content } => out.push(Message::system(content.clone())),
            Message::User { content } => push_user(&mut out, content.clone()),
            Message::Assistant {
                content,
                tool_calls,
            } => {
                calls = tool_calls
                    .iter()
                    .enumerate()
                    .map(|(position, call)| (call.id.as_str(), (position, call.name.as_str())))
                    .collect();
                out.push(Message::assistant(
                    with_calls(content, tool_calls),
                    Vec::new(),
                ));
            }
            Message::Tool { .. } => {
                let run_end = messages[index..]
                    .iter()
                    .position(|message| !matches!(message, Message::Tool { .. }))
                    .map_or(messages.len(), |length| index + length);
                let run = &messages[index..run_end];
                push_user(&mut out, results(run, &calls, vision));
                let shown: Vec<Media> = run
                    .iter()
                    .flat_map(|message| match message {
                        Message::Tool { media, .. } => media.as_slice(),
                        Message::System { .. }
                        | Message::User { .. }
                        | Message::Assistant { .. } => &[],
                    })
                    .filter(|item| vision && item.kind == MediaKind::Image)
                    .cloned()
                    .collect();
                if !shown.is_empty() {
                    let at = out.len() - 1;
                    match images.last_mut() {
                        // Joined to the user message before: its images stay with it.
                        Some((last, earlier)) if *last == at => earlier.extend(shown),
                        _ => images.push((at, shown)),
                    }
                }
                index = run_end;
                continue;
            }
        }
        index += 1;
    }
    if let Some(section) = section {
        match out.iter_mut().find_map(|message| match message {
            Message::System { content } => Some(content),
            _ => None,
        }) {
            Some(content) if content.trim().is_empty() => *content = section.to_string(),
            Some(content) => {
                content.push_str("\n\n");
                content.push_str(section);
            }
            None => {
                out.insert(0, Message::system(section));
                for (at, _) in &mut images {
                    *at += 1;
                }
            }
        }
    }
    (out, images)
}

/// An assistant's text with its calls written after it as `<tool_use>` blocks.
fn with_calls(content: &str, calls: &[ToolCall]) -> String {
    let mut text = content.to_string();
    for call in calls {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "{OPEN}<name>{}</name><arguments>{}</arguments>{CLOSE}",
            call.name, call.arguments
        ));
    }
    text
}

/// One user message's text for a run of tool results, in the order of the calls they answer
/// (results for calls the assistant message did not make go last, as they came).
fn results(run: &[Message], calls: &HashMap<&str, (usize, &str)>, vision: bool) -> String {
    let mut ordered: Vec<(usize, usize, String)> = run
        .iter()
        .enumerate()
        .filter_map(|(arrival, message)| match message {
            Message::Tool {
                tool_call_id,
                name,
                content,
                media,
            } => {
                let unseen: Vec<Media> = media
                    .iter()
                    .filter(|item| !(vision && item.kind == MediaKind::Image))
                    .cloned()
                    .collect();
                let shown = media.len() - unseen.len();
                let mut content = content.clone();
                if !unseen.is_empty() {
                    content.push('\n');
                    content.push_str(&unseen_sentence(&unseen));
                }
                if shown > 0 {
                    content.push_str("\n(The images this tool returned follow these results.)");
                }
                let (position, called) = calls
                    .get(tool_call_id.as_str())
                    .copied()
                    .unwrap_or((usize::MAX, ""));
                let name = if name.is_empty() { called } else { name };
                Some((
                    position,
                    arrival,
                    format!(
                        "<tool_use_result><name>{name}</name><result>{content}</result></tool_use_result>"
                    ),
                ))
            }
            _ => None,
        })
        .collect();
    ordered.sort_by_key(|(position, arrival, _)| (*position, *arrival));
    ordered
        .into_iter()
        .map(|(_, _, block)| block)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Appends a user message, joining it to the previous one when that is a user message too.
fn push_user(out: &mut Vec<Message>, content: String) {
    if let Some(Message::User { content: previous }) = out.last_mut() {
        previous.push_str("\n\n");
        previous.push_str(&content);
    } else {
        out.push(Message::user(content));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn calls_become_blocks_and_results_one_user_message_in_call_order() {
        let messages = vec![
            Message::system("Be brief."),
            Message::user("What is in a and b?"),
            Message::assistant(
                "Let me look.",
                vec![
                    call("c1", "read_file", r#"{"path":"a"}"#),
                    call("c2", "read_file", r#"{"path":"b"}"#),
                    call("c3", "no_such_tool", "{}"),
                ],
            ),
            // Results may be recorded out of order; they go back in call order.
            Message::tool("c2", "read_file", "B text"),
            Message::tool("c1", "read_file", "A text"),
            Message::tool("c3", "", "tool not found: no_such_tool"),
            Message::user("Answer now."),
            Message::assistant("", vec![call("c4", "count_lines", "{path: .}")]),
            Message::tool("c4", "count_lines", "arguments are not valid JSON"),
            Message::assistant("Done.", Vec::new()),
        ];
        assert_eq!(
            prompt_messages(&messages, Some("# Tools")),
            vec![
                Message::system("Be brief.\n\n# Tools"),
                Message::user("What is in a and b?"),
                Message::assistant(
                    "Let me look.\n\
                     <tool_use><name>read_file</name><arguments>{\"path\":\"a\"}</arguments></tool_use>\n\
                     <tool_use><name>read_file</name><arguments>{\"path\":\"b\"}</arguments></tool_use>\n\
                     <tool_use><name>no_such_tool</name><arguments>{}</arguments></tool_use>",
                    Vec::new()
                ),
                Message::user(
                    "<tool_use_result><name>read_file</name><result>A text</result></tool_use_result>\n\
                     <tool_use_result><name>read_file</name><result>B text</result></tool_use_result>\n\
                     <tool_use_result><name>no_such_tool</name><result>tool not found: no_such_tool</result></tool_use_result>\
                     \n\nAnswer now."
                ),
                Message::assistant(
                    "<tool_use><name>count_lines</name><arguments>{path: .}</arguments></tool_use>",
                    Vec::new()
                ),
                Message::user(
                    "<tool_use_result><name>count_lines</name><result>arguments are not valid JSON</result></tool_use_result>"
                ),
                Message::assistant("Done.", Vec::new()),
            ]
        );
    }

    #[test]
    fn the_section_opens_a_conversation_without_a_system_message() {
        assert_eq!(
            prompt_messages(&[Message::user("hi")], Some("# Tools")),
            vec![Message::system("# Tools"), Message::user("hi")]
        );
        assert_eq!(
            prompt_messages(
                &[Message::system(" "), Message::user("hi")],
                Some("# Tools")
            ),
            vec![Message::system("# Tools"), Message::user("hi")]
        );
        assert_eq!(
            prompt_messages(&[Message::user("hi")], None),
            vec![Message::user("hi")]
        );
    }
}
