//! The system prompt and the notes the agent adds to the conversation.

use tooltrail_protocol::ToolCall;

/// The system prompt for a conversation about the folder named `workspace_name`.
pub fn system_prompt(workspace_name: &str) -> String {
    format!(
        "You answer questions about the project folder \"{workspace_name}\". Look at its files \
         with the tools before you answer; paths are relative to the folder. Do not guess what \
         a file holds: read it. Never repeat a call; use its result. When a tool fails, try \
         something else. Answer concisely, in the language of the question, citing the files \
         you used."
    )
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
