//! What OpenTelemetry costs a question: whole questions (engine, two tool calls, the answer)
//! through the host against the scripted model server, with telemetry off and on (exporting
//! to the receiver at `BENCH_OTLP_ENDPOINT`), and the sink's own work per question (every
//! event of a question turned into spans and queued). Run it with `scripts/bench-telemetry`,
//! which starts Arize Phoenix as the receiver and gives the bench its own config folder.
//!
//! It prints p50 and p95 and never fails on the figures.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tooltrail_agent::{CollectingSink, DenyAll, NullSink};
use tooltrail_host::{Host, Record};
use tooltrail_protocol::TelemetrySection;
use tooltrail_settings::Overrides;
use tooltrail_telemetry::{FrontEnd, Telemetry, TelemetryConfig};
use tooltrail_test_support::{Reply, ScriptedServer, demo_workspace};
use tooltrail_tools::ToolContext;

const QUESTIONS: usize = 300;
const WARM_UP: usize = 20;

fn replies() -> [Reply; 2] {
    [
        Reply::tool_calls(&[
            ("search_files", r#"{"pattern":"*.go"}"#),
            ("read_file", r#"{"path":"README.md"}"#),
        ]),
        Reply::text("There are Go files."),
    ]
}

fn at(samples: &[Duration], q: f64) -> f64 {
    let index = ((samples.len() as f64 - 1.0) * q).round() as usize;
    samples[index].as_secs_f64() * 1000.0
}

fn report(name: &str, mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let (p50, p95) = (at(&samples, 0.5), at(&samples, 0.95));
    println!(
        "{name:<34} p50 {p50:>8.3} ms   p95 {p95:>8.3} ms   max {:>8.3} ms   ({} questions)",
        at(&samples, 1.0),
        samples.len()
    );
    (p50, p95)
}

fn write_config(dir: &Path, base_url: &str, endpoint: Option<&str>) -> std::io::Result<()> {
    let mut text = format!("base_url = \"{base_url}\"\nmodel = \"scripted\"\n");
    if let Some(endpoint) = endpoint {
        text.push_str(&format!("\n[telemetry]\nendpoint = \"{endpoint}\"\n"));
    }
    std::fs::write(dir.join("config.toml"), text)
}

async fn question(
    host: &Host,
    model: &ScriptedServer,
    workspace: &PathBuf,
) -> Result<Duration, Box<dyn std::error::Error>> {
    for reply in replies() {
        model.push(reply);
    }
    let started = Instant::now();
    let engine = host
        .engine(&Overrides::default(), ToolContext::open(workspace)?)
        .await?;
    let mut conversation = host.begin(None)?;
    let sink = host.sink(Box::new(NullSink));
    sink.traced(engine.agent.run_turn(
        &mut conversation,
        "How many Go files are there?",
        &sink,
        &DenyAll,
        &CancellationToken::new(),
    ))
    .await;
    host.end(conversation);
    Ok(started.elapsed())
}

async fn phase(
    name: &str,
    config_dir: &Path,
    endpoint: Option<&str>,
    model: &ScriptedServer,
    workspace: &PathBuf,
) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    write_config(config_dir, &model.base_url(), endpoint)?;
    let host = Host::new(Record::in_memory()?);
    let mut samples = Vec::with_capacity(QUESTIONS);
    for index in 0..WARM_UP + QUESTIONS {
        let took = question(&host, model, workspace).await?;
        if index >= WARM_UP {
            samples.push(took);
        }
    }
    host.shutdown().await;
    Ok(report(name, samples))
}

/// The sink's own work: a recorded question's events through `Telemetry::observe`.
async fn sink_only(
    model: &ScriptedServer,
    workspace: &PathBuf,
    endpoint: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    // One real question, recorded, to replay.
    for reply in replies() {
        model.push(reply);
    }
    let host = Host::new(Record::in_memory()?);
    let engine = host
        .engine(&Overrides::default(), ToolContext::open(workspace)?)
        .await?;
    let mut conversation = host.begin(None)?;
    let collected = CollectingSink::new();
    engine
        .agent
        .run_turn(
            &mut conversation,
            "How many Go files are there?",
            &collected,
            &DenyAll,
            &CancellationToken::new(),
        )
        .await;
    let events = collected.events();
    let file = TelemetrySection {
        endpoint: Some(endpoint.to_string()),
        ..TelemetrySection::default()
    };
    let Some(config) = TelemetryConfig::resolve(&file)? else {
        return Err("telemetry did not turn on".into());
    };
    let telemetry = Telemetry::start(config, FrontEnd::Cli)?;
    let mut samples = Vec::with_capacity(QUESTIONS * 10);
    for round in 0..QUESTIONS * 10 {
        // A turn id of its own each time, as every question has.
        let turn_id = format!("turn_{:032x}", round + 1);
        let started = Instant::now();
        for event in &events {
            let mut event = event.clone();
            event.turn_id.clone_from(&turn_id);
            telemetry.observe(&event, None);
        }
        samples.push(started.elapsed());
    }
    println!("(a question here is {} events)", events.len());
    report("sink only, per question", samples);
    telemetry.shutdown()?;
    Ok(())
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let config_dir = PathBuf::from(
        std::env::var_os("TOOLTRAIL_CONFIG_DIR").ok_or("run it with scripts/bench-telemetry")?,
    );
    let endpoint =
        std::env::var("BENCH_OTLP_ENDPOINT").map_err(|_| "run it with scripts/bench-telemetry")?;
    let folder = demo_workspace()?;
    let workspace = folder.path().to_path_buf();
    let model = ScriptedServer::start(Vec::new()).await;

    write_config(&config_dir, &model.base_url(), None)?;
    sink_only(&model, &workspace, &endpoint).await?;
    let (_, off) = phase("telemetry off", &config_dir, None, &model, &workspace).await?;
    let (_, on) = phase(
        "telemetry on (to the receiver)",
        &config_dir,
        Some(&endpoint),
        &model,
        &workspace,
    )
    .await?;
    let (_, off_again) = phase(
        "telemetry off, again",
        &config_dir,
        None,
        &model,
        &workspace,
    )
    .await?;
    println!(
        "p95 overhead: {:.3} ms (on minus the mean of the two off runs)",
        on - (off + off_again) / 2.0
    );
    Ok(())
}

fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
