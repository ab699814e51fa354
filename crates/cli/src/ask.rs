//! `tooltrail ask`: one question, answered with tools, streamed to the terminal.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use tokio_util::sync::CancellationToken;
use tooltrail_agent::{Agent, AgentConfig, AllowAll, Approver, Conversation, DenyAll, EventSink};
use tooltrail_llm::{LlmClient, LlmConfig};
use tooltrail_protocol::TurnEnd;
use tooltrail_tools::{ToolContext, ToolRegistry};

use crate::approve::TerminalApprover;
use crate::history_cmd::open_store;
use crate::record::Recorded;
use crate::render::{JsonLines, Timeline};
use crate::{ApproveMode, AskArgs};
use tooltrail_settings::rules::WorkspaceRules;
use tooltrail_settings::{Overrides, Settings};

/// Exit status after Ctrl-C, as shells report it.
const INTERRUPTED: u8 = 130;

pub async fn run(args: AskArgs) -> anyhow::Result<ExitCode> {
    let settings = Settings::resolve(&Overrides {
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        max_rounds: args.max_rounds,
    })?;
    if let Some(problem) = &settings.key_problem {
        eprintln!("warning: {problem}");
    }
    let question = args.question.join(" ");
    if question.trim().is_empty() {
        bail!("the question is empty");
    }
    // The history: where a continued conversation comes from and where this turn goes.
    let store = if args.no_history && args.conversation.is_none() {
        None
    } else {
        match open_store() {
            Ok(store) => Some(store),
            Err(err) if args.conversation.is_none() => {
                eprintln!("warning: {err:#}; this answer will not be recorded");
                None
            }
            Err(err) => return Err(err),
        }
    };
    let mut conversation = Conversation::new();
    let mut recorded_workspace = None;
    if let (Some(id), Some(store)) = (&args.conversation, &store) {
        let summary = store.conversation(id).with_context(|| {
            format!("could not continue conversation {id} (see `tooltrail conversations`)")
        })?;
        conversation = Conversation::resume(id.clone(), store.load_messages(id)?);
        recorded_workspace = summary.workspace.map(PathBuf::from);
    }
    let root = match (&args.workspace, recorded_workspace) {
        (Some(dir), _) => dir.clone(),
        (None, Some(dir)) => dir,
        (None, None) => std::env::current_dir().context("could not read the current folder")?,
    };
    let mut ctx = ToolContext::open(&root)?;
    ctx.limits.default_timeout_secs = settings.command_timeout_secs;

    let interactive = std::io::stdin().is_terminal();
    let mode = args.approve.unwrap_or(if interactive {
        ApproveMode::Ask
    } else {
        ApproveMode::Deny
    });
    if mode == ApproveMode::Ask && !interactive {
        bail!("--approve ask needs a terminal to ask on; use --approve deny or --approve all");
    }
    // Standing rules of this workspace: consulted before asking, added to with "always".
    let rules = Arc::new(WorkspaceRules::load(
        store.as_ref().map(|store| store.path()),
        &ctx.workspace.root().display().to_string(),
    ));
    let approver: Box<dyn Approver> = match mode {
        ApproveMode::Ask => Box::new(TerminalApprover::new(rules.clone())),
        ApproveMode::Deny => Box::new(DenyAll),
        ApproveMode::All => Box::new(AllowAll),
    };

    let mut config = LlmConfig::new(settings.base_url.clone(), String::new());
    config.api_key = settings.api_key.clone();
    config.idle_timeout = std::time::Duration::from_secs(settings.request_timeout_secs);
    let mut llm = LlmClient::new(config.clone())?;
    let model = match settings.model.clone() {
        Some(model) => model,
        None => first_model(&llm, &settings.base_url).await?,
    };
    config.model = model;
    llm = LlmClient::new(config)?;

    let mut registry = ToolRegistry::with_builtins();
    for name in &settings.disabled_tools {
        registry.remove(name);
    }
    let mcp = crate::mcp_cmd::add_tools(&mut registry, ctx.workspace.root()).await;
    let agent = Agent::new(
        llm,
        Arc::new(registry),
        ctx,
        AgentConfig {
            max_rounds: settings.max_rounds,
            max_result_bytes: settings.max_result_bytes,
            temperature: settings.temperature,
            ..AgentConfig::default()
        },
    )
    .with_rules(rules);
    let screen: Box<dyn EventSink> = if args.json {
        Box::new(JsonLines)
    } else {
        Box::new(Timeline::new())
    };
    let recorder = match (&store, args.no_history) {
        (Some(store), false) => match store.recorder() {
            Ok(recorder) => Some(recorder),
            Err(err) => {
                eprintln!("warning: {err}; this answer will not be recorded");
                None
            }
        },
        _ => None,
    };
    let recorded = recorder
        .as_ref()
        .map(|recorder| Recorded::new(screen.as_ref(), recorder));
    let sink: &dyn EventSink = match &recorded {
        Some(recorded) => recorded,
        None => screen.as_ref(),
    };

    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });

    let outcome = agent
        .run_turn(
            &mut conversation,
            &question,
            sink,
            approver.as_ref(),
            &cancel,
        )
        .await;
    if let Some(mcp) = mcp {
        mcp.shutdown().await;
    }
    if let Some(recorder) = recorder
        && let Err(err) = recorder.shutdown()
    {
        eprintln!("warning: the history could not be written: {err}");
    }
    match outcome.end {
        TurnEnd::Completed | TurnEnd::RoundLimit => {
            if !args.json && store.is_some() && !args.no_history {
                eprintln!(
                    "· conversation {id}; carry on with: tooltrail ask -c {id} \"…\"",
                    id = conversation.id
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        TurnEnd::Cancelled => Ok(ExitCode::from(INTERRUPTED)),
        TurnEnd::Error => {
            let message = outcome
                .error
                .unwrap_or_else(|| "the answer failed".to_string());
            eprintln!("error: {message}");
            Ok(ExitCode::from(1))
        }
    }
}

/// With no model configured, use the endpoint's first model (local servers usually have one).
async fn first_model(llm: &LlmClient, base_url: &str) -> anyhow::Result<String> {
    let models = llm.list_models().await?;
    models.into_iter().next().with_context(|| {
        format!("no model is set and {base_url} lists none; pass --model or set TOOLTRAIL_MODEL")
    })
}
