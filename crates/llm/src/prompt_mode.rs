//! Prompt mode: tools for models without function calling (Cherry Studio's `<tool_use>`).
//!
//! The request carries no `tools` or `tool_choice`. Instead a section of the system prompt
//! ([`instructions`]) lists the tools and shows the format the model answers in:
//!
//! ```text
//! <tool_use><name>read_file</name><arguments>{"path": "README.md"}</arguments></tool_use>
//! ```
//!
//! The history is rewritten to match ([`history`]): earlier calls as those blocks at the end
//! of the assistant's text, their results as one user message of `<tool_use_result>` blocks.
//! A `stop` sequence of `<tool_use_result>` ends the answer where a small model would start
//! inventing the results of its own calls.
//!
//! The answer's text goes through a streaming parser ([`parse`]) that turns the blocks back
//! into the same [`StreamDelta::ToolCall`] progress and [`ChatResponse::tool_calls`] that
//! native calls give, so everything above the client works the same in both modes.

pub(crate) mod history;
pub(crate) mod instructions;
pub(crate) mod parse;
pub(crate) mod repair;

use serde_json::{Value, json};

use crate::request::ChatRequest;
use crate::response::{ChatResponse, FinishReason, StreamDelta};
use tooltrail_protocol::ToolMode;

use self::parse::ToolUseParser;

/// Where the answer stops: the model must not write its own results.
const STOP: &str = "<tool_use_result>";

// Here rather than beside the request's own body, so that the request knows nothing of
// prompt mode.
impl ChatRequest {
    /// The JSON body sent to `/chat/completions` in prompt mode: no `tools` or `tool_choice`,
    /// the tools described in the system prompt, and earlier calls and results written as
    /// `<tool_use>` and `<tool_use_result>` blocks. For showing or recording what a prompt-mode
    /// request looks like; the client builds it itself.
    pub fn to_prompt_body(&self, model: &str, stream: bool) -> Value {
        request_body(self, model, stream, false)
    }
}

/// The JSON body of `request` in prompt mode. For a model that sees images (`vision`), the
/// user message of results whose tools returned images carries them as image parts after its
/// text; otherwise each result says in words what came back.
pub(crate) fn request_body(
    request: &ChatRequest,
    model: &str,
    stream: bool,
    vision: bool,
) -> Value {
    let section = instructions::tool_section(&request.tools, request.tool_choice.as_ref());
    let messages = crate::request::context_in_question(&request.messages);
    let (messages, images) = history::prompt_messages_seeing(&messages, section.as_deref(), vision);
    let rewritten = ChatRequest {
        messages,
        tools: Vec::new(),
        tool_choice: None,
        temperature: request.temperature,
        max_tokens: request.max_tokens,
    };
    let mut body = rewritten.to_body(model, stream);
    for (index, shown) in images {
        if let Some(message) = body
            .get_mut("messages")
            .and_then(|messages| messages.get_mut(index))
        {
            let text = message["content"].as_str().unwrap_or_default().to_string();
            let shown: Vec<&tooltrail_protocol::Media> = shown.iter().collect();
            message["content"] = crate::request::image_parts(&text, &shown);
        }
    }
    if section.is_some()
        && let Value::Object(fields) = &mut body
    {
        fields.insert("stop".into(), json!([STOP]));
    }
    body
}

/// Reads an answer's text for `<tool_use>` blocks as it streams: text deltas go through the
/// parser, everything else passes as it is.
#[derive(Debug, Default)]
pub(crate) struct PromptAnswer {
    parser: ToolUseParser,
}

impl PromptAnswer {
    pub fn delta(&mut self, delta: StreamDelta, out: &mut dyn FnMut(StreamDelta)) {
        match delta {
            StreamDelta::Text(text) => self.parser.push(&text, out),
            other => out(other),
        }
    }

    /// The assembled response with the calls found in its text. Native calls a server sent
    /// all the same (none is asked for) are kept, before the parsed ones.
    pub fn finish(
        self,
        mut response: ChatResponse,
        out: &mut dyn FnMut(StreamDelta),
    ) -> ChatResponse {
        let truncated = response
            .finish_reason
            .as_ref()
            .is_some_and(FinishReason::cut_short);
        let parsed = self.parser.finish(truncated, out);
        response.content = parsed.text;
        response.tool_calls.extend(parsed.calls);
        response.dropped_calls.extend(parsed.dropped);
        response.tool_mode_used = ToolMode::Prompt;
        response
    }
}

/// Generators shared by the property tests of the prompt-mode modules.
#[cfg(test)]
pub(crate) mod test_strategies {
    use proptest::prelude::*;
    use proptest::sample::Index;
    use proptest::test_runner::Config;
    use serde_json::{Map, Value};

    use super::parse::{CLOSE, OPEN};

    /// Proptest's defaults, which read `PROPTEST_CASES` (and the other `PROPTEST_*`
    /// variables) from the environment: `scripts/fuzz` sets them.
    pub fn proptest_config() -> Config {
        Config::default()
    }

    /// JSON values of every kind, nested a few levels. Numbers are integers (floats do not
    /// all survive a round trip through text), strings hold quotes, escapes, commas, braces
    /// and non-ASCII text, and never `<`.
    pub fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "[a-z0-9 ,:{}\\[\\]\"\\\\é中\n\t]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map("[a-z_]{1,6}", inner, 0..5)
                    .prop_map(|fields| Value::Object(fields.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    fn json_object() -> impl Strategy<Value = Value> {
        prop::collection::btree_map("[a-z_]{1,6}", json_value(), 0..4)
            .prop_map(|fields| Value::Object(fields.into_iter().collect::<Map<_, _>>()))
    }

    /// A generated answer: its text, what should be visible of it, and the calls in it.
    #[derive(Debug, Clone)]
    pub struct Answer {
        pub text: String,
        pub visible: String,
        pub calls: Vec<(String, String)>,
        /// No unfinished block at the end, so `visible` and `calls` are exact.
        pub whole: bool,
    }

    #[derive(Debug, Clone)]
    enum Segment {
        Call {
            text: String,
            name: String,
            arguments: String,
        },
        /// Shown as it is: a call in a code block, or in a `<think>` block.
        Shown(String),
    }

    /// Text between calls: tag-like pieces, `<`, `</`, non-ASCII; never a whole tag or fence.
    fn plain_text() -> impl Strategy<Value = String> {
        "(\\PC|<|</|<tool|<tool_us|<th|<b>|>|/|\n| |é|中|`|~){0,16}".prop_filter(
            "no whole tag or fence",
            |text| {
                ![OPEN, CLOSE, "<think>", "</think>", "```", "~~~"]
                    .iter()
                    .any(|tag| text.contains(tag))
            },
        )
    }

    fn call_segment() -> impl Strategy<Value = Segment> {
        call_parts().prop_map(|(text, name, arguments)| Segment::Call {
            text,
            name,
            arguments,
        })
    }

    /// A closed `<tool_use>` block with spaces in every place they may go: its text, name and
    /// arguments.
    fn call_parts() -> impl Strategy<Value = (String, String, String)> {
        let space = || prop::sample::select(vec!["", " ", "\n", "\n  "]);
        (
            "[a-z][a-z_]{0,12}",
            json_object(),
            any::<bool>(),
            (space(), space(), space(), space()),
        )
            .prop_map(|(name, arguments, pretty, (s1, s2, s3, s4))| {
                let arguments = if pretty {
                    serde_json::to_string_pretty(&arguments).unwrap_or_default()
                } else {
                    arguments.to_string()
                };
                let text = format!(
                    "{OPEN}{s1}<name>{name}</name>{s2}<arguments>{s3}{arguments}{s3}</arguments>{s4}{CLOSE}"
                );
                (text, name, arguments)
            })
    }

    fn segment() -> impl Strategy<Value = Segment> {
        prop_oneof![
            4 => call_segment(),
            1 => (call_parts(), prop::sample::select(vec!["```", "````", "~~~", "```xml"]))
                .prop_map(|((text, _, _), fence)| {
                    let close: String = fence.chars().take_while(|c| *c == '`' || *c == '~').collect();
                    Segment::Shown(format!("\n{fence}\n{text}\n{close}\n"))
                }),
            1 => (call_parts(), plain_text()).prop_map(|((text, _, _), thought)| {
                Segment::Shown(format!("<think>{thought}{text}</think>"))
            }),
        ]
    }

    /// Text, then calls (and code or thinking that only look like calls) each followed by
    /// text, and sometimes an unfinished block at the end.
    pub fn answer() -> impl Strategy<Value = Answer> {
        (
            plain_text(),
            prop::collection::vec((segment(), plain_text()), 0..5),
            prop::option::of((call_parts(), any::<Index>())),
        )
            .prop_map(|(first, segments, tail)| {
                let mut answer = Answer {
                    text: first.clone(),
                    visible: first,
                    calls: Vec::new(),
                    whole: tail.is_none(),
                };
                for (segment, after) in segments {
                    match segment {
                        Segment::Call {
                            text,
                            name,
                            arguments,
                        } => {
                            answer.text.push_str(&text);
                            answer.calls.push((name, arguments));
                        }
                        Segment::Shown(text) => {
                            answer.text.push_str(&text);
                            answer.visible.push_str(&text);
                        }
                    }
                    answer.text.push_str(&after);
                    answer.visible.push_str(&after);
                }
                if let Some(((text, _, _), cut)) = tail {
                    // A block cut anywhere after its opening tag.
                    let cut = OPEN.len() + cut.index(text.len() - OPEN.len());
                    let cut = (cut..=text.len())
                        .find(|at| text.is_char_boundary(*at))
                        .unwrap_or(text.len());
                    answer.text.push_str(&text[..cut]);
                }
                answer
            })
    }

    /// Where to cut a text into pieces: up to 12 places, as indexes to map onto it.
    pub fn cuts() -> impl Strategy<Value = Vec<Index>> {
        prop::collection::vec(any::<Index>(), 0..12)
    }

    /// `text` cut at the character boundaries the indexes pick.
    pub fn split_at<'a>(text: &'a str, cuts: &[Index]) -> Vec<&'a str> {
        let boundaries: Vec<usize> = text
            .char_indices()
            .map(|(at, _)| at)
            .chain(std::iter::once(text.len()))
            .collect();
        let mut positions: Vec<usize> = cuts
            .iter()
            .map(|cut| boundaries[cut.index(boundaries.len())])
            .collect();
        positions.sort_unstable();
        positions.dedup();
        let mut pieces = Vec::new();
        let mut start = 0;
        for at in positions {
            pieces.push(&text[start..at]);
            start = at;
        }
        pieces.push(&text[start..]);
        pieces
    }
}

#[cfg(test)]
mod media_tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tooltrail_protocol::media::unseen_sentence;
    use tooltrail_protocol::{Media, MediaKind, Message, ToolCall};

    use super::request_body;
    use crate::request::{ChatRequest, IMAGES_INTRO};

    fn request() -> (ChatRequest, Media) {
        let image = Media {
            kind: MediaKind::Image,
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        };
        let call = ToolCall {
            id: "c1".into(),
            name: "img".into(),
            arguments: "{}".into(),
        };
        let request = ChatRequest::new(vec![
            Message::user("show me"),
            Message::assistant("", vec![call]),
            Message::tool_with_media("c1", "img", "Here it is.", vec![image.clone()]),
        ]);
        (request, image)
    }

    #[test]
    fn results_carry_their_images_for_a_model_that_sees() {
        let (request, _) = request();
        let body = request_body(&request, "m", false, true);
        let last = &body["messages"][2];
        assert_eq!(last["role"], "user");
        assert_eq!(
            last["content"][0]["text"],
            "<tool_use_result><name>img</name><result>Here it is.\n(The images this tool \
             returned follow these results.)</result></tool_use_result>"
        );
        assert_eq!(
            last["content"][1],
            json!({ "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw0KGgo=" } })
        );
        assert!(!body.to_string().contains(IMAGES_INTRO));
    }

    #[test]
    fn results_say_what_came_back_to_a_model_that_does_not_see() {
        let (request, image) = request();
        let body = request_body(&request, "m", false, false);
        assert_eq!(
            body["messages"][2]["content"],
            format!(
                "<tool_use_result><name>img</name><result>Here it is.\n{}</result></tool_use_result>",
                unseen_sentence(&[image])
            )
        );
    }
}
