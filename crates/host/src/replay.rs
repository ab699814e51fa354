//! Asking a recorded question again with another model (`tooltrail replay`, History's "Replay
//! with…"), without side effects, and setting the replay beside the original.
//!
//! The replay is a new conversation that starts where the original question did (the earlier
//! turns' messages), in the same folder, with the settings of now and the model asked for. Its
//! calls follow `tooltrail_agent`'s replay rules: read-only calls run, any other is given the
//! recorded result of the same call or is not run, nothing asks the person, no view opens. It
//! is recorded as a turn of its own whose `turn_started` names the turn it replays, so the
//! comparison ([`ReplayComparison`]) can be worked out again from the record at any time.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tooltrail_agent::{DenyAll, EventSink, Replay, ReplayBook, TurnOptions};
use tooltrail_protocol::{
    Event, EventBody, Message, ToolError, ToolErrorCode, ToolOutput, ToolStatus,
};
use tooltrail_settings::Overrides;
use tooltrail_tools::ToolContext;
use ts_rs::TS;

use crate::error::HostError;
use crate::host::Host;
use crate::replay_compare::{ReplayComparison, TurnFigures, same_call};

/// What to replay, and with what.
#[derive(Debug, Clone, Default)]
pub struct ReplayRequest {
    /// The recorded turn asked again.
    pub turn_id: String,
    /// The model (and endpoint) to ask it with, as `tooltrail ask` takes them.
    pub overrides: Overrides,
    /// Answer every call that matches a recorded one from the record, read-only ones too.
    pub from_record: bool,
}

/// A replay made now: the comparison, and what only the live run knows.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ReplayReport {
    pub comparison: ReplayComparison,
    /// From the question to the model's first streamed token, in this run.
    #[ts(type = "number | null")]
    pub first_token_ms: Option<u64>,
    /// What differs from when the question was first asked, one sentence each.
    pub changed_since: Vec<String>,
    /// Why the replay ended in an error, when it did (the model could not be reached, …).
    pub error: Option<String>,
}

/// A recorded call: its tool, its arguments and what it gave.
type RecordedCall = (String, Value, Result<ToolOutput, ToolError>);

/// The questions a replay asks again.
#[derive(Debug, Clone, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReplayPick {
    /// These turns, in this order.
    Turns { turns: Vec<String> },
    /// Every question of a conversation, in order.
    Conversation { id: String },
    /// The last `count` questions asked in the folder.
    Last { count: u32 },
}

/// One question replayed: its report, or why it could not be replayed.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ReplayOutcome {
    /// The question asked again.
    pub turn_id: String,
    pub report: Option<ReplayReport>,
    /// Why the replay could not start.
    pub error: Option<String>,
}

/// The recorded turn's calls, each given back once to the same call of the replay.
struct RecordBook {
    calls: Mutex<Vec<RecordedCall>>,
}

impl RecordBook {
    fn of(events: &[Event]) -> Self {
        let calls = events
            .iter()
            .filter_map(|event| match &event.body {
                EventBody::ToolCallFinished {
                    tool,
                    arguments,
                    status,
                    result,
                    data,
                    error,
                    ..
                } => {
                    let outcome = match (status, error) {
                        (ToolStatus::Success, _) => Ok(ToolOutput::new(
                            result.clone(),
                            data.clone().unwrap_or(Value::Null),
                        )),
                        (_, Some(error)) => Err(error.clone()),
                        (_, None) => Err(ToolError::new(ToolErrorCode::Failed, result.clone())),
                    };
                    Some((tool.clone(), arguments.clone(), outcome))
                }
                _ => None,
            })
            .collect();
        Self {
            calls: Mutex::new(calls),
        }
    }
}

impl ReplayBook for RecordBook {
    fn recorded(&self, tool: &str, arguments: &Value) -> Option<Result<ToolOutput, ToolError>> {
        let mut calls = self
            .calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let found = calls
            .iter()
            .position(|(name, args, _)| same_call(name, args, tool, arguments))?;
        Some(calls.remove(found).2)
    }
}

/// Passes every event to the screen and notes the turn's id and its first token.
struct Watch {
    screen: Box<dyn EventSink>,
    seen: Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    turn_id: Option<String>,
    started_ms: Option<i64>,
    first_token_ms: Option<u64>,
}

impl EventSink for Watch {
    fn emit(&self, event: Event) {
        {
            let mut seen = self
                .seen
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            match &event.body {
                EventBody::TurnStarted { .. } => {
                    seen.turn_id = Some(event.turn_id.clone());
                    seen.started_ms = Some(event.time_ms);
                }
                EventBody::TextDelta { .. } | EventBody::ToolCallDelta { .. }
                    if seen.first_token_ms.is_none() =>
                {
                    seen.first_token_ms = seen
                        .started_ms
                        .and_then(|start| u64::try_from(event.time_ms - start).ok());
                }
                _ => {}
            }
        }
        self.screen.emit(event);
    }
}

/// The messages the model had before the turn `turn_id`: those of the conversation's earlier
/// turns.
fn messages_before(events: &[Event], turn_id: &str) -> Vec<Message> {
    events
        .iter()
        .take_while(|event| event.turn_id != turn_id)
        .filter_map(|event| match &event.body {
            EventBody::MessageAdded { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

impl Host {
    /// The turns `pick` names (`Last` counts in `folder`); an error when it names none.
    pub fn replay_questions(
        &self,
        pick: &ReplayPick,
        folder: Option<&str>,
    ) -> Result<Vec<String>, HostError> {
        let turns = match pick {
            ReplayPick::Turns { turns } => turns.clone(),
            ReplayPick::Conversation { id } => self.store().conversation_questions(id)?,
            ReplayPick::Last { count } => {
                let folder = folder.ok_or_else(|| {
                    HostError::Content("open a folder to replay its last questions".to_string())
                })?;
                self.store().last_questions(folder, *count)?
            }
        };
        if turns.is_empty() {
            return Err(HostError::Content(
                "there is nothing to replay: no question that has ended is picked".to_string(),
            ));
        }
        Ok(turns)
    }

    /// Replays `turns` one after the other with `overrides`, each one's events on a screen
    /// `screen` makes, and tells `done` of each as it ends; stops at `cancel`.
    pub async fn replay_each(
        &self,
        turns: Vec<String>,
        overrides: &Overrides,
        from_record: bool,
        screen: &(dyn Fn() -> Box<dyn EventSink> + Send + Sync),
        done: &mut (dyn FnMut(&ReplayOutcome) + Send),
        cancel: &CancellationToken,
    ) -> Vec<ReplayOutcome> {
        let mut outcomes = Vec::new();
        for turn_id in turns {
            if cancel.is_cancelled() {
                break;
            }
            let request = ReplayRequest {
                turn_id: turn_id.clone(),
                overrides: overrides.clone(),
                from_record,
            };
            let outcome = match self.replay(&request, screen(), cancel).await {
                Ok(report) => ReplayOutcome {
                    turn_id,
                    report: Some(report),
                    error: None,
                },
                Err(error) => ReplayOutcome {
                    turn_id,
                    report: None,
                    error: Some(error.to_string()),
                },
            };
            done(&outcome);
            outcomes.push(outcome);
        }
        outcomes
    }

    /// The recorded turn `turn_id`, read for a replay or a comparison.
    fn recorded_turn(&self, turn_id: &str) -> Result<(TurnFigures, Vec<Event>), HostError> {
        let events = self.store().turn_events(turn_id)?;
        let figures = TurnFigures::of(&events)
            .ok_or_else(|| HostError::Content(format!("turn {turn_id} has nothing recorded")))?;
        Ok((figures, events))
    }

    /// Asks the recorded question `request.turn_id` again with the model `request` names,
    /// showing its events on `screen` as a question's, and sets it beside the original.
    pub async fn replay(
        &self,
        request: &ReplayRequest,
        screen: Box<dyn EventSink>,
        cancel: &CancellationToken,
    ) -> Result<ReplayReport, HostError> {
        let (mut original, events) = self.recorded_turn(&request.turn_id)?;
        if !events
            .iter()
            .any(|event| matches!(event.body, EventBody::TurnStarted { .. }))
        {
            return Err(HostError::Content(format!(
                "turn {} holds what a view did, not a question; a replay asks a question again",
                request.turn_id
            )));
        }
        if original.replay_of.is_some() {
            return Err(HostError::Content(format!(
                "turn {} is itself a replay; replay the question it asked again",
                request.turn_id
            )));
        }
        let folder = PathBuf::from(&original.workspace);
        if !folder.is_dir() {
            return Err(HostError::Content(format!(
                "the folder of that question, {}, is not there any more",
                folder.display()
            )));
        }
        let asked = self
            .store()
            .conversation_events(&original.conversation_id)?;
        original.before = messages_before(&asked, &request.turn_id);
        let ctx =
            ToolContext::open(&folder).map_err(|error| HostError::Content(error.to_string()))?;
        let mut changed_since = files_changed_since(&ctx, original.started_ms);
        let engine = self.engine(&request.overrides, ctx).await?;
        changed_since.extend(tools_gone(&original, engine.agent.tools()));
        let mut conversation = self.begin(None)?;
        conversation.messages = original.before.clone();
        let watch = Arc::new(Watch {
            screen,
            seen: Mutex::default(),
        });
        let sink = self.sink(Box::new(Shared(Arc::clone(&watch))));
        let options = TurnOptions {
            replay: Some(Replay {
                of_turn: request.turn_id.clone(),
                book: Arc::new(RecordBook::of(&events)),
                from_record: request.from_record,
            }),
            ..TurnOptions::default()
        };
        let question = vec![Message::user(original.question.clone())];
        engine.warm_for(&conversation).await;
        let outcome = sink
            .traced(engine.agent.run(
                &mut conversation,
                question,
                &options,
                &sink,
                &DenyAll,
                cancel,
            ))
            .await;
        self.end(conversation);
        let seen = std::mem::take(&mut *watch.seen.lock().unwrap_or_else(|p| p.into_inner()));
        let turn_id = seen
            .turn_id
            .ok_or_else(|| HostError::Content("the replay did not start".to_string()))?;
        let (replayed, _) = self.recorded_turn(&turn_id)?;
        Ok(ReplayReport {
            comparison: ReplayComparison::of(original, replayed),
            first_token_ms: seen.first_token_ms,
            changed_since,
            error: outcome.error,
        })
    }

    /// The replay `turn_id` set beside the turn it asked again, from the record; `None` when
    /// the turn is a question, not a replay.
    pub fn replay_comparison(&self, turn_id: &str) -> Result<Option<ReplayComparison>, HostError> {
        let (replayed, _) = self.recorded_turn(turn_id)?;
        let Some(original_id) = replayed.replay_of.clone() else {
            return Ok(None);
        };
        let (original, _) = self.recorded_turn(&original_id)?;
        Ok(Some(ReplayComparison::of(original, replayed)))
    }
}

/// An event sink shared with the host's recording sink, which takes its own box.
struct Shared(Arc<Watch>);

impl EventSink for Shared {
    fn emit(&self, event: Event) {
        self.0.emit(event);
    }
}

/// How many entries of the folder a look for changed files reads at most.
const LOOK_LIMIT: usize = 50_000;
/// How many changed files a sentence names.
const NAMED: usize = 5;

/// A sentence naming the files of the folder changed after `since_ms`, if any (the tools' walk:
/// ignored files and `.git` left out, nothing reached through a link).
fn files_changed_since(ctx: &ToolContext, since_ms: i64) -> Vec<String> {
    let since =
        SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(since_ms).unwrap_or(0));
    let changed = tooltrail_tools::changed_since(&ctx.workspace, since, NAMED, LOOK_LIMIT);
    if changed.count == 0 {
        return Vec::new();
    }
    let more = if changed.count > NAMED { ", …" } else { "" };
    vec![format!(
        "{} file{} in the folder changed since the question was asked: {}{more}",
        changed.count,
        if changed.count == 1 { "" } else { "s" },
        changed.first.join(", ")
    )]
}

/// A sentence naming the tools the original called that are not on offer now, if any.
fn tools_gone(original: &TurnFigures, tools: &tooltrail_tools::ToolRegistry) -> Vec<String> {
    let mut gone: Vec<&str> = original
        .calls
        .iter()
        .map(|call| call.tool.as_str())
        .filter(|tool| tools.get(tool).is_none())
        .collect();
    gone.sort_unstable();
    gone.dedup();
    if gone.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "tools the question called are not on offer now: {}",
        gone.join(", ")
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;
    use tooltrail_agent::NullSink;

    fn event(turn: &str, seq: u64, body: EventBody) -> Event {
        Event {
            conversation_id: "conv_1".into(),
            turn_id: turn.into(),
            seq,
            time_ms: 1_714_555_800_000 + i64::try_from(seq).unwrap_or(0),
            body,
        }
    }

    #[tokio::test]
    async fn attack_replay_a_views_calls_are_not_asked_again_as_a_question() {
        let host = Host::new(Record::in_memory().unwrap());
        let folder = tempfile::tempdir().unwrap();
        let workspace = folder.path().display().to_string();
        host.record().record(&event(
            "turn_q",
            0,
            EventBody::TurnStarted {
                workspace,
                model: "m".into(),
                user_message: "Plot it".into(),
                replay_of: None,
            },
        ));
        host.record().record(&event(
            "turn_view",
            1,
            EventBody::ViewOpened {
                parent_turn_id: "turn_q".into(),
                parent_call_id: "call_1".into(),
                server: "charts".into(),
                tool: "charts__plot".into(),
                resource_uri: "ui://charts/plot".into(),
                csp: String::new(),
                refused_domains: Vec::new(),
                granted: Vec::new(),
            },
        ));
        let request = ReplayRequest {
            turn_id: "turn_view".into(),
            ..ReplayRequest::default()
        };
        let refused = host
            .replay(&request, Box::new(NullSink), &CancellationToken::new())
            .await
            .err()
            .map(|error| error.to_string());
        assert_eq!(
            refused.as_deref(),
            Some(
                "turn turn_view holds what a view did, not a question; a replay asks a question again"
            )
        );
    }
}
