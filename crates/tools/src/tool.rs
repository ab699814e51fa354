//! The [`Tool`] trait and the context every call gets.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use tooltrail_protocol::{
    FileChange, ToolError, ToolErrorCode, ToolOutput, ToolProgress, ToolSource, ToolSpec,
};
use tooltrail_sandbox::{Sandbox, SandboxSettings, Workspace, WorkspaceError};

use crate::change_journal::{CallScope, ChangeJournal};
use crate::snippet_book::SnippetBook;
use crate::user_asker::UserAsker;

/// Limits shared by the built-in tools, all configurable (docs/requirements.md gives the
/// defaults and why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolLimits {
    /// Largest number of bytes a file tool reads from one file.
    pub max_read_bytes: u64,
    /// Most results a search returns.
    pub max_results: usize,
    /// Default and largest command timeout, in seconds.
    pub default_timeout_secs: u64,
    pub max_timeout_secs: u64,
    /// Bytes of a command's stdout, and separately of its stderr, that are kept.
    pub max_output_bytes: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        Self {
            max_read_bytes: 1024 * 1024,
            max_results: 100,
            default_timeout_secs: 30,
            max_timeout_secs: 120,
            max_output_bytes: 64 * 1024,
        }
    }
}

/// What a call runs in: the workspace it is confined to, its limits, the OS sandbox, a token
/// that is cancelled when the user stops the turn, and where to report progress.
#[derive(Clone)]
pub struct ToolContext {
    pub workspace: Arc<Workspace>,
    pub limits: ToolLimits,
    pub cancel: CancellationToken,
    /// Set by the agent for each call; progress sent here shows on the timeline.
    pub progress: Option<UnboundedSender<ToolProgress>>,
    /// The OS sandbox commands run in: [`Sandbox::detect`] on first use unless set. Finding it
    /// out starts the helper's self-test, which a search or a read should not pay for; use
    /// [`ToolContext::sandbox`].
    pub sandbox: Arc<OnceLock<Sandbox>>,
    /// Set by the agent for a call the user (or a rule) approved: only then may a command
    /// write in the workspace. Calls that ran without asking see the workspace read-only.
    pub approved: bool,
    /// Where the snippet tools keep the workspace's snippets; `None` where nothing keeps them
    /// (the tools then say so).
    pub snippets: Option<Arc<dyn SnippetBook>>,
    /// Where file writes keep what they replace, so a turn can be undone; `None`: writes
    /// cannot be undone.
    pub changes: Option<Arc<dyn ChangeJournal>>,
    /// Who answers `ask_user`; `None`: no one can (the tool says so to the model).
    pub user: Option<Arc<dyn UserAsker>>,
    /// Set by the agent for each call: the conversation, turn and call it belongs to.
    pub call: Option<CallScope>,
    /// Set by the agent for each call when traces are on: the W3C `traceparent` of the call's
    /// span, which MCP servers get in `_meta` (SEP-414) to file their work under it.
    pub traceparent: Option<String>,
    /// What commands see besides the workspace: toolchains, extra read-only folders from the
    /// settings, and where the workspace's build caches go.
    pub sandbox_settings: SandboxSettings,
}

impl ToolContext {
    pub fn new(workspace: Arc<Workspace>, limits: ToolLimits, cancel: CancellationToken) -> Self {
        Self {
            workspace,
            limits,
            cancel,
            progress: None,
            sandbox: Arc::new(OnceLock::new()),
            approved: false,
            snippets: None,
            changes: None,
            user: None,
            call: None,
            traceparent: None,
            sandbox_settings: SandboxSettings::default(),
        }
    }

    /// The same context with another sandbox.
    pub fn with_sandbox(self, sandbox: Sandbox) -> Self {
        Self {
            sandbox: Arc::new(OnceLock::from(sandbox)),
            ..self
        }
    }

    /// The same context, with commands seeing what `settings` add.
    pub fn with_sandbox_settings(self, settings: SandboxSettings) -> Self {
        Self {
            sandbox_settings: settings,
            ..self
        }
    }

    /// The OS sandbox commands run in.
    pub fn sandbox(&self) -> &Sandbox {
        self.sandbox.get_or_init(Sandbox::detect)
    }

    /// The same context, for a call that was approved (`true`) or ran without asking.
    pub fn approved(self, approved: bool) -> Self {
        Self { approved, ..self }
    }

    /// The same context, keeping snippets in `book`.
    pub fn with_snippets(self, book: Arc<dyn SnippetBook>) -> Self {
        Self {
            snippets: Some(book),
            ..self
        }
    }

    /// The context's snippet book, or the error the model gets where there is none.
    pub(crate) fn snippet_book(&self) -> Result<Arc<dyn SnippetBook>, ToolError> {
        self.snippets.clone().ok_or_else(|| {
            ToolError::new(
                ToolErrorCode::Failed,
                "snippets are not available here (no snippet store is open)",
            )
        })
    }

    /// The same context, keeping what file writes replace in `journal`.
    pub fn with_changes(self, journal: Arc<dyn ChangeJournal>) -> Self {
        Self {
            changes: Some(journal),
            ..self
        }
    }

    /// The same context, putting `ask_user`'s questions to `asker`.
    pub fn with_user(self, asker: Arc<dyn UserAsker>) -> Self {
        Self {
            user: Some(asker),
            ..self
        }
    }

    /// Reports how far the call got; nothing happens when nobody listens.
    pub fn report_progress(&self, progress: ToolProgress) {
        if let Some(sender) = &self.progress {
            let _ = sender.send(progress);
        }
    }

    /// A context for the folder at `root` with default limits.
    pub fn open(root: impl AsRef<Path>) -> Result<Self, WorkspaceError> {
        Ok(Self::new(
            Arc::new(Workspace::open(root)?),
            ToolLimits::default(),
            CancellationToken::new(),
        ))
    }
}

/// How a particular call must be gated before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Only reads: runs without asking, and in parallel with other read-only calls.
    ReadOnly,
    /// The user's settings let it run without asking (an MCP tool set to `allow`); it runs like
    /// a read-only call, and its record says a setting allowed it.
    Allowed {
        /// Which setting, in words.
        reason: String,
    },
    /// Needs the user's approval first.
    Ask {
        /// The exact command, or a one-line summary of the call.
        summary: String,
        /// Working folder, workspace-relative, where it applies.
        cwd: Option<String>,
        /// Why it needs approval, in one sentence.
        reason: String,
    },
    /// Needs the user's approval for this one call, every time: no rule, conversation
    /// allowance or setting lets it run without asking (a file write). `change` is the diff
    /// the user approves.
    AskEachTime {
        summary: String,
        reason: String,
        change: Option<FileChange>,
    },
    /// Refused whatever the user says.
    Refuse(ToolError),
}

/// A tool the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name, description, JSON Schema of the arguments, and whether it only reads.
    fn spec(&self) -> &ToolSpec;

    fn source(&self) -> ToolSource {
        ToolSource::Builtin
    }

    /// The view its server renders this tool's results with (an MCP App), when it has one.
    fn view(&self) -> Option<tooltrail_protocol::ViewLink> {
        None
    }

    /// Where this particular call goes, as its record says: [`Tool::source`] unless the
    /// arguments pick an MCP server (`read_resource` reads from the server it names, and is
    /// that server's call).
    fn source_of(&self, _args: &Value) -> ToolSource {
        self.source()
    }

    /// Whether the model is told this tool's parameters only when it calls it: the tool is
    /// offered with its name and description, and a call without valid arguments is answered
    /// with the parameters. For tools rarely needed, whose schemas would otherwise take their
    /// share of every request (see [`ToolRegistry::offered_specs`](crate::ToolRegistry::offered_specs)).
    fn described_on_demand(&self) -> bool {
        false
    }

    /// Parameters the model is not told of up front: rarely needed, and named by the tool's
    /// results or errors where they would help (a search with no match says that ignored files
    /// were left out and how to include them). They are still accepted and checked, and a
    /// call with invalid arguments is answered with the whole schema. Every request carries
    /// the offered schemas, so each parameter left out here is tokens saved in all of them.
    fn unoffered_parameters(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether the model is offered this tool. A tool that could never run here (an MCP tool
    /// the user set to `never`) stays in the registry, so that a direct call says why it is
    /// refused, but the model is not told of it.
    fn offered(&self) -> bool {
        true
    }

    /// How this call, with these (already validated) arguments, is gated. Tools whose spec says
    /// read-only run freely; others ask, unless they know better for a particular call (a shell
    /// command made only of read-only programs).
    fn gate(&self, args: &Value, _ctx: &ToolContext) -> Gate {
        if self.spec().read_only {
            Gate::ReadOnly
        } else {
            Gate::Ask {
                summary: format!("{} {}", self.spec().name, args),
                cwd: None,
                reason: "this tool can change files or run programs".to_string(),
            }
        }
    }

    /// Runs the call. `args` has passed schema validation.
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}
