//! Fills a store with a large, realistic tool-call log and reports p95 latencies of the queries
//! the CLI and the app run, and the bytes each call costs on disk.
//!
//! `cargo bench -p tooltrail-store --bench store -- [--rows N] [--db PATH] [--runs N]`
//! (or `scripts/bench-store`). With `--db` pointing at an existing file, the fill is skipped
//! and the queries run against it; `--fill-only` stops after the fill.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;
use tooltrail_protocol::{
    ApprovalBy, ApprovalRecord, Event, EventBody, ToolError, ToolErrorCode, ToolSource, ToolStatus,
    TurnEnd, Usage,
};
use tooltrail_store::{CallStatus, HistoryFilter, StatsFilter, Store};

/// SplitMix64: small, fast, and the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// From `weights`, an index drawn in proportion.
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut pick = self.below(u64::from(total)) as u32;
        for (index, weight) in weights.iter().enumerate() {
            if pick < *weight {
                return index;
            }
            pick -= weight;
        }
        weights.len() - 1
    }
}

/// A vocabulary of made-up identifiers; drawn log-uniformly by rank, so a few words are very
/// common and most are rare, as in code.
struct Words {
    words: Vec<String>,
}

impl Words {
    fn new(rng: &mut Rng, count: usize) -> Self {
        const CONSONANTS: &[&str] = &[
            "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
            "st", "tr", "ch", "sh", "pl",
        ];
        const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ou", "ea"];
        let mut words = Vec::with_capacity(count);
        let mut seen = std::collections::HashSet::new();
        while words.len() < count {
            let syllables = 1 + rng.below(3) as usize;
            let mut word = String::new();
            for _ in 0..syllables + 1 {
                word.push_str(CONSONANTS[rng.below(CONSONANTS.len() as u64) as usize]);
                word.push_str(VOWELS[rng.below(VOWELS.len() as u64) as usize]);
            }
            if seen.insert(word.clone()) {
                words.push(word);
            }
        }
        Self { words }
    }

    fn pick<'a>(&'a self, rng: &mut Rng) -> &'a str {
        let rank = (self.words.len() as f64).powf(rng.unit()) as usize;
        &self.words[rank.saturating_sub(1).min(self.words.len() - 1)]
    }

    fn phrase(&self, rng: &mut Rng, bytes: usize) -> String {
        let mut out = String::new();
        while out.len() < bytes {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(self.pick(rng));
        }
        out
    }
}

const TOOLS: &[(&str, Option<&str>, u32)] = &[
    ("read_file", None, 30),
    ("search_text", None, 20),
    ("list_dir", None, 12),
    ("find_files", None, 10),
    ("count_lines", None, 5),
    ("execute_bash", None, 10),
    ("git_log", Some("git"), 5),
    ("fetch_issue", Some("tracker"), 3),
    ("query", Some("postgres"), 5),
];

const STATUSES: &[(ToolStatus, u32)] = &[
    (ToolStatus::Success, 85),
    (ToolStatus::Error, 9),
    (ToolStatus::Denied, 3),
    (ToolStatus::Timeout, 1),
    (ToolStatus::Cancelled, 2),
];

const START_MS: i64 = 1_704_067_200_000; // 2024-01-01
const CALLS_PER_TURN: u64 = 10;
const TURNS_PER_CONVERSATION: u64 = 5;

/// Generates the events of `rows` tool calls, conversation by conversation.
struct Fill<'a> {
    rng: Rng,
    words: &'a Words,
    rows: u64,
    made: u64,
    clock: i64,
    queue: std::collections::VecDeque<Event>,
    conversation: u64,
}

impl Fill<'_> {
    fn arguments(&mut self, tool: &str) -> serde_json::Value {
        let words = self.words;
        let rng = &mut self.rng;
        let path = format!(
            "src/{}/{}_{}.rs",
            words.pick(rng),
            words.pick(rng),
            words.pick(rng)
        );
        let note = words.phrase(rng, 90);
        match tool {
            "read_file" => {
                json!({"path": path, "start_line": rng.below(400), "end_line": 400 + rng.below(400), "purpose": note})
            }
            "search_text" => {
                json!({"pattern": format!("fn {}_{}", words.pick(rng), words.pick(rng)), "path": path, "purpose": note})
            }
            "execute_bash" => {
                json!({"command": format!("cargo test -p {} {}", words.pick(rng), words.pick(rng)), "cwd": path, "purpose": note})
            }
            _ => json!({"path": path, "query": words.phrase(rng, 30), "purpose": note}),
        }
    }

    fn result(&mut self, long: bool) -> String {
        let words = self.words;
        let rng = &mut self.rng;
        let target = if long {
            1024 + rng.below(2048) as usize
        } else {
            420 + rng.below(160) as usize
        };
        let mut out = String::new();
        let mut line = 1;
        while out.len() < target {
            out.push_str(&format!(
                "{line}: fn {}_{}({}: &{}) -> {} {{ {} }}\n",
                words.pick(rng),
                words.pick(rng),
                words.pick(rng),
                words.pick(rng),
                words.pick(rng),
                words.phrase(rng, 20)
            ));
            line += 1;
        }
        out
    }

    fn event(&self, conversation: &str, turn: &str, seq: u64, body: EventBody) -> Event {
        Event {
            conversation_id: conversation.to_string(),
            turn_id: turn.to_string(),
            seq,
            time_ms: self.clock,
            body,
        }
    }

    /// Queues the events of the next conversation.
    fn conversation(&mut self) {
        self.conversation += 1;
        let conversation = format!("conv_{:08}", self.conversation);
        let workspace = format!("/home/dev/src/project-{}", self.rng.below(50));
        self.clock += 60_000 + self.rng.below(3_600_000) as i64;
        for turn_number in 0..TURNS_PER_CONVERSATION {
            if self.made >= self.rows {
                return;
            }
            let turn = format!("turn_{:08}_{turn_number}", self.conversation);
            let mut seq = 0;
            let question = self.words.phrase(&mut self.rng, 60);
            let started = self.event(
                &conversation,
                &turn,
                seq,
                EventBody::TurnStarted {
                    replay_of: None,
                    workspace: workspace.clone(),
                    model: "qwen3-coder".into(),
                    user_message: question,
                },
            );
            self.queue.push_back(started);
            seq += 1;
            let mut round = 1;
            for call in 0..CALLS_PER_TURN {
                if self.made >= self.rows {
                    break;
                }
                if call % 3 == 2 {
                    round += 1;
                }
                let (tool, server, _) = TOOLS[self
                    .rng
                    .weighted(&TOOLS.iter().map(|tool| tool.2).collect::<Vec<_>>())];
                let source = match server {
                    Some(server) => ToolSource::Mcp {
                        server: server.into(),
                    },
                    None => ToolSource::Builtin,
                };
                let status = STATUSES[self
                    .rng
                    .weighted(&STATUSES.iter().map(|s| s.1).collect::<Vec<_>>())]
                .0;
                let arguments = self.arguments(tool);
                let approval = if tool == "execute_bash" {
                    ApprovalRecord {
                        allowed: status != ToolStatus::Denied,
                        by: if self.rng.below(2) == 0 {
                            ApprovalBy::User
                        } else {
                            ApprovalBy::Rule { id: "r12".into() }
                        },
                        reason: Some("The command may change files.".into()),
                    }
                } else if status == ToolStatus::Denied {
                    ApprovalRecord {
                        allowed: false,
                        by: ApprovalBy::Policy,
                        reason: Some("The path is outside the workspace.".into()),
                    }
                } else {
                    ApprovalRecord::not_needed()
                };
                let call_id = format!("call_{:016x}", self.rng.next());
                self.clock += 200 + self.rng.below(3000) as i64;
                let ran = status != ToolStatus::Denied;
                if ran {
                    let event = self.event(
                        &conversation,
                        &turn,
                        seq,
                        EventBody::ToolCallStarted {
                            view: None,
                            round,
                            call_id: call_id.clone(),
                            tool: tool.into(),
                            source: source.clone(),
                            description: format!("The {tool} tool."),
                            arguments: arguments.clone(),
                            approval: approval.clone(),
                        },
                    );
                    self.queue.push_back(event);
                    seq += 1;
                }
                let duration_ms = if ran {
                    (self.rng.unit().powi(3) * 4000.0) as u64 + 1
                } else {
                    0
                };
                self.clock += duration_ms as i64;
                let error = match status {
                    ToolStatus::Success => None,
                    ToolStatus::Error => Some(ToolError::new(
                        ToolErrorCode::NotFound,
                        format!("no file at {}", arguments["path"].as_str().unwrap_or("")),
                    )),
                    ToolStatus::Denied => Some(ToolError::new(
                        ToolErrorCode::Denied,
                        "the user denied this call",
                    )),
                    ToolStatus::Timeout => Some(ToolError::new(
                        ToolErrorCode::Timeout,
                        "the call took longer than 30 s",
                    )),
                    ToolStatus::Cancelled => Some(ToolError::new(
                        ToolErrorCode::Cancelled,
                        "the user stopped this call",
                    )),
                };
                let result = match &error {
                    None => {
                        let long = self.rng.below(10) == 0;
                        self.result(long)
                    }
                    Some(error) => error.to_model_text(),
                };
                let event = self.event(
                    &conversation,
                    &turn,
                    seq,
                    EventBody::ToolCallFinished {
                        view: None,
                        round,
                        call_id,
                        tool: tool.into(),
                        source,
                        description: format!("The {tool} tool."),
                        arguments,
                        status,
                        duration_ms,
                        result,
                        data: None,
                        error,
                        approval,
                        truncated_for_model: false,
                    },
                );
                self.queue.push_back(event);
                seq += 1;
                self.made += 1;
            }
            let usage = self.event(
                &conversation,
                &turn,
                seq,
                EventBody::Usage(Usage {
                    prompt_tokens: 4000,
                    completion_tokens: 300,
                    total_tokens: 4300,
                }),
            );
            self.queue.push_back(usage);
            seq += 1;
            self.clock += 1500;
            let finished = self.event(
                &conversation,
                &turn,
                seq,
                EventBody::TurnFinished {
                    reason: TurnEnd::Completed,
                    rounds: round + 1,
                    text: "Done.".into(),
                },
            );
            self.queue.push_back(finished);
        }
    }
}

impl Iterator for Fill<'_> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(event);
            }
            if self.made >= self.rows {
                return None;
            }
            self.conversation();
        }
    }
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let rank = ((samples.len() as f64) * p).ceil() as usize;
    samples[rank.clamp(1, samples.len()) - 1]
}

fn ms(duration: Duration) -> String {
    format!("{:.3} ms", duration.as_secs_f64() * 1000.0)
}

/// Runs `query` `runs` times and prints its p50 and p95 against `target`.
fn measure(name: &str, target_ms: Option<f64>, runs: usize, mut query: impl FnMut(usize) -> usize) {
    let mut samples = Vec::with_capacity(runs);
    let mut rows = 0;
    for run in 0..runs {
        let start = Instant::now();
        rows += query(run);
        samples.push(start.elapsed());
    }
    report(name, target_ms, &mut samples, rows / runs.max(1));
}

fn report(name: &str, target_ms: Option<f64>, samples: &mut [Duration], rows: usize) {
    let p50 = percentile(samples, 0.50);
    let p95 = percentile(samples, 0.95);
    let verdict = match target_ms {
        Some(target) if p95.as_secs_f64() * 1000.0 <= target => {
            format!("(target ≤ {target} ms: met)")
        }
        Some(target) => format!("(target ≤ {target} ms: MISSED)"),
        None => String::new(),
    };
    println!(
        "{name:<44} p50 {:>10}  p95 {:>10}  {verdict}  [{rows} rows/run]",
        ms(p50),
        ms(p95),
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rows: u64 = 1_000_000;
    let mut runs: usize = 300;
    let mut db: Option<PathBuf> = None;
    let mut fill_only = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rows" => rows = args.next().ok_or("--rows needs a number")?.parse()?,
            "--runs" => runs = args.next().ok_or("--runs needs a number")?.parse()?,
            "--db" => db = Some(args.next().ok_or("--db needs a path")?.into()),
            "--fill-only" => fill_only = true,
            // cargo bench passes --bench; other harness flags do not apply here.
            _ => {}
        }
    }
    let dir = tempfile::tempdir()?;
    let path = db.unwrap_or_else(|| dir.path().join("bench.sqlite3"));
    let fresh = !path.exists();
    let store = Store::open(&path)?;
    let mut rng = Rng(0x5EED);
    let words = Words::new(&mut rng, 30_000);
    if fresh {
        let fill = Fill {
            rng: Rng(42),
            words: &words,
            rows,
            made: 0,
            clock: START_MS,
            queue: Default::default(),
            conversation: 0,
        };
        let start = Instant::now();
        let events = store.import(fill)?;
        println!(
            "filled {rows} tool calls ({events} events) in {:.1} s",
            start.elapsed().as_secs_f64()
        );
        let start = Instant::now();
        store.vacuum()?;
        println!(
            "vacuum (FTS merge + VACUUM) in {:.1} s",
            start.elapsed().as_secs_f64()
        );
    }
    if fill_only {
        return Ok(());
    }
    let total = store.stats(&StatsFilter::default())?.total;
    let bytes = std::fs::metadata(&path)?.len();
    println!(
        "database: {total} calls, {:.1} MiB, {:.0} bytes per call (target ≤ 1536)",
        bytes as f64 / (1024.0 * 1024.0),
        bytes as f64 / total.max(1) as f64
    );

    let conversations = (total / (CALLS_PER_TURN * TURNS_PER_CONVERSATION)).max(1);
    let mut rng = Rng(7);
    measure("last 100 calls of a conversation", Some(2.0), runs, |_| {
        let conversation = format!("conv_{:08}", 1 + rng.below(conversations));
        let filter = HistoryFilter {
            conversation: Some(conversation),
            limit: 100,
            ..Default::default()
        };
        store
            .history(&filter)
            .map(|page| page.items.len())
            .unwrap_or(0)
    });
    measure(
        "newest 50 failures (status = error)",
        Some(1.0),
        runs,
        |_| {
            let filter = HistoryFilter {
                status: Some(CallStatus::Error),
                limit: 50,
                ..Default::default()
            };
            store
                .history(&filter)
                .map(|page| page.items.len())
                .unwrap_or(0)
        },
    );
    measure("newest 50 calls, no filter", None, runs, |_| {
        let filter = HistoryFilter {
            limit: 50,
            ..Default::default()
        };
        store
            .history(&filter)
            .map(|page| page.items.len())
            .unwrap_or(0)
    });
    let mut search_rng = Rng(11);
    let queries: Vec<String> = (0..runs)
        .map(|_| words.pick(&mut search_rng).to_string())
        .collect();
    measure("FTS match, newest 50 first", Some(5.0), runs, |run| {
        let filter = HistoryFilter {
            search: Some(queries[run].clone()),
            limit: 50,
            ..Default::default()
        };
        store
            .history(&filter)
            .map(|page| page.items.len())
            .unwrap_or(0)
    });
    measure("FTS match, best 50 (bm25)", Some(50.0), runs, |run| {
        let filter = HistoryFilter {
            search: Some(queries[run].clone()),
            ranked: true,
            limit: 50,
            ..Default::default()
        };
        store
            .history(&filter)
            .map(|page| page.items.len())
            .unwrap_or(0)
    });
    measure(
        "counts per tool and status, avg, p95",
        Some(50.0),
        runs,
        |_| {
            store
                .stats(&StatsFilter::default())
                .map(|stats| stats.tools.len())
                .unwrap_or(0)
        },
    );
    measure(
        "stats of every call read one by one",
        None,
        runs.min(20),
        |_| {
            store
                .stats(&StatsFilter {
                    since: Some(START_MS),
                    ..Default::default()
                })
                .map(|stats| stats.tools.len())
                .unwrap_or(0)
        },
    );

    let recorder = store.recorder()?;
    let mut seq = 0;
    let event = |seq: u64, body: EventBody| Event {
        conversation_id: "conv_bench_append".into(),
        turn_id: "turn_bench_append".into(),
        seq,
        time_ms: START_MS + 400 * 24 * 3_600_000 + seq as i64,
        body,
    };
    recorder.record(event(
        seq,
        EventBody::TurnStarted {
            replay_of: None,
            workspace: "/home/dev/src/project-1".into(),
            model: "qwen3-coder".into(),
            user_message: "append".into(),
        },
    ));
    recorder.flush()?;
    let mut fill_rng = Rng(99);
    let mut filler = Fill {
        rng: Rng(5),
        words: &words,
        rows: 0,
        made: 0,
        clock: START_MS,
        queue: Default::default(),
        conversation: 0,
    };
    let bodies: Vec<EventBody> = (0..runs)
        .map(|run| {
            let call_id = format!("call_append_{}", run / 2);
            if run % 2 == 0 {
                EventBody::ToolCallStarted {
                    view: None,
                    round: 1,
                    call_id,
                    tool: "read_file".into(),
                    source: ToolSource::Builtin,
                    description: "The read_file tool.".into(),
                    arguments: filler.arguments("read_file"),
                    approval: ApprovalRecord::not_needed(),
                }
            } else {
                EventBody::ToolCallFinished {
                    view: None,
                    round: 1,
                    call_id,
                    tool: "read_file".into(),
                    source: ToolSource::Builtin,
                    description: "The read_file tool.".into(),
                    arguments: filler.arguments("read_file"),
                    status: ToolStatus::Success,
                    duration_ms: fill_rng.below(100),
                    result: filler.result(false),
                    data: None,
                    error: None,
                    approval: ApprovalRecord::not_needed(),
                    truncated_for_model: false,
                }
            }
        })
        .collect();
    let mut all = Vec::new();
    let mut by_kind: [(&str, Vec<Duration>); 2] = [
        ("  tool_call_started", Vec::new()),
        ("  tool_call_finished (512 B result)", Vec::new()),
    ];
    for (run, body) in bodies.into_iter().enumerate() {
        seq += 1;
        let start = Instant::now();
        recorder.record(event(seq, body));
        recorder.flush()?;
        let took = start.elapsed();
        all.push(took);
        by_kind[run % 2].1.push(took);
    }
    report(
        "one appended event, recorded + committed",
        Some(1.0),
        &mut all,
        1,
    );
    for (name, samples) in &mut by_kind {
        report(name, Some(1.0), samples, 1);
    }
    recorder.shutdown()?;
    Ok(())
}
