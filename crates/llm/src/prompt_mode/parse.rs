//! The streaming `<tool_use>` parser: the model's text in, visible text and tool calls out.
//!
//! Text arrives in pieces split anywhere, even inside `<` or `</`. The parser reads it one
//! character at a time, so what it finds depends only on the text, never on where the pieces
//! were cut; only how the visible text is grouped into [`StreamDelta::Text`] pieces does.
//!
//! - Outside a call, text is passed on as it comes, except a `<` that may begin `<tool_use>`:
//!   that is held back until the tag is complete (a call begins, and the tag is never shown)
//!   or cannot be (the held text is shown).
//! - Inside a fenced code block (a line opening with ``` or ~~~, up to the line that closes
//!   it) and inside `<think>…</think>`, nothing is a call: models show the format in examples
//!   and think aloud about calls they will make.
//! - Inside a call, the block's text is collected until `</tool_use>`. While it streams, the
//!   call is announced the way native calls are: a [`StreamDelta::ToolCall`] with its name once
//!   `<name>…</name>` is complete, then the text of `<arguments>` in fragments. At the end of
//!   the block the call is judged: no name makes it a [`DroppedCall`] (a lone word before
//!   `</name>` counts, as small models forget `<name>`); its arguments are
//!   lightly repaired ([`repair_arguments`]) and kept even when they do not parse, so that
//!   running it tells the model what is wrong, as native mode does. A new `<tool_use>` inside
//!   an open block ends the open one.
//! - At the end of the answer, held text is shown, and a block still open is judged like a
//!   closed one if its name and arguments are whole (a model that forgot `</tool_use>`, or a
//!   stop sequence that ate it), unless the answer was cut by its length limit; otherwise it
//!   is dropped with the reason.

use tooltrail_protocol::ToolCall;

use crate::prompt_mode::repair::{parses, repair_arguments};
use crate::response::{DroppedCall, StreamDelta};

pub(crate) const OPEN: &str = "<tool_use>";
pub(crate) const CLOSE: &str = "</tool_use>";
const NAME_OPEN: &str = "<name>";
const NAME_CLOSE: &str = "</name>";
const ARGUMENTS_OPEN: &str = "<arguments>";
const ARGUMENTS_CLOSE: &str = "</arguments>";
const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";

/// What the parser found in a whole answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Parsed {
    /// The answer without its calls: every [`StreamDelta::Text`] piece, joined.
    pub text: String,
    pub calls: Vec<ToolCall>,
    pub dropped: Vec<DroppedCall>,
}

#[derive(Debug, Default)]
pub(crate) struct ToolUseParser {
    state: State,
    /// Text held back because it may be the beginning of `<tool_use>` or `<think>`.
    held: String,
    /// Visible text not yet passed on.
    unsent: String,
    line: LineScan,
    /// The fence of the code block the text is in: its character and length.
    fence: Option<(char, usize)>,
    /// The last characters of a `<think>` block, to find its end.
    think_tail: String,
    call: Option<OpenCall>,
    parsed: Parsed,
    /// Calls begun so far, closed or not: the next call's index.
    begun: u32,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    #[default]
    Text,
    Think,
    Call,
}

/// A `<tool_use>` block being read.
#[derive(Debug)]
struct OpenCall {
    index: u32,
    id: String,
    body: String,
    name_sent: bool,
    /// Bytes of the arguments' text already passed on.
    arguments_sent: usize,
}

/// Where the current line is, for finding the fences of code blocks: in its indentation, in
/// a run of fence characters at its start, or past both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineScan {
    Indent(usize),
    Fence(char, usize),
    Rest,
}

impl Default for LineScan {
    fn default() -> Self {
        Self::Indent(0)
    }
}

impl ToolUseParser {
    /// Reads the next piece of the answer's text, passing on what it makes visible and the
    /// progress of calls.
    pub fn push(&mut self, text: &str, out: &mut dyn FnMut(StreamDelta)) {
        for c in text.chars() {
            match self.state {
                State::Text => self.text_char(c, out),
                State::Think => self.think_char(c),
                State::Call => self.call_char(c, out),
            }
        }
        if self.state == State::Call {
            self.announce(None, out);
        }
        self.send_text(out);
    }

    /// The answer is over. `truncated`: it was cut by its length limit, so a block still open
    /// is not whole whatever it holds.
    pub fn finish(mut self, truncated: bool, out: &mut dyn FnMut(StreamDelta)) -> Parsed {
        let held = std::mem::take(&mut self.held);
        self.show_str(&held);
        if let Some(call) = self.call.take() {
            self.judge(call, false, truncated, out);
        }
        self.send_text(out);
        self.parsed
    }

    fn text_char(&mut self, c: char, out: &mut dyn FnMut(StreamDelta)) {
        self.scan_line(c);
        if self.fence.is_some() && !self.held.is_empty() {
            // Not reached (held text begins with `<`, which ends a line's fence run first),
            // but held text must never be shown after what follows it.
            let held = std::mem::take(&mut self.held);
            self.show_str(&held);
        }
        if self.fence.is_some() || (self.held.is_empty() && c != '<') {
            self.show(c);
            return;
        }
        self.held.push(c);
        if self.held == OPEN {
            self.held.clear();
            self.open_call(out);
        } else if self.held == THINK_OPEN {
            let held = std::mem::take(&mut self.held);
            self.show_str(&held);
            self.state = State::Think;
            self.think_tail.clear();
        } else if !OPEN.starts_with(&self.held) && !THINK_OPEN.starts_with(&self.held) {
            // The held text can no longer become a tag. All of it is shown, except a last `<`,
            // which may begin one.
            let mut held = std::mem::take(&mut self.held);
            if held.len() > 1 && held.ends_with('<') {
                held.pop();
                self.held.push('<');
            }
            self.show_str(&held);
        }
    }

    fn think_char(&mut self, c: char) {
        self.show(c);
        self.think_tail.push(c);
        if self.think_tail.ends_with(THINK_CLOSE) {
            self.state = State::Text;
            self.think_tail.clear();
        } else if self.think_tail.len() > 64 {
            let keep = self.think_tail.len() - THINK_CLOSE.len();
            let cut = (keep..self.think_tail.len())
                .find(|at| self.think_tail.is_char_boundary(*at))
                .unwrap_or(keep);
            self.think_tail.drain(..cut);
        }
    }

    fn call_char(&mut self, c: char, out: &mut dyn FnMut(StreamDelta)) {
        let Some(mut call) = self.call.take() else {
            self.state = State::Text;
            return;
        };
        call.body.push(c);
        if call.body.ends_with(CLOSE) {
            call.body.truncate(call.body.len() - CLOSE.len());
            self.judge(call, true, false, out);
            self.state = State::Text;
        } else if call.body.ends_with(OPEN) {
            // A new call before this one was closed: this one ends where the new one begins.
            call.body.truncate(call.body.len() - OPEN.len());
            self.judge(call, false, false, out);
            self.open_call(out);
        } else {
            self.call = Some(call);
        }
    }

    fn open_call(&mut self, out: &mut dyn FnMut(StreamDelta)) {
        // The text before the call is passed on before anything of the call.
        self.send_text(out);
        self.call = Some(OpenCall {
            index: self.begun,
            id: format!("call_{}", uuid::Uuid::new_v4().simple()),
            body: String::new(),
            name_sent: false,
            arguments_sent: 0,
        });
        self.begun = self.begun.saturating_add(1);
        self.state = State::Call;
    }

    /// Passes on what is new of the open call: its name once whole, and the arguments' text
    /// that cannot be the beginning of a closing tag. `whole`: the call's body is complete,
    /// so all of its arguments' text is passed on.
    fn announce(&mut self, whole: Option<&OpenCall>, out: &mut dyn FnMut(StreamDelta)) {
        let call = match whole {
            Some(call) => call,
            None => match self.call.as_ref() {
                Some(call) => call,
                None => return,
            },
        };
        let name = (!call.name_sent)
            .then(|| call_name(&call.body))
            .flatten()
            .filter(|name| !name.is_empty())
            .map(str::to_string);
        let arguments = arguments_text(&call.body, whole.is_some()).unwrap_or("");
        let fragment = arguments
            .get(call.arguments_sent..)
            .unwrap_or("")
            .to_string();
        if name.is_none() && fragment.is_empty() {
            return;
        }
        out(StreamDelta::ToolCall {
            index: call.index,
            id: call.id.clone(),
            name: name.clone(),
            arguments: fragment.clone(),
        });
        if whole.is_none()
            && let Some(open) = self.call.as_mut()
        {
            open.name_sent |= name.is_some();
            open.arguments_sent += fragment.len();
        }
    }

    /// Judges a call whose block ended: `closed` by `</tool_use>`, or not (the answer or a
    /// new call began first).
    fn judge(
        &mut self,
        call: OpenCall,
        closed: bool,
        truncated: bool,
        out: &mut dyn FnMut(StreamDelta),
    ) {
        self.send_text(out);
        // Whatever of the arguments was held back is passed on now that the block is over.
        self.announce(Some(&call), out);
        let name = call_name(&call.body).unwrap_or("").to_string();
        let raw = arguments_text(&call.body, true);
        let arguments = repair_arguments(raw.unwrap_or(""));
        let reason = if name.is_empty() {
            Some(
                "a `<tool_use>` block has no tool name; write it as \
                 <tool_use><name>TOOL</name><arguments>{...}</arguments></tool_use>"
                    .to_string(),
            )
        } else if closed {
            None
        } else if truncated {
            Some(format!(
                "the answer reached its length limit inside the `<tool_use>` block of `{name}`, \
                 so the call is incomplete"
            ))
        } else if !parses(&arguments) {
            Some(format!(
                "the answer ended inside the `<tool_use>` block of `{name}` before `</tool_use>`, \
                 so the call is incomplete"
            ))
        } else {
            None
        };
        let arguments = if reason.is_some() {
            raw.unwrap_or("").to_string()
        } else {
            arguments
        };
        let call = ToolCall {
            id: call.id,
            name,
            arguments,
        };
        match reason {
            None => self.parsed.calls.push(call),
            Some(reason) => self.parsed.dropped.push(DroppedCall { call, reason }),
        }
    }

    fn show(&mut self, c: char) {
        self.unsent.push(c);
        self.parsed.text.push(c);
    }

    fn show_str(&mut self, text: &str) {
        self.unsent.push_str(text);
        self.parsed.text.push_str(text);
    }

    fn send_text(&mut self, out: &mut dyn FnMut(StreamDelta)) {
        if !self.unsent.is_empty() {
            out(StreamDelta::Text(std::mem::take(&mut self.unsent)));
        }
    }

    /// Follows the line structure outside calls, opening and closing fenced code blocks as
    /// CommonMark does: a fence is three or more backticks or tildes after at most three
    /// spaces, and a block is closed by a fence of the same character at least as long.
    fn scan_line(&mut self, c: char) {
        let run_ended = |scan: LineScan| match scan {
            LineScan::Fence(fence, length) if length >= 3 => Some((fence, length)),
            _ => None,
        };
        let next = match (self.line, c) {
            (_, '\n') => {
                if let Some(run) = run_ended(self.line) {
                    self.fence_run(run);
                }
                LineScan::Indent(0)
            }
            (LineScan::Indent(spaces), ' ') if spaces < 3 => LineScan::Indent(spaces + 1),
            (LineScan::Indent(_), '`' | '~') => LineScan::Fence(c, 1),
            (LineScan::Fence(fence, length), c) if c == fence => LineScan::Fence(fence, length + 1),
            (scan, _) => {
                if let Some(run) = run_ended(scan) {
                    self.fence_run(run);
                }
                LineScan::Rest
            }
        };
        self.line = next;
    }

    fn fence_run(&mut self, (fence, length): (char, usize)) {
        self.fence = match self.fence {
            None => Some((fence, length)),
            Some((open, open_length)) if open == fence && length >= open_length => None,
            still_open => still_open,
        };
    }
}

/// The tool a block names: the text before the first `</name>`, from the `<name>` before it.
/// Small models sometimes leave out `<name>` (`<tool_use>read_file</name>…`); a lone word
/// before `</name>` is taken as the name then. Decided by the first `</name>` alone, so that
/// the name announced while the block streams is the one it ends with.
fn call_name(body: &str) -> Option<&str> {
    let before = &body[..body.find(NAME_CLOSE)?];
    match before.rfind(NAME_OPEN) {
        Some(start) => Some(before[start + NAME_OPEN.len()..].trim()),
        None => {
            let word = before.trim();
            let lone = !word.is_empty()
                && !word.contains(|c: char| c.is_whitespace() || c == '<' || c == '>');
            lone.then_some(word)
        }
    }
}

/// The text of `<arguments>`: up to `</arguments>`, or, when that has not come, up to the end
/// of the body (`whole`) or up to what could still be the beginning of a closing tag.
fn arguments_text(body: &str, whole: bool) -> Option<&str> {
    let start = body.find(ARGUMENTS_OPEN)? + ARGUMENTS_OPEN.len();
    let rest = &body[start..];
    if let Some(end) = rest.find(ARGUMENTS_CLOSE) {
        return Some(&rest[..end]);
    }
    if whole {
        return Some(rest);
    }
    let held = [ARGUMENTS_CLOSE, CLOSE, OPEN]
        .iter()
        .filter_map(|tag| {
            (1..tag.len())
                .rev()
                .find(|length| rest.ends_with(&tag[..*length]))
        })
        .max()
        .unwrap_or(0);
    Some(&rest[..rest.len() - held])
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    use crate::prompt_mode::test_strategies::{answer, cuts, proptest_config, split_at};

    /// Parses `pieces` in order: the parse, and the deltas with generated ids blanked.
    fn parse(pieces: &[&str], truncated: bool) -> (Parsed, Vec<StreamDelta>) {
        let mut parser = ToolUseParser::default();
        let mut deltas = Vec::new();
        for piece in pieces {
            parser.push(piece, &mut |delta| deltas.push(delta));
        }
        let mut parsed = parser.finish(truncated, &mut |delta| deltas.push(delta));
        for call in &mut parsed.calls {
            call.id = blank_id(&call.id);
        }
        for dropped in &mut parsed.dropped {
            dropped.call.id = blank_id(&dropped.call.id);
        }
        for delta in &mut deltas {
            if let StreamDelta::ToolCall { id, .. } = delta {
                *id = blank_id(id);
            }
        }
        (parsed, deltas)
    }

    fn blank_id(id: &str) -> String {
        let random = id.strip_prefix("call_").unwrap();
        assert_eq!(random.len(), 32, "{id}");
        "call_<generated>".into()
    }

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: "call_<generated>".into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    fn text(text: &str) -> StreamDelta {
        StreamDelta::Text(text.into())
    }

    fn progress(index: u32, name: Option<&str>, arguments: &str) -> StreamDelta {
        StreamDelta::ToolCall {
            index,
            id: "call_<generated>".into(),
            name: name.map(str::to_string),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn text_calls_and_text() {
        let (parsed, deltas) = parse(
            &[
                "Let me look.\n<tool_use><name>read_file</name><arguments>{\"path\": \"a\"}</arguments></tool_use>\n",
                "<tool_use>\n  <name> count_lines </name>\n  <arguments>{}</arguments>\n</tool_use>\nDone.",
            ],
            false,
        );
        assert_eq!(
            parsed,
            Parsed {
                text: "Let me look.\n\n\nDone.".into(),
                calls: vec![
                    call("read_file", "{\"path\": \"a\"}"),
                    call("count_lines", "{}")
                ],
                dropped: Vec::new(),
            }
        );
        assert_eq!(
            deltas,
            vec![
                text("Let me look.\n"),
                progress(0, Some("read_file"), "{\"path\": \"a\"}"),
                text("\n"),
                progress(1, Some("count_lines"), "{}"),
                text("\nDone."),
            ]
        );
    }

    #[test]
    fn a_call_streams_its_name_then_its_arguments() {
        let (parsed, deltas) = parse(
            &[
                "<tool_",
                "use><na",
                "me>read_file</na",
                "me>",
                "<arguments>{\"pa",
                "th\": \"a\"}</argu",
                "ments></tool_u",
                "se>",
            ],
            false,
        );
        assert_eq!(parsed.calls, vec![call("read_file", "{\"path\": \"a\"}")]);
        assert_eq!(parsed.text, "");
        assert_eq!(
            deltas,
            vec![
                progress(0, Some("read_file"), ""),
                progress(0, None, "{\"pa"),
                progress(0, None, "th\": \"a\"}"),
            ]
        );
    }

    #[test]
    fn held_text_that_is_no_tag_is_shown() {
        let (parsed, deltas) = parse(&["a <tool", "s> b <", "<tool_use", "d> < c"], false);
        assert_eq!(parsed.text, "a <tools> b <<tool_used> < c");
        assert_eq!(parsed.calls, Vec::new());
        assert_eq!(
            deltas,
            vec![
                text("a "),
                text("<tools> b "),
                text("<"),
                text("<tool_used> < c"),
            ]
        );
    }

    #[test]
    fn fenced_blocks_and_thinking_hold_no_calls() {
        let example = "<tool_use><name>x</name><arguments>{}</arguments></tool_use>";
        let answer = format!(
            "```xml\n{example}\n```\n~~~~\n```\n{example}\n~~~~\n<think>I will write {example}</think>\n  ```\n{example}\n  ```\n"
        );
        let (parsed, _) = parse(&[&answer], false);
        assert_eq!(parsed.text, answer);
        assert_eq!(parsed.calls, Vec::new());
        // After the blocks, calls count again.
        let (parsed, _) = parse(&[&answer, example], false);
        assert_eq!(parsed.calls, vec![call("x", "{}")]);
    }

    #[test]
    fn an_indented_code_line_or_inline_backticks_open_no_block() {
        let (parsed, _) = parse(
            &[
                "    ```\nsee ``` here\n<tool_use><name>x</name><arguments>{}</arguments></tool_use>",
            ],
            false,
        );
        assert_eq!(parsed.calls, vec![call("x", "{}")]);
    }

    #[test]
    fn bad_json_is_kept_for_the_tool_to_report() {
        let (parsed, _) = parse(
            &["<tool_use><name>read_file</name><arguments>{path: README}</arguments></tool_use>"],
            false,
        );
        assert_eq!(parsed.calls, vec![call("read_file", "{path: README}")]);
    }

    #[test]
    fn arguments_are_repaired_where_safe() {
        let (parsed, _) = parse(
            &[
                "<tool_use><name>read_file</name><arguments>\n```json\n{\"path\": \"a\",}\n```\n</arguments></tool_use>",
            ],
            false,
        );
        assert_eq!(parsed.calls, vec![call("read_file", "{\"path\": \"a\"}")]);
        let (parsed, _) = parse(&["<tool_use><name>now</name></tool_use>"], false);
        assert_eq!(parsed.calls, vec![call("now", "{}")]);
    }

    #[test]
    fn a_block_without_a_name_is_dropped() {
        let (parsed, _) = parse(
            &["<tool_use><arguments>{\"a\": 1}</arguments></tool_use>ok"],
            false,
        );
        assert_eq!(parsed.text, "ok");
        assert_eq!(parsed.calls, Vec::new());
        assert_eq!(
            parsed.dropped,
            vec![DroppedCall {
                call: call("", "{\"a\": 1}"),
                reason: "a `<tool_use>` block has no tool name; write it as \
                         <tool_use><name>TOOL</name><arguments>{...}</arguments></tool_use>"
                    .into(),
            }]
        );
    }

    #[test]
    fn an_unclosed_block_at_the_end() {
        // Whole name and arguments: the call stands (the closing tag was lost).
        let (parsed, _) = parse(
            &["<tool_use><name>read_file</name><arguments>{\"path\": \"a\"}</arguments>"],
            false,
        );
        assert_eq!(parsed.calls, vec![call("read_file", "{\"path\": \"a\"}")]);
        // Arguments cut off: dropped, with the reason.
        let (parsed, deltas) = parse(
            &["<tool_use><name>read_file</name><arguments>{\"path\": \"a"],
            false,
        );
        assert_eq!(parsed.calls, Vec::new());
        assert_eq!(
            parsed.dropped,
            vec![DroppedCall {
                call: call("read_file", "{\"path\": \"a"),
                reason: "the answer ended inside the `<tool_use>` block of `read_file` before \
                         `</tool_use>`, so the call is incomplete"
                    .into(),
            }]
        );
        assert_eq!(
            deltas,
            vec![progress(0, Some("read_file"), "{\"path\": \"a")]
        );
        // Cut by the length limit: dropped even when the arguments look whole.
        let (parsed, _) = parse(
            &["<tool_use><name>read_file</name><arguments>{\"path\": \"a\"}</argum"],
            true,
        );
        assert_eq!(parsed.calls, Vec::new());
        assert_eq!(parsed.dropped.len(), 1);
        assert!(parsed.dropped[0].reason.contains("length limit"));
    }

    #[test]
    fn a_name_without_its_opening_tag_is_read() {
        let (parsed, _) = parse(
            &["<tool_use>read_file</name><arguments>{\"path\": \"a\"}\n</tool_use>"],
            false,
        );
        assert_eq!(parsed.calls, vec![call("read_file", "{\"path\": \"a\"}")]);
        let (parsed, _) = parse(
            &["<tool_use>read the file</name><arguments>{}</arguments></tool_use>"],
            false,
        );
        assert_eq!(parsed.calls, Vec::new());
        assert_eq!(parsed.dropped.len(), 1);
    }

    #[test]
    fn a_new_block_ends_an_unclosed_one() {
        let (parsed, _) = parse(
            &[
                "<tool_use><name>a</name><arguments>{}</arguments>\n<tool_use><name>b</name><arguments>{}</arguments></tool_use>",
            ],
            false,
        );
        assert_eq!(parsed.calls, vec![call("a", "{}"), call("b", "{}")]);
    }

    #[test]
    fn unknown_tools_are_calls_and_text_may_hold_tags_it_does_not_know() {
        let (parsed, _) = parse(
            &[
                "<b>bold</b> <tool_use><name>no_such_tool</name><arguments>{}</arguments></tool_use>",
            ],
            false,
        );
        assert_eq!(parsed.text, "<b>bold</b> ");
        assert_eq!(parsed.calls, vec![call("no_such_tool", "{}")]);
    }

    #[test]
    fn multibyte_text_around_calls() {
        let (parsed, _) = parse(
            &[
                "读取 <tool_use><name>read_file</name><arguments>{\"path\": \"说明.md\"}</arguments></tool_use> 完成 <thínk>",
            ],
            false,
        );
        assert_eq!(parsed.text, "读取  完成 <thínk>");
        assert_eq!(
            parsed.calls,
            vec![call("read_file", "{\"path\": \"说明.md\"}")]
        );
    }

    /// Everything a parse produced that must not depend on how the text was cut.
    #[derive(Debug, PartialEq)]
    struct Outcome {
        parsed: Parsed,
        /// The text deltas joined.
        text: String,
        /// Per call index: the name announced and the argument fragments joined.
        progress: Vec<(Option<String>, String)>,
    }

    fn outcome(pieces: &[&str], truncated: bool) -> Outcome {
        let (parsed, deltas) = parse(pieces, truncated);
        let mut text = String::new();
        let mut progress: Vec<(Option<String>, String)> = Vec::new();
        for delta in deltas {
            match delta {
                StreamDelta::Text(piece) => {
                    assert!(!piece.is_empty());
                    text.push_str(&piece);
                }
                StreamDelta::ToolCall {
                    index,
                    name,
                    arguments,
                    ..
                } => {
                    let index = index as usize;
                    if progress.len() <= index {
                        progress.resize(index + 1, (None, String::new()));
                    }
                    if let Some(name) = name {
                        assert_eq!(progress[index].0, None, "a name is announced once");
                        progress[index].0 = Some(name);
                    }
                    progress[index].1.push_str(&arguments);
                }
                StreamDelta::Usage(_) | StreamDelta::PromptProgress { .. } => {}
            }
        }
        Outcome {
            parsed,
            text,
            progress,
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]

        /// However the answer is cut into pieces (at random places, and between every two
        /// characters), the same text, calls and call progress come out; and they are the
        /// ones written: the text outside calls (code blocks and thinking included), the
        /// calls outside code blocks and thinking.
        #[test]
        fn prop_every_split_gives_the_same_calls_and_text(
            generated in answer(),
            cuts in cuts(),
            truncated in any::<bool>(),
        ) {
            let whole = outcome(&[&generated.text], truncated);
            let split = outcome(&split_at(&generated.text, &cuts), truncated);
            prop_assert_eq!(&split, &whole);
            let chars: Vec<String> = generated.text.chars().map(String::from).collect();
            let chars: Vec<&str> = chars.iter().map(String::as_str).collect();
            prop_assert_eq!(&outcome(&chars, truncated), &whole);
            prop_assert_eq!(&whole.text, &whole.parsed.text);
            if generated.whole {
                prop_assert_eq!(&whole.parsed.text, &generated.visible);
                let calls: Vec<(String, String)> = whole
                    .parsed
                    .calls
                    .iter()
                    .map(|call| (call.name.clone(), call.arguments.clone()))
                    .collect();
                prop_assert_eq!(calls, generated.calls);
                prop_assert_eq!(whole.parsed.dropped.len(), 0);
            }
        }

        /// Any text at all, cut anywhere: no panic, and the pieces give what the whole gives.
        #[test]
        fn prop_any_text_parses_the_same_in_pieces(
            text in "(\\PC|<|>|/|`|~|\n|tool_use|<tool_use>|</tool_use>|name|arguments|think){0,80}",
            cuts in cuts(),
            truncated in any::<bool>(),
        ) {
            let whole = outcome(&[&text], truncated);
            prop_assert_eq!(outcome(&split_at(&text, &cuts), truncated), whole);
        }
    }
}
