//! `tooltrail`: ask questions about a folder from the command line, and run its tools directly.
//!
//! Each subcommand is a thin edge: it parses, calls one service from the engine crates, and
//! turns errors into one sentence on stderr with a non-zero exit status.
//!
//! What it prints goes through [`terminal`] alone, which lets no control character of the
//! text reach the terminal: `println!` and the like are denied here, and `std::io::stdout` and
//! `std::io::stderr` in the crate's `clippy.toml`.

#![deny(clippy::print_stdout, clippy::print_stderr)]

/// `println!` that hands back the write's error instead of panicking, so that a reader that
/// goes away (`tooltrail history | head`) ends the command quietly (see `main`). Through
/// [`terminal::out`], which lets no control character of the text reach the terminal.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(crate::terminal::out(), $($arg)*)
    }};
}

/// [`outln!`] for JSON, through [`terminal::json`]: its values stay the same, spelled so that
/// no terminal reads a control character in them.
macro_rules! jsonln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(crate::terminal::json(), $($arg)*)
    }};
}

/// `eprintln!` through [`terminal::err`]; a stderr that cannot be written to is not worth a
/// panic.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(crate::terminal::err(), $($arg)*);
    }};
}

mod answer;
mod approve;
mod ask;
mod context_note;
mod doctor;
mod first_run;
mod history_cmd;
mod mcp_cmd;
mod mcp_content_cmd;
mod models_cmd;
mod otlp_export;
mod providers_cmd;
mod render;
mod replay_cmd;
mod rules_cmd;
mod runtime_cmd;
mod serve_cmd;
mod server_prompt;
mod snippets_cmd;
mod stats_cmd;
mod tasks_cmd;
mod terminal;
mod tool_cmd;
mod undo_cmd;
mod waiting;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "tooltrail",
    version,
    about = "Ask questions about a project folder; an LLM answers by calling tools.",
    after_help = "Settings come from flags, then TOOLTRAIL_BASE_URL, TOOLTRAIL_MODEL and \
                  TOOLTRAIL_API_KEY, then config.toml in the config folder \
                  (TOOLTRAIL_CONFIG_DIR overrides it)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Ask a question about a folder and stream the answer.
    Ask(AskArgs),
    /// Run one tool directly and print its result as JSON.
    Tool(ToolArgs),
    /// List the tools the model can call: the built-in ones and those of the MCP servers in
    /// mcp.json.
    Tools {
        /// Print the tool specs as JSON.
        #[arg(long)]
        json: bool,
        /// How many tokens each tool's description takes in every request (and the system
        /// prompt), counted by the model server where it can (llama.cpp), else estimated.
        #[arg(long)]
        tokens: bool,
    },
    /// Ask recorded questions again with another model, without side effects, and see where
    /// its calls part from the original's; `--table` ranks the models tried on a folder.
    Replay(replay_cmd::ReplayArgs),
    /// Past tool calls, newest first.
    History(history_cmd::HistoryArgs),
    /// Past conversations, newest first.
    Conversations(history_cmd::ConversationsArgs),
    /// Export a conversation, or the calls a filter selects, as Markdown or JSON Lines.
    Export(history_cmd::ExportArgs),
    /// Delete a conversation and its tool calls from the history.
    Delete {
        /// The conversation's id (see `tooltrail conversations`).
        conversation: String,
    },
    /// Reclaim the space deleted conversations left in the history database.
    Vacuum,
    /// MCP servers from mcp.json in the config folder: list, test, conformance client.
    Mcp(mcp_cmd::McpArgs),
    /// Standing approval rules for commands in a workspace: list, add, revoke.
    Rules(rules_cmd::RulesArgs),
    /// Snippets the model saved for a workspace: list (or search), show, delete.
    Snippets(snippets_cmd::SnippetsArgs),
    /// Serve the OpenAI-compatible HTTP API, with the tools run on this machine.
    Serve(serve_cmd::ServeArgs),
    /// Where questions go: the providers of config.toml, the model servers running on this
    /// machine (detect), and the one to use.
    Providers(providers_cmd::ProvidersArgs),
    /// The models Tooltrail serves itself (the `local` provider): list, pull, import, rm,
    /// use, and the one running now (ps, stop).
    Models(models_cmd::ModelsArgs),
    /// Pick up the MCP tasks calls in a folder left open when an earlier run ended: wait for
    /// each and write its result under its call.
    Tasks(tasks_cmd::TasksArgs),
    /// Put back the files a conversation's turns (or one turn) wrote with file_write.
    Undo(undo_cmd::UndoArgs),
    /// Per tool: calls, success rate, errors, denials and durations from the history.
    Stats(stats_cmd::StatsArgs),
    /// What this machine enforces when the model runs commands (the OS sandbox).
    Doctor {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Whether calls that need approval run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ApproveMode {
    /// Ask on the terminal (the default when stdin is a terminal).
    Ask,
    /// Refuse them and tell the model (the default otherwise).
    Deny,
    /// Allow them all.
    All,
}

#[derive(clap::Args)]
pub struct AskArgs {
    /// The folder to ask about [default: the current folder].
    #[arg(long, short = 'w', value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// A provider of config.toml (or `local`) to ask instead of the active one.
    #[arg(long, value_name = "ID", conflicts_with = "base_url")]
    pub provider: Option<String>,
    /// The OpenAI-compatible endpoint, e.g. http://localhost:11434/v1.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The model name [default: the endpoint's first model].
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// Tool rounds per question before the model must answer [default: 10].
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,
    /// How tools are offered: native function calling, described in the prompt (for models
    /// without function calling), or auto (native, and prompt when the server refuses tools)
    /// [default: auto, or TOOLTRAIL_TOOL_MODE, or the provider's setting].
    #[arg(long, value_name = "MODE", value_parser = parse_tool_mode)]
    pub tool_mode: Option<tooltrail_protocol::ToolMode>,
    /// The model's context window in tokens; every request is fitted to it [default: the
    /// provider's context_window, TOOLTRAIL_CONTEXT_WINDOW, or what the server says].
    #[arg(long, value_name = "TOKENS")]
    pub context_window: Option<u32>,
    /// What to do with calls that need approval.
    #[arg(long, value_enum)]
    pub approve: Option<ApproveMode>,
    /// Print one protocol event per line (JSON Lines) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Turn on a tool that is off until asked for (`file_write`); repeatable.
    #[arg(long = "enable", value_name = "TOOL")]
    pub enable: Vec<String>,
    /// An answer for the model's `ask_user` questions, used in order; repeatable. Without
    /// one (and no terminal) the model is told that no one can answer.
    #[arg(long = "user-answer", value_name = "TEXT")]
    pub user_answers: Vec<String>,
    /// Carry on a past conversation (see `tooltrail conversations`).
    #[arg(long, short = 'c', value_name = "ID")]
    pub conversation: Option<String>,
    /// Do not record this turn in the history.
    #[arg(long)]
    pub no_history: bool,
    /// Leave out the folder's project instructions (AGENTS.md, CLAUDE.md, ...) from a new
    /// conversation's system prompt [default: follow them, unless turned off for the folder].
    #[arg(long)]
    pub no_project_instructions: bool,
    /// Attach a file of the folder, or a resource of an MCP server as SERVER:URI (see
    /// `tooltrail mcp resources SERVER`); repeatable. Its text goes to the model with the
    /// question, cut to half the model's context window.
    #[arg(long = "attach", value_name = "FILE|SERVER:URI")]
    pub attach: Vec<String>,
    /// Start from an MCP server's prompt (see `tooltrail mcp prompts SERVER`); the question,
    /// if any, follows its messages.
    #[arg(long, value_name = "SERVER/PROMPT")]
    pub prompt: Option<String>,
    /// An argument of the --prompt, as NAME=VALUE; repeatable.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub prompt_args: Vec<String>,
    /// The question.
    #[arg(required_unless_present = "prompt", num_args = 1.., value_name = "QUESTION")]
    pub question: Vec<String>,
}

#[derive(clap::Args)]
pub struct ToolArgs {
    /// The tool's name (see `tooltrail tools`).
    pub name: String,
    /// The folder the tool works in [default: the current folder].
    #[arg(long, short = 'w', value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// The arguments, as a JSON object.
    #[arg(long, default_value = "{}", value_name = "JSON")]
    pub args: String,
    /// Calls that need approval are refused unless this is `all`.
    #[arg(long, value_enum, default_value = "deny")]
    pub approve: ApproveMode,
    /// Turn on a tool that is off until asked for (`file_write`); repeatable.
    #[arg(long = "enable", value_name = "TOOL")]
    pub enable: Vec<String>,
    /// An answer for `ask_user`, used in order; repeatable.
    #[arg(long = "user-answer", value_name = "TEXT")]
    pub user_answers: Vec<String>,
}

fn main() -> ExitCode {
    // The sandbox helper is this binary in a hidden mode; this returns at once otherwise.
    tooltrail_host::maybe_run_helper();
    // So is the local model runtime's supervisor (see tooltrail_runtime::supervisor).
    tooltrail_host::maybe_run_supervisor();
    // Scripts that must tell a subcommand from anything else (scripts/run: a subcommand or
    // a folder for the app) ask the CLI itself, so their list never falls behind it.
    if std::env::args().nth(1).as_deref() == Some("--list-commands") {
        return list_commands();
    }
    let cli = Cli::parse();
    // A question runs model streams, tools and MCP servers side by side; the other commands do
    // one thing (tools search on threads of their own), and start faster on one thread.
    let mut builder = match cli.command {
        Command::Ask(_) | Command::Mcp(_) | Command::Serve(_) => {
            tokio::runtime::Builder::new_multi_thread()
        }
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            errln!("error: could not start: {err}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Ask(args) => ask::run(args).await,
            Command::Tool(args) => tool_cmd::run(args).await,
            Command::Replay(args) => replay_cmd::run(args).await,
            Command::Tools { json, tokens: true } => tool_cmd::tokens(json).await,
            Command::Tools {
                json,
                tokens: false,
            } => tool_cmd::list(json).await,
            Command::History(args) => history_cmd::history(args),
            Command::Conversations(args) => history_cmd::conversations(args),
            Command::Export(args) if args.otlp => otlp_export::export(&args.filter).await,
            Command::Export(args) => history_cmd::export(args),
            Command::Delete { conversation } => history_cmd::delete(&conversation),
            Command::Vacuum => history_cmd::vacuum(),
            Command::Mcp(args) => mcp_cmd::run(args).await,
            Command::Rules(args) => rules_cmd::run(args),
            Command::Snippets(args) => snippets_cmd::run(args),
            Command::Serve(args) => serve_cmd::run(args).await,
            Command::Providers(args) => providers_cmd::run(args).await,
            Command::Models(args) => models_cmd::run(args).await,
            Command::Stats(args) => stats_cmd::run(args),
            Command::Undo(args) => undo_cmd::run(args),
            Command::Tasks(args) => tasks_cmd::run(args).await,
            Command::Doctor { json } => doctor::run(json),
        }
    });
    match result {
        Ok(code) => code,
        // The reader stopped reading (`| head`): nothing is wrong, and nothing more is wanted.
        Err(err) if is_closed_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            errln!("error: {}", error_sentence(&err));
            ExitCode::from(1)
        }
    }
}

/// Every subcommand's name and alias (and `help`), one a line.
fn list_commands() -> ExitCode {
    use clap::CommandFactory as _;
    let cli = Cli::command();
    let mut names: Vec<String> = Vec::new();
    for command in cli.get_subcommands() {
        names.push(command.get_name().to_string());
        names.extend(command.get_all_aliases().map(str::to_string));
    }
    names.push("help".to_string());
    match outln!("{}", names.join("\n")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

fn is_closed_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes as one line, without Rust debug formatting.
fn error_sentence(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

/// `--tool-mode`: native, prompt or auto.
pub(crate) fn parse_tool_mode(word: &str) -> Result<tooltrail_protocol::ToolMode, String> {
    word.parse()
        .map_err(|error: tooltrail_protocol::UnknownToolMode| error.to_string())
}
