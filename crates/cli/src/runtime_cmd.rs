//! `tooltrail models ps` and `tooltrail models stop`: the local model runtime (llama-server
//! run by Tooltrail for the `local` provider) shown and stopped now, as `ollama ps` and
//! `ollama stop` do for Ollama; and its lines in `tooltrail doctor`.

use std::io::Write;
use std::process::ExitCode;

use serde_json::json;
use tooltrail_runtime::supervisor::{Runtime, RuntimeStatus, SearchPlaces, unix_now};

fn runtime() -> anyhow::Result<Runtime> {
    Ok(Runtime::new(&tooltrail_settings::data_dir()?))
}

/// `tooltrail models ps [--json]`.
pub fn ps(as_json: bool) -> anyhow::Result<ExitCode> {
    let status = runtime()?.status();
    let now = unix_now();
    let mut out = crate::terminal::stdout_for(as_json);
    if as_json {
        let value = match &status {
            Some(status) => status_json(status, now),
            None => json!({ "running": false }),
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        write!(out, "{}", ps_text(status.as_ref(), now))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `tooltrail models stop`.
pub async fn stop() -> anyhow::Result<ExitCode> {
    let stopped = runtime()?.stop().await?;
    let line = match stopped {
        Some(state) => format!(
            "Stopped the local model {} (llama-server pid {}, port {}).",
            state.model, state.server_pid, state.port
        ),
        None => "No local model is running.".to_string(),
    };
    outln!("{line}")?;
    Ok(ExitCode::SUCCESS)
}

fn ps_text(status: Option<&RuntimeStatus>, now: u64) -> String {
    let Some(status) = status else {
        return "No local model is running.\n".to_string();
    };
    let state = &status.state;
    let rows = [
        ["MODEL", "PID", "PORT", "CONTEXT", "MEMORY", "UNTIL"].map(String::from),
        [
            state.model.clone(),
            state.server_pid.to_string(),
            state.port.to_string(),
            state.context_size.to_string(),
            memory(status),
            until(status, now),
        ],
    ];
    let widths: Vec<usize> = (0..6)
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "llama-server {} ({}), {} threads, supervisor pid {}; log {}\n",
        state.binary.display(),
        state.binary_source,
        state.threads,
        state.supervisor_pid,
        tooltrail_settings::data_dir()
            .map(|dir| Runtime::new(&dir).dir().server_log().display().to_string())
            .unwrap_or_default(),
    ));
    out
}

/// llama-server's resident memory, and the supervisor's beside it.
fn memory(status: &RuntimeStatus) -> String {
    match (status.server_rss, status.supervisor_rss) {
        (Some(server), Some(supervisor)) => format!("{} (+{})", mib(server), mib(supervisor)),
        (Some(server), None) => mib(server),
        _ => "-".to_string(),
    }
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes.div_ceil(1024 * 1024))
}

/// When the runtime stops if nothing uses it, as `ollama ps` says it.
fn until(status: &RuntimeStatus, now: u64) -> String {
    match stops_in(status, now) {
        None => "in use".to_string(),
        Some(0) => "stopping".to_string(),
        Some(secs) if secs < 90 => format!("{secs} seconds from now"),
        Some(secs) => format!("{} minutes from now", secs.div_ceil(60)),
    }
}

/// Seconds until the idle stop; `None` while a question holds the runtime.
fn stops_in(status: &RuntimeStatus, now: u64) -> Option<u64> {
    status.stops_in_secs(now)
}

fn status_json(status: &RuntimeStatus, now: u64) -> serde_json::Value {
    let state = &status.state;
    json!({
        "running": true,
        "model": state.model,
        "model_path": state.model_path,
        "base_url": state.base_url(),
        "port": state.port,
        "server_pid": state.server_pid,
        "supervisor_pid": state.supervisor_pid,
        "context_size": state.context_size,
        "threads": state.threads,
        "binary": state.binary,
        "binary_source": state.binary_source,
        "tools_in_template": state.tools_in_template,
        "started_unix": state.started_unix,
        "last_used_unix": state.last_used_unix,
        "idle_secs": state.idle_secs,
        "in_use": status.in_use,
        "stops_in_secs": stops_in(status, now),
        "server_rss_bytes": status.server_rss,
        "supervisor_rss_bytes": status.supervisor_rss,
    })
}

/// `tooltrail doctor`'s lines: which llama-server the `local` provider would run and why, or
/// that there is none and how to get one; and whether a runtime is up.
pub fn doctor_text() -> String {
    let mut out = String::from("\nLocal model runtime (the `local` provider):\n");
    match SearchPlaces::from_env().find() {
        Ok(server) => out.push_str(&format!(
            "  llama-server: {}, {}.\n",
            server.path.display(),
            server.source.describe()
        )),
        Err(error) => out.push_str(&format!(
            "  llama-server: {}.\n",
            capitalized(&error.to_string())
        )),
    }
    let status = runtime().ok().and_then(|runtime| runtime.status());
    match status {
        Some(status) => out.push_str(&format!(
            "  running: {} on {} (llama-server pid {}), {}.\n",
            status.state.model,
            status.state.base_url(),
            status.state.server_pid,
            match stops_in(&status, unix_now()) {
                None => "in use".to_string(),
                Some(secs) => format!("stops in {secs} s unless used"),
            }
        )),
        None => out.push_str("  running: no (a question to the local provider starts it).\n"),
    }
    out
}

/// The same for `tooltrail doctor --json`.
pub fn doctor_json() -> serde_json::Value {
    let server = match SearchPlaces::from_env().find() {
        Ok(server) => json!({
            "path": server.path,
            "source": server.source.as_str(),
            "why": server.source.describe(),
        }),
        Err(error) => json!({ "problem": error.to_string() }),
    };
    let running = runtime()
        .ok()
        .and_then(|runtime| runtime.status())
        .map(|status| status_json(&status, unix_now()))
        .unwrap_or_else(|| json!({ "running": false }));
    json!({ "llama_server": server, "runtime": running })
}

fn capitalized(sentence: &str) -> String {
    let mut chars = sentence.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tooltrail_runtime::supervisor::RuntimeState;

    fn status(in_use: bool) -> RuntimeStatus {
        RuntimeStatus {
            state: RuntimeState {
                supervisor_pid: 100,
                supervisor_start: None,
                server_pid: 101,
                server_start: None,
                port: 40123,
                api_key: "secret".into(),
                model: "gemma".into(),
                model_path: "/data/models/gemma.gguf".into(),
                context_size: 8192,
                threads: 2,
                binary: "/cache/llama-server".into(),
                binary_source: "cache".into(),
                started_unix: 1_000,
                last_used_unix: 1_000,
                idle_secs: 600,
                tools_in_template: false,
            },
            in_use,
            server_rss: Some(350 * 1024 * 1024),
            supervisor_rss: Some(9 * 1024 * 1024 - 10),
        }
    }

    #[test]
    fn ps_shows_the_model_its_memory_and_when_it_stops() {
        let text = ps_text(Some(&status(false)), 1_060);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "MODEL  PID  PORT   CONTEXT  MEMORY            UNTIL"
        );
        assert_eq!(
            lines[1],
            "gemma  101  40123  8192     350 MiB (+9 MiB)  9 minutes from now"
        );
        assert!(lines[2].starts_with(
            "llama-server /cache/llama-server (cache), 2 threads, supervisor pid 100; log "
        ));
        assert!(!text.contains("secret"));
        assert_eq!(until(&status(true), 1_060), "in use");
        assert_eq!(until(&status(false), 1_570), "30 seconds from now");
        assert_eq!(until(&status(false), 9_999), "stopping");
        assert_eq!(ps_text(None, 0), "No local model is running.\n");
    }

    #[test]
    fn ps_json_has_everything_but_the_key() {
        let value = status_json(&status(false), 1_060);
        assert_eq!(value["running"], true);
        assert_eq!(value["base_url"], "http://127.0.0.1:40123/v1");
        assert_eq!(value["stops_in_secs"], 540);
        assert_eq!(value["server_rss_bytes"], 350 * 1024 * 1024);
        assert!(!value.to_string().contains("secret"));
        assert_eq!(
            status_json(&status(true), 1_060)["stops_in_secs"],
            serde_json::Value::Null
        );
    }
}
