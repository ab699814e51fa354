//! Keeping every request inside the model's context window.
//!
//! Before each request the conversation is fitted to what the window leaves once room for the
//! answer is kept. The conversation itself is never changed (every result stays whole in it and
//! in the record); only the copy sent is. What gives way, in order:
//!
//! 1. tool results of earlier rounds and turns, oldest first, become one-line summaries that
//!    say what the call returned and that it can be made again, and the text of earlier
//!    answers is shortened to its beginning (their calls stay, to match their results);
//! 2. earlier turns, oldest first, are left out whole;
//! 3. the latest results, the ones the model asked for just now, are cut to share what is
//!    left, each with a marker that says how much was cut and how to read the rest;
//! 4. the current turn's earlier rounds (a call with its results) are left out, those whose
//!    calls the model made again later first, then the oldest;
//! 5. the latest round's calls are left out with their results, copies first, then the
//!    oldest, down to one;
//! 6. the latest answer's own text, when it ran on, is shortened to its beginning.
//!
//! Once the turn's own rounds give way (4 and after) the model has seen too little of what it
//! asked for to go on calling tools: the caller asks it to answer instead ([`Fitted::lost_own`]).
//!
//! The system prompt, the tools and the current question always go. When even they do not fit,
//! the request is not sent: the window is too small for the question, and the user is told.
//!
//! What gives way goes oldest first and a step never undoes an earlier one, so a request that
//! had to be fitted shares as long a prefix as it can with the one before it, which a server's
//! prompt cache then serves.
//! The same fitting serves both tool modes, since the estimate is made of the body in the mode
//! it goes in (prompt mode's tool section included).

use tooltrail_llm::{ChatRequest, estimate_message, estimate_tokens};
use tooltrail_protocol::{Message, ToolCall};

use crate::conversation::call_key;

/// The least room kept for the answer, in tokens.
const MIN_ANSWER_ROOM: u32 = 512;
/// The most room kept for the answer, in tokens.
const MAX_ANSWER_ROOM: u32 = 8192;
/// A result is cut to no less than this many tokens, so that what is shown is worth reading.
const MIN_RESULT_TOKENS: u32 = 64;
/// How many times the whole request is estimated again while fitting.
const MAX_PASSES: usize = 8;

/// The room a request may take in a window of `window` tokens: the window less the room for
/// the answer, which is `max_tokens` when set, else a quarter of the window, between 512 and
/// 8,192 tokens, and never more than half the window.
pub(crate) fn request_room(window: u32, max_tokens: Option<u32>) -> u32 {
    window.saturating_sub(answer_room(window, max_tokens))
}

/// The room kept for the answer in a window of `window` tokens: `max_tokens` when set, else a
/// quarter of the window, between 512 and 8,192 tokens, and never more than half the window.
/// Every request asks for no more (`max_tokens`), so no round generates past it.
pub(crate) fn answer_room(window: u32, max_tokens: Option<u32>) -> u32 {
    max_tokens
        .unwrap_or_else(|| (window / 4).clamp(MIN_ANSWER_ROOM, MAX_ANSWER_ROOM))
        .min(window / 2)
        .max(1)
}

/// A request made to fit.
#[derive(Debug)]
pub(crate) struct Fitted {
    pub request: ChatRequest,
    /// Its estimated size in tokens.
    pub used: u32,
    /// Whether the current turn's own rounds had to give way (steps 4 to 6).
    pub lost_own: bool,
}

/// The request does not fit even with everything that may give way gone.
#[derive(Debug)]
pub(crate) struct TooSmall {
    /// The request with everything that may give way gone.
    pub request: ChatRequest,
    /// Its estimated size: what the system prompt, the tools and the question take.
    pub needed: u32,
    /// The room the window leaves for a request.
    pub room: u32,
}

/// Fits `request` into `room` tokens as `estimate` counts them. `turn_start` is the index of
/// the current turn's first message (its question), before which everything is history.
pub(crate) fn fit(
    request: ChatRequest,
    turn_start: usize,
    room: u32,
    estimate: &dyn Fn(&ChatRequest) -> u32,
) -> Result<Fitted, TooSmall> {
    let (fitted, turn_start) = fit_history(request, turn_start, room, estimate);
    let TooSmall {
        mut request,
        needed: mut used,
        ..
    } = match fitted {
        Ok(fitted) => return Ok(fitted),
        Err(too_small) => too_small,
    };
    // The turn's own rounds give way, one at a time, in the order of `own_losses`.
    while let Some(shrunk) = shrink_own_rounds(&request, turn_start) {
        let now = estimate(&shrunk);
        request = shrunk;
        used = now;
        if used <= room {
            return Ok(Fitted {
                request,
                used,
                lost_own: true,
            });
        }
    }
    Err(TooSmall {
        request,
        needed: used,
        room,
    })
}

/// Steps 1 to 3: what came before the latest results gives way, then the latest results are
/// cut. Also returns where the current turn now starts, once earlier turns are left out.
fn fit_history(
    request: ChatRequest,
    turn_start: usize,
    room: u32,
    estimate: &dyn Fn(&ChatRequest) -> u32,
) -> (Result<Fitted, TooSmall>, usize) {
    let mut turn_start = turn_start.min(request.messages.len());
    let fitted = fit_history_at(request, &mut turn_start, room, estimate);
    (fitted, turn_start)
}

fn fit_history_at(
    mut request: ChatRequest,
    turn_start: &mut usize,
    room: u32,
    estimate: &dyn Fn(&ChatRequest) -> u32,
) -> Result<Fitted, TooSmall> {
    let mut used = estimate(&request);
    for _ in 0..MAX_PASSES {
        if used <= room {
            return Ok(Fitted {
                request,
                used,
                lost_own: false,
            });
        }
        let mut over = used - room;
        // 1. Earlier results become summaries and earlier answers shrink, oldest first.
        let latest = latest_results(&request.messages);
        for index in 0..latest.start.saturating_sub(1) {
            if over == 0 {
                break;
            }
            if let Message::Assistant {
                content,
                tool_calls,
            } = &request.messages[index]
                && let Some(short) = shortened_answer(content)
            {
                over = over.saturating_sub(
                    estimate_tokens(content).saturating_sub(estimate_tokens(&short)),
                );
                request.messages[index] = Message::assistant(short, tool_calls.clone());
                continue;
            }
            let Message::Tool {
                tool_call_id,
                name,
                content,
                ..
            } = &request.messages[index]
            else {
                continue;
            };
            if content.starts_with(SUMMARY_OPEN) {
                continue;
            }
            // An older result's summary keeps no images: they are the largest part of it.
            let summarised =
                Message::tool(tool_call_id.clone(), name.clone(), summary(name, content));
            let saved = estimate_message(&request.messages[index])
                .saturating_sub(estimate_message(&summarised));
            if saved == 0 {
                continue;
            }
            request.messages[index] = summarised;
            over = over.saturating_sub(saved);
        }
        // 2. Earlier turns are left out, oldest first.
        while over > 0 {
            let Some(range) = oldest_turn(&request.messages, *turn_start) else {
                break;
            };
            let saved: u32 = request.messages[range.clone()]
                .iter()
                .map(estimate_message)
                .sum();
            *turn_start -= range.len();
            request.messages.drain(range);
            over = over.saturating_sub(saved);
        }
        // 3. The latest results share what is left.
        if over > 0 {
            let latest = latest_results(&request.messages);
            cut_latest(&mut request.messages[latest], over);
        }
        let now = estimate(&request);
        if now >= used {
            // Nothing more gives way.
            return Err(TooSmall {
                request,
                needed: now,
                room,
            });
        }
        used = now;
    }
    if used <= room {
        Ok(Fitted {
            request,
            used,
            lost_own: false,
        })
    } else {
        Err(TooSmall {
            request,
            needed: used,
            room,
        })
    }
}

/// The request with one more piece of the current turn's own rounds left out (steps 4 to 6),
/// or `None` when nothing more of them may go. The question (the turn's user message) never
/// goes, nor the notes after the latest results.
fn shrink_own_rounds(request: &ChatRequest, turn_start: usize) -> Option<ChatRequest> {
    let messages = &request.messages;
    // The turn's first answer: everything before it (the question) stays.
    let first = turn_start.max(
        messages
            .iter()
            .position(|message| !matches!(message, Message::System { .. }))
            .unwrap_or(0),
    );
    let answers: Vec<usize> = (first..messages.len())
        .filter(|&at| matches!(messages[at], Message::Assistant { .. }))
        .collect();
    let (&latest, earlier) = answers.split_last()?;
    let mut out = request.clone();
    // 4. An earlier round: the one whose calls all come again later, else the oldest.
    if !earlier.is_empty() {
        let keys_after = |from: usize| -> Vec<String> {
            messages[from..]
                .iter()
                .filter_map(|message| match message {
                    Message::Assistant { tool_calls, .. } => Some(tool_calls.iter().map(key)),
                    Message::System { .. } | Message::User { .. } | Message::Tool { .. } => None,
                })
                .flatten()
                .collect()
        };
        let repeated = earlier.iter().enumerate().find(|(rank, at)| {
            let next = answers[rank + 1];
            match &messages[**at] {
                Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                    let later = keys_after(next);
                    tool_calls.iter().all(|call| later.contains(&key(call)))
                }
                Message::System { .. }
                | Message::User { .. }
                | Message::Assistant { .. }
                | Message::Tool { .. } => false,
            }
        });
        let rank = repeated.map_or(0, |(rank, _)| rank);
        let start = earlier[rank];
        // The round ends where the next answer begins; a user note between them (a note about
        // calls that could not run) belongs to it.
        let end = answers[rank + 1];
        out.messages.drain(start..end);
        return Some(out);
    }
    // 5. A call of the latest round with its result: a copy first, else the oldest; one stays.
    if let Message::Assistant {
        content,
        tool_calls,
    } = &messages[latest]
        && tool_calls.len() > 1
    {
        let keys: Vec<String> = tool_calls.iter().map(key).collect();
        let copy = (1..keys.len()).find(|&at| keys[..at].contains(&keys[at]));
        let gone = copy.unwrap_or(0);
        let gone_id = tool_calls[gone].id.clone();
        let mut kept = tool_calls.clone();
        kept.remove(gone);
        out.messages[latest] = Message::assistant(content.clone(), kept);
        out.messages.retain(|message| {
            !matches!(message, Message::Tool { tool_call_id, .. } if *tool_call_id == gone_id)
        });
        return Some(out);
    }
    // 6. The latest answer's own text, when it ran on.
    if let Message::Assistant {
        content,
        tool_calls,
    } = &messages[latest]
        && let Some(short) = shortened_answer(content)
    {
        out.messages[latest] = Message::assistant(short, tool_calls.clone());
        return Some(out);
    }
    None
}

/// A call's identity: its tool and its arguments once parsed.
fn key(call: &ToolCall) -> String {
    let arguments = serde_json::from_str::<serde_json::Value>(&call.arguments)
        .unwrap_or_else(|_| serde_json::Value::String(call.arguments.clone()));
    call_key(&call.name, &arguments)
}

/// The tool messages after the last assistant message: the results the model is about to
/// read. Empty (at the end) when the last assistant message has no results after it.
fn latest_results(messages: &[Message]) -> std::ops::Range<usize> {
    let last_assistant = messages
        .iter()
        .rposition(|message| matches!(message, Message::Assistant { .. }));
    match last_assistant {
        Some(at) => {
            let end = messages[at + 1..]
                .iter()
                .position(|message| !matches!(message, Message::Tool { .. }))
                .map_or(messages.len(), |length| at + 1 + length);
            at + 1..end
        }
        None => messages.len()..messages.len(),
    }
}

/// The oldest earlier turn: from the first message after the system prompt up to the next
/// user message, when that lies before `turn_start`. Cutting there never parts a call from its
/// result, since results follow their call before any user message.
fn oldest_turn(messages: &[Message], turn_start: usize) -> Option<std::ops::Range<usize>> {
    let first = messages
        .iter()
        .position(|message| !matches!(message, Message::System { .. }))?;
    if first >= turn_start {
        return None;
    }
    let next_user = messages[first + 1..turn_start]
        .iter()
        .position(|message| matches!(message, Message::User { .. }))
        .map_or(turn_start, |length| first + 1 + length);
    Some(first..next_user)
}

/// An answer's text longer than this many tokens is shortened to its beginning.
const ANSWER_KEPT_TOKENS: u32 = 60;
/// How a shortened answer ends, so that it is not shortened again.
const ANSWER_CUT: &str = " […the rest of this answer is left out to fit the context window]";

/// The beginning of a long answer with a note in place of the rest; `None` for a short one.
fn shortened_answer(content: &str) -> Option<String> {
    if content.ends_with(ANSWER_CUT) || estimate_tokens(content) <= ANSWER_KEPT_TOKENS * 2 {
        return None;
    }
    let mut end = 0;
    let mut tokens = 0;
    for (at, c) in content.char_indices() {
        tokens += if c.is_ascii() { 1 } else { 3 };
        if tokens > ANSWER_KEPT_TOKENS * 3 {
            break;
        }
        end = at + c.len_utf8();
    }
    Some(format!("{}{ANSWER_CUT}", &content[..end]))
}

/// How a summary begins, so that it is not summarised again.
const SUMMARY_OPEN: &str = "[earlier result of ";

/// One line in place of a result: what it was and how to have it again.
fn summary(tool: &str, content: &str) -> String {
    let first_line: String = content
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(100)
        .collect();
    format!(
        "{SUMMARY_OPEN}{tool}, left out to fit the context window: {} bytes, {} lines, beginning {first_line:?}. Make the call again if you need it.]",
        content.len(),
        content.lines().count(),
    )
}

/// Cuts the results in `latest` so that together they shrink by at least `over` tokens, the
/// largest first: each keeps an equal share of what they may take together.
fn cut_latest(latest: &mut [Message], over: u32) {
    let sizes: Vec<u32> = latest
        .iter()
        .map(|message| match message {
            Message::Tool { content, .. } => estimate_tokens(content),
            Message::System { .. } | Message::User { .. } | Message::Assistant { .. } => 0,
        })
        .collect();
    let total: u32 = sizes.iter().sum();
    let allowed_total = total.saturating_sub(over);
    // The largest share that fits `allowed_total` when every result smaller than it stays whole.
    let mut sorted = sizes.clone();
    sorted.sort_unstable();
    let mut left = allowed_total;
    let mut share = None;
    for (rank, size) in sorted.iter().enumerate() {
        let remaining = u32::try_from(sorted.len() - rank).unwrap_or(u32::MAX);
        let even = left / remaining;
        if *size <= even {
            left -= size;
        } else {
            share = Some(even);
            break;
        }
    }
    let Some(share) = share else {
        return;
    };
    for (message, size) in latest.iter_mut().zip(sizes) {
        if size <= share {
            continue;
        }
        if let Message::Tool {
            tool_call_id,
            name,
            content,
            ..
        } = message
        {
            let cut = cut_result(name, content, share.max(MIN_RESULT_TOKENS));
            *message = Message::tool(tool_call_id.clone(), name.clone(), cut);
        }
    }
}

/// `content` cut to about `tokens` tokens (marker included), at a line break where one is near,
/// with a marker that says how much was cut and how to read the rest.
fn cut_result(tool: &str, content: &str, tokens: u32) -> String {
    let marker_room = 60;
    let keep = tokens.saturating_sub(marker_room);
    let mut end = 0;
    let mut ascii = 0u32;
    let mut other = 0u32;
    for (at, c) in content.char_indices() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
        if ascii.div_ceil(3) + other > keep {
            break;
        }
        end = at + c.len_utf8();
    }
    if end >= content.len() {
        return content.to_string();
    }
    if let Some(newline) = content[..end].rfind('\n')
        && newline > end / 2
    {
        end = newline + 1;
    }
    let shown = &content[..end];
    let how = match (tool, next_line(shown)) {
        ("read_file", Some(next)) => format!("Read on with read_file offset={next}."),
        _ => {
            "Ask for less (a narrower pattern, or an offset and limit) to see the rest.".to_string()
        }
    };
    format!(
        "{shown}\n[cut to fit the context window: showing {end} of {} bytes. {how}]",
        content.len()
    )
}

/// The number after the last numbered line of a `read_file` result (`  12\ttext`).
fn next_line(shown: &str) -> Option<u64> {
    shown.lines().rev().find_map(|line| {
        let (number, _) = line.split_once('\t')?;
        number.trim().parse::<u64>().ok().map(|n| n + 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tooltrail_protocol::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: "{}".into(),
        }
    }

    fn numbered(lines: usize) -> String {
        (1..=lines)
            .map(|n| format!("{n:>6}\tlet value_{n} = compute_something({n});\n"))
            .collect()
    }

    fn raw(request: &ChatRequest) -> u32 {
        request.messages.iter().map(estimate_message).sum()
    }

    #[test]
    fn the_answer_keeps_a_quarter_of_the_window_within_bounds() {
        assert_eq!(request_room(2048, None), 2048 - 512);
        assert_eq!(request_room(4096, None), 3072);
        assert_eq!(request_room(131_072, None), 131_072 - 8192);
        assert_eq!(request_room(4096, Some(256)), 4096 - 256);
        assert_eq!(request_room(4096, Some(100_000)), 2048);
    }

    #[test]
    fn a_request_that_fits_is_sent_as_it_is() {
        let request = ChatRequest::new(vec![Message::system("s"), Message::user("q")]);
        let fitted = fit(request.clone(), 1, 1000, &raw).unwrap();
        assert_eq!(fitted.request, request);
        assert_eq!(fitted.used, raw(&request));
    }

    #[test]
    fn earlier_results_become_summaries_before_the_latest_are_cut() {
        let big = numbered(200);
        let messages = vec![
            Message::system("s"),
            Message::user("q"),
            Message::assistant("", vec![call("a")]),
            Message::tool("a", "read_file", big.clone()),
            Message::assistant("", vec![call("b")]),
            Message::tool("b", "read_file", big.clone()),
        ];
        let room = raw(&ChatRequest::new(messages.clone())) - estimate_tokens(&big) + 200;
        let fitted = fit(ChatRequest::new(messages), 1, room, &raw).unwrap();
        assert!(fitted.used <= room);
        let Message::Tool { content, .. } = &fitted.request.messages[3] else {
            panic!()
        };
        assert!(
            content.starts_with("[earlier result of read_file, left out"),
            "{content}"
        );
        let Message::Tool { content, .. } = &fitted.request.messages[5] else {
            panic!()
        };
        assert_eq!(
            content, &big,
            "the latest result stays whole when the summary is enough"
        );
    }

    #[test]
    fn earlier_long_answers_keep_their_beginning_and_their_calls() {
        let rambling = "I will look at the files now. ".repeat(60);
        let messages = vec![
            Message::system("s"),
            Message::user("q"),
            Message::assistant(rambling.clone(), vec![call("a")]),
            Message::tool("a", "read_file", "A"),
            Message::assistant("", vec![call("b")]),
            Message::tool("b", "read_file", "B"),
        ];
        let room = raw(&ChatRequest::new(messages.clone())) - 300;
        let fitted = fit(ChatRequest::new(messages), 1, room, &raw).unwrap();
        let Message::Assistant {
            content,
            tool_calls,
        } = &fitted.request.messages[2]
        else {
            panic!()
        };
        assert!(
            content.starts_with("I will look at the files now."),
            "{content}"
        );
        assert!(content.ends_with(ANSWER_CUT), "{content}");
        assert_eq!(tool_calls, &vec![call("a")]);
    }

    #[test]
    fn older_turns_go_whole_and_the_question_stays() {
        let messages = vec![
            Message::system("s"),
            Message::user("old question ".repeat(300)),
            Message::assistant("old answer ".repeat(300), Vec::new()),
            Message::user("the question"),
        ];
        let room = 100;
        let fitted = fit(ChatRequest::new(messages), 3, room, &raw).unwrap();
        assert_eq!(
            fitted.request.messages,
            vec![Message::system("s"), Message::user("the question")]
        );
    }

    #[test]
    fn the_latest_results_are_cut_with_a_marker_that_says_where_to_read_on() {
        let messages = vec![
            Message::system("s"),
            Message::user("q"),
            Message::assistant("", vec![call("a"), call("b")]),
            Message::tool("a", "read_file", numbered(400)),
            Message::tool("b", "read_file", "short".to_string()),
        ];
        let room = 1000;
        let fitted = fit(ChatRequest::new(messages), 1, room, &raw).unwrap();
        assert!(fitted.used <= room, "{}", fitted.used);
        let Message::Tool { content, .. } = &fitted.request.messages[3] else {
            panic!()
        };
        let marker = content.lines().last().unwrap();
        assert!(
            marker.starts_with("[cut to fit the context window: showing "),
            "{marker}"
        );
        let next = next_line(content.trim_end_matches(marker)).unwrap();
        assert!(marker.ends_with(&format!("Read on with read_file offset={next}.]")));
        let Message::Tool { content, .. } = &fitted.request.messages[4] else {
            panic!()
        };
        assert_eq!(content, "short");
    }

    fn call_to(id: &str, path: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: format!(r#"{{"path":"{path}"}}"#),
        }
    }

    #[test]
    fn the_turns_own_rounds_give_way_repeats_first_and_the_question_stays() {
        let big = numbered(300);
        let messages = vec![
            Message::system("s"),
            Message::user("the question"),
            Message::assistant("", vec![call_to("a", "x.rs")]),
            Message::tool("a", "read_file", "short result of x"),
            Message::assistant("", vec![call_to("b", "y.rs")]),
            Message::tool("b", "read_file", "short result of y"),
            Message::assistant("", vec![call_to("c", "x.rs"), call_to("d", "z.rs")]),
            Message::tool("c", "read_file", big.clone()),
            Message::tool("d", "read_file", big),
        ];
        let first = shrink_own_rounds(&ChatRequest::new(messages.clone()), 1).unwrap();
        assert_eq!(
            first.messages[..4],
            [
                Message::system("s"),
                Message::user("the question"),
                Message::assistant("", vec![call_to("b", "y.rs")]),
                Message::tool("b", "read_file", "short result of y"),
            ],
            "the round whose call came again goes first"
        );
        let second = shrink_own_rounds(&first, 1).unwrap();
        let third = shrink_own_rounds(&second, 1).unwrap();
        assert_eq!(
            third.messages[..3],
            [
                Message::system("s"),
                Message::user("the question"),
                Message::assistant("", vec![call_to("d", "z.rs")]),
            ],
            "then the oldest, then the latest round's oldest call, down to one"
        );
        assert_eq!(third.messages.len(), 4);
        let fitted = fit(ChatRequest::new(messages), 1, 120, &raw).unwrap();
        assert!(fitted.lost_own);
        assert!(fitted.used <= 120, "{}", fitted.used);
        assert_eq!(fitted.request.messages[1], Message::user("the question"));
    }

    #[test]
    fn a_question_larger_than_the_window_is_not_sent() {
        let messages = vec![Message::system("s"), Message::user("word ".repeat(2000))];
        let error = fit(ChatRequest::new(messages), 1, 500, &raw).unwrap_err();
        assert_eq!(error.room, 500);
        assert!(error.needed > 500);
    }
}
