//! Watching an answer as it streams for a model that repeats itself.
//!
//! Small local models loop: the same call ten times in one answer, a call they already made
//! twice this turn, or the same sentence over and over until the token limit. Each copy costs
//! seconds of generation and then tokens of every later request, so the loop is caught while it
//! streams and the stream is closed (the server then stops generating). What came before the
//! loop is kept: the distinct calls run, and looping text keeps its first pass.
//!
//! Four rules, checked as pieces arrive:
//!
//! - a finished call equal to an earlier call of the same answer (same tool, same arguments
//!   once parsed, so key order and spacing do not matter);
//! - a finished call the turn already made [`MAX_TIMES_IN_TURN`] times;
//! - text, or one call's arguments, whose end is one run of characters repeated at least
//!   [`MIN_TEXT_REPEATS`] times over at least [`MIN_LOOP_BYTES`] bytes;
//! - text that copies its own instructions (the system prompt, the tools' descriptions) word
//!   for word over [`ECHO_BYTES`] bytes, which small models do in place of an answer. Quoting
//!   a file it read is no echo: results and questions are not instructions.
//!
//! A call is finished once the next one begins (a streamed call's arguments arrive in pieces);
//! the last call of an answer is judged by the turn's repeat guard when it runs.

use std::collections::HashMap;

use tooltrail_llm::estimate_tokens;

use crate::conversation::call_key;

/// A call made this many times already in the turn is not let through again.
pub(crate) const MAX_TIMES_IN_TURN: u32 = 2;
/// Looping text is cut once its repeated run covers this many bytes...
const MIN_LOOP_BYTES: usize = 480;
/// ...and the run is repeated at least this many times.
const MIN_TEXT_REPEATS: usize = 3;
/// The end of the text examined for a loop, in bytes: a run longer than a third of it is not
/// seen, which is no loss (a model repeating whole pages runs into its token limit first).
const TAIL_BYTES: usize = 2048;
/// Text is examined again after this many new bytes.
const CHECK_EVERY: usize = 48;
/// Text that copies this many bytes of its instructions word for word (white space aside: a
/// chat template may lay the tools out otherwise than they were sent) is an echo.
const ECHO_BYTES: usize = 128;

/// Why the answer was stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Loop {
    /// The answer made the same call twice.
    CallInAnswer { tool: String },
    /// The turn had already made this call `times` times.
    CallInTurn { tool: String, times: u32 },
    /// The text (or, with `tool`, a call's arguments) repeated one run `times` times.
    Text { tool: Option<String>, times: u32 },
    /// The text copied the model's own instructions.
    Echo,
}

impl Loop {
    /// The tool whose call repeated, when a call did.
    pub(crate) fn tool(&self) -> Option<&str> {
        match self {
            Self::CallInAnswer { tool } | Self::CallInTurn { tool, .. } => Some(tool),
            Self::Text { tool, .. } => tool.as_deref(),
            Self::Echo => None,
        }
    }

    /// How many times the repeated thing had appeared when the answer was stopped.
    pub(crate) fn times(&self) -> u32 {
        match self {
            Self::CallInAnswer { .. } => 2,
            Self::CallInTurn { times, .. } => times + 1,
            Self::Text { times, .. } => *times,
            Self::Echo => 1,
        }
    }
}

/// Where an answer was stopped and what of it is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cut {
    pub what: Loop,
    /// The calls kept: the first `keep_calls` of the answer.
    pub keep_calls: usize,
    /// The answer's text is kept up to this byte.
    pub keep_text: usize,
    /// About how many tokens the model had generated when it was stopped.
    pub tokens: u32,
}

#[derive(Debug, Default)]
struct Call {
    name: String,
    arguments: String,
    checked: usize,
}

/// Follows one streamed answer. Feed it every piece; once [`LoopWatch::cut`] is set, stop
/// reading.
#[derive(Debug)]
pub(crate) struct LoopWatch<'a> {
    /// Calls made earlier in the turn: key → (first round, times made).
    turn: &'a HashMap<String, (u32, u32)>,
    /// The model's instructions without white space, which an answer does not copy.
    instructions: String,
    /// The text without white space, and where each of its bytes is in `text`.
    squeezed: String,
    squeezed_at: Vec<usize>,
    text: String,
    text_checked: usize,
    calls: Vec<Call>,
    /// Keys of the answer's finished calls.
    finished: Vec<String>,
    cut: Option<Cut>,
}

impl<'a> LoopWatch<'a> {
    pub(crate) fn new(turn: &'a HashMap<String, (u32, u32)>, instructions: &str) -> Self {
        Self {
            turn,
            instructions: instructions
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect(),
            squeezed: String::new(),
            squeezed_at: Vec::new(),
            text: String::new(),
            text_checked: 0,
            calls: Vec::new(),
            finished: Vec::new(),
            cut: None,
        }
    }

    /// Where to stop, once a loop is seen.
    pub(crate) fn cut(&self) -> Option<&Cut> {
        self.cut.as_ref()
    }

    pub(crate) fn text(&mut self, piece: &str) {
        if self.cut.is_some() {
            return;
        }
        for (at, c) in piece.char_indices() {
            if !c.is_whitespace() {
                let offset = self.text.len() + at;
                self.squeezed.push(c);
                self.squeezed_at
                    .extend(std::iter::repeat_n(offset, c.len_utf8()));
            }
        }
        self.text.push_str(piece);
        if self.text.len() - self.text_checked < CHECK_EVERY {
            return;
        }
        self.text_checked = self.text.len();
        if let Some(start) = echo_start(&self.squeezed, &self.instructions) {
            let start = self
                .squeezed_at
                .get(start)
                .copied()
                .unwrap_or(self.text.len());
            self.stop(Loop::Echo, self.calls.len(), start);
            return;
        }
        if let Some((unit, times)) = looping_tail(&self.text) {
            let run = unit * times;
            self.stop(
                Loop::Text {
                    tool: None,
                    times: u32::try_from(times).unwrap_or(u32::MAX),
                },
                self.calls.len(),
                self.text.len() - run + unit,
            );
        }
    }

    /// A piece of call `index` (its position in the answer).
    pub(crate) fn call(&mut self, index: u32, name: Option<&str>, arguments: &str) {
        if self.cut.is_some() {
            return;
        }
        let index = usize::try_from(index).unwrap_or(usize::MAX);
        // A call that begins finishes every call before it.
        while self.calls.len() <= index {
            let begun = self.calls.len();
            if begun > 0 && self.finish_call(begun - 1) {
                return;
            }
            self.calls.push(Call::default());
        }
        let Some(call) = self.calls.get_mut(index) else {
            return;
        };
        if let Some(name) = name.filter(|name| !name.is_empty()) {
            call.name = name.to_string();
        }
        call.arguments.push_str(arguments);
        if call.arguments.len() - call.checked >= CHECK_EVERY {
            call.checked = call.arguments.len();
            if let Some((_, times)) = looping_tail(&call.arguments) {
                let tool = Some(call.name.clone());
                self.stop(
                    Loop::Text {
                        tool,
                        times: u32::try_from(times).unwrap_or(u32::MAX),
                    },
                    index,
                    self.text.len(),
                );
            }
        }
    }

    /// Judges the finished call at `index`; true when it stopped the answer.
    fn finish_call(&mut self, index: usize) -> bool {
        let Some(call) = self.calls.get(index) else {
            return false;
        };
        let arguments = serde_json::from_str::<serde_json::Value>(&call.arguments)
            .unwrap_or_else(|_| serde_json::Value::String(call.arguments.trim().to_string()));
        let key = call_key(&call.name, &arguments);
        let tool = call.name.clone();
        if self.finished.contains(&key) {
            self.stop(Loop::CallInAnswer { tool }, index, self.text.len());
            return true;
        }
        if let Some((_, times)) = self.turn.get(&key)
            && *times >= MAX_TIMES_IN_TURN
        {
            let times = *times;
            self.stop(Loop::CallInTurn { tool, times }, index, self.text.len());
            return true;
        }
        self.finished.push(key);
        false
    }

    fn stop(&mut self, what: Loop, keep_calls: usize, keep_text: usize) {
        let tokens = estimate_tokens(&self.text)
            + self
                .calls
                .iter()
                .map(|call| estimate_tokens(&call.name) + estimate_tokens(&call.arguments))
                .sum::<u32>();
        let mut keep_text = keep_text.min(self.text.len());
        while !self.text.is_char_boundary(keep_text) {
            keep_text -= 1;
        }
        self.cut = Some(Cut {
            what,
            keep_calls,
            keep_text,
            tokens,
        });
    }
}

/// Where the copy of `instructions` that `text` ends with begins, when it is at least
/// [`ECHO_BYTES`] long. Small models copy loosely (a word dropped, a colon for a full stop),
/// so earlier copied runs a few bytes apart belong to the same copy.
fn echo_start(text: &str, instructions: &str) -> Option<usize> {
    /// A run shorter than this does not join a copy.
    const JOINED_RUN: usize = 24;
    /// The most bytes between two runs of one copy.
    const GAP: usize = 12;
    if instructions.len() < ECHO_BYTES {
        return None;
    }
    // The copy may have just strayed from the instructions: its end may be a gap too.
    // (and it may be in the middle of a run too short to count yet).
    let mut start = text.len();
    'runs: loop {
        let gaps = if start == text.len() {
            GAP + JOINED_RUN
        } else {
            GAP
        };
        for gap in 0..=gaps {
            let Some(end) = start
                .checked_sub(gap)
                .filter(|end| text.is_char_boundary(*end))
            else {
                continue;
            };
            if let Some(earlier) = copied_end(&text[..end], instructions, JOINED_RUN)
                && earlier < start
            {
                start = earlier;
                continue 'runs;
            }
        }
        return (text.len() - start >= ECHO_BYTES).then_some(start);
    }
}

/// Where the longest end of `text` that `instructions` hold begins, when it is at least
/// `least` bytes long.
fn copied_end(text: &str, instructions: &str, least: usize) -> Option<usize> {
    let copied = |length: usize| {
        let start = text.len() - length;
        text.is_char_boundary(start) && instructions.contains(&text[start..])
    };
    if text.len() < least || !copied(least) {
        return None;
    }
    // A copy's end is copied too, so the lengths that are copied form a range.
    let (mut known, mut beyond) = (least, text.len() + 1);
    while beyond - known > 1 {
        let middle = known + (beyond - known) / 2;
        if copied(middle) {
            known = middle;
        } else {
            beyond = middle;
        }
    }
    Some(text.len() - known)
}

/// When `text` ends in one run repeated: (the run's length in bytes, how many times), the
/// shortest such run. Looks at the last [`TAIL_BYTES`] bytes only.
fn looping_tail(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let tail = &bytes[bytes.len().saturating_sub(TAIL_BYTES)..];
    // Read backwards, the tail's suffixes are prefixes; the failure function of the reversed
    // tail gives each prefix's shortest period.
    let reversed: Vec<u8> = tail.iter().rev().copied().collect();
    let mut border = vec![0usize; reversed.len()];
    let mut best: Option<(usize, usize)> = None;
    for at in 1..reversed.len() {
        let mut length = border[at - 1];
        while length > 0 && reversed[at] != reversed[length] {
            length = border[length - 1];
        }
        if reversed[at] == reversed[length] {
            length += 1;
        }
        border[at] = length;
        let covered = at + 1;
        let period = covered - length;
        let times = covered / period;
        if covered >= MIN_LOOP_BYTES && times >= MIN_TEXT_REPEATS {
            // The longest covered run of the shortest period is the most telling.
            if best.is_none_or(|(unit, _)| period <= unit) {
                best = Some((period, times));
            }
        }
    }
    // A run of one repeated character (a row of dashes, spaces) needs to be long to count.
    best.filter(|(unit, times)| unit * times >= MIN_LOOP_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn feed_text(watch: &mut LoopWatch<'_>, text: &str) {
        for piece in text.as_bytes().chunks(7) {
            watch.text(std::str::from_utf8(piece).unwrap_or_default());
            if watch.cut().is_some() {
                break;
            }
        }
    }

    #[test]
    fn ordinary_prose_is_not_a_loop() {
        let turn = HashMap::new();
        let mut watch = LoopWatch::new(&turn, "");
        let prose = "The project is a small Go web server. It reads its port from config.yaml, \
                     serves the static files in public/, and logs each request. The tests in \
                     main_test.go cover the handler and the config loader. ";
        feed_text(&mut watch, &prose.repeat(2));
        feed_text(&mut watch, "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n");
        assert_eq!(watch.cut(), None);
    }

    #[test]
    fn a_sentence_said_over_and_over_is_cut_after_its_first_time() {
        let turn = HashMap::new();
        let mut watch = LoopWatch::new(&turn, "");
        let intro = "Here is what I found. ";
        let sentence = "I will read the README file to find out what it says. ";
        feed_text(&mut watch, &format!("{intro}{}", sentence.repeat(40)));
        let cut = watch.cut().cloned().unwrap();
        assert_eq!(cut.what.tool(), None);
        assert!(cut.what.times() >= 3, "{cut:?}");
        let kept = &watch.text[..cut.keep_text];
        assert!(kept.starts_with(intro), "{kept}");
        assert!(
            kept.len() < intro.len() + 2 * sentence.len(),
            "one pass of the loop is kept: {kept:?}"
        );
        assert!(cut.tokens > 100, "{cut:?}");
    }

    #[test]
    fn the_same_call_twice_in_one_answer_keeps_the_calls_before_the_copy() {
        let turn = HashMap::new();
        let mut watch = LoopWatch::new(&turn, "");
        watch.call(0, Some("read_file"), r#"{"path": "a.md"}"#);
        watch.call(1, Some("search_files"), r#"{"pattern": "*.go"}"#);
        watch.call(2, Some("read_file"), r#"{"path":"a.md"}"#);
        assert_eq!(watch.cut(), None, "a call is judged once it is finished");
        watch.call(3, Some("read_file"), "");
        let cut = watch.cut().cloned().unwrap();
        assert_eq!(
            cut.what,
            Loop::CallInAnswer {
                tool: "read_file".into()
            }
        );
        assert_eq!(cut.keep_calls, 2);
    }

    #[test]
    fn a_call_the_turn_made_twice_already_stops_the_answer() {
        let mut turn = HashMap::new();
        turn.insert(
            call_key("list_dir", &serde_json::json!({ "path": "." })),
            (1, 2),
        );
        let mut watch = LoopWatch::new(&turn, "");
        watch.call(0, Some("list_dir"), r#"{"path": "."}"#);
        watch.call(1, Some("read_file"), r#"{"path": "x"}"#);
        let cut = watch.cut().cloned().unwrap();
        assert_eq!(
            cut.what,
            Loop::CallInTurn {
                tool: "list_dir".into(),
                times: 2
            }
        );
        assert_eq!(cut.keep_calls, 0);
    }

    #[test]
    fn arguments_that_run_on_stop_the_answer_before_that_call() {
        let turn = HashMap::new();
        let mut watch = LoopWatch::new(&turn, "");
        watch.call(0, Some("read_file"), r#"{"path": "a"}"#);
        watch.call(1, Some("search_text"), r#"{"pattern": ""#);
        for _ in 0..200 {
            watch.call(1, None, "foo|");
        }
        let cut = watch.cut().cloned().unwrap();
        assert_eq!(cut.what.tool(), Some("search_text"));
        assert_eq!(cut.keep_calls, 1);
    }

    #[test]
    fn an_answer_that_copies_its_instructions_is_cut_where_the_copy_began() {
        let turn = HashMap::new();
        let instructions = "You answer questions about the project folder \"demo\". Look at its \
            files with the tools before you answer; paths are relative to the folder. Do not \
            guess what a file holds: read it. Never repeat a call; use its result.";
        let mut watch = LoopWatch::new(&turn, instructions);
        feed_text(&mut watch, "Sure. ");
        // Copied loosely, as small models do.
        feed_text(
            &mut watch,
            &instructions
                .replace("holds: read it.", "holds.")
                .replace("; paths", ". Paths"),
        );
        let cut = watch.cut().cloned().unwrap();
        assert_eq!(cut.what, Loop::Echo);
        assert_eq!(&watch.text[..cut.keep_text], "Sure. ");
        // Quoting something else at length is no echo.
        let mut quoting = LoopWatch::new(&turn, instructions);
        feed_text(
            &mut quoting,
            &"The README says: a tiny demo project that prints. ".repeat(2),
        );
        assert_eq!(quoting.cut(), None);
    }

    #[test]
    fn the_tail_finds_the_shortest_repeated_run() {
        let text = format!("start {}", "abc ".repeat(200));
        assert_eq!(looping_tail(&text).map(|(unit, _)| unit), Some(4));
        assert_eq!(looping_tail("short"), None);
        let dashes = "-".repeat(100);
        assert_eq!(looping_tail(&dashes), None, "a rule line is not a loop");
    }
}
