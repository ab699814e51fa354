//! [`Host`]: settings in, a ready engine out, for every question of every front end.

use std::sync::Arc;

use tooltrail_agent::{Agent, AgentConfig, Conversation, EventSink};
use tooltrail_mcp::{McpConfig, ServerFailure};
use tooltrail_protocol::LocalModelStatus;
use tooltrail_settings::{Overrides, Settings};
use tooltrail_store::{Store, StoreError};
use tooltrail_tools::ToolContext;

use crate::changes::StoreChanges;
use crate::conversations::Conversations;
use crate::error::HostError;
use crate::models::Models;
use crate::record::{Record, RecordingSink};
use crate::rules::WorkspaceRules;
use crate::server_requests::{DeskRoute, RequestUser, ServerDesk};
use crate::snippets::StoreSnippets;
use crate::telemetry::{ProcessTelemetry, TelemetrySink};
use crate::toolbox::{McpOverview, Toolbox};

/// One process's engine: its record, the model client, the tools of the folder asked about and
/// the conversations between their turns. Front ends keep one and ask it for an [`Engine`] per
/// question.
pub struct Host {
    record: Arc<Record>,
    models: Models,
    toolbox: Toolbox,
    conversations: Conversations,
    /// Answers the MCP servers' elicitation and sampling requests (see `server_requests.rs`).
    desk: Arc<ServerDesk>,
    /// OpenTelemetry, when the settings turn it on (see `telemetry.rs`).
    telemetry: ProcessTelemetry,
    /// Held while the local runtime's prefix is warmed (see `local.rs`).
    warming: Arc<tokio::sync::Mutex<()>>,
    /// The MCP App views the window shows (see `views.rs`).
    views: crate::views::Views,
}

/// What one question runs with, resolved from the settings as they are now.
pub struct Engine {
    pub agent: Agent,
    /// The folder's standing rules, which the agent consults and "always allow" adds to.
    pub rules: Arc<WorkspaceRules>,
    pub settings: Settings,
    /// MCP servers that could not be started for this question (reported once, when they
    /// start).
    pub mcp_failures: Vec<ServerFailure>,
    /// Why `mcp.json` could not be used, when that was found out for this question.
    pub mcp_problem: Option<String>,
    /// With the `local` provider: the runtime serving the model, held for this question
    /// until the engine is dropped (see `local.rs`).
    pub local_runtime: Option<tooltrail_runtime::supervisor::Running>,
    /// The saved prefixes of that runtime.
    local_prefix: Option<crate::local::LocalPrefix>,
    /// Held while that runtime is warmed, by this engine or another (one at a time).
    warming: Arc<tokio::sync::Mutex<()>>,
    /// Where the servers' requests go, and the model sampling uses.
    desk: Arc<ServerDesk>,
    llm: tooltrail_llm::LlmClient,
    /// Open while the front end answers the servers' requests of this question.
    route: Option<DeskRoute>,
    /// The project instructions a new conversation's system prompt carries, and those left
    /// out and why.
    pub project_instructions: crate::InstructionsReport,
}

impl Engine {
    /// Puts the MCP servers' requests made while this engine's questions run (a form to fill
    /// in, a page to open, a use of the model) to `user`, for as long as the engine lives.
    /// Without it they are declined. Keep the engine itself, not only its agent, for as long
    /// as its questions run: the route closes when it is dropped.
    pub fn answer_servers_with(&mut self, user: Arc<dyn RequestUser>) {
        self.route = Some(
            self.desk
                .open(self.agent.line().clone(), user, self.llm.clone()),
        );
    }

    /// Before the first question of `conversation` (a new one), on Tooltrail's own runtime:
    /// puts what that question's request begins with (the system prompt, the tools and this
    /// folder's context) in the runtime's cache, from disk when this folder was asked about
    /// before, else read and saved. The question then reads only itself. Any other provider,
    /// or a conversation under way, has nothing to do here.
    pub async fn warm_for(&self, conversation: &Conversation) {
        let Some(prefix) = &self.local_prefix else {
            return;
        };
        if !conversation.messages.is_empty() {
            return;
        }
        let _warming = self.warming.lock().await;
        let cancel = tokio_util::sync::CancellationToken::new();
        let mark = tooltrail_runtime::prefix::QUESTION_MARK;
        let request = self.agent.first_request(mark, &cancel).await;
        let every = tooltrail_agent::first_request(self.agent.tools(), mark);
        prefix.warm(&self.llm, &request, Some(&every)).await;
    }
}

impl Host {
    /// A host on `record`, reading MCP servers from `mcp.json` in the config folder.
    pub fn new(record: Record) -> Self {
        let mcp_json = tooltrail_settings::config_dir()
            .ok()
            .map(|dir| McpConfig::path_in(&dir));
        let desk = Arc::new(ServerDesk::default());
        Self {
            record: Arc::new(record),
            models: Models::default(),
            toolbox: Toolbox::new(mcp_json)
                .with_answerer(Arc::clone(&desk) as Arc<dyn tooltrail_mcp::McpAnswerer>),
            desk,
            conversations: Conversations::default(),
            telemetry: ProcessTelemetry::new(tooltrail_telemetry::FrontEnd::Cli),
            warming: Arc::default(),
            views: crate::views::Views::default(),
        }
    }

    /// Names the front end in the traces this host sends (the command line unless told).
    pub fn with_front_end(mut self, front_end: tooltrail_telemetry::FrontEnd) -> Self {
        self.telemetry.set_front_end(front_end);
        self
    }

    /// A host on the database in the data folder (in memory when it cannot be opened; see
    /// [`Record::problem`]).
    pub fn open_default() -> Result<Self, StoreError> {
        Ok(Self::new(Record::open_default()?))
    }

    /// The open record: its store and the recorder every turn writes through.
    pub fn record(&self) -> &Arc<Record> {
        &self.record
    }

    /// The store, for reading the record.
    pub fn store(&self) -> &Arc<Store> {
        self.record.store()
    }

    /// The MCP App views the window shows.
    pub fn views(&self) -> &crate::views::Views {
        &self.views
    }

    pub fn conversations(&self) -> &Conversations {
        &self.conversations
    }

    /// Takes a conversation for a question (see [`Conversations::begin`]).
    pub fn begin(&self, conversation: Option<&str>) -> Result<Conversation, HostError> {
        self.conversations.begin(conversation, self.record.store())
    }

    /// Gives a conversation back after its question, and writes down what the question found
    /// out about the model's server (auto tool mode's fallback to prompt mode).
    pub fn end(&self, conversation: Conversation) {
        self.conversations.end(conversation);
        self.models.remember_detected();
    }

    /// The engine for a question in the folder of `ctx`, with the settings as they are now
    /// (`overrides` first: command-line flags). The model client and the tools are reused
    /// from the last question when nothing they depend on changed.
    pub async fn engine(
        &self,
        overrides: &Overrides,
        ctx: ToolContext,
    ) -> Result<Engine, HostError> {
        self.engine_telling(overrides, ctx, &|_| {}).await
    }

    /// The same, telling `status` of the local model's start while the question waits for it
    /// (the runtime starting, its prefix coming back, ready).
    pub async fn engine_telling(
        &self,
        overrides: &Overrides,
        mut ctx: ToolContext,
        status: &(dyn Fn(LocalModelStatus) + Send + Sync),
    ) -> Result<Engine, HostError> {
        let mut settings = Settings::resolve(overrides)?;
        let local = crate::local::prepare(&mut settings, status).await?;
        ctx.limits.default_timeout_secs = settings.command_timeout_secs;
        ctx.sandbox_settings = crate::sandbox_settings(&settings);
        let llm = self.models.client(&settings).await?;
        let tools = self
            .toolbox
            .tools(ctx.workspace.root(), &tools_off(&settings))
            .await;
        if let Some(local) = &local {
            // One warm-up at a time: a question that comes while the folder's opening warms the
            // runtime waits for it and then reads the prefix from the cache.
            let _warming = self.warming.lock().await;
            local.warm(&llm, &tools.registry, status).await;
        }
        let local_prefix = local.as_ref().map(|local| local.prefix.clone());
        let local_runtime = local.map(|local| local.running);
        let rules = Arc::new(WorkspaceRules::load(
            Arc::clone(self.record.store()),
            &ctx.workspace.root().display().to_string(),
        ));
        let (project_section, project_instructions) =
            crate::instructions::project_section(ctx.workspace.root(), overrides, &llm).await;
        let config = AgentConfig {
            max_rounds: settings.max_rounds,
            max_result_bytes: settings.max_result_bytes,
            temperature: settings.temperature,
            max_tokens: settings.max_tokens,
            project_instructions: project_section,
            tool_counts: tool_counts(self.record.store(), ctx.workspace.root()),
            ..AgentConfig::default()
        };
        let snippets = StoreSnippets::new(Arc::clone(self.record.store()), ctx.workspace.root());
        let changes = StoreChanges::new(Arc::clone(self.record.store()), ctx.workspace.root());
        let ctx = ctx
            .with_snippets(Arc::new(snippets))
            .with_changes(Arc::new(changes));
        if self.telemetry.refresh().is_some() {
            self.telemetry.note_model(
                &llm.config().model,
                tooltrail_telemetry::ModelEndpoint {
                    provider: settings.provider.clone(),
                    base_url: Some(llm.config().base_url.clone()),
                    sandbox: Some(ctx.sandbox().status().mechanism.clone()),
                },
            );
        }
        let sampling_llm = llm.clone();
        let mut agent = Agent::new(llm, tools.registry, ctx, config)
            .with_rules(rules.clone())
            .with_server_instructions(tools.instructions);
        if let Some(live) = tools.live {
            agent = agent.with_live_tools(live);
        }
        Ok(Engine {
            agent,
            rules,
            settings,
            mcp_failures: tools.failures,
            mcp_problem: tools.problem,
            local_runtime,
            local_prefix,
            warming: Arc::clone(&self.warming),
            desk: Arc::clone(&self.desk),
            llm: sampling_llm,
            route: None,
            project_instructions,
        })
    }

    /// The sink a question's events go through: each is committed, then shown on `screen`.
    pub fn sink(&self, screen: Box<dyn EventSink>) -> RecordingSink {
        self.sink_in_trace(screen, None)
    }

    /// The same, for a question that continues a caller's trace: `traceparent` is the W3C
    /// header the caller sent (`tooltrail serve`); a malformed one starts a trace of its own.
    /// With telemetry on, each event is traced after it is committed and before it is shown.
    pub fn sink_in_trace(
        &self,
        screen: Box<dyn EventSink>,
        traceparent: Option<&str>,
    ) -> RecordingSink {
        let Some(telemetry) = self.telemetry.current() else {
            return RecordingSink::new(Arc::clone(&self.record), screen);
        };
        let slot = tooltrail_llm::trace::TraceSlot::new();
        let screen = Box::new(TelemetrySink {
            telemetry,
            parent: traceparent.and_then(tooltrail_telemetry::TraceParent::parse),
            slot: slot.clone(),
            screen,
        });
        RecordingSink::new(Arc::clone(&self.record), screen).with_trace(slot)
    }

    /// The telemetry in use, if any (for "Send a test trace" and `export --otlp`), with the
    /// settings as they are now.
    pub fn telemetry(&self) -> Option<Arc<tooltrail_telemetry::Telemetry>> {
        self.telemetry.refresh()
    }

    /// Picks up the MCP tasks calls in `workspace` left open when an earlier run ended, and
    /// follows them to their ends, writing each result under its call and telling `ended` as
    /// each ends (see `open_tasks.rs`). A front end runs it in the background when a folder
    /// opens.
    pub async fn pick_up_tasks(
        &self,
        workspace: &std::path::Path,
        cancel: &tokio_util::sync::CancellationToken,
        ended: &(dyn Fn(&crate::open_tasks::PickedUp) + Send + Sync),
    ) -> Vec<crate::open_tasks::PickedUp> {
        let store = self.record.store();
        crate::open_tasks::pick_up_tasks(store, &self.toolbox, workspace, cancel, ended).await
    }

    /// Starts the MCP servers of `workspace` ahead of the first question (a front end that
    /// opens a folder calls this so the question does not wait for their handshakes).
    pub async fn warm_up(&self, workspace: &std::path::Path) -> Vec<ServerFailure> {
        let disabled = Settings::resolve(&Overrides::default())
            .map(|settings| tools_off(&settings))
            .unwrap_or_else(|_| tools_off_by_default(&[]));
        self.toolbox.tools(workspace, &disabled).await.failures
    }

    /// The same for a folder just opened; and when the local provider is the one in use, its
    /// runtime starts too, and the prefix of every question is put in its cache (`status`
    /// hears of it). No runtime starts for any other provider.
    pub async fn warm_up_folder(
        &self,
        workspace: &std::path::Path,
        status: &(dyn Fn(LocalModelStatus) + Send + Sync),
    ) -> Vec<ServerFailure> {
        let settings = Settings::resolve(&Overrides::default());
        let disabled = settings
            .as_ref()
            .map(tools_off)
            .unwrap_or_else(|_| tools_off_by_default(&[]));
        let failures = self.toolbox.tools(workspace, &disabled).await.failures;
        let local = settings.is_ok_and(|settings| settings.local.is_some());
        // A failure here is the question's to report, when one is asked.
        if local
            && let Ok(ctx) = ToolContext::open(workspace)
            && let Ok(engine) = self
                .engine_telling(&Overrides::default(), ctx, status)
                .await
        {
            engine.warm_for(&Conversation::new()).await;
        }
        failures
    }

    /// The tools of the folders asked about, with their MCP servers.
    pub fn toolbox(&self) -> &Toolbox {
        &self.toolbox
    }

    /// How MCP servers started from now on sign in when they ask (kept in the keychain either
    /// way; by default no browser opens, and their tools say to run `tooltrail mcp login`).
    pub fn set_mcp_sign_in(&mut self, options: tooltrail_mcp::SignInOptions) {
        self.toolbox.set_sign_in(options);
    }

    /// The MCP servers of the folder asked about last.
    pub async fn mcp_overview(&self) -> McpOverview {
        self.toolbox.overview().await
    }

    /// Stops the MCP servers and commits what is left of the record.
    pub async fn shutdown(&self) {
        self.views.close_all().await;
        self.toolbox.shutdown().await;
        self.telemetry.shutdown();
    }
}

/// The built-in tools a question goes without: those turned off, and those that are off until
/// turned on (`file_write`) and are not.
pub fn tools_off(settings: &Settings) -> Vec<String> {
    let mut off = turned_off(&settings.disabled_tools);
    off.extend(tools_off_by_default(&settings.enabled_tools));
    off
}

/// The tools `disabled_tools` names. The snippet tools were three before they were one
/// (`snippets`): a config that turned one of the three off keeps the snippets off.
fn turned_off(disabled: &[String]) -> Vec<String> {
    let mut off = disabled.to_vec();
    if disabled.iter().any(|name| {
        matches!(
            name.as_str(),
            "snippet_save" | "snippet_load" | "snippet_list"
        )
    }) {
        off.push("snippets".to_string());
    }
    off
}

fn tools_off_by_default(enabled: &[String]) -> Vec<String> {
    tooltrail_tools::builtin::OFF_BY_DEFAULT
        .iter()
        .filter(|name| !enabled.iter().any(|on| on == *name))
        .map(|name| (*name).to_string())
        .collect()
}

/// How often each tool was called in this folder, from the record's counters: when there are
/// many tools, the most used are the ones offered whole. An unreadable record counts none.
fn tool_counts(store: &Store, root: &std::path::Path) -> std::collections::BTreeMap<String, u64> {
    let filter = tooltrail_store::StatsFilter {
        workspace: Some(root.display().to_string()),
        ..Default::default()
    };
    store
        .stats(&filter)
        .map(|stats| {
            stats
                .tools
                .into_iter()
                .map(|tool| (tool.tool, tool.calls))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_that_turned_an_old_snippet_tool_off_keeps_the_snippets_off() {
        let off = turned_off(&["snippet_load".to_string(), "execute_bash".to_string()]);
        assert!(off.contains(&"snippets".to_string()), "{off:?}");
        assert!(off.contains(&"execute_bash".to_string()), "{off:?}");
        assert!(!turned_off(&["execute_bash".to_string()]).contains(&"snippets".to_string()));
    }
}
