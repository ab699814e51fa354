//! Where a replay parts from the turn it asked again: the two call sequences aligned call by
//! call, the first call that differs, how much the sequences agree, and the figures of each
//! turn side by side. Everything here is worked out from the record, so a comparison reads the
//! same in the window, on the command line and in an export.

use serde::Serialize;
use serde_json::Value;
use tooltrail_protocol::{ApprovalBy, Event, EventBody, Message, ToolStatus, TurnEnd};
use ts_rs::TS;

/// One call of a recorded turn, as a comparison uses it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ComparedCall {
    pub call_id: String,
    pub tool: String,
    pub arguments: Value,
    pub status: ToolStatus,
    /// A replay gave back the recorded result instead of running it.
    pub from_record: bool,
    /// A replay did not run it.
    pub not_run: bool,
    /// When it ended, from the question, in ms (with `duration_ms`, where it sits on the
    /// turn's waterfall).
    #[ts(type = "number")]
    pub ended_ms: u64,
    #[ts(type = "number")]
    pub duration_ms: u64,
}

/// One recorded turn, read back for a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct TurnFigures {
    pub turn_id: String,
    pub conversation_id: String,
    pub model: String,
    pub workspace: String,
    pub question: String,
    pub answer: String,
    pub end: Option<TurnEnd>,
    /// From the question to the end of the turn.
    #[ts(type = "number | null")]
    pub total_ms: Option<u64>,
    /// From the question to the model's first complete reply (its first answer or its first
    /// calls).
    #[ts(type = "number | null")]
    pub first_reply_ms: Option<u64>,
    #[ts(type = "number")]
    pub tokens_in: u64,
    #[ts(type = "number")]
    pub tokens_out: u64,
    /// Calls that failed, and the turn itself when it ended in an error.
    pub errors: u32,
    /// Times the model was stopped for repeating itself.
    pub loops_cut: u32,
    pub calls: Vec<ComparedCall>,
    /// The turn this one replays, when it is a replay.
    pub replay_of: Option<String>,
    /// The messages the model had before the question (earlier turns of the conversation).
    #[serde(skip)]
    #[ts(skip)]
    pub before: Vec<Message>,
    #[serde(skip)]
    #[ts(skip)]
    pub started_ms: i64,
}

impl TurnFigures {
    /// Reads a turn's figures from its events (as `Store::turn_events` gives them).
    pub fn of(events: &[Event]) -> Option<Self> {
        let first = events.first()?;
        let mut figures = Self {
            turn_id: first.turn_id.clone(),
            conversation_id: first.conversation_id.clone(),
            model: String::new(),
            workspace: String::new(),
            question: String::new(),
            answer: String::new(),
            end: None,
            total_ms: None,
            first_reply_ms: None,
            tokens_in: 0,
            tokens_out: 0,
            errors: 0,
            loops_cut: 0,
            calls: Vec::new(),
            replay_of: None,
            before: Vec::new(),
            started_ms: first.time_ms,
        };
        for event in events {
            figures.take(event);
        }
        Some(figures)
    }

    fn since_start(&self, time_ms: i64) -> Option<u64> {
        u64::try_from(time_ms - self.started_ms).ok()
    }

    fn take(&mut self, event: &Event) {
        match &event.body {
            EventBody::TurnStarted {
                workspace,
                model,
                user_message,
                replay_of,
            } => {
                self.workspace.clone_from(workspace);
                self.model.clone_from(model);
                self.question.clone_from(user_message);
                self.replay_of.clone_from(replay_of);
                self.started_ms = event.time_ms;
            }
            EventBody::MessageAdded {
                message: Message::Assistant { .. },
            } if self.first_reply_ms.is_none() => {
                self.first_reply_ms = self.since_start(event.time_ms);
            }
            EventBody::Usage(usage) => {
                self.tokens_in += u64::from(usage.prompt_tokens);
                self.tokens_out += u64::from(usage.completion_tokens);
            }
            EventBody::RepetitionStopped { .. } => self.loops_cut += 1,
            EventBody::ToolCallFinished {
                call_id,
                tool,
                arguments,
                status,
                approval,
                duration_ms,
                ..
            } => {
                if matches!(status, ToolStatus::Error | ToolStatus::Timeout) {
                    self.errors += 1;
                }
                let replayed = approval.by == ApprovalBy::Replay;
                self.calls.push(ComparedCall {
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                    arguments: arguments.clone(),
                    status: *status,
                    from_record: replayed && approval.allowed,
                    not_run: replayed && !approval.allowed,
                    ended_ms: self.since_start(event.time_ms).unwrap_or(0),
                    duration_ms: *duration_ms,
                });
            }
            EventBody::TurnFinished { reason, text, .. } => {
                self.end = Some(*reason);
                self.answer.clone_from(text);
                self.total_ms = self.since_start(event.time_ms);
                if *reason == TurnEnd::Error {
                    self.errors += 1;
                }
            }
            _ => {}
        }
    }
}

/// One row of the side-by-side view: a call of the original, of the replay, or the same call
/// in both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
pub struct AlignedRow {
    /// Index into the original's calls.
    pub original: Option<u32>,
    /// Index into the replay's calls.
    pub replay: Option<u32>,
}

/// A replay set beside the turn it asked again.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ReplayComparison {
    pub original: TurnFigures,
    pub replay: TurnFigures,
    /// The 1-based position of the first call that differs in tool or arguments; `None` when
    /// the two made the same calls.
    pub first_divergence: Option<u32>,
    /// How much the two call sequences agree: twice their longest common subsequence over
    /// their lengths, by tool and arguments (1.0 when equal).
    pub calls_agreement: f64,
    /// The same over the tools' names alone.
    pub tools_agreement: f64,
    /// The answers are equal after whitespace and case.
    pub answer_same: bool,
    /// Calls of the replay that were not run (they could change something or ask the user,
    /// and the original made no such call).
    pub calls_not_run: u32,
    /// Calls of the replay answered from the record.
    pub calls_from_record: u32,
    /// The two call lists aligned call by call.
    pub rows: Vec<AlignedRow>,
}

/// A call as compared: its tool and its arguments in one canonical text.
fn key(call: &ComparedCall) -> (String, String) {
    (call.tool.clone(), canonical(&call.arguments))
}

/// JSON with its objects' keys in order, so that `{"a":1,"b":2}` equals `{"b":2,"a":1}`.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|key| format!("{}:{}", Value::String(key.clone()), canonical(&map[key])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// Whether two calls are the same call (same tool, same arguments, whatever their keys'
/// order).
pub fn same_call(tool: &str, arguments: &Value, other_tool: &str, other: &Value) -> bool {
    tool == other_tool && canonical(arguments) == canonical(other)
}

/// The longest common subsequence's table of `a` and `b`: `table[i][j]` is its length over
/// `a[i..]` and `b[j..]`.
fn lcs_table<T: PartialEq>(a: &[T], b: &[T]) -> Vec<Vec<u32>> {
    let mut table = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            table[i][j] = if a[i] == b[j] {
                table[i + 1][j + 1] + 1
            } else {
                table[i + 1][j].max(table[i][j + 1])
            };
        }
    }
    table
}

/// Agreement of two sequences: 2·LCS / (|a| + |b|), 1.0 for two empty ones.
pub fn agreement<T: PartialEq>(a: &[T], b: &[T]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let common = lcs_table(a, b)[0][0];
    2.0 * f64::from(common) / (a.len() + b.len()) as f64
}

/// The two sequences aligned along their longest common subsequence.
fn align<T: PartialEq>(a: &[T], b: &[T]) -> Vec<AlignedRow> {
    let table = lcs_table(a, b);
    let index = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
    let (mut i, mut j, mut rows) = (0, 0, Vec::new());
    while i < a.len() || j < b.len() {
        let (original, replay) = if i < a.len() && j < b.len() && a[i] == b[j] {
            (Some(i), Some(j))
        } else if j >= b.len() || (i < a.len() && table[i + 1][j] >= table[i][j + 1]) {
            (Some(i), None)
        } else {
            (None, Some(j))
        };
        i += usize::from(original.is_some());
        j += usize::from(replay.is_some());
        rows.push(AlignedRow {
            original: original.map(index),
            replay: replay.map(index),
        });
    }
    rows
}

/// The first position (1-based) where the two sequences differ, `None` when they are equal.
fn first_divergence<T: PartialEq>(a: &[T], b: &[T]) -> Option<u32> {
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    (same < a.len().max(b.len())).then(|| u32::try_from(same + 1).unwrap_or(u32::MAX))
}

/// The answer as compared: its words, in lower case.
fn normalised(answer: &str) -> String {
    answer
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

impl ReplayComparison {
    /// Sets `replay` beside `original`.
    pub fn of(original: TurnFigures, replay: TurnFigures) -> Self {
        let calls_a: Vec<_> = original.calls.iter().map(key).collect();
        let calls_b: Vec<_> = replay.calls.iter().map(key).collect();
        let tools_a: Vec<&str> = original.calls.iter().map(|c| c.tool.as_str()).collect();
        let tools_b: Vec<&str> = replay.calls.iter().map(|c| c.tool.as_str()).collect();
        let count = |test: fn(&ComparedCall) -> bool| {
            u32::try_from(replay.calls.iter().filter(|call| test(call)).count()).unwrap_or(0)
        };
        Self {
            first_divergence: first_divergence(&calls_a, &calls_b),
            calls_agreement: agreement(&calls_a, &calls_b),
            tools_agreement: agreement(&tools_a, &tools_b),
            answer_same: normalised(&original.answer) == normalised(&replay.answer),
            calls_not_run: count(|call| call.not_run),
            calls_from_record: count(|call| call.from_record),
            rows: align(&calls_a, &calls_b),
            original,
            replay,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_sequences_agree_fully_and_never_part() {
        let a = ["read", "grep", "read"];
        assert_eq!(first_divergence(&a, &a), None);
        assert!((agreement(&a, &a) - 1.0).abs() < f64::EPSILON);
        assert!((agreement::<&str>(&[], &[]) - 1.0).abs() < f64::EPSILON);
    }

    #[test]
    fn sequences_part_at_the_first_differing_call() {
        let a = ["list", "read", "grep"];
        let b = ["list", "read", "count", "grep"];
        assert_eq!(first_divergence(&a, &b), Some(3));
        // LCS is 3 of 3 + 4 calls.
        assert!((agreement(&a, &b) - 6.0 / 7.0).abs() < 1e-9);
        // A replay that stops early parts where it stopped.
        assert_eq!(first_divergence(&a, &a[..1]), Some(2));
        assert_eq!(first_divergence(&a, &[]), Some(1));
        assert!(agreement(&a, &[]).abs() < f64::EPSILON);
    }

    #[test]
    fn alignment_puts_the_common_calls_on_one_row() {
        let rows = align(&["list", "read", "grep"], &["list", "count", "grep"]);
        let pairs: Vec<_> = rows.iter().map(|row| (row.original, row.replay)).collect();
        assert_eq!(
            pairs,
            vec![
                (Some(0), Some(0)),
                (Some(1), None),
                (None, Some(1)),
                (Some(2), Some(2)),
            ]
        );
    }

    #[test]
    fn arguments_compare_whatever_their_keys_order() {
        let a = serde_json::json!({"path": "a", "limit": {"x": 1, "y": [1, 2]}});
        let b = serde_json::json!({"limit": {"y": [1, 2], "x": 1}, "path": "a"});
        assert!(same_call("read_file", &a, "read_file", &b));
        assert!(!same_call("read_file", &a, "list_dir", &b));
        let c = serde_json::json!({"path": "b", "limit": {"x": 1, "y": [1, 2]}});
        assert!(!same_call("read_file", &a, "read_file", &c));
    }

    #[test]
    fn answers_are_the_same_after_whitespace_and_case() {
        assert_eq!(
            normalised("There are  3\nGo files."),
            normalised("there are 3 go FILES.")
        );
        assert_ne!(normalised("3 files"), normalised("4 files"));
    }
}
