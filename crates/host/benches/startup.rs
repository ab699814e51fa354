//! Per-question start-up: from the moment a front end is asked a question (the app's
//! `send_message`) to the first byte of the request reaching the model, against a local
//! listener that answers at once. Run it with `scripts/bench-host`, which gives it a config
//! and data folder of its own.
//!
//! Three ways are measured, each over the same number of questions:
//! - `host, warm`: the host the app and the command line use, from its second question on (the
//!   model client, the tools and the open store are reused);
//! - `host, cold`: a new host for every question (what a one-shot `tooltrail ask` pays);
//! - `per question as before`: what the app did before the host, on every question: settings
//!   read, a new client, the registry built anew, the database opened again for the rules.
//!
//! It prints figures and never fails on them.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tooltrail_agent::{Agent, AgentConfig, DenyAll, NullSink};
use tooltrail_host::{Host, Record, WorkspaceRules};
use tooltrail_llm::{LlmClient, LlmConfig};
use tooltrail_settings::{Overrides, Settings};
use tooltrail_store::Store;
use tooltrail_tools::{ToolContext, ToolRegistry};

const QUESTIONS: usize = 200;

/// The one answer the listener gives: a streamed "ok".
const ANSWER: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 139\r\n\r\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
data: [DONE]\n\n";

/// Accepts connections; for each request, notes when its first byte arrived and answers.
async fn listen() -> std::io::Result<(String, mpsc::UnboundedReceiver<Instant>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let base_url = format!("http://{}/v1", listener.local_addr()?);
    let (arrived, arrivals) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let arrived = arrived.clone();
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 64 * 1024];
                let mut request = Vec::new();
                loop {
                    let Ok(read) = socket.read(&mut buffer).await else {
                        return;
                    };
                    if read == 0 {
                        return;
                    }
                    if request.is_empty() {
                        let _ = arrived.send(Instant::now());
                    }
                    request.extend_from_slice(&buffer[..read]);
                    if let Some(length) = whole_request(&request) {
                        request.drain(..length);
                        if socket.write_all(ANSWER.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    Ok((base_url, arrivals))
}

/// The length of the first whole HTTP request in `bytes`, once it has arrived.
fn whole_request(bytes: &[u8]) -> Option<usize> {
    let head_end = bytes.windows(4).position(|window| window == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&bytes[..head_end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    (bytes.len() >= head_end + length).then_some(head_end + length)
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| {
        let index = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[index].as_secs_f64() * 1000.0
    };
    println!(
        "{name:<26} p50 {:>7.3} ms   p95 {:>7.3} ms   max {:>7.3} ms",
        at(0.5),
        at(0.95),
        at(1.0)
    );
}

async fn ask(
    host: &Host,
    overrides: &Overrides,
    workspace: &PathBuf,
    arrivals: &mut mpsc::UnboundedReceiver<Instant>,
) -> Result<Duration, Box<dyn std::error::Error>> {
    let started = Instant::now();
    let engine = host
        .engine(overrides, ToolContext::open(workspace)?)
        .await?;
    let mut conversation = host.begin(None)?;
    let sink = host.sink(Box::new(NullSink));
    engine
        .agent
        .run_turn(
            &mut conversation,
            "How many files are there?",
            &sink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    host.end(conversation);
    let arrived = arrivals.recv().await.ok_or("the listener stopped")?;
    Ok(arrived.duration_since(started))
}

/// The app's per-question work before the host: everything built anew, the rules read from a
/// database opened again, events only queued.
async fn ask_as_before(
    db: &PathBuf,
    overrides: &Overrides,
    workspace: &PathBuf,
    arrivals: &mut mpsc::UnboundedReceiver<Instant>,
) -> Result<Duration, Box<dyn std::error::Error>> {
    let started = Instant::now();
    let mut ctx = ToolContext::open(workspace)?;
    let settings = Settings::resolve(overrides)?;
    ctx.limits.default_timeout_secs = settings.command_timeout_secs;
    let mut config = LlmConfig::new(
        settings.base_url.clone(),
        settings.model.clone().unwrap_or_default(),
    );
    config.api_key = settings.api_key.clone();
    let llm = LlmClient::new(config)?;
    let mut registry = ToolRegistry::with_builtins();
    for name in &settings.disabled_tools {
        registry.remove(name);
    }
    let rules = WorkspaceRules::load(
        Arc::new(Store::open(db)?),
        &ctx.workspace.root().display().to_string(),
    );
    let agent = Agent::new(llm, Arc::new(registry), ctx, AgentConfig::default())
        .with_rules(Arc::new(rules));
    let mut conversation = tooltrail_agent::Conversation::new();
    agent
        .run_turn(
            &mut conversation,
            "How many files are there?",
            &NullSink,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    let arrived = arrivals.recv().await.ok_or("the listener stopped")?;
    Ok(arrived.duration_since(started))
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let (Some(config), Some(data)) = (
        std::env::var_os("TOOLTRAIL_CONFIG_DIR"),
        std::env::var_os("TOOLTRAIL_DATA_DIR"),
    ) else {
        return Err(
            "run this through scripts/bench-host, which gives it folders of its own".into(),
        );
    };
    let (base_url, mut arrivals) = listen().await?;
    let overrides = Overrides {
        base_url: Some(base_url),
        model: Some("bench".to_string()),
        max_rounds: None,
        tool_mode: None,
        ..Overrides::default()
    };
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    println!(
        "Per-question start-up: a question asked -> the first byte reaches the model ({QUESTIONS} questions each)"
    );
    println!(
        "config {}, data {}",
        PathBuf::from(config).display(),
        PathBuf::from(&data).display()
    );

    let host = Host::new(Record::open(&PathBuf::from(&data).join("warm.sqlite3"))?);
    ask(&host, &overrides, &workspace, &mut arrivals).await?;
    let mut warm = Vec::with_capacity(QUESTIONS);
    for _ in 0..QUESTIONS {
        warm.push(ask(&host, &overrides, &workspace, &mut arrivals).await?);
    }
    report("host, warm", warm);

    let db = PathBuf::from(&data).join("cold.sqlite3");
    let mut cold = Vec::with_capacity(QUESTIONS);
    for _ in 0..QUESTIONS {
        let host = Host::new(Record::open(&db)?);
        cold.push(ask(&host, &overrides, &workspace, &mut arrivals).await?);
    }
    report("host, cold", cold);

    let db = PathBuf::from(&data).join("before.sqlite3");
    let mut before = Vec::with_capacity(QUESTIONS);
    for _ in 0..QUESTIONS {
        before.push(ask_as_before(&db, &overrides, &workspace, &mut arrivals).await?);
    }
    report("per question as before", before);
    println!("target: host, warm p95 <= 2 ms");
    Ok(())
}

fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("bench-host: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench-host: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
