//! Times one tool call in-process, without the cost of starting a process:
//! `cargo run --release -p tooltrail-tools --example time_tool -- DIR TOOL JSON [RUNS]`.
//! Prints the median and the fastest run in milliseconds. Used by `scripts/bench-tools`.

use std::time::Instant;

use tooltrail_tools::{ToolContext, ToolRegistry};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, tool, json, rest @ ..] = args.as_slice() else {
        return Err("usage: time_tool DIR TOOL JSON [RUNS]".into());
    };
    let runs: usize = rest.first().map(|r| r.parse()).transpose()?.unwrap_or(10);
    let registry = ToolRegistry::with_builtins();
    let ctx = ToolContext::open(dir)?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        let output = registry.call(tool, json, &ctx).await?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        std::hint::black_box(output);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{tool}: median {:.2} ms, fastest {:.2} ms over {} runs",
        times[times.len() / 2],
        times[0],
        times.len()
    );
    Ok(())
}
