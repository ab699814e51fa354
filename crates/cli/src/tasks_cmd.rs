//! `tooltrail tasks`: picks up the MCP tasks calls in a folder left open when an earlier run
//! ended (the server still working on them), waits for them, and writes each result under its
//! call, as the app does when it opens the folder.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use tokio_util::sync::CancellationToken;
use tooltrail_host::open_tasks::{PickUp, PickedUp};
use tooltrail_host::{Host, Record};

#[derive(clap::Args)]
pub struct TasksArgs {
    /// The folder whose calls' tasks to pick up (default: the current folder).
    #[arg(long, short = 'w', value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

pub async fn run(args: TasksArgs) -> anyhow::Result<ExitCode> {
    let folder = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("could not read the current folder")?,
    };
    // The folder as the record names it: the one questions were asked about.
    let folder = std::fs::canonicalize(&folder)
        .with_context(|| format!("could not open the folder {}", folder.display()))?;
    let mut host = Host::new(Record::open_default()?);
    host.set_mcp_sign_in(crate::mcp_cmd::sign_in_options());
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    // Each as it ends: a task may run for hours while another is done at once.
    let ended = |picked: &PickedUp| {
        let _ = outln!("{}", ended_line(picked));
    };
    let picked = host.pick_up_tasks(&folder, &cancel, &ended).await;
    host.shutdown().await;
    if picked.is_empty() {
        outln!(
            "no MCP task of an earlier run is open in {}",
            folder.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    // A task left for later is a run that did not do what was asked.
    let later = picked
        .iter()
        .any(|picked| matches!(picked.outcome, PickUp::Later(_)));
    Ok(if later {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// How one task ended, as printed: its call, then the result, the error or why not.
fn ended_line(picked: &PickedUp) -> String {
    let task = &picked.task;
    let head = format!(
        "{} {} (task {} of {}):",
        task.conversation_id, task.tool, task.task_id, task.server
    );
    match &picked.outcome {
        PickUp::Ended(Ok(output)) => format!("{head} done\n{}", output.text),
        PickUp::Ended(Err(error)) => format!("{head} {}: {}", error.code.as_str(), error.message),
        PickUp::Gone(why) => format!("{head} gone: {why}"),
        PickUp::Later(why) => format!("{head} still open, to pick up later: {why}"),
    }
}
