//! `tooltrail ask`: one question, answered with tools, streamed to the terminal.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use tokio_util::sync::CancellationToken;
use tooltrail_host::ToolContext;
use tooltrail_host::{
    AllowAll, Approver, Conversation, DenyAll, EventSink, TurnOptions, TurnOutcome,
};
use tooltrail_host::{Engine, Host, HostError, Record, mcp_content};
use tooltrail_protocol::{ErrorCode, Message, TurnEnd};
use tooltrail_settings::Overrides;

use crate::answer::CommandLineAsker;
use crate::approve::TerminalApprover;
use crate::context_note::{ContextWatch, SharedSink};
use crate::first_run::Unreachable;
use crate::render::{JsonLines, Timeline};
use crate::{ApproveMode, AskArgs};

/// Exit status after Ctrl-C, as shells report it.
const INTERRUPTED: u8 = 130;
/// Exit status of an answer cut short by the model's token limit or context window: the
/// answer is printed, but a script should not take it for a whole one.
const CUT_SHORT: u8 = 3;

pub async fn run(args: AskArgs) -> anyhow::Result<ExitCode> {
    let question = args.question.join(" ");
    if question.trim().is_empty() && args.prompt.is_none() {
        bail!("the question is empty");
    }
    let mode = approve_mode(&args)?;
    let (host, recorded) = open_host(&args)?;
    let mut conversation = host.begin(args.conversation.as_deref()).map_err(|error| match (
        &error,
        &args.conversation,
    ) {
        (HostError::ConversationNotFound, Some(id)) => anyhow::anyhow!(
            "could not continue conversation {id}: it is not in the history (see `tooltrail conversations`)"
        ),
        _ => error.into(),
    })?;
    let root = workspace_root(&host, &args)?;
    let Some(engine) = start_engine(&host, &args, &root).await? else {
        return Ok(ExitCode::from(1));
    };
    warn_about(&engine, &conversation, &args);
    let approver: Box<dyn Approver> = match mode {
        ApproveMode::Ask => Box::new(TerminalApprover::new(engine.rules.clone())),
        ApproveMode::Deny => Box::new(DenyAll),
        ApproveMode::All => Box::new(AllowAll),
    };
    let screen: Box<dyn EventSink> = if args.json {
        Box::new(JsonLines)
    } else {
        Box::new(Timeline::new())
    };
    let unreachable = Unreachable::default();
    let screen = unreachable.watching(screen);
    let watch = Arc::new(ContextWatch::new(screen));
    let sink = host.sink(Box::new(SharedSink(Arc::clone(&watch))));
    let input = question_input(&host, &engine, &conversation, &root, &question, &args).await?;

    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });

    engine.warm_for(&conversation).await;
    let outcome = sink
        .traced(engine.agent.run(
            &mut conversation,
            input,
            &TurnOptions::default(),
            &sink,
            approver.as_ref(),
            &cancel,
        ))
        .await;
    let id = conversation.id.clone();
    host.end(conversation);
    host.shutdown().await;
    let ended = Ended {
        outcome,
        id,
        recorded,
        watch: &watch,
        unreachable: &unreachable,
    };
    Ok(ended.report(&engine, &args).await)
}

/// Who approves the calls that need it: `--approve`, or the person at the terminal when
/// there is one, else nobody (every such call is denied).
fn approve_mode(args: &AskArgs) -> anyhow::Result<ApproveMode> {
    let interactive = std::io::stdin().is_terminal();
    let mode = args.approve.unwrap_or(if interactive {
        ApproveMode::Ask
    } else {
        ApproveMode::Deny
    });
    if mode == ApproveMode::Ask && !interactive {
        bail!("--approve ask needs a terminal to ask on; use --approve deny or --approve all");
    }
    if args.no_history && args.conversation.is_some() {
        bail!(
            "--no-history starts a conversation of its own; drop it to carry on {}",
            args.conversation.as_deref().unwrap_or_default()
        );
    }
    Ok(mode)
}

/// The host over the record: where a continued conversation comes from and where this turn
/// goes. Also says whether the turn will be kept.
fn open_host(args: &AskArgs) -> anyhow::Result<(Host, bool)> {
    let record = if args.no_history {
        Record::in_memory()?
    } else {
        Record::open_default()?
    };
    let recorded = !args.no_history && record.problem().is_none();
    if let Some(problem) = record.problem() {
        errln!("warning: {problem}; this answer will not be kept");
    }
    let mut host = Host::new(record);
    // A server that asks for sign-in may open the browser only with a person at the terminal.
    host.set_mcp_sign_in(crate::mcp_cmd::sign_in_options());
    Ok((host, recorded))
}

/// The folder asked about: `--workspace`, else the one a continued conversation was about,
/// else the current folder.
fn workspace_root(host: &Host, args: &AskArgs) -> anyhow::Result<PathBuf> {
    if let Some(dir) = &args.workspace {
        return Ok(dir.clone());
    }
    let recorded = args.conversation.as_ref().and_then(|id| {
        host.store()
            .conversation(id)
            .ok()
            .and_then(|summary| summary.workspace.map(PathBuf::from))
    });
    match recorded {
        Some(dir) => Ok(dir),
        None => std::env::current_dir().context("could not read the current folder"),
    }
}

/// The model, the tools and the MCP servers for `root`. `None` when no model answers: the
/// error and the first-run guide are printed.
async fn start_engine(host: &Host, args: &AskArgs, root: &Path) -> anyhow::Result<Option<Engine>> {
    let asker = CommandLineAsker::new(args.user_answers.clone(), args.json);
    let ctx = ToolContext::open(root)?.with_user(Arc::new(asker));
    let overrides = Overrides {
        provider: args.provider.clone(),
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        max_rounds: args.max_rounds,
        tool_mode: args.tool_mode,
        enabled_tools: args.enable.clone(),
        context_window: args.context_window,
        project_instructions: args.no_project_instructions.then_some(false),
    };
    let mut engine = match host
        .engine_telling(&overrides, ctx, &crate::waiting::status)
        .await
    {
        Ok(engine) => engine,
        // Asking the endpoint for its first model found nothing there.
        Err(HostError::Model(failure)) if failure.code == ErrorCode::Unreachable => {
            errln!("error: {failure}");
            crate::first_run::guide(&tooltrail_settings::config_path()?).await;
            return Ok(None);
        }
        Err(error) => return Err(error.into()),
    };
    engine.answer_servers_with(Arc::new(crate::server_prompt::TerminalRequests::new(
        args.json,
    )));
    Ok(Some(engine))
}

/// Says what the engine started without or with: a key it could not read, MCP servers that
/// failed, and the project instructions a new conversation follows.
fn warn_about(engine: &Engine, conversation: &Conversation, args: &AskArgs) {
    if let Some(problem) = &engine.settings.key_problem {
        errln!("warning: {problem}");
    }
    if let Some(problem) = &engine.mcp_problem {
        errln!("warning: MCP servers are off: {problem}");
    }
    // A new conversation's system prompt carries them; say so once, where it starts.
    if conversation.messages.is_empty() {
        for line in crate::context_note::instructions_lines(&engine.project_instructions, args.json)
        {
            errln!("{line}");
        }
    }
    for failure in &engine.mcp_failures {
        match &failure.error {
            // The server runs; one of its tools is left out, and the sentence says which.
            tooltrail_mcp::McpError::NameTaken(clash) => errln!("warning: {clash}"),
            other => errln!(
                "warning: going on without MCP server {:?}: {other}",
                failure.server
            ),
        }
    }
}

/// The question's messages: the text, or with attachments and a prompt, what they make.
async fn question_input(
    host: &Host,
    engine: &Engine,
    conversation: &Conversation,
    root: &Path,
    question: &str,
    args: &AskArgs,
) -> anyhow::Result<Vec<Message>> {
    if args.attach.is_empty() && args.prompt.is_none() {
        return Ok(vec![Message::user(question)]);
    }
    let window = engine.agent.context_window(&CancellationToken::new()).await;
    let folder = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let taken = mcp_content::tokens_taken(&engine.agent, &conversation.messages);
    let room = mcp_content::attachment_room(window.tokens, engine.agent.config().max_tokens, taken);
    crate::mcp_content_cmd::question_input(host, &folder, window.tokens, room, question, args).await
}

/// How a turn ended, for the lines printed after it and the exit status.
struct Ended<'a> {
    outcome: TurnOutcome,
    id: String,
    recorded: bool,
    watch: &'a ContextWatch,
    unreachable: &'a Unreachable,
}

impl Ended<'_> {
    /// Prints what follows the answer (a cut, the context used, how to carry on, or the error
    /// with the guide when no model answered) and returns the exit status.
    async fn report(self, engine: &Engine, args: &AskArgs) -> ExitCode {
        // Asked before the turn, so this is the window the turn used.
        let window = engine.agent.context_window(&CancellationToken::new()).await;
        let cut_short = self.watch.truncated();
        if cut_short {
            errln!("{}", self.watch.truncated_notice(window));
        }
        let id = &self.id;
        match self.outcome.end {
            TurnEnd::Completed | TurnEnd::RoundLimit => {
                if !args.json
                    && let Some(line) = self.watch.usage_line(window)
                {
                    errln!("{line}");
                }
                if !args.json && self.recorded {
                    errln!("· conversation {id}; carry on with: tooltrail ask -c {id} \"…\"");
                }
                if cut_short {
                    ExitCode::from(CUT_SHORT)
                } else {
                    ExitCode::SUCCESS
                }
            }
            TurnEnd::Cancelled => ExitCode::from(INTERRUPTED),
            TurnEnd::Error => {
                let message = self
                    .outcome
                    .error
                    .unwrap_or_else(|| "the answer failed".to_string());
                errln!("error: {message}");
                if self.unreachable.seen() {
                    crate::first_run::guide(&engine.settings.config_path).await;
                }
                ExitCode::from(1)
            }
        }
    }
}
