//! The monitoring figures (docs/requirements.md), kept in memory since the server started:
//! requests, the share with tool calls, response times, errors by code, and per tool its
//! calls, success rate and durations. `GET /api/metrics` gives them as JSON, `GET /metrics`
//! as Prometheus text.
//!
//! Times go into fixed histogram buckets (what Prometheus expects, and a bounded amount of
//! memory however long the server runs); p50 and p95 are read from the buckets by linear
//! interpolation, so they are exact to within a bucket.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;
use tooltrail_protocol::ToolStatus;

/// Upper bounds of the buckets, in milliseconds (the last bucket is everything above).
const BOUNDS_MS: [f64; 17] = [
    1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0, 30000.0,
    60000.0, 120000.0, 300000.0,
];

#[derive(Debug, Clone, Default, PartialEq)]
struct Histogram {
    counts: [u64; BOUNDS_MS.len() + 1],
    count: u64,
    sum_ms: f64,
}

impl Histogram {
    fn observe(&mut self, ms: f64) {
        let bucket = BOUNDS_MS
            .iter()
            .position(|bound| ms <= *bound)
            .unwrap_or(BOUNDS_MS.len());
        self.counts[bucket] += 1;
        self.count += 1;
        self.sum_ms += ms;
    }

    fn average(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ms / self.count as f64
        }
    }

    /// The `q` quantile (0..=1), interpolated within its bucket.
    fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = q * self.count as f64;
        let mut below = 0u64;
        for (bucket, count) in self.counts.iter().enumerate() {
            let upto = below + count;
            if *count > 0 && upto as f64 >= rank {
                let low = if bucket == 0 {
                    0.0
                } else {
                    BOUNDS_MS[bucket - 1]
                };
                let high = BOUNDS_MS.get(bucket).copied().unwrap_or(low * 2.0);
                let within = (rank - below as f64) / *count as f64;
                return low + (high - low) * within.clamp(0.0, 1.0);
            }
            below = upto;
        }
        BOUNDS_MS[BOUNDS_MS.len() - 1]
    }
}

#[derive(Debug, Default)]
struct ToolFigures {
    calls: u64,
    success: u64,
    by_status: BTreeMap<&'static str, u64>,
    durations: Histogram,
}

#[derive(Debug, Default)]
struct Figures {
    requests: u64,
    with_tool_calls: u64,
    latency: Histogram,
    errors: BTreeMap<String, u64>,
    tools: BTreeMap<String, ToolFigures>,
}

/// The server's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    figures: Mutex<Figures>,
}

/// `GET /api/metrics`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricsReport {
    pub requests_total: u64,
    pub requests_with_tool_calls: u64,
    /// `requests_with_tool_calls / requests_total` (0 before the first request).
    pub tool_call_ratio: f64,
    pub response_time_ms: Times,
    pub errors_total: u64,
    pub errors_by_code: BTreeMap<String, u64>,
    pub tools: Vec<ToolReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Times {
    pub avg: f64,
    pub p50: f64,
    pub p95: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolReport {
    pub tool: String,
    pub calls: u64,
    pub success_rate: f64,
    /// Calls by how they ended: success, error, denied, cancelled, timeout.
    pub by_status: BTreeMap<&'static str, u64>,
    pub duration_ms: Times,
}

impl Metrics {
    fn lock(&self) -> std::sync::MutexGuard<'_, Figures> {
        match self.figures.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// A request to the chat endpoint ended (answered, failed, or its client left).
    pub fn request(&self, took: Duration, with_tool_calls: bool, error: Option<&str>) {
        let mut figures = self.lock();
        figures.requests += 1;
        if with_tool_calls {
            figures.with_tool_calls += 1;
        }
        figures.latency.observe(took.as_secs_f64() * 1000.0);
        if let Some(code) = error {
            *figures.errors.entry(code.to_string()).or_default() += 1;
        }
    }

    /// A tool call the server ran (or refused) ended.
    pub fn tool_call(&self, tool: &str, status: ToolStatus, duration_ms: u64) {
        let mut figures = self.lock();
        let entry = figures.tools.entry(tool.to_string()).or_default();
        entry.calls += 1;
        if status == ToolStatus::Success {
            entry.success += 1;
        }
        *entry.by_status.entry(status.as_str()).or_default() += 1;
        entry.durations.observe(duration_ms as f64);
    }

    pub fn report(&self) -> MetricsReport {
        let figures = self.lock();
        let times = |histogram: &Histogram| Times {
            avg: round(histogram.average()),
            p50: round(histogram.quantile(0.5)),
            p95: round(histogram.quantile(0.95)),
        };
        MetricsReport {
            requests_total: figures.requests,
            requests_with_tool_calls: figures.with_tool_calls,
            tool_call_ratio: ratio(figures.with_tool_calls, figures.requests),
            response_time_ms: times(&figures.latency),
            errors_total: figures.errors.values().sum(),
            errors_by_code: figures.errors.clone(),
            tools: figures
                .tools
                .iter()
                .map(|(tool, tool_figures)| ToolReport {
                    tool: tool.clone(),
                    calls: tool_figures.calls,
                    success_rate: ratio(tool_figures.success, tool_figures.calls),
                    by_status: tool_figures.by_status.clone(),
                    duration_ms: times(&tool_figures.durations),
                })
                .collect(),
        }
    }

    /// The Prometheus text exposition format (version 0.0.4).
    pub fn prometheus(&self) -> String {
        let figures = self.lock();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP tooltrail_requests_total Chat completion requests answered since the server started.\n# TYPE tooltrail_requests_total counter\ntooltrail_requests_total {}",
            figures.requests
        );
        let _ = writeln!(
            out,
            "# HELP tooltrail_requests_with_tool_calls_total Requests in which the model called tools.\n# TYPE tooltrail_requests_with_tool_calls_total counter\ntooltrail_requests_with_tool_calls_total {}",
            figures.with_tool_calls
        );
        histogram(
            &mut out,
            "tooltrail_request_duration_seconds",
            "Time from a request to the end of its answer.",
            &[(String::new(), &figures.latency)],
        );
        let _ = writeln!(
            out,
            "# HELP tooltrail_errors_total Requests answered with an error, by code.\n# TYPE tooltrail_errors_total counter"
        );
        for (code, count) in &figures.errors {
            let _ = writeln!(
                out,
                "tooltrail_errors_total{{code=\"{}\"}} {count}",
                escape(code)
            );
        }
        let _ = writeln!(
            out,
            "# HELP tooltrail_tool_calls_total Tool calls run on the server, by tool and how they ended.\n# TYPE tooltrail_tool_calls_total counter"
        );
        for (tool, tool_figures) in &figures.tools {
            for (status, count) in &tool_figures.by_status {
                let _ = writeln!(
                    out,
                    "tooltrail_tool_calls_total{{tool=\"{}\",status=\"{status}\"}} {count}",
                    escape(tool)
                );
            }
        }
        let tools: Vec<(String, &Histogram)> = figures
            .tools
            .iter()
            .map(|(tool, tool_figures)| {
                (
                    format!("tool=\"{}\"", escape(tool)),
                    &tool_figures.durations,
                )
            })
            .collect();
        histogram(
            &mut out,
            "tooltrail_tool_call_duration_seconds",
            "How long tool calls ran.",
            &tools,
        );
        out
    }
}

fn histogram(out: &mut String, name: &str, help: &str, series: &[(String, &Histogram)]) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
    for (labels, histogram) in series {
        let joined = |extra: &str| match (labels.is_empty(), extra.is_empty()) {
            (true, true) => String::new(),
            (true, false) => format!("{{{extra}}}"),
            (false, true) => format!("{{{labels}}}"),
            (false, false) => format!("{{{labels},{extra}}}"),
        };
        let mut cumulative = 0;
        for (bucket, bound) in BOUNDS_MS.iter().enumerate() {
            cumulative += histogram.counts[bucket];
            let le = format!("le=\"{}\"", bound / 1000.0);
            let _ = writeln!(out, "{name}_bucket{} {cumulative}", joined(&le));
        }
        let _ = writeln!(
            out,
            "{name}_bucket{} {}",
            joined("le=\"+Inf\""),
            histogram.count
        );
        let _ = writeln!(
            out,
            "{name}_sum{} {}",
            joined(""),
            histogram.sum_ms / 1000.0
        );
        let _ = writeln!(out, "{name}_count{} {}", joined(""), histogram.count);
    }
}

fn escape(label: &str) -> String {
    label
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        round(part as f64 / whole as f64)
    }
}

fn round(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn requests_errors_and_tools_are_counted() {
        let metrics = Metrics::default();
        for ms in [3, 4, 8, 40] {
            metrics.request(Duration::from_millis(ms), ms > 5, None);
        }
        metrics.request(Duration::from_millis(1), false, Some("invalid_api_key"));
        metrics.tool_call("read_file", ToolStatus::Success, 2);
        metrics.tool_call("read_file", ToolStatus::Error, 0);
        let report = metrics.report();
        assert_eq!(
            report,
            MetricsReport {
                requests_total: 5,
                requests_with_tool_calls: 2,
                tool_call_ratio: 0.4,
                response_time_ms: Times {
                    avg: 11.2,
                    p50: 4.25,
                    p95: 43.75,
                },
                errors_total: 1,
                errors_by_code: BTreeMap::from([("invalid_api_key".to_string(), 1)]),
                tools: vec![ToolReport {
                    tool: "read_file".into(),
                    calls: 2,
                    success_rate: 0.5,
                    by_status: BTreeMap::from([("error", 1), ("success", 1)]),
                    duration_ms: Times {
                        avg: 1.0,
                        p50: 1.0,
                        p95: 1.9,
                    },
                }],
            }
        );
        let text = metrics.prometheus();
        for line in [
            "tooltrail_requests_total 5",
            "tooltrail_errors_total{code=\"invalid_api_key\"} 1",
            "tooltrail_tool_calls_total{tool=\"read_file\",status=\"success\"} 1",
            "tooltrail_request_duration_seconds_bucket{le=\"0.005\"} 3",
            "tooltrail_request_duration_seconds_count 5",
            "tooltrail_tool_call_duration_seconds_bucket{tool=\"read_file\",le=\"+Inf\"} 2",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }
}
