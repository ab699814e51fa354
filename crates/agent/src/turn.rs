//! A turn: the question added to the conversation, then model → tool calls → results →
//! model until an answer (the rounds, in [`rounds`]).

mod rounds;

use std::collections::HashSet;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tooltrail_llm::{ChatRequest, LlmClient};
use tooltrail_protocol::{ErrorCode, EventBody, Message, ToolCall, ToolChoice, ToolSpec, TurnEnd};
use tooltrail_tools::{ToolContext, ToolRegistry};

use crate::announce::{LiveTools, TurnLine};
use crate::approval::{Approver, DenyAll, RuleBook};
use crate::config::AgentConfig;
use crate::conversation::Conversation;
use crate::prompt;
use crate::replay::Replay;
use crate::sink::{Emitter, EventSink, NullSink};
use rounds::Rounds;

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
    /// Set when the turn asks a recorded question again (see `replay.rs`).
    pub replay: Option<Replay>,
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
            replay: None,
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
            replay_of: options.replay.as_ref().map(|replay| replay.of_turn.clone()),
        });
        let brings_system = matches!(input.first(), Some(Message::System { .. }));
        if options.system_prompt && conversation.messages.is_empty() && !brings_system {
            let system = self
                .config
                .system_prompt
                .clone()
                .unwrap_or_else(prompt::system_prompt);
            add_message(conversation, &emitter, Message::system(system));
            let context = self.folder_context(cancel).await;
            add_message(conversation, &emitter, Message::system(context));
        }
        let turn_start = conversation.messages.len();
        for message in input {
            add_message(conversation, &emitter, message);
        }

        let outcome = Rounds::new(
            self,
            conversation,
            turn_start,
            options,
            &emitter,
            approver,
            cancel,
        )
        .await
        .run()
        .await;
        emitter.emit(EventBody::TurnFinished {
            reason: outcome.end,
            rounds: outcome.rounds,
            text: outcome.text.clone(),
        });
        outcome
    }

    fn workspace_name(&self) -> String {
        let root = self.ctx.workspace.root();
        root.file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| root.display().to_string())
    }

    /// The second system message of a new conversation: the folder's name, its project
    /// instructions and the servers' (see [`prompt::folder_context`]).
    async fn folder_context(&self, cancel: &CancellationToken) -> String {
        let mut sections = self.config.project_instructions.clone().unwrap_or_default();
        if !self.server_instructions.is_empty() {
            let window = self.llm.context_window(cancel).await;
            sections.push_str(&prompt::server_instructions(
                &self.server_instructions,
                prompt::server_instructions_bytes(window.tokens),
            ));
        }
        prompt::folder_context(&self.workspace_name(), &sections)
    }

    /// The first request of a new conversation in this agent's folder, with `question`: the
    /// system prompt, the tools, then the folder's context at the head of the question (see
    /// [`first_request`] for what it leaves out).
    pub async fn first_request(&self, question: &str, cancel: &CancellationToken) -> ChatRequest {
        let system = self
            .config
            .system_prompt
            .clone()
            .unwrap_or_else(prompt::system_prompt);
        let messages = vec![
            Message::system(system),
            Message::system(self.folder_context(cancel).await),
            Message::user(question),
        ];
        request_offering(&self.tools, messages)
    }
}

/// The first request of a new conversation in a folder whose tools are `registry`, with
/// `question` in place of the folder's context and the question: what every question's first
/// request begins with, for a server to read ahead of it (see `tooltrail_runtime::prefix`).
/// When the tools would crowd a small window, the first round offers fewer of them; the
/// prefix then shares only its start with that request.
pub fn first_request(registry: &ToolRegistry, question: &str) -> ChatRequest {
    let messages = vec![
        Message::system(prompt::system_prompt()),
        Message::user(question),
    ];
    request_offering(registry, messages)
}

/// A first round's request of `messages`, offering `registry`'s tools as a turn does.
fn request_offering(registry: &ToolRegistry, messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        messages,
        tools: turn_specs(registry, &HashSet::new(), None, &TurnOptions::default()),
        tool_choice: Some(ToolChoice::Auto),
        temperature: None,
        max_tokens: None,
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

/// The looping call with tools (docs/requirements.md): sends `messages` (whose last is the
/// user's question), runs the tools the model asks for, and returns the final answer text.
/// Calls that need approval are denied; use [`Agent::run_turn`] for events, approvals and
/// cancellation.
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
