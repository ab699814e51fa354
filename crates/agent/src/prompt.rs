//! The system prompt and the notes the agent adds to the conversation.

use tooltrail_protocol::ToolCall;

/// The system prompt: the same for every folder and every question, so that it and the tools
/// after it make one prefix a model server computes once and keeps (llama.cpp's prompt cache,
/// its saved slots, and the prefix caches of Ollama, LM Studio and vLLM). What depends on the
/// folder comes after the tools, in [`folder_context`].
pub fn system_prompt() -> String {
    "Answer questions about this project folder from its files: read them with the tools \
     (paths are relative to the folder); never guess what a file holds and never repeat a call. \
     When a tool fails, try something else. Answer concisely, in the language of the question, \
     citing the files you used."
        .to_string()
}

/// What the model is told of the folder of `workspace_name`: its name, then `sections` (the
/// project's and the MCP servers' instructions, each beginning with a blank line). It goes in a
/// second system message, which is sent at the head of the first question (see
/// `tooltrail_llm::ChatRequest`), after the fixed prefix of [`system_prompt`] and the tools.
pub fn folder_context(workspace_name: &str, sections: &str) -> String {
    format!("The project folder is \"{workspace_name}\".{sections}")
}

/// The most bytes servers' instructions take in the system prompt, whatever the window.
const MAX_INSTRUCTIONS_BYTES: usize = 8 * 1024;

/// How many bytes of the system prompt a section the user did not type (project or server
/// instructions) may take in a window of `window_tokens`: an eighth of it (about four bytes a
/// token), at most `cap`, so that it never crowds out the conversation of a small local model.
pub fn prompt_share_bytes(window_tokens: u32, cap: usize) -> usize {
    let eighth = usize::try_from(window_tokens / 8).unwrap_or(usize::MAX);
    eighth.saturating_mul(4).min(cap)
}

/// How many bytes the servers' instructions may take in a window of `window_tokens`: their
/// share of the prompt, at most 8 KiB.
pub(crate) fn server_instructions_bytes(window_tokens: u32) -> usize {
    prompt_share_bytes(window_tokens, MAX_INSTRUCTIONS_BYTES)
}

/// The section of the system prompt that passes on what the MCP servers say of themselves.
/// Each server gets an equal share of `room` bytes; a longer text is cut at a line or word
/// end, and says so.
pub(crate) fn server_instructions(servers: &[(String, String)], room: usize) -> String {
    let servers: Vec<&(String, String)> = servers
        .iter()
        .filter(|(_, text)| !text.trim().is_empty())
        .collect();
    if servers.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n\nThe MCP servers whose tools you have say this about using them (their tools are \
         named server__tool):",
    );
    let share = room / servers.len();
    for (server, text) in servers {
        let text = text.trim();
        out.push_str(&format!("\n\n## {server}\n"));
        if text.len() <= share {
            out.push_str(text);
            continue;
        }
        let mut end = share;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let cut = &text[..end];
        let cut = cut
            .rfind('\n')
            .or_else(|| cut.rfind(' '))
            .map_or(cut, |at| &cut[..at]);
        out.push_str(cut.trim_end());
        out.push_str("\n[the rest of this server's instructions is left out for room]");
    }
    out
}

/// Sent as a user message when the round limit is hit, before the last call without tools.
pub fn round_limit_note(limit: u32) -> String {
    format!(
        "[Tooltrail] The limit of {limit} tool rounds for this question is reached. Tools are \
         no longer available. Answer now from what you have found, and say what you could not \
         check."
    )
}

/// Sent as a user message when the turn's messages leave no room in the context window for
/// the tools, before the last call without them.
pub fn window_full_note() -> String {
    "[Tooltrail] The context window is full. Tools are no longer available. Answer now from \
     what you have found, and say what you could not check."
        .to_string()
}

/// Added to the result of a call the model already made with the same arguments in this turn.
pub fn repeated_call_note(previous_round: u32) -> String {
    format!(
        "\n[note: you already made this exact call in round {previous_round} of this answer. \
         Use that result instead of repeating the call.]"
    )
}

/// The result text of a call the model repeated too often; it is not run again.
pub fn repeated_call_refusal(times: u32) -> String {
    format!(
        "this exact call was already made {times} times while answering this question; it was \
         not run again. Use the earlier result, or try a different call"
    )
}

/// Sent as a user message when the model's tool calls could not run (cut off, or without a
/// name), so that it can make them again whole. Each reason is one sentence without a period.
pub fn dropped_calls_note(reasons: &[&str]) -> String {
    let mut note = String::from(
        "[Tooltrail] Your last answer tried to call a tool, but the call could not run:",
    );
    for reason in reasons {
        note.push_str("\n- ");
        note.push_str(reason);
    }
    note.push_str(
        "\nSend the call again, complete and in the expected format, or answer without tools.",
    );
    note
}

/// The answer of a turn whose model called tools although none were offered (a plain chat):
/// what it called, and why nothing ran.
pub fn unoffered_calls_answer(calls: &[ToolCall]) -> String {
    let called: Vec<String> = calls
        .iter()
        .map(|call| format!("`{}` with {}", call.name, call.arguments.trim()))
        .collect();
    format!(
        "{NOTE_MARK} The model answered with a tool call instead of words ({}), but no tools \
         were offered with this question, so nothing was run. Offer tools with the question \
         to have them run, or ask again for an answer in words.",
        called.join("; ")
    )
}

/// How every note of Tooltrail's to the model begins.
pub const NOTE_MARK: &str = "[Tooltrail]";

/// Sent as a user message when the model's answer was stopped for repeating a call it had
/// already made too often, with nothing else in it: it answers from what it has.
pub fn repeated_answer_note(tool: &str) -> String {
    format!(
        "{NOTE_MARK} You called `{tool}` again with the same arguments; its results are above. \
         Tools are no longer available. Answer now from what you have found, and say what you \
         could not check."
    )
}

/// Added to the last result of a round whose answer was stopped for repeating itself.
pub fn stopped_after_note(tool: Option<&str>) -> String {
    let what = match tool {
        Some(tool) => format!("repeated the call to `{tool}`"),
        None => "repeated the same text".to_string(),
    };
    format!(
        "\n[note: your answer {what}, so it was stopped there; the calls before that ran and \
         their results are above. Do not repeat a call: use its result.]"
    )
}

/// The result of a call that copies an earlier call of the same answer: it ran once.
pub fn copy_result(first_call_id: &str) -> String {
    format!("[same call as {first_call_id} above, which ran once: use its result]")
}

/// Sent as a user message when the model's answer copied its own instructions and nothing
/// else: it answers in its own words, without tools.
pub fn echo_note() -> String {
    format!(
        "{NOTE_MARK} Your answer repeated your instructions instead of answering. Tools are no \
         longer available. Answer the question now, briefly, in your own words."
    )
}

#[cfg(test)]
mod instructions_tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn server_instructions_are_named_and_cut_to_their_room() {
        let servers = vec![
            ("docs".to_string(), "Search first.".to_string()),
            ("quiet".to_string(), "  ".to_string()),
            ("long".to_string(), "word ".repeat(100)),
        ];
        let section = server_instructions(&servers, 60);
        assert!(section.contains("## docs\nSearch first."));
        assert!(!section.contains("## quiet"));
        let long = section.split("## long\n").nth(1).unwrap();
        assert!(long.starts_with("word word"));
        assert!(long.ends_with("[the rest of this server's instructions is left out for room]"));
        assert!(long.len() < 30 + 70);
        assert_eq!(server_instructions(&servers[1..2], 60), "");
    }

    #[test]
    fn instructions_take_an_eighth_of_a_small_window_and_at_most_8_kib() {
        assert_eq!(server_instructions_bytes(8192), 4096);
        assert_eq!(server_instructions_bytes(131_072), 8192);
    }
}
