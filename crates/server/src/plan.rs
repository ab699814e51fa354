//! How a request becomes a turn: which of its messages are new, and which tools run where.
//!
//! **Messages.** OpenAI clients send the whole history with every request. Without a
//! `session_id`, each request is a conversation of its own, started from the client's
//! messages as they are (the record shows the history it came with). With a `session_id`, the
//! session's stored conversation is the history — it holds what the client never saw, such as
//! the calls that ran on the server — so only the client's messages after its last assistant
//! message are new: the next question, or the results of the calls handed to the client. A
//! client that sends only the new messages gets the same.
//!
//! **Tools.** The client chooses the tools by declaring them. A declared tool Tooltrail knows
//! (a built-in or an MCP tool, by name) is offered with Tooltrail's own description and schema
//! (the ones its arguments are checked against) and runs on the server; one it does not know
//! is offered as declared and handed back to the client as a `tool_call` (manual mode). A
//! request without `tools`, or with `tool_choice: "none"`, is a plain chat with no tools, and
//! without Tooltrail's system prompt: it is passed through — unless the server runs with
//! `--default-tools builtin` or `read-only` ([`DefaultTools`]): most chat front ends cannot
//! declare tools by name, so a request that declares none is offered those of Tooltrail's
//! built-in tools, as if it had declared them.

use std::collections::HashSet;

use tooltrail_host::ToolRegistry;
use tooltrail_host::TurnOptions;
use tooltrail_protocol::{Message, ToolChoice, ToolSource, ToolSpec};

use crate::error::ApiError;

/// The tools a request that declares none is offered (`tooltrail serve --default-tools`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DefaultTools {
    /// Every built-in tool that is on (those that need approval follow `--approve`).
    Builtin,
    /// The built-in tools that only read.
    ReadOnly,
    /// None: a plain chat, passed through.
    #[default]
    None,
}

/// The tools `declared`, or when there are none, the server's default tools as if the
/// client had declared them.
pub fn or_default(
    declared: Vec<ToolSpec>,
    default: DefaultTools,
    known: &ToolRegistry,
) -> Vec<ToolSpec> {
    if !declared.is_empty() {
        return declared;
    }
    let builtin = |spec: &ToolSpec| {
        known
            .get(&spec.name)
            .is_some_and(|tool| match tool.source() {
                ToolSource::Builtin => true,
                ToolSource::Mcp { .. } => false,
            })
    };
    known
        .offered_specs()
        .into_iter()
        .filter(|spec| match default {
            DefaultTools::Builtin => builtin(spec),
            DefaultTools::ReadOnly => builtin(spec) && spec.read_only,
            DefaultTools::None => false,
        })
        .collect()
}

/// The tools of one request.
pub fn tools(
    declared: Vec<ToolSpec>,
    choice: Option<ToolChoice>,
    known: &ToolRegistry,
) -> Result<TurnOptions, ApiError> {
    let plain = TurnOptions {
        offered: Some(Vec::new()),
        system_prompt: false,
        ..TurnOptions::default()
    };
    if choice == Some(ToolChoice::None) {
        return Ok(plain);
    }
    let mut offered = Vec::new();
    let mut external = Vec::new();
    let mut names = HashSet::new();
    for spec in declared {
        if !names.insert(spec.name.clone()) {
            continue;
        }
        if known.get(&spec.name).is_some() {
            offered.push(spec.name);
        } else {
            external.push(spec);
        }
    }
    match &choice {
        Some(ToolChoice::Function(name)) if !names.contains(name) => {
            // Named without being declared: one of ours is offered for it; anything else is
            // a tool nobody can run.
            if known.get(name).is_none() {
                return Err(ApiError::tool_not_found(name));
            }
            offered.push(name.clone());
        }
        Some(ToolChoice::Required) if names.is_empty() => {
            return Err(ApiError::invalid(
                "invalid_request",
                "`tool_choice: \"required\"` needs `tools`.",
            ));
        }
        Some(_) | None => {}
    }
    if offered.is_empty() && external.is_empty() {
        return Ok(plain);
    }
    Ok(TurnOptions {
        // Tooltrail's prompt tells the model about the folder its tools work in.
        system_prompt: !offered.is_empty(),
        offered: Some(offered),
        external,
        first_choice: choice,
        ..TurnOptions::default()
    })
}

/// The messages a request adds to `history` (the session's stored conversation; empty for a
/// new one), with each tool result named after the call it answers.
pub fn new_messages(history: &[Message], sent: Vec<Message>) -> Result<Vec<Message>, ApiError> {
    let mut new: Vec<Message> = if history.is_empty() {
        sent
    } else {
        let start = sent
            .iter()
            .rposition(|message| matches!(message, Message::Assistant { .. }))
            .map_or(0, |last| last + 1);
        sent.into_iter().skip(start).collect()
    };
    match new.last() {
        Some(Message::User { .. } | Message::Tool { .. }) => {}
        Some(Message::System { .. } | Message::Assistant { .. }) | None => {
            return Err(ApiError::invalid(
                "invalid_request",
                "The last message must be the user's or a tool result.",
            ));
        }
    }
    let mut pending = pending_calls(history);
    for (position, message) in new.iter_mut().enumerate() {
        match message {
            Message::Assistant { tool_calls, .. } => {
                pending = tool_calls
                    .iter()
                    .map(|call| (call.id.clone(), call.name.clone()))
                    .collect();
            }
            Message::Tool {
                tool_call_id, name, ..
            } => {
                let Some(index) = pending.iter().position(|(id, _)| id == tool_call_id) else {
                    return Err(ApiError::invalid(
                        "unknown_tool_call_id",
                        format!(
                            "The tool result for `{tool_call_id}` answers no call that waits for one."
                        ),
                    ));
                };
                let (_, tool) = pending.remove(index);
                if name.is_empty() {
                    *name = tool;
                }
            }
            Message::User { .. } | Message::System { .. } => {
                if let Some((id, tool)) = pending.first()
                    && (position > 0 || !history.is_empty())
                {
                    return Err(ApiError {
                        tool_name: Some(tool.clone()),
                        ..ApiError::invalid(
                            "tool_result_missing",
                            format!(
                                "The call `{id}` of tool `{tool}` needs its result (a `tool` message) before the next message."
                            ),
                        )
                    });
                }
            }
        }
    }
    Ok(new)
}

/// The calls of the last assistant message that have no result yet, as (id, tool).
pub fn pending_calls(history: &[Message]) -> Vec<(String, String)> {
    let Some(last) = history
        .iter()
        .rposition(|message| matches!(message, Message::Assistant { .. }))
    else {
        return Vec::new();
    };
    let Message::Assistant { tool_calls, .. } = &history[last] else {
        return Vec::new();
    };
    let answered: HashSet<&str> = history[last + 1..]
        .iter()
        .filter_map(|message| match message {
            Message::Tool { tool_call_id, .. } => Some(tool_call_id.as_str()),
            Message::System { .. } | Message::User { .. } | Message::Assistant { .. } => None,
        })
        .collect();
    tool_calls
        .iter()
        .filter(|call| !answered.contains(call.id.as_str()))
        .map(|call| (call.id.clone(), call.name.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tooltrail_protocol::ToolCall;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: format!("the client's {name}"),
            parameters: json!({"type": "object"}),
            read_only: false,
        }
    }

    fn call(id: &str, name: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
        }
    }

    #[test]
    fn a_request_without_tools_gets_the_default_tools_as_if_declared() {
        let known = ToolRegistry::with_builtins();
        let names = |default| -> Vec<String> {
            or_default(Vec::new(), default, &known)
                .into_iter()
                .map(|spec| spec.name)
                .collect()
        };
        assert_eq!(names(DefaultTools::None), Vec::<String>::new());
        let read_only = names(DefaultTools::ReadOnly);
        assert!(
            read_only.contains(&"read_file".to_string()),
            "{read_only:?}"
        );
        assert!(
            !read_only.contains(&"execute_bash".to_string()),
            "{read_only:?}"
        );
        let builtin = names(DefaultTools::Builtin);
        assert!(builtin.contains(&"execute_bash".to_string()), "{builtin:?}");
        assert!(builtin.len() > read_only.len());
        // Tools the client declared are its choice, whatever the default.
        assert_eq!(
            or_default(vec![spec("get_weather")], DefaultTools::Builtin, &known),
            vec![spec("get_weather")]
        );
    }

    #[test]
    fn known_tools_run_here_and_the_others_go_back_to_the_client() {
        let known = ToolRegistry::with_builtins();
        let options = tools(
            vec![spec("read_file"), spec("get_weather"), spec("read_file")],
            Some(ToolChoice::Auto),
            &known,
        )
        .unwrap();
        assert_eq!(
            options,
            TurnOptions {
                offered: Some(vec!["read_file".into()]),
                external: vec![spec("get_weather")],
                first_choice: Some(ToolChoice::Auto),
                ..TurnOptions::default()
            }
        );
        // Only the client's tools: nothing runs here, so no prompt about the folder.
        let manual = tools(vec![spec("get_weather")], None, &known).unwrap();
        assert_eq!(
            (manual.offered, manual.system_prompt),
            (Some(vec![]), false)
        );
    }

    #[test]
    fn no_tools_or_none_is_a_plain_chat_and_an_unknown_named_tool_is_not_found() {
        let known = ToolRegistry::with_builtins();
        let plain = TurnOptions {
            offered: Some(Vec::new()),
            system_prompt: false,
            ..TurnOptions::default()
        };
        assert_eq!(tools(vec![], None, &known).unwrap(), plain);
        assert_eq!(
            tools(vec![spec("read_file")], Some(ToolChoice::None), &known).unwrap(),
            plain
        );
        assert_eq!(
            tools(vec![], Some(ToolChoice::Function("nope".into())), &known).unwrap_err(),
            ApiError::tool_not_found("nope")
        );
        let named = tools(
            vec![],
            Some(ToolChoice::Function("count_lines".into())),
            &known,
        )
        .unwrap();
        assert_eq!(named.offered, Some(vec!["count_lines".to_string()]));
    }

    #[test]
    fn a_session_takes_what_follows_the_clients_last_assistant_message() {
        let history = vec![
            Message::system("s"),
            Message::user("q1"),
            Message::assistant("", vec![call("c1", "read_file"), call("c2", "get_weather")]),
            Message::tool("c1", "read_file", "server result"),
        ];
        // The client resends what it saw: its question, the call handed to it, its result.
        let sent = vec![
            Message::user("q1"),
            Message::assistant("", vec![call("c2", "get_weather")]),
            Message::tool("c2", "", "sunny"),
        ];
        assert_eq!(
            new_messages(&history, sent).unwrap(),
            vec![Message::tool("c2", "get_weather", "sunny")]
        );
        let skipped = vec![Message::user("q2")];
        assert_eq!(
            new_messages(&history, skipped).unwrap_err().code,
            "tool_result_missing"
        );
        let stranger = vec![Message::tool("c9", "", "?")];
        assert_eq!(
            new_messages(&history, stranger).unwrap_err().code,
            "unknown_tool_call_id"
        );
    }

    #[test]
    fn without_history_every_message_is_new() {
        let sent = vec![
            Message::user("q"),
            Message::assistant("", vec![call("c1", "get_weather")]),
            Message::tool("c1", "", "sunny"),
        ];
        assert_eq!(
            new_messages(&[], sent).unwrap(),
            vec![
                Message::user("q"),
                Message::assistant("", vec![call("c1", "get_weather")]),
                Message::tool("c1", "get_weather", "sunny"),
            ]
        );
        assert_eq!(
            new_messages(&[], vec![Message::assistant("hi", vec![])])
                .unwrap_err()
                .code,
            "invalid_request"
        );
    }
}
