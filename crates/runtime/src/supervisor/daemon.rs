//! The supervisor: a small Tooltrail process (the `tooltrail` binary or the desktop app,
//! started again in a hidden mode) that owns llama-server.
//!
//! It leaves the caller's session first (`setsid` on Unix; on Windows `launch.rs` starts it
//! in a hidden console and process group of its own), so that neither Ctrl-C at the terminal nor
//! the caller's end reaches it: the runtime an `ask` starts is still there for the next
//! question. Then it starts llama-server (`server.rs`, which ties llama-server's life to the
//! supervisor's), waits for `/health` and for the proof that the server on the port
//! is that child (`probe::identify`), writes the state file and tells the caller
//! on its stdout: one line, `ready` or `failed: <sentence>`. From then on it watches:
//!
//! - llama-server ends (a crash, an out-of-memory kill): the state file goes, the supervisor
//!   exits, and the next question starts a new runtime;
//! - a stop request (`tooltrail models stop`: a file named by the supervisor's id, on every
//!   system) or, on Unix, SIGTERM, SIGINT or SIGHUP: it stops llama-server and exits;
//! - idle: every tick it tries the in-use lock exclusively. While any question holds a lease
//!   the lock is taken and the runtime is in use, whatever the question waits on (the model,
//!   a command, the user's approval). Once no lease has been held for the idle time, it
//!   removes the state file *while holding the lock*, so no question can start using the
//!   runtime it is about to stop, and stops.
//!
//! Leases rather than watching llama-server's `/slots`: a question is in use between its
//! requests too, and a poll could miss a short request entirely. The kernel drops a lease when
//! its process dies, so a killed `ask` never keeps the runtime up.

use std::ffi::OsString;
use std::io::Write;
use std::time::{Duration, Instant};

use super::identity;
use super::locks::Exclusive;
use super::probe;
use super::server::Server;
use super::spec::Spec;
use super::state::{RuntimeDir, RuntimeState, unix_now};

/// How often a starting llama-server is asked whether it is ready.
const READY_POLL: Duration = Duration::from_millis(50);
/// How long a new supervisor waits for an old one that is still stopping.
const PREDECESSOR_WAIT: Duration = Duration::from_secs(15);
/// Ports tried when the one chosen was taken before llama-server could bind it.
const PORT_TRIES: usize = 3;

/// Runs the supervisor; returns its exit status.
pub(crate) fn run(args: &[OsString]) -> i32 {
    // First, before anything can fail: out of the caller's session and process group.
    #[cfg(unix)]
    let _ = rustix::process::setsid();
    let mut caller = Caller::stdout();
    let spec = match Spec::decode(args) {
        Ok(spec) => spec,
        Err(message) => return caller.failed(&message),
    };
    let dir = RuntimeDir::from_root(spec.dir.clone());
    let Some(alive) = hold_alive_lock(&dir) else {
        return caller.failed(
            "another local model runtime is still running and did not stop; try `tooltrail models stop`",
        );
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            return caller.failed(&format!(
                "the local model runtime's supervisor could not start: {error}"
            ));
        }
    };
    let code = runtime.block_on(supervise(&spec, &dir, &mut caller));
    // The lock goes last, once nothing of the supervisor is left to wind down: `models stop`
    // waits for it.
    drop(runtime);
    drop(alive);
    code
}

/// The alive lock, with this process's id written in it for `models stop`.
fn hold_alive_lock(dir: &RuntimeDir) -> Option<std::fs::File> {
    let deadline = Instant::now() + PREDECESSOR_WAIT;
    loop {
        match Exclusive::try_acquire(&dir.alive_lock()) {
            Ok(Some(held)) => {
                let mut file = held.into_file();
                let me = std::process::id();
                // The start time beside the id: `models stop` signals this process only while
                // the id still names it (see `identity.rs`).
                let start = identity::start_time(me).map_or(String::new(), |t| format!(" {t}"));
                let _ = file.set_len(0);
                let _ = write!(file, "{me}{start}");
                // Left by a runtime that had this id before and ended before it read it.
                dir.take_stop_request(me);
                return Some(file);
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(READY_POLL),
            Ok(None) | Err(_) => return None,
        }
    }
}

async fn supervise(spec: &Spec, dir: &RuntimeDir, caller: &mut Caller) -> i32 {
    let me = std::process::id();
    log(&format!(
        "starting {} for {} ({} tokens, {} threads)",
        spec.binary.display(),
        spec.model,
        spec.context_size,
        spec.threads
    ));
    let api_key = new_api_key();
    if let Err(error) = dir.write_api_key(&api_key) {
        return caller.failed(&error.to_string());
    }
    let client = probe::client();
    let (mut server, port, props) = match start_server(spec, dir, &client, &api_key).await {
        Ok(started) => started,
        Err(message) => {
            log(&message);
            return caller.failed(&message);
        }
    };
    let server_pid = server.id().unwrap_or_default();
    let mut state = RuntimeState {
        supervisor_pid: me,
        supervisor_start: identity::start_time(me),
        server_pid,
        server_start: identity::start_time(server_pid),
        port,
        api_key,
        model: spec.model.clone(),
        model_path: spec.model_path.clone(),
        context_size: spec.context_size,
        threads: spec.threads,
        binary: spec.binary.clone(),
        binary_source: spec.binary_source.clone(),
        started_unix: unix_now(),
        last_used_unix: unix_now(),
        idle_secs: spec.idle_secs,
        // A GGUF without a template gets llama-server's default one, which renders no tools.
        tools_in_template: spec.model_has_template && probe::template_renders_tools(&props),
    };
    if let Err(error) = dir.write_state(&state) {
        server.stop().await;
        return caller.failed(&error.to_string());
    }
    caller.ready();
    log(&format!(
        "llama-server (pid {server_pid}) is ready on port {port}"
    ));
    let code = watch(spec, dir, &mut server, &mut state).await;
    dir.remove_state_of(me);
    code
}

/// Starts llama-server and waits until it is ready and has shown it is the child started
/// here (see [`probe::identify`]); returns it, its port and its `/props`. A port taken in
/// between is tried again with another, unless what took it answers there: then nothing more
/// is sent to it, and the start fails saying so.
async fn start_server(
    spec: &Spec,
    dir: &RuntimeDir,
    client: &reqwest::Client,
    api_key: &str,
) -> Result<(Server, u16, serde_json::Value), String> {
    let deadline = Instant::now() + Duration::from_secs(spec.start_timeout_secs);
    let mut tries = 0;
    loop {
        tries += 1;
        let port = free_port().map_err(|error| {
            format!("the local model runtime found no free port on 127.0.0.1: {error}")
        })?;
        let mut server = Server::spawn(spec, dir, port).await?;
        let root = format!("http://127.0.0.1:{port}");
        loop {
            if probe::healthy(client, &root).await {
                let pid = server.id().unwrap_or_default();
                match probe::identify(client, &root, port, pid, api_key).await {
                    Ok(props) => return Ok((server, port, props)),
                    Err(not_ours) => {
                        server.stop().await;
                        let (who, what) = match not_ours {
                            probe::NotOurs::OwnerUnknown => (
                                "a program",
                                "Tooltrail could not tell whether it is the llama-server it started",
                            ),
                            _ => (
                                "another program",
                                "it is not the llama-server Tooltrail started",
                            ),
                        };
                        return Err(format!(
                            "{who} answered on 127.0.0.1:{port}, the port chosen for llama-server, and {what}: {}. Nothing was sent to it; ask again to start on another port, and if this happens again, look for the program listening there",
                            not_ours.describe()
                        ));
                    }
                }
            }
            if let Ok(Some(status)) = server.try_wait() {
                let tail = dir.server_log_tail(12);
                let taken = tail.contains("bind") || tail.contains("in use");
                if taken && tries < PORT_TRIES {
                    break;
                }
                return Err(format!(
                    "llama-server stopped before it was ready ({}); the end of its log ({}):\n{tail}",
                    describe_exit(status),
                    dir.server_log().display()
                ));
            }
            if Instant::now() >= deadline {
                server.stop().await;
                return Err(format!(
                    "llama-server was not ready within {} seconds; the end of its log ({}):\n{}",
                    spec.start_timeout_secs,
                    dir.server_log().display(),
                    dir.server_log_tail(12)
                ));
            }
            tokio::time::sleep(READY_POLL).await;
        }
    }
}

/// Watches llama-server, the signals and the leases until it is time to stop; returns the
/// supervisor's exit status.
async fn watch(
    spec: &Spec,
    dir: &RuntimeDir,
    server: &mut Server,
    state: &mut RuntimeState,
) -> i32 {
    let idle = Duration::from_secs(spec.idle_secs);
    // Often enough that an idle stop is on time to a tenth, at most once a second.
    let tick = (idle / 10).clamp(Duration::from_millis(100), Duration::from_secs(1));
    let mut ticks = tokio::time::interval(tick);
    let mut signals = Signals::new();
    let mut last_used = Instant::now();
    let mut in_use = false;
    loop {
        tokio::select! {
            status = server.wait() => {
                let how = status.map_or_else(|error| error.to_string(), describe_exit);
                log(&format!("llama-server stopped by itself ({how}); the end of its log:\n{}", dir.server_log_tail(8)));
                // Removed now, not on the way out: the next question must not find it.
                dir.remove_state_of(state.supervisor_pid);
                return 1;
            }
            name = signals.next() => {
                log(&format!("stopping on {name}"));
                dir.remove_state_of(state.supervisor_pid);
                server.stop().await;
                return 0;
            }
            _ = ticks.tick() => {
                if dir.take_stop_request(state.supervisor_pid) {
                    log("stopping on request (tooltrail models stop)");
                    dir.remove_state_of(state.supervisor_pid);
                    server.stop().await;
                    return 0;
                }
                let held = match Exclusive::try_acquire(&dir.in_use_lock()) {
                    Ok(held) => held,
                    Err(error) => {
                        log(&format!("could not check whether the runtime is in use: {error}"));
                        continue;
                    }
                };
                let Some(held) = held else {
                    in_use = true;
                    continue;
                };
                if in_use {
                    in_use = false;
                    last_used = Instant::now();
                    state.last_used_unix = unix_now();
                    let _ = dir.write_state(state);
                }
                if last_used.elapsed() >= idle {
                    dir.remove_state_of(state.supervisor_pid);
                    drop(held);
                    log(&format!("stopping after {} s unused", spec.idle_secs));
                    server.stop().await;
                    return 0;
                }
            }
        }
    }
}

/// The signals that stop the supervisor.
struct Signals {
    #[cfg(unix)]
    watched: Vec<(&'static str, tokio::signal::unix::Signal)>,
}

impl Signals {
    #[cfg(unix)]
    fn new() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        let watched = [
            ("SIGTERM", SignalKind::terminate()),
            ("SIGINT", SignalKind::interrupt()),
            ("SIGHUP", SignalKind::hangup()),
        ]
        .into_iter()
        .filter_map(|(name, kind)| signal(kind).ok().map(|signal| (name, signal)))
        .collect();
        Self { watched }
    }

    #[cfg(not(unix))]
    fn new() -> Self {
        Self {}
    }

    /// The name of the next signal.
    #[cfg(unix)]
    async fn next(&mut self) -> &'static str {
        if self.watched.is_empty() {
            return std::future::pending().await;
        }
        let waits = self.watched.iter_mut().map(|(name, signal)| {
            Box::pin(async move {
                signal.recv().await;
                *name
            })
        });
        let (name, _, _) = futures::future::select_all(waits).await;
        name
    }

    #[cfg(not(unix))]
    async fn next(&mut self) -> &'static str {
        std::future::pending::<&'static str>().await
    }
}

/// The one line the caller waits for, on the supervisor's stdout.
struct Caller {
    out: Option<std::io::Stdout>,
}

impl Caller {
    fn stdout() -> Self {
        Self {
            out: Some(std::io::stdout()),
        }
    }

    fn ready(&mut self) {
        self.say("ready");
    }

    fn failed(&mut self, message: &str) -> i32 {
        // One line: the sentence's own line breaks (a log's tail) travel escaped.
        self.say(&format!("failed: {}", message.replace('\n', "\\n")));
        1
    }

    /// Said once; the caller stops reading after the first line.
    fn say(&mut self, line: &str) {
        if let Some(out) = self.out.take() {
            let mut out = out.lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }
}

/// A line in the supervisor's log (its stderr, which the caller points at `supervisor.log`).
/// Stamped with the Unix time to the millisecond, which is what a start-up is measured in
/// (`scripts/bench-local-runtime` reads them).
fn log(line: &str) {
    eprintln!("{}", super::state::stamped(line));
}

fn new_api_key() -> String {
    let bytes: [u8; 24] = rand::random();
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => "no exit status".to_string(),
    }
}
