//! `scripted-model`: a scripted OpenAI-compatible server for end-to-end tests.
//!
//! Prints `listening on http://127.0.0.1:PORT/v1` on stdout as its first line, then serves
//! until it is stopped.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use tooltrail_test_support::{ScriptedServer, ServerOptions, load_script};

/// Serve a scripted OpenAI-compatible model on 127.0.0.1.
///
/// The script is a JSON list of replies, one per chat request, in order:
/// {"text": "..."}, {"tool_calls": [{"name": "...", "arguments": {...}}]} (both may be
/// given), {"status": 500, "body": {...}, "headers": {...}}, {"fixture": "NAME"},
/// {"sse": [CHUNK, ...], "done": false}, {"raw": "TEXT", "content_type": "..."},
/// {"hang": true}; each with an optional "delay_ms" (before each streamed chunk), and
/// "cut_after" (chunks, then the connection breaks). Answers stream when the request asks
/// for it. Once the script is used up, every chat request gets HTTP 500.
#[derive(Debug, Parser)]
#[command(name = "scripted-model", version)]
struct Args {
    /// The script: a JSON list of replies.
    #[arg(long, value_name = "FILE.json")]
    script: PathBuf,
    /// The port to listen on (default: any free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Append each request received to this file as one JSON line.
    #[arg(long, value_name = "FILE.jsonl")]
    record: Option<PathBuf>,
    /// Answer `GET /props` as llama.cpp does, with this context window in tokens.
    #[arg(long, value_name = "TOKENS")]
    n_ctx: Option<u32>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let replies = load_script(&args.script)?;
    let server = ScriptedServer::start_with(
        replies,
        ServerOptions {
            port: args.port,
            record: args.record,
            n_ctx: args.n_ctx,
        },
    )
    .await?;
    let mut stdout = std::io::stdout();
    writeln!(stdout, "listening on {}", server.base_url())
        .and_then(|()| stdout.flush())
        .context("could not write to stdout")?;
    tokio::signal::ctrl_c()
        .await
        .context("could not wait for Ctrl-C")?;
    drop(server);
    Ok(())
}
