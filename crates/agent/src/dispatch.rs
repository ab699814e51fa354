//! Running the tool calls of one round: validate, gate, run (read-only ones in parallel), and
//! turn each into the tool message the model reads, in call order.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::join_all;
use serde_json::Value;
use tooltrail_protocol::{
    ApprovalBy, ApprovalRecord, ApprovalReply, EventBody, Message, ToolCall, ToolError,
    ToolErrorCode, ToolOutput, ToolProgress, ToolSource, ToolStatus,
};
use tooltrail_tools::{Gate, Tool, ToolContext, ToolRegistry};

use crate::approval::{ApprovalRequest, Approver, RuleBook};
use crate::cap::cap_for_model;
use crate::conversation::{Conversation, call_key};
use crate::prompt;
use crate::sink::Emitter;
use crate::turn::AgentConfig;

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

pub(crate) struct Dispatcher<'a> {
    registry: &'a ToolRegistry,
    ctx: &'a ToolContext,
    config: &'a AgentConfig,
    emitter: &'a Emitter<'a>,
    rules: Option<&'a dyn RuleBook>,
}

impl<'a> Dispatcher<'a> {
    pub(crate) fn new(
        registry: &'a ToolRegistry,
        ctx: &'a ToolContext,
        config: &'a AgentConfig,
        emitter: &'a Emitter<'a>,
        rules: Option<&'a dyn RuleBook>,
    ) -> Self {
        Self {
            registry,
            ctx,
            config,
            emitter,
            rules,
        }
    }

    /// Runs every call of a round. `seen` maps a call key to (first round, times made) across
    /// the turn.
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

        for (position, call) in calls.iter().enumerate() {
            if self.ctx.cancel.is_cancelled() {
                break;
            }
            let (tool, args) = match self.registry.prepare(&call.name, &call.arguments) {
                Ok(prepared) => prepared,
                Err(error) => {
                    let tool = self.registry.get(&call.name);
                    let arguments = serde_json::from_str(&call.arguments)
                        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                    results[position] = Some(self.finish_unrun(
                        round,
                        call,
                        tool.as_deref(),
                        arguments,
                        error,
                        ApprovalRecord::not_needed(),
                    ));
                    continue;
                }
            };

            let key = call_key(&call.name, &args);
            let entry = seen.entry(key.clone()).or_insert((round, 0));
            let (first_round, times) = *entry;
            entry.1 += 1;
            if times >= self.config.max_identical_calls {
                let error =
                    ToolError::new(ToolErrorCode::Failed, prompt::repeated_call_refusal(times));
                results[position] = Some(self.finish_unrun(
                    round,
                    call,
                    Some(tool.as_ref()),
                    args,
                    error,
                    ApprovalRecord::not_needed(),
                ));
                continue;
            }
            let repeat_of = (times > 0).then_some(first_round);

            let gate = tool.gate(&args, self.ctx);
            let rule = match gate {
                Gate::Refuse(_) => None,
                Gate::ReadOnly | Gate::Allowed { .. } | Gate::Ask { .. } => {
                    self.rules.and_then(|rules| rules.decide(&call.name, &args))
                }
            };
            if let Some(rule) = rule.as_ref().filter(|rule| !rule.allow) {
                let message = format!("{} in this workspace refuses this call", rule.description);
                let approval = ApprovalRecord {
                    allowed: false,
                    by: ApprovalBy::Rule {
                        id: rule.rule_id.clone(),
                    },
                    reason: Some(message.clone()),
                };
                let error = ToolError::new(ToolErrorCode::Denied, message);
                results[position] = Some(self.finish_unrun(
                    round,
                    call,
                    Some(tool.as_ref()),
                    args,
                    error,
                    approval,
                ));
                continue;
            }
            match gate {
                Gate::ReadOnly => batch.push(Ready {
                    position,
                    call: call.clone(),
                    tool,
                    args,
                    approval: ApprovalRecord::not_needed(),
                    repeat_of,
                }),
                Gate::Allowed { reason } => batch.push(Ready {
                    position,
                    call: call.clone(),
                    tool,
                    args,
                    approval: ApprovalRecord {
                        allowed: true,
                        by: ApprovalBy::Setting,
                        reason: Some(reason),
                    },
                    repeat_of,
                }),
                Gate::Refuse(error) => {
                    let approval = ApprovalRecord {
                        allowed: false,
                        by: ApprovalBy::Policy,
                        reason: Some(error.message.clone()),
                    };
                    results[position] = Some(self.finish_unrun(
                        round,
                        call,
                        Some(tool.as_ref()),
                        args,
                        error,
                        approval,
                    ));
                }
                Gate::Ask {
                    summary,
                    cwd,
                    reason,
                } => {
                    // Earlier read-only calls run first, so calls keep their order around a
                    // call that may change files.
                    self.run_batch(round, std::mem::take(&mut batch), &mut results)
                        .await;
                    if self.ctx.cancel.is_cancelled() {
                        break;
                    }
                    let approval = if let Some(rule) = rule.filter(|rule| rule.allow) {
                        Some(ApprovalRecord {
                            allowed: true,
                            by: ApprovalBy::Rule { id: rule.rule_id },
                            reason: Some(reason),
                        })
                    } else if conversation.is_allowed(&key) {
                        Some(ApprovalRecord {
                            allowed: true,
                            by: ApprovalBy::Conversation,
                            reason: Some(reason),
                        })
                    } else {
                        self.ask(
                            call,
                            &args,
                            summary,
                            cwd,
                            reason,
                            &key,
                            conversation,
                            approver,
                        )
                        .await
                    };
                    let Some(approval) = approval else {
                        break; // cancelled while waiting
                    };
                    if approval.allowed {
                        let ready = Ready {
                            position,
                            call: call.clone(),
                            tool,
                            args,
                            approval,
                            repeat_of,
                        };
                        self.run_batch(round, vec![ready], &mut results).await;
                    } else {
                        let message = match &approval.reason {
                            Some(why) if !why.trim().is_empty() => {
                                format!("the user denied this call: {why}")
                            }
                            _ => "the user denied this call".to_string(),
                        };
                        let error = ToolError::new(ToolErrorCode::Denied, message);
                        results[position] = Some(self.finish_unrun(
                            round,
                            call,
                            Some(tool.as_ref()),
                            args,
                            error,
                            approval,
                        ));
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
                    let tool = self.registry.get(&call.name);
                    let arguments = serde_json::from_str(&call.arguments)
                        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                    let error = ToolError::new(
                        ToolErrorCode::Cancelled,
                        "the user stopped the answer before this call ran",
                    );
                    let approval = ApprovalRecord {
                        allowed: false,
                        by: ApprovalBy::User,
                        reason: Some("the answer was stopped".to_string()),
                    };
                    self.finish_unrun(round, call, tool.as_deref(), arguments, error, approval)
                })
            })
            .collect();
        RoundOutcome { results, cancelled }
    }

    /// Asks the approver; `None` when the turn was cancelled while waiting.
    #[allow(clippy::too_many_arguments)]
    async fn ask(
        &self,
        call: &ToolCall,
        args: &Value,
        summary: String,
        cwd: Option<String>,
        reason: String,
        key: &str,
        conversation: &mut Conversation,
        approver: &dyn Approver,
    ) -> Option<ApprovalRecord> {
        let request = ApprovalRequest {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: args.clone(),
            summary,
            cwd,
            reason: reason.clone(),
            rule: self.rules.and_then(|rules| rules.offer(&call.name, args)),
        };
        self.emitter.emit(EventBody::ApprovalRequested {
            call_id: request.call_id.clone(),
            tool: request.tool.clone(),
            arguments: request.arguments.clone(),
            summary: request.summary.clone(),
            cwd: request.cwd.clone(),
            reason: request.reason.clone(),
            rule: request.rule.clone(),
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
                reason: Some(reason),
            },
            ApprovalReply::AllowForConversation => {
                conversation.allow(key.to_string());
                ApprovalRecord {
                    allowed: true,
                    by: decision.by,
                    reason: Some(reason),
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
        let finished = join_all(batch.into_iter().map(|ready| self.run_one(round, ready))).await;
        for (position, message) in finished {
            results[position] = Some(message);
        }
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
        self.emitter.emit(EventBody::ToolCallStarted {
            round,
            call_id: call.id.clone(),
            tool: call.name.clone(),
            source: tool.source(),
            arguments: args.clone(),
            approval: approval.clone(),
        });
        let started = Instant::now();
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel();
        // Only a call someone (or a rule) approved may change the workspace.
        let ctx = ToolContext {
            progress: Some(progress_tx),
            approved: approval.allowed && approval.by != ApprovalBy::Policy,
            ..self.ctx.clone()
        };
        let report = |progress: ToolProgress| {
            self.emitter.emit(EventBody::ToolCallProgress {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                progress: progress.progress,
                total: progress.total,
                message: progress.message,
            });
        };
        let result = {
            let mut running = std::pin::pin!(tool.call(args.clone(), &ctx));
            loop {
                tokio::select! {
                    result = &mut running => break result,
                    Some(progress) = progress_rx.recv() => report(progress),
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
        // Progress sent just before the call returned is still worth showing, before the end.
        while let Ok(progress) = progress_rx.try_recv() {
            report(progress);
        }
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut text_note = String::new();
        if let Some(previous) = repeat_of {
            text_note = prompt::repeated_call_note(previous);
        }
        let message = self.finish(
            round,
            &call,
            tool.source(),
            tool.spec().description.clone(),
            args,
            result,
            approval,
            duration_ms,
            &text_note,
        );
        (position, message)
    }

    /// Records a call that never ran (invalid, refused, denied, cancelled before it ran).
    fn finish_unrun(
        &self,
        round: u32,
        call: &ToolCall,
        tool: Option<&dyn Tool>,
        arguments: Value,
        error: ToolError,
        approval: ApprovalRecord,
    ) -> Message {
        let (source, description) = match tool {
            Some(tool) => (tool.source(), tool.spec().description.clone()),
            None => (ToolSource::Builtin, String::new()),
        };
        self.finish(
            round,
            call,
            source,
            description,
            arguments,
            Err(error),
            approval,
            0,
            "",
        )
    }

    /// Emits `tool_call_finished` and returns the tool message for the model.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        round: u32,
        call: &ToolCall,
        source: ToolSource,
        description: String,
        arguments: Value,
        result: Result<ToolOutput, ToolError>,
        approval: ApprovalRecord,
        duration_ms: u64,
        note: &str,
    ) -> Message {
        let (status, full_text, data, error) = match result {
            Ok(output) => (ToolStatus::Success, output.text, Some(output.data), None),
            Err(error) => {
                let status = if self.ctx.cancel.is_cancelled() {
                    ToolStatus::Cancelled
                } else {
                    error.code.status()
                };
                (status, error.to_model_text(), None, Some(error))
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
        });
        Message::tool(call.id.clone(), call.name.clone(), model_text)
    }
}
