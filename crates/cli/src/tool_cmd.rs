//! `tooltrail tool` and `tooltrail tools`.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tooltrail_host::{Host, Record, ToolRun, ToolRunRefusal, ToolRunScreen};
use tooltrail_mcp::{McpError, ServerFailure};
use tooltrail_protocol::FileChange;

use crate::answer::CommandLineAsker;
use crate::{ApproveMode, ToolArgs};

/// Exit status for usage errors (as clap uses).
const USAGE: u8 = 2;

/// The terminal while one tool runs: servers that failed and changes go to stderr.
struct Screen;

impl ToolRunScreen for Screen {
    fn server_failed(&self, failure: &ServerFailure) {
        say_failure(failure);
    }
    fn servers_off(&self, problem: &str) {
        errln!("warning: MCP servers are off: {problem}");
    }
    fn change(&self, change: &FileChange) {
        let _ = crate::terminal::err().painted(&crate::render::diff(change));
    }
}

/// An MCP server left out, as a warning line.
fn say_failure(failure: &ServerFailure) {
    match &failure.error {
        // The server runs; one of its tools is left out, and the sentence says which.
        McpError::NameTaken(clash) => errln!("warning: {clash}"),
        other => errln!(
            "warning: going on without MCP server {:?}: {other}",
            failure.server
        ),
    }
}

/// A host for one command, on the history database when `with_history` (the snippet tools need
/// it; nothing else opens it), with MCP sign-in as `ask` has it.
fn host(with_history: bool) -> anyhow::Result<Host> {
    let record = if with_history {
        Record::open_default()?
    } else {
        Record::in_memory()?
    };
    let mut host = Host::new(record);
    host.set_mcp_sign_in(crate::mcp_cmd::sign_in_options());
    Ok(host)
}

pub async fn run(args: ToolArgs) -> anyhow::Result<ExitCode> {
    let folder = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("could not read the current folder")?,
    };
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    let host = host(tooltrail_host::needs_record(&args.name))?;
    let run = ToolRun {
        name: args.name.clone(),
        arguments: args.args.clone(),
        folder,
        turned_on: args.enable.clone(),
        approved: args.approve == ApproveMode::All,
        user: Arc::new(CommandLineAsker::new(args.user_answers.clone(), false)),
        cancel,
    };
    let result = host.run_tool(run, &Screen).await;
    host.shutdown().await;
    let result = match result {
        Ok(result) => result,
        Err(ToolRunRefusal::Unusable(problem)) => anyhow::bail!(problem),
        Err(refusal) => {
            errln!("error: {refusal}");
            return Ok(ExitCode::from(USAGE));
        }
    };
    let (value, code) = match result {
        Ok(output) => (
            json!({"ok": true, "text": output.text, "data": output.data}),
            0,
        ),
        Err(error) => (json!({"ok": false, "error": error}), 1),
    };
    jsonln!("{}", serde_json::to_string_pretty(&value)?)?;
    Ok(ExitCode::from(code))
}

/// `tooltrail tools --tokens`: the fixed prefix of every request, tool by tool, in the
/// configured model's own tokens where its server counts them, else Tooltrail's estimate.
pub async fn tokens(as_json: bool) -> anyhow::Result<ExitCode> {
    let settings = tooltrail_settings::Settings::resolve(&tooltrail_settings::Overrides::default())
        .context("the settings could not be read")?;
    let count = tooltrail_host::count_fixed_prefix(&settings).await;
    let how = if count.counted_by_server {
        format!("counted by the model server at {}", settings.base_url)
    } else {
        "estimated (the model server does not count tokens, or could not be reached)".to_string()
    };
    let total: u32 = count.parts.iter().map(|(_, tokens)| tokens).sum();
    if as_json {
        let rows: Vec<_> = count
            .parts
            .iter()
            .map(|(name, tokens)| json!({ "name": name, "tokens": tokens }))
            .collect();
        let value = json!({ "parts": rows, "total": total,
            "counted_by_server": count.counted_by_server, "rendered_by_server": count.rendered });
        jsonln!("{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        for (name, tokens) in &count.parts {
            outln!("{name:<16} {tokens:>5}")?;
        }
        outln!("{:<16} {total:>5} tokens in every request, {how}", "in all")?;
        if let Some(rendered) = count.rendered {
            outln!(
                "{:<16} {rendered:>5} tokens in a request with an empty question, as the server's \
                 chat template renders it",
                "rendered"
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `tooltrail tools`: the built-in tools, then those of the MCP servers of mcp.json (started
/// to list them, as `ask` would), with how each is gated.
pub async fn list(as_json: bool) -> anyhow::Result<ExitCode> {
    let folder = std::env::current_dir().context("could not read the current folder")?;
    let host = host(false)?;
    let listing = host.list_tools(&folder).await;
    host.shutdown().await;
    if let Some(problem) = &listing.problem {
        errln!("warning: MCP servers are off: {problem}");
    }
    for failure in &listing.failures {
        say_failure(failure);
    }
    if as_json {
        let specs: Vec<_> = listing.tools.iter().map(|(spec, _)| spec).collect();
        jsonln!("{}", serde_json::to_string_pretty(&specs)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = listing
        .tools
        .iter()
        .map(|(spec, _)| spec.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(14);
    for (spec, access) in &listing.tools {
        let first_line = spec.description.lines().next().unwrap_or_default();
        outln!(
            "{:<width$} {:<10} {}",
            spec.name,
            access.words(),
            first_line
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
