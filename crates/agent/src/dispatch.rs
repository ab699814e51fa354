//! Running the tool calls of one round: validate, gate, run (read-only ones in parallel), and
//! turn each into the tool message the model reads, in call order.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::Value;
use tooltrail_protocol::{
    ApprovalBy, ApprovalRecord, ApprovalReply, EventBody, FileChange, Message, ToolCall, ToolError,
    ToolErrorCode, ToolOutput, ToolProgress, ToolSource, ToolStatus, ViewLink,
};
use tooltrail_tools::{
    CallScope, Gate, NoAnswer, Question, Tool, ToolContext, ToolRegistry, UserAsker,
};

use crate::announce::OpenLine;
use crate::approval::{ApprovalRequest, Approver, RuleBook, RuleDecision};
use crate::config::AgentConfig;
use crate::conversation::{Conversation, call_key};
use crate::prompt;
use crate::replay::{self, Replay, ReplayCall};
use crate::result_cap::cap_for_model;
use crate::sink::{Emitter, now_ms};

/// How long a tool gets to wind down (kill its processes) after the turn is cancelled.
const CANCEL_GRACE: Duration = Duration::from_secs(3);

pub(crate) struct RoundOutcome {
    /// One tool message per call, in call order.
    pub results: Vec<Message>,
    pub cancelled: bool,
}

/// A validated call ready to run.
struct Ready {
    position: usize,
    call: ToolCall,
    tool: Arc<dyn Tool>,
    args: Value,
    approval: ApprovalRecord,
    /// Earlier round of this turn with the same call, if any.
    repeat_of: Option<u32>,
}

/// A call that never runs, with why.
struct Rejected {
    tool: Option<Arc<dyn Tool>>,
    arguments: Value,
    error: ToolError,
    approval: ApprovalRecord,
}

/// A call that may change something: it runs once a rule, the conversation or the approver
/// allows it.
struct Gated {
    /// Its approval is filled in once decided.
    ready: Ready,
    /// The call's key, for "allow for this conversation".
    key: String,
    /// What a standing allow rule says, when one matches.
    rule: Option<RuleDecision>,
    summary: String,
    cwd: Option<String>,
    reason: String,
    /// The diff the user approves (a file write).
    change: Option<FileChange>,
    /// Only this one call may be allowed: no rule or conversation allowance applies.
    once_only: bool,
}

/// What to do with one call, decided before anything of it runs.
enum Plan {
    Reject(Rejected),
    /// Runs without asking, alongside the round's other such calls.
    Run(Ready),
    Ask(Box<Gated>),
    /// A replay gives back the recorded result of the same call, without running it.
    Recorded(Ready, Result<ToolOutput, ToolError>),
}

/// What the record and the model get of one finished call.
struct Finished {
    source: ToolSource,
    description: String,
    arguments: Value,
    result: Result<ToolOutput, ToolError>,
    approval: ApprovalRecord,
    duration_ms: u64,
    /// Said to the model after the result (a repeated call's note).
    note: String,
    view: Option<ViewLink>,
}

pub(crate) struct Dispatcher<'a> {
    registry: &'a ToolRegistry,
    ctx: &'a ToolContext,
    config: &'a AgentConfig,
    emitter: &'a Emitter<'a>,
    rules: Option<&'a dyn RuleBook>,
    /// The registry's tools this turn offered, when not all: a call to another is refused as
    /// not found, since the model was never told of it.
    offered: Option<&'a HashSet<String>>,
    /// Where servers' requests made during a call reach the timeline, when anyone answers them.
    line: Option<&'a OpenLine<'a>>,
    /// Set when the turn replays a recorded question: see `replay.rs`.
    replay: Option<&'a Replay>,
}

impl<'a> Dispatcher<'a> {
    /// Puts what is announced on `line` during a call on the timeline, before the call's end.
    pub(crate) fn with_line(self, line: &'a OpenLine<'a>) -> Self {
        Self {
            line: Some(line),
            ..self
        }
    }

    /// Makes the round a replay's: no call that could change something runs, no rule or
    /// approver is asked, no view is opened.
    pub(crate) fn with_replay(self, replay: Option<&'a Replay>) -> Self {
        Self { replay, ..self }
    }

    pub(crate) fn new(
        registry: &'a ToolRegistry,
        ctx: &'a ToolContext,
        config: &'a AgentConfig,
        emitter: &'a Emitter<'a>,
        rules: Option<&'a dyn RuleBook>,
        offered: Option<&'a HashSet<String>>,
    ) -> Self {
        Self {
            registry,
            ctx,
            config,
            emitter,
            rules,
            offered,
            line: None,
            replay: None,
        }
    }

    /// Runs every call of a round: each is planned (reject, run, or ask), the ones that run
    /// without asking are batched and run in parallel, and a call that asks first lets the
    /// batch before it finish, so calls keep their order around a call that may change files.
    /// `seen` maps a call key to (first round, times made) across the turn.
    ///
    /// Copies of a call within the round (same tool, same arguments) run once: each copy's
    /// result is one line that points at the first, and it counts as no further try.
    pub(crate) async fn run_round(
        &mut self,
        round: u32,
        calls: &[ToolCall],
        conversation: &mut Conversation,
        seen: &mut HashMap<String, (u32, u32)>,
        approver: &dyn Approver,
    ) -> RoundOutcome {
        let mut results: Vec<Option<Message>> = vec![None; calls.len()];
        let mut batch: Vec<Ready> = Vec::new();
        let copies = copies_of(calls);
        for (position, call) in calls.iter().enumerate() {
            if self.ctx.cancel.is_cancelled() {
                break;
            }
            if let Some(first) = copies[position] {
                results[position] = Some(self.finish_copy(round, call, &calls[first]));
                continue;
            }
            match self.plan(round, position, call, seen) {
                Plan::Reject(rejected) => {
                    results[position] = Some(self.finish_unrun(round, call, rejected));
                }
                Plan::Run(ready) => batch.push(ready),
                Plan::Recorded(ready, result) => {
                    results[position] = Some(self.finish_recorded(round, ready, result));
                }
                Plan::Ask(gated) => {
                    self.run_batch(round, std::mem::take(&mut batch), &mut results)
                        .await;
                    if self.ctx.cancel.is_cancelled() {
                        break;
                    }
                    let Some(approval) = self.approve(&gated, conversation, approver).await else {
                        break; // cancelled while waiting
                    };
                    let mut ready = gated.ready;
                    if approval.allowed {
                        ready.approval = approval;
                        self.run_batch(round, vec![ready], &mut results).await;
                    } else {
                        results[position] =
                            Some(self.finish_unrun(round, call, denied(ready, approval)));
                    }
                }
            }
        }
        self.run_batch(round, batch, &mut results).await;

        // Every call gets a result, so the history stays valid for the next turn.
        let cancelled = self.ctx.cancel.is_cancelled();
        let results = results
            .into_iter()
            .zip(calls)
            .map(|(result, call)| {
                result.unwrap_or_else(|| {
                    let rejected = Rejected {
                        tool: self.registry.get(&call.name),
                        arguments: raw_arguments(call),
                        error: ToolError::new(
                            ToolErrorCode::Cancelled,
                            "the user stopped the answer before this call ran",
                        ),
                        approval: ApprovalRecord {
                            allowed: false,
                            by: ApprovalBy::User,
                            reason: Some("the answer was stopped".to_string()),
                        },
                    };
                    self.finish_unrun(round, call, rejected)
                })
            })
            .collect();
        RoundOutcome { results, cancelled }
    }

    /// Decides what happens to one call: validation, the repeat guard, the policy's gate and
    /// the standing rules. Nothing runs here.
    fn plan(
        &self,
        round: u32,
        position: usize,
        call: &ToolCall,
        seen: &mut HashMap<String, (u32, u32)>,
    ) -> Plan {
        if self
            .offered
            .is_some_and(|offered| !offered.contains(&call.name))
        {
            return Plan::Reject(Rejected {
                tool: None,
                arguments: raw_arguments(call),
                error: ToolError::new(
                    ToolErrorCode::ToolNotFound,
                    format!("tool not found: {}", call.name),
                ),
                approval: ApprovalRecord::not_needed(),
            });
        }
        let (tool, args) = match self.registry.prepare(&call.name, &call.arguments) {
            Ok(prepared) => prepared,
            Err(error) => {
                // A call that cannot run counts as made: a model sending it again and again
                // is stopped while it streams, as for any other call.
                seen.entry(call_key(&call.name, &raw_arguments(call)))
                    .or_insert((round, 0))
                    .1 += 1;
                return Plan::Reject(Rejected {
                    tool: self.registry.get(&call.name),
                    arguments: raw_arguments(call),
                    error,
                    approval: ApprovalRecord::not_needed(),
                });
            }
        };
        let key = call_key(&call.name, &args);
        let entry = seen.entry(key.clone()).or_insert((round, 0));
        let (first_round, times) = *entry;
        entry.1 += 1;
        if times >= self.config.max_identical_calls {
            return Plan::Reject(Rejected {
                tool: Some(tool),
                arguments: args,
                error: ToolError::new(ToolErrorCode::Failed, prompt::repeated_call_refusal(times)),
                approval: ApprovalRecord::not_needed(),
            });
        }
        let gate = tool.gate(&args, self.ctx);
        // A replay asks no rule: its own rule decides what may run.
        let rule = match self.replay {
            Some(_) => None,
            None => self.rule_for(&gate, &call.name, &args),
        };
        if let Some(rule) = rule.as_ref().filter(|rule| !rule.allow) {
            return Plan::Reject(refused_by_rule(rule, tool, args));
        }
        let ready = Ready {
            position,
            call: call.clone(),
            tool,
            args,
            approval: ApprovalRecord::not_needed(),
            repeat_of: (times > 0).then_some(first_round),
        };
        match self.replay {
            Some(replay) => replayed(replay, gate, ready),
            None => by_gate(gate, ready, key, rule),
        }
    }

    /// The standing rule that matches the call, for a gate that lets rules speak. A call the
    /// policy refuses needs none; one asked about each time may be refused by a deny rule, but
    /// no allow rule lets it through.
    fn rule_for(&self, gate: &Gate, tool: &str, args: &Value) -> Option<RuleDecision> {
        let rules = self.rules?;
        match gate {
            Gate::Refuse(_) => None,
            Gate::ReadOnly | Gate::Allowed { .. } | Gate::Ask { .. } => rules.decide(tool, args),
            Gate::AskEachTime { .. } => rules.decide(tool, args).filter(|rule| !rule.allow),
        }
    }

    /// Whether a gated call may run: an allow rule, then the conversation's earlier "allow for
    /// this conversation", then the approver. `None` when the turn was cancelled while waiting.
    async fn approve(
        &self,
        gated: &Gated,
        conversation: &mut Conversation,
        approver: &dyn Approver,
    ) -> Option<ApprovalRecord> {
        let reason = Some(gated.reason.clone());
        if let Some(rule) = &gated.rule {
            return Some(ApprovalRecord {
                allowed: true,
                by: ApprovalBy::Rule {
                    id: rule.rule_id.clone(),
                },
                reason,
            });
        }
        if !gated.once_only && conversation.is_allowed(&gated.key) {
            return Some(ApprovalRecord {
                allowed: true,
                by: ApprovalBy::Conversation,
                reason,
            });
        }
        let call = &gated.ready.call;
        let request = ApprovalRequest {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: gated.ready.args.clone(),
            summary: gated.summary.clone(),
            cwd: gated.cwd.clone(),
            reason: gated.reason.clone(),
            rule: if gated.once_only {
                None
            } else {
                self.rules
                    .and_then(|rules| rules.offer(&call.name, &gated.ready.args))
            },
            change: gated.change.clone(),
            once_only: gated.once_only,
        };
        self.emitter.emit(EventBody::ApprovalRequested {
            call_id: request.call_id.clone(),
            tool: request.tool.clone(),
            arguments: request.arguments.clone(),
            summary: request.summary.clone(),
            cwd: request.cwd.clone(),
            reason: request.reason.clone(),
            rule: request.rule.clone(),
            change: request.change.clone(),
            once_only: request.once_only,
        });
        let decision = tokio::select! {
            decision = approver.decide(&request) => decision,
            () = self.ctx.cancel.cancelled() => return None,
        };
        Some(match decision.reply {
            // The approver kept the rule (and says so in `by`); this call runs like any allowed
            // once.
            ApprovalReply::AllowOnce | ApprovalReply::AllowInWorkspace => ApprovalRecord {
                allowed: true,
                by: decision.by,
                reason,
            },
            ApprovalReply::AllowForConversation => {
                if !gated.once_only {
                    conversation.allow(gated.key.clone());
                }
                ApprovalRecord {
                    allowed: true,
                    by: decision.by,
                    reason,
                }
            }
            ApprovalReply::Deny { reason } => ApprovalRecord {
                allowed: false,
                by: decision.by,
                reason,
            },
        })
    }

    /// Runs calls concurrently and stores their tool messages at their positions.
    async fn run_batch(&self, round: u32, batch: Vec<Ready>, results: &mut [Option<Message>]) {
        if batch.is_empty() {
            return;
        }
        // One dispatch: every call of the batch is on record as started at the same moment,
        // before any of them runs, so a slow commit or a busy machine between two starts does
        // not show calls that ran side by side as one after the other.
        let dispatched = now_ms();
        for ready in &batch {
            self.announce(round, ready, dispatched);
        }
        let finished = join_all(batch.into_iter().map(|ready| self.run_one(round, ready))).await;
        for (position, message) in finished {
            results[position] = Some(message);
        }
    }

    /// Puts a call's start on record, stamped with its batch's dispatch time.
    fn announce(&self, round: u32, ready: &Ready, dispatched: i64) {
        let Ready {
            call,
            tool,
            args,
            approval,
            ..
        } = ready;
        self.emitter.emit_at(
            EventBody::ToolCallStarted {
                round,
                call_id: call.id.clone(),
                tool: call.name.clone(),
                source: tool.source_of(args),
                description: tool.spec().description.clone(),
                arguments: args.clone(),
                approval: approval.clone(),
                view: self.view_of(tool.as_ref()),
            },
            dispatched,
        );
    }

    async fn run_one(&self, round: u32, ready: Ready) -> (usize, Message) {
        let Ready {
            position,
            call,
            tool,
            args,
            approval,
            repeat_of,
        } = ready;
        let started = Instant::now();
        if let Some(line) = self.line {
            line.line().started(&call.id, tool.source_of(&args));
        }
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel();
        let (question_tx, mut question_rx) = tokio::sync::mpsc::unbounded_channel();
        // Only a call someone (or a rule) approved may change the workspace.
        let ctx = ToolContext {
            progress: Some(progress_tx),
            approved: approval.allowed && approval.by != ApprovalBy::Policy,
            call: Some(CallScope {
                conversation_id: self.emitter.conversation_id().to_string(),
                turn_id: self.emitter.turn_id().to_string(),
                call_id: call.id.clone(),
            }),
            traceparent: tooltrail_llm::trace::call_traceparent(&call.id),
            user: self
                .ctx
                .user
                .clone()
                .map(|asker| Announcing::wrap(asker, question_tx)),
            ..self.ctx.clone()
        };
        let report = |progress| {
            self.emitter
                .emit(progress_event(&call.id, &call.name, progress))
        };
        let result = {
            let mut running = std::pin::pin!(tool.call(args.clone(), &ctx));
            loop {
                tokio::select! {
                    result = &mut running => break result,
                    Some(progress) = progress_rx.recv() => report(progress),
                    Some(question) = question_rx.recv() => self.emitter.emit(question),
                    Some(announced) = next_announced(self.line) => self.emitter.emit(announced),
                    () = self.ctx.cancel.cancelled() => {
                        // Give the tool a moment to stop what it started, then give up on it.
                        let _ = tokio::time::timeout(CANCEL_GRACE, &mut running).await;
                        break Err(ToolError::new(
                            ToolErrorCode::Cancelled,
                            "the user stopped this call",
                        ));
                    }
                }
            }
        };
        // A question asked by a call that got its answer at once (answers given ahead) is
        // still on record, before the call's end.
        while let Ok(question) = question_rx.try_recv() {
            self.emitter.emit(question);
        }
        // A server's request answered just before the call returned belongs before its end.
        if let Some(line) = self.line {
            line.line().finished(&call.id);
            for announced in line.drain() {
                self.emitter.emit(announced);
            }
        }
        // Progress sent just before the call returned is still worth showing, before the end.
        while let Ok(progress) = progress_rx.try_recv() {
            report(progress);
        }
        let finished = Finished {
            source: tool.source_of(&args),
            description: tool.spec().description.clone(),
            arguments: args,
            result,
            approval,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            note: repeat_of
                .map(prompt::repeated_call_note)
                .unwrap_or_default(),
            view: self.view_of(tool.as_ref()),
        };
        (position, self.finish(round, &call, finished))
    }

    /// The view a call of `tool` opens: none in a replay, which opens no view.
    fn view_of(&self, tool: &dyn Tool) -> Option<ViewLink> {
        if self.replay.is_some() {
            return None;
        }
        tool.view()
    }

    /// Records a call a replay answered from the record of the replayed question.
    fn finish_recorded(
        &self,
        round: u32,
        ready: Ready,
        result: Result<ToolOutput, ToolError>,
    ) -> Message {
        let finished = Finished {
            source: ready.tool.source_of(&ready.args),
            description: ready.tool.spec().description.clone(),
            arguments: ready.args,
            result,
            approval: replay::from_record(),
            duration_ms: 0,
            note: String::new(),
            view: None,
        };
        self.finish(round, &ready.call, finished)
    }

    /// Records a copy of an earlier call of the round, which shares that call's result.
    fn finish_copy(&self, round: u32, call: &ToolCall, first: &ToolCall) -> Message {
        let tool = self.registry.get(&call.name);
        let arguments = raw_arguments(call);
        let (source, description) = described(tool.as_ref(), &arguments);
        let finished = Finished {
            source,
            description,
            arguments,
            result: Ok(ToolOutput::new(
                prompt::copy_result(&first.id),
                serde_json::json!({ "copy_of": first.id }),
            )),
            approval: ApprovalRecord::not_needed(),
            duration_ms: 0,
            note: String::new(),
            view: tool.and_then(|tool| self.view_of(tool.as_ref())),
        };
        self.finish(round, call, finished)
    }

    /// Records a call that never ran (invalid, refused, denied, cancelled before it ran).
    fn finish_unrun(&self, round: u32, call: &ToolCall, rejected: Rejected) -> Message {
        let (source, description) = described(rejected.tool.as_ref(), &rejected.arguments);
        let finished = Finished {
            source,
            description,
            arguments: rejected.arguments,
            result: Err(rejected.error),
            approval: rejected.approval,
            duration_ms: 0,
            note: String::new(),
            view: rejected.tool.and_then(|tool| self.view_of(tool.as_ref())),
        };
        self.finish(round, call, finished)
    }

    /// Emits `tool_call_finished` and returns the tool message for the model.
    fn finish(&self, round: u32, call: &ToolCall, finished: Finished) -> Message {
        let Finished {
            source,
            description,
            arguments,
            result,
            approval,
            duration_ms,
            note,
            view,
        } = finished;
        let (status, full_text, data, error, media) = match result {
            Ok(output) => (
                ToolStatus::Success,
                output.text,
                Some(output.data),
                None,
                output.media,
            ),
            Err(error) => {
                let status = if self.ctx.cancel.is_cancelled() {
                    ToolStatus::Cancelled
                } else {
                    error.code.status()
                };
                (status, error.to_model_text(), None, Some(error), Vec::new())
            }
        };
        let for_model = format!("{full_text}{note}");
        let (model_text, truncated_for_model) =
            cap_for_model(&for_model, self.config.max_result_bytes);
        self.emitter.emit(EventBody::ToolCallFinished {
            round,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            source,
            description,
            arguments,
            status,
            duration_ms,
            result: full_text,
            data: data.filter(|data| !data.is_null()),
            error,
            approval,
            truncated_for_model,
            view,
        });
        Message::tool_with_media(call.id.clone(), call.name.clone(), model_text, media)
    }
}

/// The source and description a call of `tool` is recorded with; a call of no known tool is
/// recorded as a built-in one without a description.
fn described(tool: Option<&Arc<dyn Tool>>, arguments: &Value) -> (ToolSource, String) {
    match tool {
        Some(tool) => (tool.source_of(arguments), tool.spec().description.clone()),
        None => (ToolSource::Builtin, String::new()),
    }
}

/// The next event announced on the turn's line; never, when the turn has none.
async fn next_announced(line: Option<&OpenLine<'_>>) -> Option<EventBody> {
    match line {
        Some(line) => line.next().await,
        None => std::future::pending().await,
    }
}

/// For each call, the position of an earlier identical call of the same round (same tool,
/// same arguments once parsed), if any.
fn copies_of(calls: &[ToolCall]) -> Vec<Option<usize>> {
    let keys: Vec<String> = calls
        .iter()
        .map(|call| call_key(&call.name, &raw_arguments(call)))
        .collect();
    keys.iter()
        .enumerate()
        .map(|(at, key)| keys[..at].iter().position(|earlier| earlier == key))
        .collect()
}

/// A call a deny rule of the workspace refuses.
fn refused_by_rule(rule: &RuleDecision, tool: Arc<dyn Tool>, args: Value) -> Rejected {
    let message = format!("{} in this workspace refuses this call", rule.description);
    Rejected {
        tool: Some(tool),
        arguments: args,
        error: ToolError::new(ToolErrorCode::Denied, message.clone()),
        approval: ApprovalRecord {
            allowed: false,
            by: ApprovalBy::Rule {
                id: rule.rule_id.clone(),
            },
            reason: Some(message),
        },
    }
}

/// What the tool's gate makes of a call no rule refused: it runs (read-only, or allowed by a
/// setting), the policy refuses it, or it waits for a yes (`rule`, an allow rule that matched,
/// may give it).
fn by_gate(gate: Gate, mut ready: Ready, key: String, rule: Option<RuleDecision>) -> Plan {
    match gate {
        Gate::ReadOnly => Plan::Run(ready),
        Gate::Allowed { reason } => {
            ready.approval = ApprovalRecord {
                allowed: true,
                by: ApprovalBy::Setting,
                reason: Some(reason),
            };
            Plan::Run(ready)
        }
        Gate::Refuse(error) => Plan::Reject(Rejected {
            approval: ApprovalRecord {
                allowed: false,
                by: ApprovalBy::Policy,
                reason: Some(error.message.clone()),
            },
            tool: Some(ready.tool),
            arguments: ready.args,
            error,
        }),
        Gate::Ask {
            summary,
            cwd,
            reason,
        } => Plan::Ask(Box::new(Gated {
            ready,
            key,
            rule: rule.filter(|rule| rule.allow),
            summary,
            cwd,
            reason,
            change: None,
            once_only: false,
        })),
        Gate::AskEachTime {
            summary,
            reason,
            change,
        } => Plan::Ask(Box::new(Gated {
            ready,
            key,
            rule: None,
            summary,
            cwd: None,
            reason,
            change,
            once_only: true,
        })),
    }
}

/// What a replay makes of a call no validation refused (see `replay.rs`): the gate's refusal
/// stands; a call that only reads runs; any other is given its recorded result or not run.
fn replayed(replay: &Replay, gate: Gate, ready: Ready) -> Plan {
    let read_only = match gate {
        Gate::Refuse(error) => return by_gate(Gate::Refuse(error), ready, String::new(), None),
        Gate::ReadOnly => true,
        Gate::Allowed { .. } | Gate::Ask { .. } | Gate::AskEachTime { .. } => false,
    };
    match replay.decide(&ready.call.name, &ready.args, read_only) {
        ReplayCall::Live => Plan::Run(ready),
        ReplayCall::Recorded(result) => Plan::Recorded(ready, result),
        ReplayCall::NotRun(error) => Plan::Reject(Rejected {
            tool: Some(ready.tool),
            arguments: ready.args,
            error,
            approval: replay::not_run(),
        }),
    }
}

/// The arguments of a call that did not validate, as the record keeps them: the JSON when it
/// parses, else the text the model sent.
fn raw_arguments(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()))
}

/// A gated call the user (or a setting) refused.
fn denied(ready: Ready, approval: ApprovalRecord) -> Rejected {
    let message = match &approval.reason {
        Some(why) if !why.trim().is_empty() => format!("the user denied this call: {why}"),
        _ => "the user denied this call".to_string(),
    };
    Rejected {
        tool: Some(ready.tool),
        arguments: ready.args,
        error: ToolError::new(ToolErrorCode::Denied, message),
        approval,
    }
}

/// Puts a call's questions on the timeline before the front end's asker waits for the answer:
/// the question becomes a `user_question` event, emitted by the call's loop in `run_one`.
struct Announcing {
    inner: Arc<dyn UserAsker>,
    events: tokio::sync::mpsc::UnboundedSender<EventBody>,
}

impl Announcing {
    fn wrap(
        inner: Arc<dyn UserAsker>,
        events: tokio::sync::mpsc::UnboundedSender<EventBody>,
    ) -> Arc<dyn UserAsker> {
        Arc::new(Self { inner, events })
    }
}

#[async_trait::async_trait]
impl UserAsker for Announcing {
    async fn ask(&self, question: &Question) -> Result<String, NoAnswer> {
        let _ = self.events.send(EventBody::UserQuestion {
            call_id: question.call_id.clone(),
            question: question.question.clone(),
            choices: question.choices.clone(),
        });
        self.inner.ask(question).await
    }
}

/// A running call's report of how far it got, as the event the front ends show.
fn progress_event(call_id: &str, tool: &str, progress: ToolProgress) -> EventBody {
    EventBody::ToolCallProgress {
        call_id: call_id.to_string(),
        tool: tool.to_string(),
        progress: progress.progress,
        total: progress.total,
        message: progress.message,
        task: progress.task,
    }
}
