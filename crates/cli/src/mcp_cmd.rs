//! `tooltrail mcp`: the MCP servers of `mcp.json` (list, test), the client the MCP conformance
//! suite drives, and the MCP tools `tooltrail ask` and `tooltrail tool` add to their registry.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tooltrail_mcp::{
    Browser, McpConfig, McpError, McpManager, McpOptions, ServerState, ServerStatus, SignInError,
    SignInState, ToolSummary, Transport, ui_of,
};

use tooltrail_settings::config_dir;

#[derive(clap::Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: McpCommand,
}

#[derive(clap::Subcommand)]
pub enum McpCommand {
    /// Start the servers of mcp.json and list them with their state and tools.
    List {
        /// Print the listing as JSON.
        #[arg(long)]
        json: bool,
        /// The folder servers start in and get as their root [default: the current folder].
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
    /// Start one server: handshake time, its tools, and its stderr when it fails.
    Test {
        /// The server's name in mcp.json.
        name: String,
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
    /// A server's resources and resource templates (attach one with `ask --attach NAME:URI`).
    Resources {
        /// The server's name in mcp.json.
        name: String,
        /// Print the listing as JSON.
        #[arg(long)]
        json: bool,
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
    /// Print one resource of a server: its text, or what kind of data it is.
    Read {
        /// The server's name in mcp.json.
        name: String,
        /// The resource's URI (see `tooltrail mcp resources NAME`).
        uri: String,
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
    /// A server's prompts and their arguments (use one with `ask --prompt NAME/PROMPT`).
    Prompts {
        /// The server's name in mcp.json.
        name: String,
        /// Print the listing as JSON.
        #[arg(long)]
        json: bool,
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
    /// Sign in to a server that asks for it (OAuth): opens the browser (the BROWSER variable
    /// names another), prints the page's address too, and waits for it to come back. The
    /// tokens are kept in the OS keychain.
    Login {
        /// The server's name in mcp.json.
        name: String,
        /// Seconds to wait for the browser to come back.
        #[arg(long, value_name = "SECS", default_value_t = 300)]
        timeout: u64,
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
    /// Sign out of a server: revokes its tokens where the server supports it and forgets them.
    Logout {
        /// The server's name in mcp.json.
        name: String,
        #[arg(long, short = 'w', value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
    /// Client for the MCP conformance suite: `conformance client --command "tooltrail mcp
    /// conformance-client"` appends the URL and sets MCP_CONFORMANCE_SCENARIO.
    ConformanceClient {
        /// The scenario's Streamable HTTP URL.
        url: String,
    },
}

pub async fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        McpCommand::List { json, workspace } => list(json, workspace).await,
        McpCommand::Test { name, workspace } => test(&name, workspace).await,
        McpCommand::ConformanceClient { url } => conformance(&url).await,
        McpCommand::Login {
            name,
            timeout,
            workspace,
        } => login(&name, timeout, workspace).await,
        McpCommand::Logout { name, workspace } => logout(&name, workspace).await,
        McpCommand::Resources {
            name,
            json,
            workspace,
        } => crate::mcp_content_cmd::resources(&name, json, load_manager(workspace)?).await,
        McpCommand::Read {
            name,
            uri,
            workspace,
        } => crate::mcp_content_cmd::read(&name, &uri, load_manager(workspace)?).await,
        McpCommand::Prompts {
            name,
            json,
            workspace,
        } => crate::mcp_content_cmd::prompts(&name, json, load_manager(workspace)?).await,
    }
}

fn workspace_or_current(workspace: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let dir = match workspace {
        Some(dir) => dir,
        None => std::env::current_dir().context("could not read the current folder")?,
    };
    dir.canonicalize()
        .with_context(|| format!("could not open the folder {}", dir.display()))
}

/// The manager for mcp.json; `None` (after saying so) when there is no such file.
fn load_manager(workspace: Option<PathBuf>) -> anyhow::Result<Option<McpManager>> {
    load_manager_waiting(workspace, tooltrail_mcp::DEFAULT_SIGN_IN_WAIT)
}

/// [`load_manager`] whose sign-ins wait `wait` for the browser.
fn load_manager_waiting(
    workspace: Option<PathBuf>,
    wait: Duration,
) -> anyhow::Result<Option<McpManager>> {
    let path = McpConfig::path_in(&config_dir()?);
    let Some(config) = McpConfig::load(&path)? else {
        errln!(
            "No MCP servers are configured: {} does not exist.",
            path.display()
        );
        return Ok(None);
    };
    let workspace = workspace_or_current(workspace)?;
    let mut options = McpOptions::for_workspace(workspace);
    options.sign_in = sign_in_options();
    options.sign_in.wait = wait;
    Ok(Some(McpManager::new(config, options)))
}

/// Sign-ins kept in the keychain; a server that asks may open the browser only when a person
/// is at a terminal to finish it.
pub fn sign_in_options() -> tooltrail_mcp::SignInOptions {
    use std::io::IsTerminal;
    let interactive = std::io::stdin().is_terminal() && crate::terminal::stderr_is_terminal();
    let mut options = tooltrail_host::mcp_sign_in::sign_in_options(interactive);
    options.observer = Some(Arc::new(|server: &str, state: &SignInState| {
        if let SignInState::Waiting { url } = state {
            errln!("Signing in to {server}: finish in the browser, or open {url}");
        }
    }));
    options
}

async fn login(name: &str, timeout: u64, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let wait = Duration::from_secs(timeout.max(1));
    let Some(manager) = load_manager_waiting(workspace, wait)? else {
        return Ok(ExitCode::from(1));
    };
    let server = manager.server(name)?;
    if !matches!(server.config().transport, Transport::Http { .. }) {
        errln!("error: {name} is started as a program (stdio); only HTTP servers sign in.");
        return Ok(ExitCode::from(1));
    }
    // The browser opens whether or not this runs on a terminal: the user asked for it.
    let code = match manager.sign_in(name, &Browser::System).await {
        Ok(state) => {
            outln!("{name}: {}", state.summary())?;
            match manager.server(name)?.list_tools().await {
                Ok(tools) => {
                    outln!(
                        "{name}: {} tool{}",
                        tools.len(),
                        if tools.len() == 1 { "" } else { "s" }
                    )?;
                    ExitCode::SUCCESS
                }
                Err(err) => failed(&err),
            }
        }
        Err(McpError::SignIn(SignInError::NotAsked(_))) => {
            outln!("{name} does not ask for sign-in; its tools work as they are.")?;
            ExitCode::SUCCESS
        }
        Err(err) => failed(&err),
    };
    manager.shutdown().await;
    Ok(code)
}

async fn logout(name: &str, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let Some(manager) = load_manager(workspace)? else {
        return Ok(ExitCode::from(1));
    };
    let code = match manager.sign_out(name).await {
        Ok(true) => {
            outln!("Signed out of {name}: the server revoked the tokens and they are forgotten.")?;
            ExitCode::SUCCESS
        }
        Ok(false) => {
            outln!("Signed out of {name}: the tokens are forgotten.")?;
            ExitCode::SUCCESS
        }
        Err(McpError::SignIn(SignInError::NotAsked(_))) => {
            errln!("error: {name} is started as a program (stdio); it has no sign-in.");
            ExitCode::from(1)
        }
        Err(err) => failed(&err),
    };
    manager.shutdown().await;
    Ok(code)
}

async fn list(as_json: bool, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let Some(manager) = load_manager(workspace)? else {
        if as_json {
            outln!("[]")?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    let statuses = manager.status(true).await;
    manager.shutdown().await;
    if as_json {
        jsonln!("{}", serde_json::to_string_pretty(&statuses)?)?;
    } else {
        for status in &statuses {
            print_status(status)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_status(status: &ServerStatus) -> std::io::Result<()> {
    let state = match &status.state {
        ServerState::Running { handshake_ms, .. } => {
            format!("running (handshake {handshake_ms} ms)")
        }
        ServerState::Failed { error, .. } => format!("failed: {error}"),
        ServerState::Idle => "not started".to_string(),
        ServerState::Disabled => "disabled".to_string(),
        ServerState::Stopped => "stopped".to_string(),
    };
    let kind = match &status.transport {
        Transport::Stdio { .. } => "stdio",
        Transport::Http { .. } => "http",
    };
    outln!("{}  [{kind}] {}", status.name, status.transport.summary())?;
    outln!("  {state}")?;
    if let Some(sign_in) = &status.sign_in {
        outln!("  {}", sign_in_line(status.name.as_str(), sign_in))?;
    }
    print_tools(&status.tools)?;
    for line in &status.stderr {
        outln!("  stderr: {line}")?;
    }
    Ok(())
}

/// A server's sign-in as `mcp list` and `mcp test` show it, with what to do where there is
/// something to do.
fn sign_in_line(name: &str, state: &SignInState) -> String {
    match state {
        SignInState::Needed | SignInState::Failed { .. } => {
            format!("{} (run `tooltrail mcp login {name}`)", state.summary())
        }
        SignInState::NotNeeded | SignInState::Waiting { .. } | SignInState::SignedIn { .. } => {
            state.summary()
        }
    }
}

/// Description text shown per tool, at most.
const DESCRIPTION_CHARS: usize = 100;

/// One line per tool, the names in a column as wide as the longest.
fn print_tools(tools: &[ToolSummary]) -> std::io::Result<()> {
    let width = tools
        .iter()
        .map(|tool| tool.name.chars().count())
        .max()
        .unwrap_or(0);
    for tool in tools {
        let mut hint = match tool.read_only_hint {
            Some(true) => " (server: read-only)".to_string(),
            Some(false) | None => String::new(),
        };
        if let Some(view) = &tool.view {
            hint.push_str(&format!(" (view: {view})"));
        }
        let mut description: String = tool.description.chars().take(DESCRIPTION_CHARS).collect();
        if description.len() < tool.description.len() {
            description.push('…');
        }
        outln!(
            "  {:<width$} {:<6} {description}{hint}",
            tool.name,
            tool.approval.as_str(),
        )?;
    }
    Ok(())
}

async fn test(name: &str, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let Some(manager) = load_manager(workspace)? else {
        return Ok(ExitCode::from(1));
    };
    let server = manager.server(name)?;
    outln!("{name}: {}", server.config().transport.summary())?;
    let handshake = match server.start().await {
        Ok(handshake) => handshake,
        Err(err) => {
            if let Some(state) = manager.sign_in_state(name) {
                outln!("sign-in: {}", sign_in_line(name, &state))?;
            }
            errln!("error: {err}");
            let stderr = server.stderr().lines();
            if !stderr.is_empty() {
                errln!("stderr of {name}:");
                for line in stderr {
                    errln!("  {line}");
                }
            }
            manager.shutdown().await;
            return Ok(ExitCode::from(1));
        }
    };
    let about = server
        .info()
        .await
        .map(|info| {
            format!(
                " ({} {}, protocol {})",
                info.name, info.version, info.protocol_version
            )
        })
        .unwrap_or_default();
    outln!("handshake: {} ms{about}", handshake.as_millis())?;
    if let Some(state) = manager.sign_in_state(name) {
        outln!("sign-in: {}", sign_in_line(name, &state))?;
    }
    let code = match server.list_tools().await {
        Ok(tools) => {
            outln!("tools: {}", tools.len())?;
            let status = manager.server_status(name, true).await?;
            print_tools(&status.tools)?;
            // MCP Apps: tools only the server's views may call are never offered to the model.
            for tool in tools.iter().filter(|tool| !ui_of(tool).for_model) {
                outln!(
                    "  {} is for the server's views alone: never offered to the model",
                    tool.name
                )?;
            }
            let views = tools.iter().filter_map(|tool| ui_of(tool).resource_uri);
            print_views(server, views.collect()).await?;
            ExitCode::SUCCESS
        }
        Err(err) => failed(&err),
    };
    manager.shutdown().await;
    Ok(code)
}

/// Each view the tools name, read and checked as the app would: its size and what it
/// declares, or why it cannot be shown.
async fn print_views(
    server: &tooltrail_mcp::McpServer,
    mut uris: Vec<String>,
) -> std::io::Result<()> {
    uris.sort();
    uris.dedup();
    for uri in uris {
        match server.view_resource(&uri).await {
            Ok(view) => {
                let declared: Vec<String> = view
                    .csp
                    .as_ref()
                    .and_then(|csp| csp.as_object())
                    .map(|csp| csp.keys().cloned().collect())
                    .unwrap_or_default();
                let csp = if declared.is_empty() {
                    "the strict default CSP".to_string()
                } else {
                    format!("declares {}", declared.join(", "))
                };
                outln!("  view {uri}: {} bytes of HTML, {csp}", view.html.len())?;
            }
            Err(McpError::View { reason, .. }) => {
                outln!("  view {uri}: not shown: {reason}")?;
            }
            Err(error) => outln!("  view {uri}: not read: {error}")?,
        }
    }
    Ok(())
}

/// Says `error` on stderr; the command fails.
fn failed(error: &McpError) -> ExitCode {
    errln!("error: {error}");
    ExitCode::from(1)
}

async fn conformance(url: &str) -> anyhow::Result<ExitCode> {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").ok();
    let run = tooltrail_mcp::conformance::run_client(url, scenario.as_deref()).await?;
    for line in &run.lines {
        outln!("{line}")?;
    }
    Ok(if run.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
