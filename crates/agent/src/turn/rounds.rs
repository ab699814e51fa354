//! The rounds of one turn: ask the model, run the calls it makes, and ask again, until it
//! answers. [`Rounds`] holds what the turn has learned so far; each step of a round is one of
//! its methods, in the order [`Rounds::run`] takes them:
//!
//! 1. [`Rounds::refresh_tools`]: a server's tool list may have changed during the last round.
//! 2. [`Rounds::offer`]: which tools this request offers, and whether the model may call them.
//! 3. [`Rounds::fit`]: the conversation fitted to the context window, or a reason to ask for
//!    the answer instead.
//! 4. [`Rounds::stream`]: the model's answer as it streams, stopped early when it loops.
//! 5. [`Rounds::keep_before_cut`] and [`Rounds::report`]: what the timeline is told of it.
//! 6. [`Rounds::settle`]: the answer kept, and whether the turn ends, asks again or runs calls.
//! 7. [`Rounds::run_calls`]: the calls run, their results added, the round limit said.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tooltrail_llm::{
    ChatRequest, ChatResponse, ContextWindow, FinishReason, LlmError, StreamDelta, ToolMode,
    WindowSource,
};
use tooltrail_protocol::{
    ErrorCode, EventBody, Message, ToolCall, ToolChoice, ToolSpec, TurnEnd, sentence,
};
use tooltrail_tools::{ToolContext, ToolRegistry};

use super::{Agent, TurnOptions, TurnOutcome, add_message, outcome, turn_specs, window_full};
use crate::announce::OpenLine;
use crate::approval::Approver;
use crate::budget::{self, TooSmall};
use crate::conversation::Conversation;
use crate::dispatch::{Dispatcher, RoundOutcome};
use crate::many_tools::ManyTools;
use crate::prompt;
use crate::repeat::{Cut, LoopWatch};
use crate::sink::Emitter;

/// What a step leads to.
enum Step<T> {
    /// On to the next step of this round, with what this one made.
    Go(T),
    /// Back to the top: another request to the model.
    Again,
    /// The turn is over.
    End(TurnOutcome),
}

/// The tools one request offers.
struct Offer {
    registry: Arc<ToolRegistry>,
    specs: Vec<ToolSpec>,
    /// Whether the model may call them (`tool_choice` other than `none`).
    calls_allowed: bool,
    /// Whether the request carries them at all. The request that asks for the answer keeps
    /// them, with a tool choice of `none`: its prefix is then the same as the requests' before
    /// it, byte for byte, and the server's prompt cache serves it (and the next question's
    /// first request).
    keep_tools: bool,
}

/// The model's answer to one request, as it streamed.
struct Streamed {
    response: ChatResponse,
    /// Where the answer was stopped because it repeated itself.
    cut: Option<Cut>,
    /// The ids of the calls that began to stream, by position, to retract those a cut leaves
    /// out.
    streamed_ids: Vec<String>,
}

/// One turn's rounds, and what they have learned so far.
pub(super) struct Rounds<'a> {
    agent: &'a Agent,
    conversation: &'a mut Conversation,
    options: &'a TurnOptions,
    emitter: &'a Emitter<'a>,
    approver: &'a dyn Approver,
    cancel: &'a CancellationToken,
    /// Where the turn's own messages begin: older ones may be left out to fit the window.
    turn_start: usize,
    /// The tools the caller chose, by name (`None`: all of them).
    offered: Option<HashSet<String>>,
    /// The caller's own tools, which it runs itself.
    external: HashSet<&'a str>,
    registry: Arc<ToolRegistry>,
    specs: Vec<ToolSpec>,
    /// Many tools are offered in part, with `find_tools` for the rest; `None` when the caller
    /// chose the tools.
    many: Option<ManyTools<'a>>,
    call_ctx: ToolContext,
    /// Each call made so far, by its name and arguments, for the repeat watch.
    seen_calls: HashMap<String, (u32, u32)>,
    window: ContextWindow,
    temperature: Option<f32>,
    /// What every request asks for at most: the answer's share of the window, so no round
    /// generates past what the budget keeps for it.
    answer_tokens: u32,
    /// What a request may take of the window.
    request_room: u32,
    /// What the model is told before the conversation: an answer that copies it is cut.
    instructions: String,
    model_calls: u32,
    tool_rounds: u32,
    /// Set once the model must answer from what it has, as at the round limit: the turn's own
    /// messages leave no room for more results, or the model repeated a call it had made too
    /// often already.
    answer_now: bool,
    /// The last resort for the answer: the request goes without the tools (a server that
    /// called tools when asked not to, or a window too small for them).
    without_tools: bool,
    /// The tool mode of the last answer, to say when it changes.
    mode_used: Option<ToolMode>,
}

impl<'a> Rounds<'a> {
    pub(super) async fn new(
        agent: &'a Agent,
        conversation: &'a mut Conversation,
        turn_start: usize,
        options: &'a TurnOptions,
        emitter: &'a Emitter<'a>,
        approver: &'a dyn Approver,
        cancel: &'a CancellationToken,
    ) -> Self {
        let offered: Option<HashSet<String>> = options
            .offered
            .as_ref()
            .map(|names| names.iter().cloned().collect());
        let external: HashSet<&str> = options
            .external
            .iter()
            .map(|spec| spec.name.as_str())
            .collect();
        let registry = Arc::clone(&agent.tools);
        let specs = turn_specs(&registry, &external, offered.as_ref(), options);
        let max_tokens = options.max_tokens.or(agent.config.max_tokens);
        let window = agent.llm.context_window(cancel).await;
        let many = options
            .offered
            .is_none()
            .then(|| ManyTools::new(&agent.config.tool_counts, window.tokens));
        let answer_tokens = budget::answer_room(window.tokens, max_tokens);
        let instructions = instructions(conversation, &specs);
        Self {
            agent,
            conversation,
            options,
            emitter,
            approver,
            cancel,
            turn_start,
            offered,
            external,
            registry,
            specs,
            many,
            call_ctx: ToolContext {
                cancel: cancel.child_token(),
                ..agent.ctx.clone()
            },
            seen_calls: HashMap::new(),
            window,
            temperature: options.temperature.or(agent.config.temperature),
            answer_tokens,
            request_room: budget::request_room(window.tokens, Some(answer_tokens)),
            instructions,
            model_calls: 0,
            tool_rounds: 0,
            answer_now: false,
            without_tools: false,
            mode_used: None,
        }
    }

    /// Asks the model until it answers, the user cancels or something fails.
    pub(super) async fn run(mut self) -> TurnOutcome {
        // Servers' requests reach the timeline while the rounds run (closed when they end).
        let agent = self.agent;
        let line = OpenLine::new(&agent.line);
        loop {
            self.refresh_tools().await;
            let offer = self.offer();
            let request = match self.fit(self.request(&offer), &offer) {
                Step::Go(request) => request,
                Step::Again => continue,
                Step::End(outcome) => return outcome,
            };
            let mut streamed = match self.stream(&request).await {
                Step::Go(streamed) => streamed,
                Step::Again => continue,
                Step::End(outcome) => return outcome,
            };
            self.keep_before_cut(&mut streamed);
            self.report(&streamed.response, &offer);
            let calls = match self.settle(&mut streamed, &offer) {
                Step::Go(calls) => calls,
                Step::Again => continue,
                Step::End(outcome) => return outcome,
            };
            if let Some(outcome) = self.run_calls(calls, &offer, &streamed, &line).await {
                return outcome;
            }
        }
    }

    /// Offers the tools as they are now, should a server's list have changed while the last
    /// round ran.
    async fn refresh_tools(&mut self) {
        if self.model_calls > 0
            && let Some(live) = &self.agent.live
            && let Some(fresh) = live.refreshed().await
        {
            self.registry = fresh;
            self.specs = turn_specs(
                &self.registry,
                &self.external,
                self.offered.as_ref(),
                self.options,
            );
        }
    }

    /// The tools of the next request, which counts as a model call from here on.
    fn offer(&mut self) -> Offer {
        let (registry, specs) = match &mut self.many {
            Some(many) => many.offer(&self.registry, &self.specs),
            None => (Arc::clone(&self.registry), self.specs.clone()),
        };
        self.model_calls += 1;
        let calls_allowed = !self.answer_now
            && self.tool_rounds < self.agent.config.max_rounds
            && !specs.is_empty();
        let keep_tools = !specs.is_empty() && !self.without_tools;
        Offer {
            registry,
            specs,
            calls_allowed,
            keep_tools,
        }
    }

    /// The request for this round, the conversation whole.
    fn request(&self, offer: &Offer) -> ChatRequest {
        let tool_choice = if offer.calls_allowed {
            Some(match &self.options.first_choice {
                Some(choice) if self.model_calls == 1 => choice.clone(),
                _ => ToolChoice::Auto,
            })
        } else {
            offer.keep_tools.then_some(ToolChoice::None)
        };
        ChatRequest {
            messages: self.conversation.messages.clone(),
            tools: if offer.keep_tools {
                offer.specs.clone()
            } else {
                Vec::new()
            },
            tool_choice,
            temperature: self.temperature,
            max_tokens: Some(self.answer_tokens),
        }
    }

    /// What goes is the conversation fitted to the window; the conversation itself keeps
    /// every result whole. Where it cannot fit, the model is asked for its answer instead, or
    /// the turn ends with the reason.
    fn fit(&mut self, request: ChatRequest, offer: &Offer) -> Step<ChatRequest> {
        let llm = &self.agent.llm;
        let fitted = budget::fit(request, self.turn_start, self.request_room, &|request| {
            llm.estimate_request(request)
        });
        let window = self.window;
        match fitted {
            // The turn's own results no longer all fit: more calls would only push out what
            // the model asked for. It answers from what it has.
            Ok(fitted) if fitted.lost_own && offer.calls_allowed => {
                self.answer_instead("");
                Step::Again
            }
            Ok(fitted) => {
                self.usage(fitted.used);
                Step::Go(fitted.request)
            }
            // A window nobody named is a guess: better to try than to refuse.
            Err(TooSmall {
                request,
                needed,
                room,
            }) if window.source == WindowSource::Default => {
                self.usage(needed);
                self.emitter.emit(EventBody::Error {
                    code: ErrorCode::BadRequest,
                    message: format!(
                        "This request takes about {needed} tokens, more than the {room} a {}-token context window leaves; the server did not say how large its window is, so it is sent all the same. Set context_window to the model's window to be sure.",
                        window.tokens
                    ),
                    fatal: false,
                });
                Step::Go(request)
            }
            // Without the tools' descriptions the answer may still fit: ask for it.
            Err(TooSmall { .. }) if offer.keep_tools => {
                self.without_tools = true;
                self.answer_instead(", without tools");
                Step::Again
            }
            Err(TooSmall { needed, room, .. }) => {
                let message = format!(
                    "The request takes about {needed} tokens even with earlier results and turns left out: more than the {room} tokens the model's {}-token context window leaves for a request (the rest is kept for the answer). Ask a shorter question, turn tools off, or use a model with a larger window (the window was {}).",
                    window.tokens,
                    window.source.describe()
                );
                self.emitter.emit(EventBody::Error {
                    code: ErrorCode::BadRequest,
                    message: message.clone(),
                    fatal: true,
                });
                Step::End(outcome(
                    TurnEnd::Error,
                    String::new(),
                    self.model_calls - 1,
                    Some(message),
                ))
            }
        }
    }

    /// The window is full: the request that was to go does not count, and the next asks for
    /// the answer (`how` says more of it).
    fn answer_instead(&mut self, how: &str) {
        self.answer_now = true;
        self.model_calls -= 1;
        window_full(self.conversation, self.emitter, self.window.tokens, how);
    }

    fn usage(&self, used_tokens: u32) {
        self.emitter.emit(EventBody::ContextUsage {
            round: self.model_calls,
            used_tokens,
            window_tokens: self.window.tokens,
        });
    }

    /// Sends `request` and streams the answer to the timeline, stopping it where it starts to
    /// repeat itself. A cancel or an error ends the turn with what was said so far.
    async fn stream(&mut self, request: &ChatRequest) -> Step<Streamed> {
        let round = self.model_calls;
        let emitter = self.emitter;
        let mut partial = String::new();
        let mut streamed_ids: Vec<String> = Vec::new();
        let stop = CancellationToken::new();
        let mut watch = LoopWatch::new(&self.seen_calls, &self.instructions);
        // A tool's view is named on the delta that names the tool, so its view can open while
        // the arguments stream; a replay shows none (as its dispatcher does).
        let registry = Arc::clone(&self.registry);
        let replay = self.options.replay.is_some();
        let view_of = |name: Option<&str>| {
            name.filter(|_| !replay)
                .and_then(|name| registry.get(name))
                .and_then(|tool| tool.view())
        };
        let streamed = {
            let mut on_delta = |delta: StreamDelta| {
                if stop.is_cancelled() {
                    return;
                }
                match delta {
                    StreamDelta::Text(text) => {
                        watch.text(&text);
                        partial.push_str(&text);
                        emitter.emit(EventBody::TextDelta { round, text });
                    }
                    StreamDelta::ToolCall {
                        index,
                        id,
                        name,
                        arguments,
                    } => {
                        watch.call(index, name.as_deref(), &arguments);
                        if watch.cut().is_none() {
                            remember_id(&mut streamed_ids, index, &id);
                            emitter.emit(EventBody::ToolCallDelta {
                                round,
                                index,
                                call_id: id,
                                view: view_of(name.as_deref()),
                                tool: name,
                                arguments_delta: arguments,
                            });
                        }
                    }
                    // Usage is reported once per model call, from the assembled response.
                    StreamDelta::Usage(_) => {}
                    StreamDelta::PromptProgress {
                        processed,
                        total,
                        cached,
                        elapsed_ms,
                    } => emitter.emit(EventBody::PromptProgress {
                        round,
                        processed,
                        total,
                        cached,
                        elapsed_ms,
                    }),
                }
                if watch.cut().is_some() {
                    stop.cancel();
                }
            };
            self.agent
                .llm
                .stream_until(request, self.cancel, &stop, &mut on_delta)
                .await
        };
        let cut = watch.cut().cloned();
        drop(watch);
        match streamed {
            Ok(response) => Step::Go(Streamed {
                response,
                cut,
                streamed_ids,
            }),
            Err(LlmError::Cancelled) => {
                self.keep_partial(&partial);
                Step::End(outcome(TurnEnd::Cancelled, partial, round, None))
            }
            Err(error) => {
                let message = sentence(&error.to_string());
                self.emitter.emit(EventBody::Error {
                    code: error.code(),
                    message: message.clone(),
                    fatal: true,
                });
                self.keep_partial(&partial);
                Step::End(outcome(TurnEnd::Error, partial, round, Some(message)))
            }
        }
    }

    /// What the model said before a cancel or an error stays in the conversation.
    fn keep_partial(&mut self, partial: &str) {
        if !partial.is_empty() {
            add_message(
                self.conversation,
                self.emitter,
                Message::assistant(partial.to_string(), Vec::new()),
            );
        }
    }

    /// What came before a repetition is the answer: its distinct calls, and its text up to the
    /// first pass of a loop. The timeline is told which streamed calls are gone.
    fn keep_before_cut(&self, streamed: &mut Streamed) {
        let Some(cut) = &streamed.cut else {
            return;
        };
        let response = &mut streamed.response;
        response.tool_calls.truncate(cut.keep_calls);
        response.dropped_calls.clear();
        let mut keep = cut.keep_text.min(response.content.len());
        while !response.content.is_char_boundary(keep) {
            keep -= 1;
        }
        response.content.truncate(keep);
        self.emitter.emit(EventBody::RepetitionStopped {
            round: self.model_calls,
            tool: cut.what.tool().map(str::to_string),
            repeats: cut.what.times(),
            tokens: cut.tokens,
            dropped: streamed
                .streamed_ids
                .iter()
                .skip(cut.keep_calls)
                .filter(|id| !id.is_empty())
                .cloned()
                .collect(),
        });
    }

    /// Tells the timeline what the answer cost and how it came: its usage, whether it was cut
    /// at the length limit, the tool mode when it changed, and calls cut off mid-way.
    fn report(&mut self, response: &ChatResponse, offer: &Offer) {
        if let Some(usage) = response.usage {
            self.emitter.emit(EventBody::Usage(usage));
        }
        if response.finish_reason == Some(FinishReason::Length) {
            self.emitter.emit(EventBody::AnswerTruncated {
                round: self.model_calls,
            });
        }
        if offer.calls_allowed && self.mode_used != Some(response.tool_mode_used) {
            self.mode_used = Some(response.tool_mode_used);
            self.emitter.emit(EventBody::ToolModeUsed {
                mode: response.tool_mode_used,
                fell_back: self.agent.llm.config().tool_mode == ToolMode::Auto
                    && response.tool_mode_used == ToolMode::Prompt,
            });
        }
        if !response.dropped_calls.is_empty() {
            self.emitter.emit(EventBody::Error {
                code: ErrorCode::IncompleteResponse,
                message: format!(
                    "The model's answer was cut off in the middle of {} tool call(s); those calls were not run.",
                    response.dropped_calls.len()
                ),
                fatal: false,
            });
        }
    }

    /// Keeps the answer in the conversation and decides what follows it: the calls to run,
    /// another request (the model is asked to answer, or to send a cut-off call again), or the
    /// end of the turn when it called nothing.
    fn settle(&mut self, streamed: &mut Streamed, offer: &Offer) -> Step<Vec<ToolCall>> {
        let response = &mut streamed.response;
        let said_nothing = response.content.trim().is_empty();
        // Asked to answer, the model called tools all the same (some servers ignore a tool
        // choice of `none`): ask once more without the tools, so the turn ends in words.
        if !offer.calls_allowed
            && offer.keep_tools
            && said_nothing
            && !response.tool_calls.is_empty()
        {
            self.without_tools = true;
            return Step::Again;
        }
        // The model called a tool although it was offered none at all (a plain chat): the
        // call cannot run, and the answer says so rather than coming back empty.
        let unoffered = (offer.specs.is_empty() && said_nothing && !response.tool_calls.is_empty())
            .then(|| prompt::unoffered_calls_answer(&response.tool_calls));
        // Calls made when no tools were offered are not run and not kept.
        let calls = if offer.calls_allowed {
            std::mem::take(&mut response.tool_calls)
        } else {
            Vec::new()
        };
        if let Some(cut) = &streamed.cut
            && !self.answer_now
            && calls.is_empty()
            && said_nothing
        {
            self.ask_after_cut(cut);
            return Step::Again;
        }
        if calls.is_empty() && said_nothing && response.dropped_calls.is_empty() {
            self.emitter.emit(EventBody::Error {
                code: ErrorCode::ModelError,
                message: unoffered
                    .clone()
                    .unwrap_or_else(|| "The model returned an empty answer.".to_string()),
                fatal: false,
            });
        }
        add_message(
            self.conversation,
            self.emitter,
            Message::assistant(response.content.clone(), calls.clone()),
        );
        if !calls.is_empty() {
            return Step::Go(calls);
        }
        if offer.calls_allowed
            && !response.dropped_calls.is_empty()
            && self.tool_rounds + 1 < self.agent.config.max_rounds
        {
            self.ask_again_whole(response);
            return Step::Again;
        }
        let end = if self.tool_rounds >= self.agent.config.max_rounds {
            TurnEnd::RoundLimit
        } else {
            TurnEnd::Completed
        };
        let text = unoffered.unwrap_or_else(|| response.content.clone());
        Step::End(outcome(end, text, self.model_calls, None))
    }

    /// The model was stopped with nothing kept (a call it had made too often, its own
    /// instructions copied): it is asked once to answer from what it has.
    fn ask_after_cut(&mut self, cut: &Cut) {
        self.answer_now = true;
        let note = match cut.what.tool() {
            Some(tool) => prompt::repeated_answer_note(tool),
            None => prompt::echo_note(),
        };
        // The answer as it was kept (nothing), so that turns keep alternating.
        add_message(
            self.conversation,
            self.emitter,
            Message::assistant("", Vec::new()),
        );
        add_message(self.conversation, self.emitter, Message::user(note));
    }

    /// The model meant to call a tool but the call could not run: it is told why, so it can
    /// send the call again whole, instead of ending the turn on nothing.
    fn ask_again_whole(&mut self, response: &ChatResponse) {
        self.tool_rounds += 1;
        let reasons: Vec<&str> = response
            .dropped_calls
            .iter()
            .map(|dropped| dropped.reason.as_str())
            .collect();
        add_message(
            self.conversation,
            self.emitter,
            Message::user(prompt::dropped_calls_note(&reasons)),
        );
    }

    /// Runs the round's calls and adds their results. The turn ends here when the user
    /// cancelled, or when the model called the caller's own tools (for the caller to run).
    /// At the round limit the model is told to answer.
    async fn run_calls(
        &mut self,
        calls: Vec<ToolCall>,
        offer: &Offer,
        streamed: &Streamed,
        line: &OpenLine<'_>,
    ) -> Option<TurnOutcome> {
        self.tool_rounds += 1;
        let content = &streamed.response.content;
        let (pending, ours): (Vec<ToolCall>, Vec<ToolCall>) = calls
            .into_iter()
            .partition(|call| self.external.contains(call.name.as_str()));
        if !ours.is_empty() {
            let RoundOutcome {
                mut results,
                cancelled,
            } = Dispatcher::new(
                &offer.registry,
                &self.call_ctx,
                &self.agent.config,
                self.emitter,
                self.agent.rules.as_deref(),
                self.offered.as_ref(),
            )
            .with_line(line)
            .with_replay(self.options.replay.as_ref())
            .run_round(
                self.model_calls,
                &ours,
                self.conversation,
                &mut self.seen_calls,
                self.approver,
            )
            .await;
            // Said where the model reads on: its answer was stopped after these calls.
            if let Some(cut) = &streamed.cut
                && let Some(Message::Tool { content, .. }) = results.last_mut()
            {
                content.push_str(&prompt::stopped_after_note(cut.what.tool()));
            }
            for result in results {
                add_message(self.conversation, self.emitter, result);
            }
            if cancelled {
                return Some(outcome(
                    TurnEnd::Cancelled,
                    content.clone(),
                    self.model_calls,
                    None,
                ));
            }
        }
        if !pending.is_empty() {
            return Some(TurnOutcome {
                pending_calls: pending,
                ..outcome(TurnEnd::Completed, content.clone(), self.model_calls, None)
            });
        }
        let limit = self.agent.config.max_rounds;
        if self.tool_rounds >= limit {
            self.emitter.emit(EventBody::RoundLimitReached { limit });
            add_message(
                self.conversation,
                self.emitter,
                Message::user(prompt::round_limit_note(limit)),
            );
        }
        None
    }
}

/// The system messages at the conversation's start and the tools' descriptions, as the model
/// reads them: an answer that copies them is cut.
fn instructions(conversation: &Conversation, specs: &[ToolSpec]) -> String {
    let mut instructions: String = conversation
        .messages
        .iter()
        .take_while(|message| matches!(message, Message::System { .. }))
        .map(|message| match message {
            Message::System { content } => content.as_str(),
            Message::User { .. } | Message::Assistant { .. } | Message::Tool { .. } => "",
        })
        .collect();
    for spec in specs {
        instructions.push_str(&tooltrail_llm::tool_json(spec).to_string());
    }
    instructions
}

/// Keeps the first id each streamed call position brought.
fn remember_id(ids: &mut Vec<String>, index: u32, id: &str) {
    let position = usize::try_from(index).unwrap_or(usize::MAX);
    if ids.len() <= position {
        ids.resize(position + 1, String::new());
    }
    if ids[position].is_empty() {
        ids[position] = id.to_string();
    }
}
