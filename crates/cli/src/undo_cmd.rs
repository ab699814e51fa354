//! `tooltrail undo`: puts back the files a conversation's turns wrote.

use std::process::ExitCode;

use tooltrail_host::{UndoError, undo};

#[derive(clap::Args)]
pub struct UndoArgs {
    /// The conversation whose writes to undo (see `tooltrail conversations`).
    #[arg(long, short = 'c', value_name = "ID")]
    pub conversation: String,
    /// Only this turn's writes (its id is in `tooltrail export`); default: every turn's.
    #[arg(long, value_name = "ID")]
    pub turn: Option<String>,
    /// Undo even files changed since they were written, overwriting those changes.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: UndoArgs) -> anyhow::Result<ExitCode> {
    let store = crate::history_cmd::open_store()?;
    match undo(&store, &args.conversation, args.turn.as_deref(), args.force) {
        Ok(report) => {
            for path in &report.restored {
                outln!("restored {path}")?;
            }
            for path in &report.removed {
                outln!("removed  {path} (the turn created it)")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(error @ UndoError::ChangedSince(_)) => {
            errln!("error: {}", sentence_with_flag(&error));
            Ok(ExitCode::from(1))
        }
        Err(error) => {
            errln!("error: {error}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The refusal, naming the flag that forces it on the command line.
fn sentence_with_flag(error: &UndoError) -> String {
    error
        .to_string()
        .replace("undo anyway (force)", "run it again with --force")
}
