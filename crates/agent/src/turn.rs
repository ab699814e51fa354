//! The turn loop: model → tool calls → results → model, until an answer.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tooltrail_llm::{
    ChatRequest, FinishReason, LlmClient, LlmError, StreamDelta, ToolMode, WindowSource,
};
use tooltrail_protocol::{
    ErrorCode, EventBody, Message, ToolCall, ToolChoice, ToolSpec, TurnEnd, sentence,
};
use tooltrail_tools::{ToolContext, ToolRegistry};

use crate::announce::{LiveTools, OpenLine, TurnLine};
use crate::approval::{Approver, DenyAll, RuleBook};
use crate::budget::{self, TooSmall};
use crate::config::AgentConfig;
use crate::conversation::Conversation;
use crate::dispatch::{Dispatcher, RoundOutcome};
use crate::many_tools::ManyTools;
use crate::prompt;
use crate::repeat::LoopWatch;
use crate::sink::{Emitter, EventSink, NullSink};

/// What one turn offers the model and how it starts, beyond the agent's configuration. The
/// defaults are a question from the app or the command line: every tool of the registry, the
/// built-in system prompt, `tool_choice` auto.
///
/// The HTTP API sets the rest: the client chooses which of the registry's tools it wants
/// (`offered`), declares tools of its own that it runs itself (`external`), and may force the
/// first call (`first_choice`).
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOptions {
    /// The registry's tools offered, by name; `None` offers them all. A call to one that was
    /// not offered is refused as `tool_not_found`, as the model was never told of it.
    pub offered: Option<Vec<String>>,
    /// Tools the caller runs itself: offered to the model beside the registry's, never run
    /// here. A round that calls one runs its other calls, then ends the turn with the
    /// external calls in [`TurnOutcome::pending_calls`]; the caller's results continue the
    /// conversation as tool messages in the next turn's input. A name here shadows a registry
    /// tool of the same name.
    pub external: Vec<ToolSpec>,
    /// The first model call's `tool_choice` (`auto` when `None`). Later calls of the turn use
    /// `auto`, so that a forced call cannot repeat until the round limit.
    pub first_choice: Option<ToolChoice>,
    /// Whether an empty conversation gets the built-in system prompt when its input brings no
    /// system message of its own.
    pub system_prompt: bool,
    /// Override the agent's configuration for this turn.
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
}

impl Default for TurnOptions {
    fn default() -> Self {
        Self {
            offered: None,
            external: Vec::new(),
            first_choice: None,
            system_prompt: true,
            temperature: None,
            max_tokens: None,
        }
    }
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    pub end: TurnEnd,
    /// The final answer (or what was said before a cancel or an error).
    pub text: String,
    /// Model calls made.
    pub rounds: u32,
    /// The sentence that ended the turn, when it ended in an error.
    pub error: Option<String>,
    /// Calls of [`TurnOptions::external`] tools the model made in its last round, in call
    /// order, for the caller to run. The turn ends `completed`: the model's answer is a request
    /// for those tools.
    pub pending_calls: Vec<ToolCall>,
}

/// Runs turns against one model, one tool registry and one workspace.
pub struct Agent {
    llm: LlmClient,
    tools: Arc<ToolRegistry>,
    ctx: ToolContext,
    config: AgentConfig,
    rules: Option<Arc<dyn RuleBook>>,
    line: TurnLine,
    live: Option<Arc<dyn LiveTools>>,
    /// What the MCP servers tell their clients (`instructions`), by server.
    server_instructions: Vec<(String, String)>,
}

impl Agent {
    pub fn new(
        llm: LlmClient,
        tools: Arc<ToolRegistry>,
        ctx: ToolContext,
        config: AgentConfig,
    ) -> Self {
        Self {
            llm,
            tools,
            ctx,
            config,
            rules: None,
            line: TurnLine::default(),
            live: None,
            server_instructions: Vec::new(),
        }
    }

    /// The line servers' requests reach the running turn's timeline by.
    pub fn line(&self) -> &TurnLine {
        &self.line
    }

    /// Re-reads the tools from `live` before each request to the model after the first.
    pub fn with_live_tools(mut self, live: Arc<dyn LiveTools>) -> Self {
        self.live = Some(live);
        self
    }

    /// Tells the model what the MCP servers say of themselves (`instructions`, by server), in
    /// the system prompt of a new conversation, within a share of the context window.
    pub fn with_server_instructions(mut self, instructions: Vec<(String, String)>) -> Self {
        self.server_instructions = instructions;
        self
    }

    /// Consults `rules` for every call, before the approval gate asks.
    pub fn with_rules(mut self, rules: Arc<dyn RuleBook>) -> Self {
        self.rules = Some(rules);
        self
    }

    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The tools this agent can run, for a front end that offers a subset of them
    /// ([`TurnOptions::offered`]).
    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    /// The model this agent asks.
    pub fn model(&self) -> &str {
        &self.llm.config().model
    }

    /// The model's context window, as the turns fit their requests to it (see
    /// [`LlmClient::context_window`]).
    pub async fn context_window(&self, cancel: &CancellationToken) -> tooltrail_llm::ContextWindow {
        self.llm.context_window(cancel).await
    }

    /// Answers `user_message` in `conversation`, which gains every message the model saw.
    /// Never panics and never returns early without a `turn_finished` event.
    pub async fn run_turn(
        &self,
        conversation: &mut Conversation,
        user_message: &str,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        self.run(
            conversation,
            vec![Message::user(user_message)],
            &TurnOptions::default(),
            sink,
            approver,
            cancel,
        )
        .await
    }

    /// A turn that first adds `input` to `conversation` — a user message, the results of
    /// [`TurnOutcome::pending_calls`] as tool messages, or a whole history to start from —
    /// then calls the model with `options`. The turn's `user_message` is the input's last
    /// user message (empty when it brings only tool results).
    pub async fn run(
        &self,
        conversation: &mut Conversation,
        input: Vec<Message>,
        options: &TurnOptions,
        sink: &dyn EventSink,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let turn_id = format!("turn_{}", uuid::Uuid::new_v4().simple());
        let emitter = Emitter::new(conversation.id.clone(), turn_id, sink);
        let user_message = input
            .iter()
            .rev()
            .find_map(|message| match message {
                Message::User { content } => Some(content.clone()),
                Message::System { .. } | Message::Assistant { .. } | Message::Tool { .. } => None,
            })
            .unwrap_or_default();
        emitter.emit(EventBody::TurnStarted {
            workspace: self.ctx.workspace.root().display().to_string(),
            model: self.llm.config().model.clone(),
            user_message,
        });
        let brings_system = matches!(input.first(), Some(Message::System { .. }));
        if options.system_prompt && conversation.messages.is_empty() && !brings_system {
            let mut system = self
                .config
                .system_prompt
                .clone()
                .unwrap_or_else(|| prompt::system_prompt(&self.workspace_name()));
            if !self.server_instructions.is_empty() {
                let window = self.llm.context_window(cancel).await;
                system.push_str(&prompt::server_instructions(
                    &self.server_instructions,
                    prompt::instructions_room(window.tokens),
                ));
            }
            add_message(conversation, &emitter, Message::system(system));
        }
        let turn_start = conversation.messages.len();
        for message in input {
            add_message(conversation, &emitter, message);
        }

        let outcome = self
            .rounds(
                conversation,
                turn_start,
                options,
                &emitter,
                approver,
                cancel,
            )
            .await;
        emitter.emit(EventBody::TurnFinished {
            reason: outcome.end,
            rounds: outcome.rounds,
            text: outcome.text.clone(),
        });
        outcome
    }

    async fn rounds(
        &self,
        conversation: &mut Conversation,
        turn_start: usize,
        options: &TurnOptions,
        emitter: &Emitter<'_>,
        approver: &dyn Approver,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        // Servers' requests reach the timeline while the rounds run (closed when they end).
        let line = &OpenLine::new(&self.line);
        let offered: Option<HashSet<String>> = options
            .offered
            .as_ref()
            .map(|names| names.iter().cloned().collect());
        let external: HashSet<&str> = options
            .external
            .iter()
            .map(|spec| spec.name.as_str())
            .collect();
        let mut registry = Arc::clone(&self.tools);
        let mut specs = turn_specs(&registry, &external, offered.as_ref(), options);
        let temperature = options.temperature.or(self.config.temperature);
        let max_tokens = options.max_tokens.or(self.config.max_tokens);
        let call_ctx = ToolContext {
            cancel: cancel.child_token(),
            ..self.ctx.clone()
        };
        let mut seen_calls: HashMap<String, (u32, u32)> = HashMap::new();
        let window = self.llm.context_window(cancel).await;
        // A caller that chose the tools gets them as chosen; otherwise many tools are offered
        // in part, with `find_tools` for the rest.
        let mut many = options
            .offered
            .is_none()
            .then(|| ManyTools::new(&self.config.tool_counts, window.tokens));
        // Every request asks for at most the answer's share of the window, so no round
        // generates past what the budget keeps for it.
        let answer_tokens = budget::answer_room(window.tokens, max_tokens);
        let room = budget::request_room(window.tokens, Some(answer_tokens));
        // What the model is told before the conversation: an answer that copies it is cut.
        let mut instructions: String = conversation
            .messages
            .iter()
            .take_while(|message| matches!(message, Message::System { .. }))
            .map(|message| match message {
                Message::System { content } => content.as_str(),
                Message::User { .. } | Message::Assistant { .. } | Message::Tool { .. } => "",
            })
            .collect();
        for spec in &specs {
            instructions.push_str(&tooltrail_llm::tool_json(spec).to_string());
        }
        let mut model_calls = 0;
        let mut tool_rounds = 0;
        // Set once the model must answer from what it has, as at the round limit: the turn's
        // own messages leave no room for more results, or the model repeated a call it had
        // made too often already.
        let mut answer_now = false;
        // The last resort for the answer: the request goes without the tools (a server that
        // called tools when asked not to, or a window too small for them).
        let mut without_tools = false;
        // The tool mode of the last answer, to say when it changes.
        let mut mode_used: Option<ToolMode> = None;
        loop {
            // A server's tool list may have changed while the last round ran: the next request
            // offers the tools as they are now.
            if model_calls > 0
                && let Some(live) = &self.live
                && let Some(fresh) = live.refreshed().await
            {
                registry = fresh;
                specs = turn_specs(&registry, &external, offered.as_ref(), options);
            }
            let (registry, specs) = match &mut many {
                Some(many) => many.offer(&registry, &specs),
                None => (Arc::clone(&registry), specs.clone()),
            };
            model_calls += 1;
            let offer_tools =
                !answer_now && tool_rounds < self.config.max_rounds && !specs.is_empty();
            // The request that asks for the answer keeps the tools, with a tool choice of
            // `none`: its prefix is then the same as the requests' before it, byte for byte,
            // and the server's prompt cache serves it (and the next question's first request).
            let keep_tools = !specs.is_empty() && !without_tools;
            let request = ChatRequest {
                messages: conversation.messages.clone(),
                tools: if keep_tools {
                    specs.clone()
                } else {
                    Vec::new()
                },
                tool_choice: if offer_tools {
                    Some(match &options.first_choice {
                        Some(choice) if model_calls == 1 => choice.clone(),
                        _ => ToolChoice::Auto,
                    })
                } else {
                    keep_tools.then_some(ToolChoice::None)
                },
                temperature,
                max_tokens: Some(answer_tokens),
            };
            // What goes is the conversation fitted to the window; the conversation itself
            // keeps every result whole.
            let request = match budget::fit(request, turn_start, room, &|request| {
                self.llm.estimate_request(request)
            }) {
                // The turn's own results no longer all fit: more calls would only push out
                // what the model asked for. It answers from what it has.
                Ok(fitted) if fitted.lost_own && offer_tools => {
                    answer_now = true;
                    model_calls -= 1;
                    window_full(conversation, emitter, window.tokens, "");
                    continue;
                }
                Ok(fitted) => {
                    emitter.emit(EventBody::ContextUsage {
                        round: model_calls,
                        used_tokens: fitted.used,
                        window_tokens: window.tokens,
                    });
                    fitted.request
                }
                // A window nobody named is a guess: better to try than to refuse.
                Err(TooSmall {
                    request,
                    needed,
                    room,
                }) if window.source == WindowSource::Default => {
                    emitter.emit(EventBody::ContextUsage {
                        round: model_calls,
                        used_tokens: needed,
                        window_tokens: window.tokens,
                    });
                    emitter.emit(EventBody::Error {
                        code: ErrorCode::BadRequest,
                        message: format!(
                            "This request takes about {needed} tokens, more than the {room} a {}-token context window leaves; the server did not say how large its window is, so it is sent all the same. Set context_window to the model's window to be sure.",
                            window.tokens
                        ),
                        fatal: false,
                    });
                    request
                }
                // Without the tools' descriptions the answer may still fit: ask for it.
                Err(TooSmall { .. }) if keep_tools => {
                    answer_now = true;
                    without_tools = true;
                    model_calls -= 1;
                    window_full(conversation, emitter, window.tokens, ", without tools");
                    continue;
                }
                Err(TooSmall { needed, room, .. }) => {
                    let message = format!(
                        "The request takes about {needed} tokens even with earlier results and turns left out: more than the {room} tokens the model's {}-token context window leaves for a request (the rest is kept for the answer). Ask a shorter question, turn tools off, or use a model with a larger window (the window was {}).",
                        window.tokens,
                        window.source.describe()
                    );
                    emitter.emit(EventBody::Error {
                        code: ErrorCode::BadRequest,
                        message: message.clone(),
                        fatal: true,
                    });
                    return outcome(
                        TurnEnd::Error,
                        String::new(),
                        model_calls - 1,
                        Some(message),
                    );
                }
            };
            let mut partial = String::new();
            // The ids of the calls that began to stream, by position, to retract those a cut
            // leaves out.
            let mut streamed_ids: Vec<String> = Vec::new();
            let stop = CancellationToken::new();
            let mut watch = LoopWatch::new(&seen_calls, &instructions);
            let streamed = {
                let round = model_calls;
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
                                let position = usize::try_from(index).unwrap_or(usize::MAX);
                                if streamed_ids.len() <= position {
                                    streamed_ids.resize(position + 1, String::new());
                                }
                                if streamed_ids[position].is_empty() {
                                    streamed_ids[position] = id.clone();
                                }
                                emitter.emit(EventBody::ToolCallDelta {
                                    round,
                                    index,
                                    call_id: id,
                                    tool: name,
                                    arguments_delta: arguments,
                                });
                            }
                        }
                        // Usage is reported once per model call, from the assembled response.
                        StreamDelta::Usage(_) => {}
                    }
                    if watch.cut().is_some() {
                        stop.cancel();
                    }
                };
                self.llm
                    .stream_until(&request, cancel, &stop, &mut on_delta)
                    .await
            };
            let cut = watch.cut().cloned();
            drop(watch);
            let mut response = match streamed {
                Ok(response) => response,
                Err(LlmError::Cancelled) => {
                    if !partial.is_empty() {
                        add_message(
                            conversation,
                            emitter,
                            Message::assistant(partial.clone(), Vec::new()),
                        );
                    }
                    return outcome(TurnEnd::Cancelled, partial, model_calls, None);
                }
                Err(error) => {
                    let message = sentence(&error.to_string());
                    emitter.emit(EventBody::Error {
                        code: error.code(),
                        message: message.clone(),
                        fatal: true,
                    });
                    if !partial.is_empty() {
                        add_message(
                            conversation,
                            emitter,
                            Message::assistant(partial.clone(), Vec::new()),
                        );
                    }
                    return outcome(TurnEnd::Error, partial, model_calls, Some(message));
                }
            };
            if let Some(cut) = &cut {
                // What came before the repetition is the answer: its distinct calls, and its
                // text up to the first pass of a loop.
                response.tool_calls.truncate(cut.keep_calls);
                response.dropped_calls.clear();
                let mut keep = cut.keep_text.min(response.content.len());
                while !response.content.is_char_boundary(keep) {
                    keep -= 1;
                }
                response.content.truncate(keep);
                emitter.emit(EventBody::RepetitionStopped {
                    round: model_calls,
                    tool: cut.what.tool().map(str::to_string),
                    repeats: cut.what.times(),
                    tokens: cut.tokens,
                    dropped: streamed_ids
                        .iter()
                        .skip(cut.keep_calls)
                        .filter(|id| !id.is_empty())
                        .cloned()
                        .collect(),
                });
            }
            if let Some(usage) = response.usage {
                emitter.emit(EventBody::Usage(usage));
            }
            if response.finish_reason == Some(FinishReason::Length) {
                emitter.emit(EventBody::AnswerTruncated { round: model_calls });
            }
            if offer_tools && mode_used != Some(response.tool_mode_used) {
                mode_used = Some(response.tool_mode_used);
                emitter.emit(EventBody::ToolModeUsed {
                    mode: response.tool_mode_used,
                    fell_back: self.llm.config().tool_mode == ToolMode::Auto
                        && response.tool_mode_used == ToolMode::Prompt,
                });
            }
            if !response.dropped_calls.is_empty() {
                emitter.emit(EventBody::Error {
                    code: ErrorCode::IncompleteResponse,
                    message: format!(
                        "The model's answer was cut off in the middle of {} tool call(s); those calls were not run.",
                        response.dropped_calls.len()
                    ),
                    fatal: false,
                });
            }
            // Asked to answer, the model called tools all the same (some servers ignore a tool
            // choice of `none`): ask once more without the tools, so the turn ends in words.
            if !offer_tools
                && keep_tools
                && response.content.trim().is_empty()
                && !response.tool_calls.is_empty()
            {
                without_tools = true;
                continue;
            }
            // The model called a tool although it was offered none at all (a plain chat): the
            // call cannot run, and the answer says so rather than coming back empty.
            let unoffered = (specs.is_empty()
                && response.content.trim().is_empty()
                && !response.tool_calls.is_empty())
            .then(|| prompt::unoffered_calls_answer(&response.tool_calls));
            // Calls made when no tools were offered are not run and not kept.
            let calls = if offer_tools {
                response.tool_calls
            } else {
                Vec::new()
            };
            // The model was stopped with nothing kept (a call it had made too often, its own
            // instructions copied): it is asked once to answer from what it has.
            if let Some(cut) = &cut
                && !answer_now
                && calls.is_empty()
                && response.content.trim().is_empty()
            {
                answer_now = true;
                let note = match cut.what.tool() {
                    Some(tool) => prompt::repeated_answer_note(tool),
                    None => prompt::echo_note(),
                };
                // The answer as it was kept (nothing), so that turns keep alternating.
                add_message(conversation, emitter, Message::assistant("", Vec::new()));
                add_message(conversation, emitter, Message::user(note));
                continue;
            }
            if calls.is_empty()
                && response.content.trim().is_empty()
                && response.dropped_calls.is_empty()
            {
                emitter.emit(EventBody::Error {
                    code: ErrorCode::ModelError,
                    message: unoffered
                        .clone()
                        .unwrap_or_else(|| "The model returned an empty answer.".to_string()),
                    fatal: false,
                });
            }
            add_message(
                conversation,
                emitter,
                Message::assistant(response.content.clone(), calls.clone()),
            );
            if calls.is_empty()
                && offer_tools
                && !response.dropped_calls.is_empty()
                && tool_rounds + 1 < self.config.max_rounds
            {
                // The model meant to call a tool but the call could not run: tell it why, so
                // it can send the call again whole, instead of ending the turn on nothing.
                tool_rounds += 1;
                let reasons: Vec<&str> = response
                    .dropped_calls
                    .iter()
                    .map(|dropped| dropped.reason.as_str())
                    .collect();
                add_message(
                    conversation,
                    emitter,
                    Message::user(prompt::dropped_calls_note(&reasons)),
                );
                continue;
            }
            if calls.is_empty() {
                let end = if tool_rounds >= self.config.max_rounds {
                    TurnEnd::RoundLimit
                } else {
                    TurnEnd::Completed
                };
                let text = unoffered.unwrap_or(response.content);
                return outcome(end, text, model_calls, None);
            }

            tool_rounds += 1;
            let (pending, ours): (Vec<ToolCall>, Vec<ToolCall>) = calls
                .into_iter()
                .partition(|call| external.contains(call.name.as_str()));
            if !ours.is_empty() {
                let RoundOutcome {
                    mut results,
                    cancelled,
                } = Dispatcher::new(
                    &registry,
                    &call_ctx,
                    &self.config,
                    emitter,
                    self.rules.as_deref(),
                    offered.as_ref(),
                )
                .with_line(line)
                .run_round(model_calls, &ours, conversation, &mut seen_calls, approver)
                .await;
                // Said where the model reads on: its answer was stopped after these calls.
                if let Some(cut) = &cut
                    && let Some(Message::Tool { content, .. }) = results.last_mut()
                {
                    content.push_str(&prompt::stopped_after_note(cut.what.tool()));
                }
                for result in results {
                    add_message(conversation, emitter, result);
                }
                if cancelled {
                    return outcome(TurnEnd::Cancelled, response.content, model_calls, None);
                }
            }
            if !pending.is_empty() {
                return TurnOutcome {
                    pending_calls: pending,
                    ..outcome(TurnEnd::Completed, response.content, model_calls, None)
                };
            }
            if tool_rounds >= self.config.max_rounds {
                emitter.emit(EventBody::RoundLimitReached {
                    limit: self.config.max_rounds,
                });
                add_message(
                    conversation,
                    emitter,
                    Message::user(prompt::round_limit_note(self.config.max_rounds)),
                );
            }
        }
    }

    fn workspace_name(&self) -> String {
        let root = self.ctx.workspace.root();
        root.file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| root.display().to_string())
    }
}

/// The specs a request offers: the registry's (those the caller chose, when it chose) and the
/// caller's own tools, which shadow a registry tool of the same name.
fn turn_specs(
    registry: &ToolRegistry,
    external: &HashSet<&str>,
    offered: Option<&HashSet<String>>,
    options: &TurnOptions,
) -> Vec<ToolSpec> {
    let mut specs: Vec<ToolSpec> = registry
        .offered_specs()
        .into_iter()
        .filter(|spec| !external.contains(spec.name.as_str()))
        .filter(|spec| offered.is_none_or(|names| names.contains(&spec.name)))
        .collect();
    specs.extend(options.external.iter().cloned());
    specs
}

/// Says that the window is full and asks the model for its answer (`how` says more of the
/// request that asks), unless a note of Tooltrail's already asks it.
fn window_full(conversation: &mut Conversation, emitter: &Emitter<'_>, tokens: u32, how: &str) {
    emitter.emit(EventBody::Error {
        code: ErrorCode::BadRequest,
        message: format!(
            "The model's {tokens}-token context window is full; it is asked to answer from what it has{how}."
        ),
        fatal: false,
    });
    let asked = matches!(
        conversation.messages.last(),
        Some(Message::User { content }) if content.starts_with(prompt::NOTE_MARK)
    );
    if !asked {
        add_message(
            conversation,
            emitter,
            Message::user(prompt::window_full_note()),
        );
    }
}

fn add_message(conversation: &mut Conversation, emitter: &Emitter<'_>, message: Message) {
    emitter.emit(EventBody::MessageAdded {
        message: message.clone(),
    });
    conversation.messages.push(message);
}

fn outcome(end: TurnEnd, text: String, rounds: u32, error: Option<String>) -> TurnOutcome {
    TurnOutcome {
        end,
        text,
        rounds,
        error,
        pending_calls: Vec::new(),
    }
}

/// Seed 000's `ChatWithToolExecution`: sends `messages` (whose last is the user's question),
/// runs the tools the model asks for, and returns the final answer text. Calls that need
/// approval are denied; use [`Agent::run_turn`] for events, approvals and cancellation.
pub async fn chat_with_tool_execution(
    agent: &Agent,
    mut messages: Vec<Message>,
) -> Result<String, String> {
    let question = match messages.pop() {
        Some(Message::User { content }) => content,
        _ => return Err("the last message must be the user's question".to_string()),
    };
    let mut conversation = Conversation::resume(Conversation::new().id, messages);
    let outcome = agent
        .run_turn(
            &mut conversation,
            &question,
            &NullSink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    match outcome.error {
        Some(error) => Err(error),
        None => Ok(outcome.text),
    }
}
