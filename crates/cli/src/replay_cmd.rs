//! `tooltrail replay`: recorded questions asked again with another model, without side
//! effects, each set beside the original (where the calls part, how much they agree, whether
//! the answer is the same); and `--table`, the models tried on a folder's questions, ranked.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tooltrail_host::{
    EventSink, Host, Record, ReplayOutcome, ReplayPick, ReplayReport, replay_table,
};
use tooltrail_settings::Overrides;

use crate::render::{JsonLines, Timeline};

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The turns to ask again (their ids, as `tooltrail history --json` and the exports give
    /// them).
    #[arg(value_name = "TURN_ID")]
    pub turns: Vec<String>,
    /// Every question of this conversation, in order.
    #[arg(long, value_name = "ID", conflicts_with_all = ["turns", "last"])]
    pub conversation: Option<String>,
    /// The last N questions asked in the folder (`-w`, or the current folder).
    #[arg(long, value_name = "N", conflicts_with = "turns")]
    pub last: Option<u32>,
    /// The folder of `--last` and `--table` [default: the current folder].
    #[arg(long, short = 'w', value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// A provider of config.toml (or `local`) to replay with.
    #[arg(long, value_name = "ID", conflicts_with = "base_url")]
    pub provider: Option<String>,
    /// The OpenAI-compatible endpoint to replay with.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The model to replay with [default: the endpoint's first model].
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// Answer every call that matches a recorded one from the record, read-only ones too, so
    /// that changes to the folder since do not count.
    #[arg(long)]
    pub from_record: bool,
    /// Print the events as JSON lines, each replay ending with a `replay_summary` line.
    #[arg(long)]
    pub json: bool,
    /// Replay nothing: print the models tried on the folder's questions, ranked (Markdown, or
    /// JSON with --json).
    #[arg(long, conflicts_with_all = ["turns", "conversation", "last", "from_record"])]
    pub table: bool,
}

/// The folder `-w` names, else the current one, as the record spells folders.
fn folder(args: &ReplayArgs) -> anyhow::Result<String> {
    let dir = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("could not read the current folder")?,
    };
    let dir = dir
        .canonicalize()
        .with_context(|| format!("could not open the folder {}", dir.display()))?;
    Ok(dir.display().to_string())
}

/// The questions the arguments pick.
fn pick(args: &ReplayArgs) -> ReplayPick {
    if let Some(id) = &args.conversation {
        ReplayPick::Conversation { id: id.clone() }
    } else if let Some(count) = args.last {
        ReplayPick::Last { count }
    } else {
        ReplayPick::Turns {
            turns: args.turns.clone(),
        }
    }
}

pub async fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let record = Record::open_default()?;
    if let Some(problem) = record.problem() {
        bail!("the history cannot be read: {problem}");
    }
    let mut host = Host::new(record);
    host.set_mcp_sign_in(crate::mcp_cmd::sign_in_options());
    if args.table {
        return table(&host, &args);
    }
    let folder = match args.last {
        Some(_) => Some(folder(&args)?),
        None => None,
    };
    let turns = host.replay_questions(&pick(&args), folder.as_deref())?;
    let overrides = Overrides {
        provider: args.provider.clone(),
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        ..Overrides::default()
    };
    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });
    let as_json = args.json;
    let screen = move || -> Box<dyn EventSink> {
        if as_json {
            Box::new(JsonLines)
        } else {
            Box::new(Timeline::new())
        }
    };
    let mut failed = false;
    let mut done = |outcome: &ReplayOutcome| {
        let turn_id = &outcome.turn_id;
        if let Some(report) = &outcome.report
            && show(report, as_json).is_err()
        {
            failed = true;
        }
        let error = outcome.error.as_ref().or_else(|| {
            outcome
                .report
                .as_ref()
                .and_then(|report| report.error.as_ref())
        });
        if let Some(error) = error {
            errln!("error: could not replay {turn_id}: {error}");
            failed = true;
        }
    };
    host.replay_each(
        turns,
        &overrides,
        args.from_record,
        &screen,
        &mut done,
        &cancel,
    )
    .await;
    host.shutdown().await;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The models tried on the folder's questions.
fn table(host: &Host, args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let rows = host.replay_table(Some(&folder(args)?))?;
    if args.json {
        jsonln!("{}", serde_json::to_string_pretty(&rows)?)?;
    } else if rows.is_empty() {
        outln!(
            "No question of this folder has been replayed yet (tooltrail replay --last 10 -m MODEL)."
        )?;
    } else {
        outln!("{}", replay_table::markdown(&rows).trim_end())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A number of seconds from milliseconds, as a person reads it.
fn seconds(ms: Option<u64>) -> String {
    ms.map_or_else(
        || "–".to_string(),
        |ms| format!("{:.1} s", ms as f64 / 1000.0),
    )
}

/// The replay's summary: the `replay_summary` line, or a few lines on stderr.
fn show(report: &ReplayReport, as_json: bool) -> anyhow::Result<()> {
    let c = &report.comparison;
    if as_json {
        let line = json!({
            "type": "replay_summary",
            "replay_of": c.original.turn_id,
            "turn_id": c.replay.turn_id,
            "conversation_id": c.replay.conversation_id,
            "model": c.replay.model,
            "original_model": c.original.model,
            "first_divergence": c.first_divergence,
            "calls_agreement": c.calls_agreement,
            "tools_agreement": c.tools_agreement,
            "answer_same": c.answer_same,
            "calls_not_run": c.calls_not_run,
            "calls_from_record": c.calls_from_record,
            "first_token_ms": report.first_token_ms,
            "total_ms": c.replay.total_ms,
            "original_total_ms": c.original.total_ms,
            "tokens_in": c.replay.tokens_in,
            "tokens_out": c.replay.tokens_out,
            "errors": c.replay.errors,
            "loops_cut": c.replay.loops_cut,
            "end": c.replay.end,
            "changed_since": report.changed_since,
            "error": report.error,
        });
        jsonln!("{line}")?;
        return Ok(());
    }
    for change in &report.changed_since {
        errln!("note: {change}");
    }
    let calls = match c.first_divergence {
        None => format!("the same {} calls", c.replay.calls.len()),
        Some(at) => format!("part at call {at}"),
    };
    errln!(
        "· replay {} of {} with {} (the original: {}): {calls}; calls agree {:.2}, tools {:.2}; the answer is {}",
        c.replay.turn_id,
        c.original.turn_id,
        c.replay.model,
        c.original.model,
        c.calls_agreement,
        c.tools_agreement,
        if c.answer_same {
            "the same"
        } else {
            "different"
        },
    );
    errln!(
        "  {} not run, {} from the record; {} (the original {}), first token {}; {} tokens in, {} out; {} errors, {} loops cut",
        c.calls_not_run,
        c.calls_from_record,
        seconds(c.replay.total_ms),
        seconds(c.original.total_ms),
        seconds(report.first_token_ms),
        c.replay.tokens_in,
        c.replay.tokens_out,
        c.replay.errors,
        c.replay.loops_cut,
    );
    Ok(())
}
