//! The one composition root of Tooltrail's engine.
//!
//! Every front end — the `tooltrail` command line, the desktop app, the HTTP API — asks the
//! same [`Host`] for what a question runs with, so they cannot drift apart:
//!
//! - **settings** are read anew for every question (flags, environment, `config.toml`,
//!   keychain), so an edit applies at once;
//! - the **model client** is kept while base URL, model and key stay the same (one connection
//!   pool; the endpoint's model list is asked for once when no model is configured);
//! - the **tools** are built in one documented order (built-ins, minus those turned off,
//!   plus the MCP servers' tools; see [`toolbox`]) and kept while the folder, `mcp.json` and
//!   the tools turned off stay the same;
//! - the **rules** of the folder come from the store the host already holds;
//! - the folder's **project instructions** (`AGENTS.md` and the like) go into the system prompt
//!   of a new conversation, within a share of the window, unless turned off for the folder
//!   (see [`instructions`]);
//! - the **snippets** of the folder too: [`StoreSnippets`] backs the snippet tools'
//!   `SnippetBook` (the tools crate never sees the store);
//! - with the **`local` provider**, the model server is Tooltrail's own: the runtime serving
//!   the chosen model is found or started before the client is built, and each engine holds
//!   it for its question (see `local.rs` and `tooltrail_runtime::supervisor`);
//! - the **record** has one durability policy: [`RecordingSink`] commits each event before
//!   the front end shows it, so a crash loses nothing a user saw. When the database cannot be
//!   opened, a store in memory takes its place: one read path either way.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use tokio_util::sync::CancellationToken;
//! use tooltrail_host::{DenyAll, Host, NullSink, ToolContext};
//! use tooltrail_settings::Overrides;
//!
//! let host = Host::open_default()?;
//! let mut conversation = host.begin(None)?;
//! let engine = host.engine(&Overrides::default(), ToolContext::open(".")?).await?;
//! let sink = host.sink(Box::new(NullSink));
//! let outcome = engine
//!     .agent
//!     .run_turn(&mut conversation, "How many Go files are there?", &sink, &DenyAll, &CancellationToken::new())
//!     .await;
//! host.end(conversation);
//! println!("{}", outcome.text);
//! # Ok(()) }
//! ```

// Warnings reach stderr through `warning.rs` alone, which drops control characters.
#![deny(clippy::print_stderr, clippy::print_stdout)]

mod changes;
pub mod choose;
mod conversations;
mod endpoint;
mod error;
mod host;
pub mod instructions;
mod local;
pub mod mcp_content;
pub mod mcp_sign_in;
mod models;
mod models_folder;
pub mod open_tasks;
mod record;
mod replay;
mod replay_compare;
pub mod replay_table;
pub mod rules;
mod sandbox;
pub mod server_requests;
mod snippets;
mod telemetry;
pub mod tool_list;
pub mod tool_run;
pub mod toolbox;
pub mod view_download;
pub mod views;
mod warning;

pub use changes::{
    StoreChanges, TurnChanges, UndoError, UndoReport, left_as_tooltrail_left, turn_changes, undo,
};
pub use conversations::Conversations;
pub use endpoint::EndpointProbe;
pub use error::{ChooseError, HostError, ModelFailure};
pub use host::{Engine, Host, tools_off};
pub use instructions::{
    FolderPreferences, InstructionsLeftOut, InstructionsReport, InstructionsUse, LeftOutReason,
    Lookup, ProjectInstructions,
};
pub use local::IDLE_SECS_ENV;
pub use models_folder::{ModelsOverview, parameters_label};
pub use record::{Record, RecordingSink};
pub use replay::{ReplayOutcome, ReplayPick, ReplayReport, ReplayRequest};
pub use replay_compare::{AlignedRow, ComparedCall, ReplayComparison, TurnFigures};
pub use replay_table::ModelRow;
pub use rules::WorkspaceRules;
pub use sandbox::{
    CACHE_FOLDER, SandboxOverview, network_commands, sandbox_settings, sandbox_settings_from,
    sandbox_settings_of,
};
pub use server_requests::{DeclineAll, RequestUser, ServerDesk, ServerRequest};
pub use snippets::StoreSnippets;
pub use tool_list::{
    BuiltinTool, PrefixCount, ToolAccess, ToolListing, builtin_tools, count_fixed_prefix,
    fixed_prefix, fixed_prefix_estimate, is_builtin, is_off_by_default,
};
pub use tool_run::{ToolRun, ToolRunRefusal, ToolRunScreen, needs_record};
pub use toolbox::{McpOverview, McpServerState, McpServerView, Toolbox};
pub use tooltrail_runtime::supervisor::maybe_run_supervisor;
pub use tooltrail_telemetry::FrontEnd;

// What a front end hands in or implements: it reaches the engine through the host alone, so
// these are the engine's types it names (how a turn's events are shown, who approves a call,
// who answers a tool's question, the folder a question runs in).
pub use tooltrail_agent::{
    AllowAll, ApprovalRequest, Approver, Conversation, Decision, DenyAll, EventSink, NullSink,
    RuleBook, TurnOptions, TurnOutcome,
};
pub use tooltrail_llm::ContextWindow;
pub use tooltrail_tools::{
    NoAnswer, Question, ToolContext, ToolRegistry, UserAsker, maybe_run_helper,
};
// What the sandbox's overview is made of, as the front ends lay it out.
pub use tooltrail_sandbox::limits as sandbox_limits;
pub use tooltrail_sandbox::reach::Skipped;
pub use tooltrail_sandbox::{
    CommandReach, Grant, HostEnv, Reason, Sandbox, SandboxSettings, SandboxStatus,
};
