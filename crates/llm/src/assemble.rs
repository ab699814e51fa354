//! Assembling an answer from chunks: text, tool-call deltas, finish reason and usage.
//!
//! Tool-call deltas are matched to calls by the server's `index`, and by `id` where a server
//! reuses index 0 for calls with different ids. A name is set once and never appended (some
//! servers repeat it in every chunk); argument fragments are appended; arguments sent as an
//! object are serialised. Calls without an id get one. Only when the answer is over is each
//! call judged: one without a name is dropped, and so is one whose arguments do not parse as
//! JSON when the answer was cut by its length limit. A finished answer's call with bad JSON is
//! kept, so the model is told what was wrong with it instead of never hearing back.

use std::collections::HashMap;

use serde_json::Value;
use tooltrail_protocol::{ToolCall, Usage};

use crate::error::{LlmError, error_message};
use crate::response::{ChatResponse, DroppedCall, FinishReason, StreamDelta};
use crate::wire::{WireCompletion, WireMessage, WireToolCall};
use tooltrail_protocol::ToolMode;

#[derive(Debug, Default)]
pub(crate) struct Assembler {
    content: String,
    calls: Vec<PartialCall>,
    /// The server's index → the position in `calls` of the call it currently names.
    by_index: HashMap<u32, usize>,
    finish_reason: Option<FinishReason>,
    usage: Option<Usage>,
}

#[derive(Debug)]
struct PartialCall {
    id: String,
    /// Whether `id` came from the server (rather than generated here).
    server_id: bool,
    name: Option<String>,
    arguments: String,
}

impl Assembler {
    /// Reads one streaming chunk, telling `on_delta` what it added.
    pub fn push_chunk(
        &mut self,
        chunk: WireCompletion,
        on_delta: &mut dyn FnMut(StreamDelta),
    ) -> Result<(), LlmError> {
        if let Some(message) = reported_error(&chunk) {
            return Err(LlmError::Model(message));
        }
        if let Some(usage) = &chunk.usage {
            let usage = usage.to_usage();
            if self.usage != Some(usage) {
                self.usage = Some(usage);
                on_delta(StreamDelta::Usage(usage));
            }
        }
        if let Some(progress) = &chunk.prompt_progress {
            on_delta(StreamDelta::PromptProgress {
                processed: progress.processed,
                total: progress.total,
                cached: progress.cache,
                // Milliseconds: a float that is never negative or huge; a bad one reads 0.
                elapsed_ms: progress.time_ms.clamp(0.0, 1e12) as u64,
            });
        }
        let truncated = chunk.truncated == Some(true);
        let choices = chunk.choices.unwrap_or_default();
        // One answer is asked for (n = 1): its choice is index 0, or the first one.
        if let Some(choice) = choices
            .into_iter()
            .find(|choice| choice.index.unwrap_or(0) == 0)
        {
            if let Some(delta) = choice.delta.or(choice.message) {
                self.push_message(delta, false, on_delta);
            }
            if let Some(word) = choice.finish_reason.filter(|word| !word.is_empty()) {
                self.finish_reason = Some(FinishReason::parse(&word));
            }
        }
        // llama.cpp's word for an answer that ran into the end of the window, whatever
        // finish reason came with it.
        if truncated && self.finish_reason.is_some() {
            self.finish_reason = Some(FinishReason::Length);
        }
        Ok(())
    }

    /// Reads a whole non-streaming response.
    pub fn from_completion(
        completion: WireCompletion,
        on_delta: &mut dyn FnMut(StreamDelta),
    ) -> Result<ChatResponse, LlmError> {
        if let Some(message) = reported_error(&completion) {
            return Err(LlmError::Model(message));
        }
        let mut assembler = Self::default();
        if let Some(usage) = &completion.usage {
            assembler.usage = Some(usage.to_usage());
        }
        let choice = completion
            .choices
            .unwrap_or_default()
            .into_iter()
            .find(|choice| choice.index.unwrap_or(0) == 0)
            .ok_or_else(|| LlmError::InvalidResponse("it holds no answer (no choices)".into()))?;
        if let Some(message) = choice.message.or(choice.delta) {
            assembler.push_message(message, true, on_delta);
        }
        assembler.finish_reason = choice
            .finish_reason
            .filter(|word| !word.is_empty())
            .map(|word| FinishReason::parse(&word));
        if completion.truncated == Some(true) {
            assembler.finish_reason = Some(FinishReason::Length);
        }
        if let Some(usage) = assembler.usage {
            on_delta(StreamDelta::Usage(usage));
        }
        Ok(assembler.finish())
    }

    /// Whether the server said why the model stopped.
    pub fn has_finish_reason(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// `whole` is true for a non-streaming message, whose calls are complete and, when they
    /// carry no index, numbered by their position.
    fn push_message(
        &mut self,
        message: WireMessage,
        whole: bool,
        on_delta: &mut dyn FnMut(StreamDelta),
    ) {
        let text = message.text();
        if !text.is_empty() {
            self.content.push_str(&text);
            on_delta(StreamDelta::Text(text));
        }
        let calls = match (message.tool_calls, message.function_call) {
            (Some(calls), _) if !calls.is_empty() => calls,
            // The legacy field counts only when the server sends no `tool_calls`
            // (llama-cpp-python sends both, with the same content).
            (_, Some(function)) => vec![WireToolCall {
                index: Some(0),
                id: None,
                function: Some(function),
            }],
            _ => Vec::new(),
        };
        for (position, call) in calls.into_iter().enumerate() {
            let fallback_index = whole.then(|| u32::try_from(position).unwrap_or(u32::MAX));
            self.push_call(call, fallback_index, on_delta);
        }
    }

    fn push_call(
        &mut self,
        call: WireToolCall,
        fallback_index: Option<u32>,
        on_delta: &mut dyn FnMut(StreamDelta),
    ) {
        let id = call.id.filter(|id| !id.is_empty());
        let index = call.index.or(fallback_index);
        let (position, created) = self.slot(index, id);
        let function = call.function.unwrap_or_default();
        let slot = &mut self.calls[position];

        let mut new_name = None;
        if let Some(name) = function.name.filter(|name| !name.is_empty())
            && slot.name.is_none()
        {
            slot.name = Some(name.clone());
            new_name = Some(name);
        }
        let fragment = match function.arguments {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(fragment)) => {
                slot.arguments.push_str(&fragment);
                fragment
            }
            // A whole arguments object: it replaces whatever came before.
            Some(object) => {
                slot.arguments = object.to_string();
                slot.arguments.clone()
            }
        };
        if created || new_name.is_some() || !fragment.is_empty() {
            on_delta(StreamDelta::ToolCall {
                index: u32::try_from(position).unwrap_or(u32::MAX),
                id: slot.id.clone(),
                name: new_name,
                arguments: fragment,
            });
        }
    }

    /// The position of the call a delta belongs to, and whether it was created for it.
    fn slot(&mut self, index: Option<u32>, id: Option<String>) -> (usize, bool) {
        let known_by_id = id.as_ref().and_then(|id| {
            self.calls
                .iter()
                .position(|call| call.server_id && call.id == *id)
        });
        let current = match index {
            Some(index) => self.by_index.get(&index).copied(),
            // No index: the call most recently begun.
            None => self.calls.len().checked_sub(1),
        };
        let (position, created) = match (known_by_id, current, id) {
            (Some(position), _, _) => (position, false),
            // The same index with a different id is a new call (index 0 reused).
            (None, Some(position), Some(id)) if self.calls[position].server_id => {
                (self.create(Some(id)), true)
            }
            // An id arriving after the call began without one: keep the id already shown.
            (None, Some(position), _) => (position, false),
            (None, None, id) => (self.create(id), true),
        };
        if let Some(index) = index {
            self.by_index.insert(index, position);
        }
        (position, created)
    }

    fn create(&mut self, id: Option<String>) -> usize {
        let server_id = id.is_some();
        let id = id.unwrap_or_else(|| format!("call_{}", uuid::Uuid::new_v4().simple()));
        self.calls.push(PartialCall {
            id,
            server_id,
            name: None,
            arguments: String::new(),
        });
        self.calls.len() - 1
    }

    /// The answer, with every call judged complete or dropped.
    /// The answer as far as it came when the caller stopped reading it.
    pub fn stopped(mut self) -> ChatResponse {
        self.finish_reason = Some(FinishReason::Stopped);
        self.finish()
    }

    pub fn finish(self) -> ChatResponse {
        let truncated = self
            .finish_reason
            .as_ref()
            .is_some_and(FinishReason::cut_short);
        let mut tool_calls = Vec::new();
        let mut dropped_calls = Vec::new();
        for call in self.calls {
            let name = call.name.unwrap_or_default();
            let mut arguments = call.arguments;
            // A call to a function without parameters may come with no arguments at all.
            if arguments.trim().is_empty() && !truncated && !name.is_empty() {
                arguments = "{}".to_string();
            }
            let parses = serde_json::from_str::<serde::de::IgnoredAny>(&arguments).is_ok();
            let reason = if name.is_empty() {
                Some("the model began a tool call without naming the tool".to_string())
            } else if truncated && !parses && self.finish_reason == Some(FinishReason::Length) {
                Some(format!(
                    "the answer reached its length limit in the middle of the call to `{name}`, \
                     so its arguments are incomplete"
                ))
            } else if truncated && !parses {
                Some(format!(
                    "the answer was stopped in the middle of the call to `{name}`, so its \
                     arguments are incomplete"
                ))
            } else {
                None
            };
            let call = ToolCall {
                id: call.id,
                name,
                arguments,
            };
            match reason {
                None => tool_calls.push(call),
                Some(reason) => dropped_calls.push(DroppedCall { call, reason }),
            }
        }
        ChatResponse {
            content: self.content,
            tool_calls,
            dropped_calls,
            finish_reason: self.finish_reason,
            usage: self.usage,
            tool_mode_used: ToolMode::Native,
        }
    }
}

/// The message of an error the server put where an answer should be: `{"error": ...}`, or
/// vLLM's `{"object": "error", "message": ...}`.
fn reported_error(completion: &WireCompletion) -> Option<String> {
    match (&completion.error, completion.object.as_deref()) {
        (Some(error), _) if !error.is_null() => Some(error_message(error)),
        (_, Some("error")) => Some(
            completion
                .message
                .as_ref()
                .map(error_message)
                .unwrap_or_else(|| "no reason given".to_string()),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn assemble(chunks: &[Value]) -> (ChatResponse, Vec<StreamDelta>) {
        let mut assembler = Assembler::default();
        let mut deltas = Vec::new();
        for chunk in chunks {
            let chunk: WireCompletion = serde_json::from_value(chunk.clone()).unwrap();
            assembler
                .push_chunk(chunk, &mut |delta| deltas.push(delta))
                .unwrap();
        }
        (assembler.finish(), deltas)
    }

    fn call_delta(call: Value) -> Value {
        json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [call] } }] })
    }

    #[test]
    fn fragments_are_appended_and_names_set_once() {
        let (response, deltas) = assemble(&[
            call_delta(
                json!({ "index": 0, "id": "a", "function": { "name": "read_file", "arguments": "{\"pa" } }),
            ),
            call_delta(
                json!({ "index": 0, "id": "a", "function": { "name": "read_file", "arguments": "th\":1}" } }),
            ),
            json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] }),
        ]);
        assert_eq!(
            response.tool_calls,
            vec![ToolCall {
                id: "a".into(),
                name: "read_file".into(),
                arguments: "{\"path\":1}".into()
            }]
        );
        assert_eq!(
            deltas,
            vec![
                StreamDelta::ToolCall {
                    index: 0,
                    id: "a".into(),
                    name: Some("read_file".into()),
                    arguments: "{\"pa".into()
                },
                StreamDelta::ToolCall {
                    index: 0,
                    id: "a".into(),
                    name: None,
                    arguments: "th\":1}".into()
                },
            ]
        );
    }

    #[test]
    fn index_zero_reused_for_different_ids() {
        let (response, _) = assemble(&[
            call_delta(
                json!({ "index": 0, "id": "a", "function": { "name": "x", "arguments": "{}" } }),
            ),
            call_delta(
                json!({ "index": 0, "id": "b", "function": { "name": "y", "arguments": "{\"n\":" } }),
            ),
            call_delta(json!({ "index": 0, "function": { "arguments": "2}" } })),
            json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] }),
        ]);
        let names: Vec<(String, String, String)> = response
            .tool_calls
            .into_iter()
            .map(|call| (call.id, call.name, call.arguments))
            .collect();
        assert_eq!(
            names,
            vec![
                ("a".into(), "x".into(), "{}".into()),
                ("b".into(), "y".into(), "{\"n\":2}".into()),
            ]
        );
    }

    #[test]
    fn empty_id_in_continuations_is_no_id() {
        let (response, _) = assemble(&[
            call_delta(
                json!({ "index": 0, "id": "a", "function": { "name": "x", "arguments": "{" } }),
            ),
            call_delta(json!({ "index": 0, "id": "", "function": { "arguments": "}" } })),
        ]);
        assert_eq!(response.tool_calls.len(), 1);
        assert_eq!(response.tool_calls[0].arguments, "{}");
    }

    #[test]
    fn legacy_function_call_alone_is_a_call() {
        let (response, _) = assemble(&[json!({ "choices": [{ "index": 0, "delta": {
            "function_call": { "name": "x", "arguments": "{\"a\":1}" } }, "finish_reason": "function_call" }] })]);
        assert_eq!(response.tool_calls.len(), 1);
        assert_eq!(response.tool_calls[0].name, "x");
        assert!(response.tool_calls[0].id.starts_with("call_"));
        assert_eq!(response.finish_reason, Some(FinishReason::ToolCalls));
    }

    #[test]
    fn calls_without_arguments_get_an_empty_object_unless_cut() {
        let call = call_delta(json!({ "index": 0, "id": "a", "function": { "name": "now" } }));
        let (done, _) = assemble(std::slice::from_ref(&call));
        assert_eq!(done.tool_calls[0].arguments, "{}");
        let (cut, _) = assemble(&[
            call,
            json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "length" }] }),
        ]);
        assert_eq!(cut.tool_calls, Vec::new());
        assert_eq!(
            cut.dropped_calls,
            vec![DroppedCall {
                call: ToolCall {
                    id: "a".into(),
                    name: "now".into(),
                    arguments: String::new()
                },
                reason: "the answer reached its length limit in the middle of the call to `now`, \
                         so its arguments are incomplete"
                    .into()
            }]
        );
    }

    #[test]
    fn other_choices_are_ignored() {
        let (response, _) = assemble(&[json!({ "choices": [
            { "index": 1, "delta": { "content": "no" } },
            { "index": 0, "delta": { "content": "yes" } },
        ] })]);
        assert_eq!(response.content, "yes");
    }

    #[test]
    fn an_error_object_fails_the_turn() {
        let mut assembler = Assembler::default();
        let chunk: WireCompletion =
            serde_json::from_value(json!({ "error": { "message": "model overloaded" } })).unwrap();
        let error = assembler.push_chunk(chunk, &mut |_| {}).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the model reported an error: model overloaded"
        );
    }
}
