//! A turn that asks a recorded question again, with another model: what its calls may do.
//!
//! A replay has no side effects. A call whose gate says it only reads runs live (unless
//! `from_record`, where the recorded result of the same call comes first). Any other call (a
//! command, a write, an MCP tool not marked read-only) and a call that would ask the person is
//! never run: the recorded result of the same call (same tool, same arguments) is given back
//! when the replayed turn made it, and otherwise the model is told it was not run. Either way
//! the call is recorded as decided by [`ApprovalBy::Replay`], so the timeline marks it. No
//! standing rule, no approver and no view takes part.

use std::sync::Arc;

use serde_json::Value;
use tooltrail_protocol::{ApprovalBy, ApprovalRecord, ToolError, ToolErrorCode, ToolOutput};

/// The calls of the replayed turn, as recorded.
pub trait ReplayBook: Send + Sync {
    /// The recorded result of a call of `tool` with these arguments, taken once: a second
    /// identical call gets the second recorded one, if there was one.
    fn recorded(&self, tool: &str, arguments: &Value) -> Option<Result<ToolOutput, ToolError>>;
}

/// What makes a turn a replay.
#[derive(Clone)]
pub struct Replay {
    /// The public id of the turn asked again.
    pub of_turn: String,
    pub book: Arc<dyn ReplayBook>,
    /// Every call that matches a recorded one is answered from the record, read-only ones
    /// included, so that what changed in the folder since does not count.
    pub from_record: bool,
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay")
            .field("of_turn", &self.of_turn)
            .field("from_record", &self.from_record)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Replay {
    fn eq(&self, other: &Self) -> bool {
        self.of_turn == other.of_turn
            && self.from_record == other.from_record
            && Arc::ptr_eq(&self.book, &other.book)
    }
}

/// What a replay does with one call its gate did not refuse.
pub(crate) enum ReplayCall {
    /// It runs, as in the question.
    Live,
    /// The recorded result is given back.
    Recorded(Result<ToolOutput, ToolError>),
    /// It is not run; the error says so to the model.
    NotRun(ToolError),
}

/// The built-in tools that ask the person something: never run by a replay.
const ASKS_THE_PERSON: &[&str] = &["ask_user"];

impl Replay {
    /// Decides a call whose gate let it run without asking (`read_only`) or would have asked.
    pub(crate) fn decide(&self, tool: &str, arguments: &Value, read_only: bool) -> ReplayCall {
        let live = read_only && !ASKS_THE_PERSON.contains(&tool);
        if live && !self.from_record {
            return ReplayCall::Live;
        }
        match self.book.recorded(tool, arguments) {
            Some(result) => ReplayCall::Recorded(result),
            None if live => ReplayCall::Live,
            None => ReplayCall::NotRun(ToolError::new(
                ToolErrorCode::Denied,
                "this call was not run: a replay of a recorded question runs no call that could \
                 change something or ask the user, and the recorded question made no such call \
                 with these arguments",
            )),
        }
    }
}

/// How a call answered from the record is recorded.
pub(crate) fn from_record() -> ApprovalRecord {
    ApprovalRecord {
        allowed: true,
        by: ApprovalBy::Replay,
        reason: Some("answered from the record of the replayed question".to_string()),
    }
}

/// How a call a replay did not run is recorded.
pub(crate) fn not_run() -> ApprovalRecord {
    ApprovalRecord {
        allowed: false,
        by: ApprovalBy::Replay,
        reason: Some("not run in a replay".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;

    /// One recorded call of `read_file` and one of `execute_bash`, each given back once.
    struct Book(Mutex<Vec<(String, Value)>>);

    impl ReplayBook for Book {
        fn recorded(&self, tool: &str, arguments: &Value) -> Option<Result<ToolOutput, ToolError>> {
            let mut calls = self.0.lock().unwrap();
            let at = calls
                .iter()
                .position(|(t, a)| t == tool && a == arguments)?;
            let (tool, _) = calls.remove(at);
            Some(Ok(ToolOutput::new(format!("recorded {tool}"), Value::Null)))
        }
    }

    fn replay(from_record: bool) -> Replay {
        Replay {
            of_turn: "turn_1".into(),
            book: Arc::new(Book(Mutex::new(vec![
                ("read_file".into(), json!({"path": "a"})),
                ("execute_bash".into(), json!({"command": "make"})),
                ("ask_user".into(), json!({"question": "Which?"})),
            ]))),
            from_record,
        }
    }

    fn text(call: ReplayCall) -> String {
        match call {
            ReplayCall::Live => "live".into(),
            ReplayCall::Recorded(Ok(output)) => output.text,
            ReplayCall::Recorded(Err(error)) => error.message,
            ReplayCall::NotRun(error) => format!("not run: {}", error.code.as_str()),
        }
    }

    #[test]
    fn a_read_only_call_runs_live_unless_the_record_answers_first() {
        let live = replay(false);
        assert_eq!(
            text(live.decide("read_file", &json!({"path": "a"}), true)),
            "live"
        );
        let from_record = replay(true);
        assert_eq!(
            text(from_record.decide("read_file", &json!({"path": "a"}), true)),
            "recorded read_file"
        );
        // Given back once: the same call again runs live.
        assert_eq!(
            text(from_record.decide("read_file", &json!({"path": "a"}), true)),
            "live"
        );
        assert_eq!(
            text(from_record.decide("read_file", &json!({"path": "b"}), true)),
            "live"
        );
    }

    #[test]
    fn attack_replay_a_call_that_could_change_something_never_runs() {
        let replay = replay(false);
        assert_eq!(
            text(replay.decide("execute_bash", &json!({"command": "make"}), false)),
            "recorded execute_bash"
        );
        // The recorded one was given back; the same command again, or another, is not run.
        for command in ["make", "rm -rf ."] {
            assert_eq!(
                text(replay.decide("execute_bash", &json!({"command": command}), false)),
                "not run: denied"
            );
        }
    }

    #[test]
    fn attack_replay_a_call_that_asks_the_person_never_asks() {
        let replay = replay(false);
        // `ask_user` only reads, but a replay asks no one: the recorded answer, else not run.
        assert_eq!(
            text(replay.decide("ask_user", &json!({"question": "Which?"}), true)),
            "recorded ask_user"
        );
        assert_eq!(
            text(replay.decide("ask_user", &json!({"question": "Other?"}), true)),
            "not run: denied"
        );
    }
}
