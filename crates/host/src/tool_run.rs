//! One tool called on its own, outside a question (`tooltrail tool`): the registry a question
//! would have (the built-in tools, and the MCP servers' only when the name is not a built-in
//! one), the same gate, the same sandbox settings and snippets, with the approval given (or
//! not) before the call instead of asked for during it.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tooltrail_mcp::ServerFailure;
use tooltrail_protocol::{FileChange, ToolError, ToolErrorCode, ToolOutput};
use tooltrail_settings::{ConfigFile, config_path};
use tooltrail_tools::builtin::OFF_BY_DEFAULT;
use tooltrail_tools::{Gate, ToolContext, ToolRegistry, UserAsker};

use crate::host::Host;
use crate::snippets::StoreSnippets;

/// What to run, and what the person already said.
pub struct ToolRun {
    /// The tool's name, as the model would call it (`server__tool` for an MCP server's).
    pub name: String,
    /// Its arguments, as JSON text.
    pub arguments: String,
    /// The folder it runs in.
    pub folder: PathBuf,
    /// Tools turned on for this run besides config.toml's `enabled_tools` (`--enable`).
    pub turned_on: Vec<String>,
    /// A call that would ask first runs (`--approve all`); otherwise it is refused, saying so.
    pub approved: bool,
    /// Who answers the tool's own questions (`ask_user`).
    pub user: Arc<dyn UserAsker>,
    /// Stops the call.
    pub cancel: CancellationToken,
}

/// Why the call was not made: each is the person's to correct.
#[derive(Debug, thiserror::Error)]
pub enum ToolRunRefusal {
    #[error("there is no tool named {name:?}; the tools are: {}", tools.join(", "))]
    NoSuchTool { name: String, tools: Vec<String> },
    #[error("--args is not valid JSON: {0}")]
    BadArguments(String),
    #[error(
        "{0} is off until you turn it on: pass --enable {0}, or add it to enabled_tools in config.toml"
    )]
    TurnedOff(String),
    /// The folder, the settings or the history database could not be used.
    #[error("{0}")]
    Unusable(String),
}

/// What the front end shows while the tool runs.
pub trait ToolRunScreen: Send + Sync {
    /// An MCP server that could not give its tools.
    fn server_failed(&self, failure: &ServerFailure);
    /// Why mcp.json could not be used: the MCP servers are off.
    fn servers_off(&self, problem: &str);
    /// The change a file tool would make, shown before it is made or refused.
    fn change(&self, change: &FileChange);
}

impl Host {
    /// Runs one tool as [`ToolRun`] says: `Err` when it was not called, else the tool's own
    /// result (a refusal by its gate, or an approval not given, is the tool's error).
    pub async fn run_tool(
        &self,
        run: ToolRun,
        screen: &dyn ToolRunScreen,
    ) -> Result<Result<ToolOutput, ToolError>, ToolRunRefusal> {
        let registry = self.registry_for(&run, screen).await;
        let Some(tool) = registry.get(&run.name) else {
            return Err(ToolRunRefusal::NoSuchTool {
                name: run.name,
                tools: registry.names().map(str::to_string).collect(),
            });
        };
        let name = tool.spec().name.clone();
        if let Err(error) = serde_json::from_str::<serde_json::Value>(&run.arguments) {
            return Err(ToolRunRefusal::BadArguments(error.to_string()));
        }
        // Read once: for the tools turned on, then the sandbox's settings.
        let config = config_path().and_then(|path| ConfigFile::read(&path));
        if OFF_BY_DEFAULT.contains(&name.as_str())
            && !turned_on(&run.turned_on, config.as_ref().ok(), &name)
        {
            return Err(ToolRunRefusal::TurnedOff(name));
        }
        let config = config.map_err(|error| ToolRunRefusal::Unusable(error.to_string()))?;
        let ctx = self.run_context(&run, &name, &config)?;
        let (tool, arguments) = match registry.prepare(&name, &run.arguments) {
            Ok(prepared) => prepared,
            Err(error) => return Ok(Err(error)),
        };
        let gate = tool.gate(&arguments, &ctx);
        if let Gate::AskEachTime {
            change: Some(change),
            ..
        } = &gate
        {
            screen.change(change);
        }
        Ok(match gate {
            Gate::Refuse(error) => Err(error),
            Gate::ReadOnly | Gate::Allowed { .. } => tool.call(arguments, &ctx).await,
            Gate::Ask { .. } | Gate::AskEachTime { .. } if run.approved => {
                tool.call(arguments, &ctx.approved(true)).await
            }
            Gate::Ask { reason, .. } | Gate::AskEachTime { reason, .. } => {
                Err(not_approved(&reason))
            }
        })
    }

    /// The built-in tools, and the MCP servers' tools when `run` names none of the built-in
    /// ones (a built-in tool starts no server).
    async fn registry_for(&self, run: &ToolRun, screen: &dyn ToolRunScreen) -> Arc<ToolRegistry> {
        let builtins = ToolRegistry::with_builtins();
        if builtins.get(&run.name).is_some() {
            return Arc::new(builtins);
        }
        let folder = run
            .folder
            .canonicalize()
            .unwrap_or_else(|_| run.folder.clone());
        let tools = self.toolbox().tools(&folder, &[]).await;
        if let Some(problem) = &tools.problem {
            screen.servers_off(problem);
        }
        for failure in &tools.failures {
            screen.server_failed(failure);
        }
        tools.registry
    }

    /// The tool's context: the folder, the person, the sandbox settings of config.toml and,
    /// for the snippet tools only, the history database.
    fn run_context(
        &self,
        run: &ToolRun,
        name: &str,
        config: &ConfigFile,
    ) -> Result<ToolContext, ToolRunRefusal> {
        let unusable = |error: &dyn std::fmt::Display| ToolRunRefusal::Unusable(error.to_string());
        let mut ctx = ToolContext::open(&run.folder)
            .map_err(|error| unusable(&error))?
            .with_user(Arc::clone(&run.user));
        ctx.cancel = run.cancel.clone();
        ctx = ctx.with_sandbox_settings(crate::sandbox_settings_of(&config.sandbox));
        if needs_record(name) {
            if let Some(problem) = self.record().problem() {
                return Err(ToolRunRefusal::Unusable(format!(
                    "could not open the history database: {problem}"
                )));
            }
            let book = StoreSnippets::new(Arc::clone(self.store()), ctx.workspace.root());
            ctx = ctx.with_snippets(Arc::new(book));
        }
        Ok(ctx)
    }
}

/// Whether the tool `name` uses the history database (`snippets` does): a front end opens
/// its host on the database for it, and on a record in memory otherwise.
pub fn needs_record(name: &str) -> bool {
    name == "snippets"
}

/// Whether `--enable` or config.toml's `enabled_tools` turns `name` on.
fn turned_on(flags: &[String], config: Option<&ConfigFile>, name: &str) -> bool {
    flags.iter().any(|flag| flag == name)
        || config.is_some_and(|config| config.enabled_tools.iter().any(|on| on == name))
}

/// A call that would ask first, refused because the run was not approved.
fn not_approved(reason: &str) -> ToolError {
    ToolError::new(
        ToolErrorCode::ApprovalRequired,
        format!("{reason}; run it with --approve all to allow it"),
    )
}
