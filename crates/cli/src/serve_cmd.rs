//! `tooltrail serve`: the OpenAI-compatible HTTP API (see `tooltrail_server`). Parses the
//! flags, opens the record and hands both to the server.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::ValueEnum;
use tooltrail_host::{Host, Record};
use tooltrail_server::{Approve, DefaultTools, ServeConfig, Server, TokenOrigin};
use tooltrail_settings::Overrides;

/// What to do with calls that need approval: no one is at the server to ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ServeApprove {
    /// Refuse them and tell the model (unless a standing rule of the folder allows them).
    Deny,
    /// Allow them all.
    All,
}

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The folder requests work in [default: the current folder].
    #[arg(long, short = 'w', value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// The address to listen on. Anything but loopback needs --token.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// The port; 0 picks a free one (printed when ready).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// The bearer token clients must send [default: one generated and kept in the config
    /// folder].
    #[arg(long, env = "TOOLTRAIL_SERVE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Give each session_id a folder of its own beneath DIR.
    #[arg(long, value_name = "DIR")]
    pub session_workspaces: Option<PathBuf>,
    /// How long a session may stay idle before it expires (30s, 10m, 1h, 2d).
    #[arg(long, default_value = "1h", value_parser = parse_duration)]
    pub session_ttl: Duration,
    /// Requests answered at once; more get 429 with Retry-After.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub max_concurrent: usize,
    /// What to do with calls that need approval.
    #[arg(long, value_enum, default_value = "deny")]
    pub approve: ServeApprove,
    /// How long running answers may finish after Ctrl+C or SIGTERM before they are stopped.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub drain: Duration,
    /// The OpenAI-compatible endpoint, e.g. http://localhost:11434/v1.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The model name; when set, requests cannot choose another [default: the request's
    /// `model`, else the endpoint's first model].
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// Tool rounds per request before the model must answer [default: 10].
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,
    /// How tools are offered to the model: native, prompt or auto [default: auto, or
    /// TOOLTRAIL_TOOL_MODE, or the provider's setting].
    #[arg(long, value_name = "MODE", value_parser = crate::parse_tool_mode)]
    pub tool_mode: Option<tooltrail_protocol::ToolMode>,
    /// The tools a request that declares none is offered (most chat front ends cannot
    /// declare tools): Tooltrail's built-in tools, only those that read, or none (a plain
    /// chat, passed through).
    #[arg(long, value_enum, default_value = "none", value_name = "TOOLS")]
    pub default_tools: ServeDefaultTools,
    /// A web page allowed to send requests, by its origin (http://localhost:3000);
    /// repeatable. Requests from any other page are refused; none is allowed by default.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
}

/// `--default-tools`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ServeDefaultTools {
    /// Every built-in tool that is on (calls that need approval follow --approve).
    Builtin,
    /// The built-in tools that only read.
    ReadOnly,
    /// No tools: the request is passed to the model as a plain chat.
    None,
}

pub async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let workspace = match args.workspace {
        Some(dir) => dir,
        None => std::env::current_dir().context("could not read the current folder")?,
    };
    let record = Record::open_default()?;
    if let Some(problem) = record.problem() {
        errln!("warning: {problem}; answers will not be kept");
    }
    let host = Arc::new(Host::new(record).with_front_end(tooltrail_host::FrontEnd::Serve));
    let config = ServeConfig {
        addr: SocketAddr::new(args.host, args.port),
        session_workspaces: args.session_workspaces,
        session_ttl: args.session_ttl,
        max_concurrent: args.max_concurrent,
        approve: match args.approve {
            ServeApprove::Deny => Approve::Deny,
            ServeApprove::All => Approve::All,
        },
        token: args.token,
        overrides: Overrides {
            base_url: args.base_url,
            model: args.model,
            max_rounds: args.max_rounds,
            tool_mode: args.tool_mode,
            ..Overrides::default()
        },
        drain: args.drain,
        default_tools: match args.default_tools {
            ServeDefaultTools::Builtin => DefaultTools::Builtin,
            ServeDefaultTools::ReadOnly => DefaultTools::ReadOnly,
            ServeDefaultTools::None => DefaultTools::None,
        },
        allowed_origins: args.allow_origins,
        ..ServeConfig::new(workspace)
    };
    let server = Server::bind(config, host).await?;
    let addr = server.local_addr()?;
    outln!("listening on http://{addr}")?;
    match server.token().origin() {
        TokenOrigin::Given => outln!(
            "authenticate with `Authorization: Bearer <token>`, the token given with --token or TOOLTRAIL_SERVE_TOKEN"
        )?,
        TokenOrigin::File(path) => outln!(
            "authenticate with `Authorization: Bearer <token>`; the token is in {} (e.g. OPENAI_API_KEY=$(cat {}) OPENAI_BASE_URL=http://{addr}/v1)",
            path.display(),
            path.display()
        )?,
    }
    server.run(shutdown_signal()).await?;
    Ok(ExitCode::SUCCESS)
}

/// Ctrl+C, or SIGTERM where there is one.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// `30s`, `10m`, `1h`, `2d`, or plain seconds.
fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let Ok(amount) = number.parse::<u64>() else {
        bail!("{text:?} is not a duration such as 30s, 10m, 1h or 2d");
    };
    let seconds = match unit {
        "" | "s" => amount,
        "m" | "min" => amount * 60,
        "h" => amount * 3600,
        "d" => amount * 86_400,
        _ => bail!("{text:?} is not a duration such as 30s, 10m, 1h or 2d"),
    };
    Ok(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn durations_take_a_unit() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse_duration("1y").is_err());
        assert!(parse_duration("h").is_err());
    }
}
