//! llama.cpp's `llama-server` as a supervised child, one per user, shared by the app,
//! `tooltrail ask` and `tooltrail serve`.
//!
//! A question for the `local` provider asks [`Runtime::ensure_running`] for an endpoint. When
//! a runtime for that model is up (its state file says so, its supervisor holds its lock, and
//! llama-server answers `/health` and proves it is the child started, see `probe::identify`),
//! that is the answer, in a millisecond or two. Otherwise the
//! caller starts one: the Tooltrail program it runs in (the `tooltrail` binary or the desktop
//! app) is started again as a supervisor in a hidden mode ([`maybe_run_supervisor`]), in a
//! session of its own, so it outlives the `ask` that started it and the next question reuses
//! it. The supervisor starts llama-server on 127.0.0.1, on a free port, with a random API key,
//! the model's GGUF, `--jinja`, a context size chosen from the model and the free memory
//! ([`choose_context`]) and a thread per core, and ties llama-server's life to its own
//! (`server.rs`: a watch on a pipe on every system, see `watch.rs`, with `PR_SET_PDEATHSIG` on
//! Linux and a Job Object on Windows besides): kill the supervisor, even with SIGKILL, and
//! llama-server goes too.
//!
//! The runtime stops by itself once no question has used it for the idle time (10 minutes
//! unless `[local] idle_minutes` says otherwise): each question holds a [`Lease`] (a shared
//! file lock) while it runs, and the supervisor counts idle time only while none is held
//! (see `daemon.rs` for why leases rather than watching llama-server). `tooltrail models stop`
//! stops it at once ([`Runtime::stop`]); `tooltrail models ps` shows it ([`Runtime::status`]).
//! When llama-server crashes, the question in flight gets the model client's error, the
//! supervisor clears the state and exits, and the next question starts a new runtime.
//!
//! Everything lives in `<data>/runtime/` ([`RuntimeDir`]): `state.json` (owner-only: it holds
//! the key), the locks, `llama-server.log` and `supervisor.log`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tooltrail_runtime::supervisor::SupervisorError> {
//! use tooltrail_runtime::supervisor::{LocalModel, Runtime, RuntimeOptions};
//! // First thing in `main`: serve the hidden modes when started as the supervisor.
//! tooltrail_runtime::supervisor::maybe_run_supervisor();
//! let runtime = Runtime::new(std::path::Path::new("/home/me/.local/share/tooltrail"));
//! let model = LocalModel::new("qwen3-1.7b", "/home/me/.local/share/tooltrail/models/qwen3-1.7b.gguf");
//! let running = runtime.ensure_running(&model, &RuntimeOptions::default()).await?;
//! println!("ask {} with key ****", running.endpoint.base_url);
//! // Keep `running.lease` for as long as the question runs.
//! # Ok(()) }
//! ```

mod binary;
mod context;
mod daemon;
mod error;
mod exec;
mod identity;
#[cfg(windows)]
mod job;
mod launch;
mod locks;
mod probe;
mod server;
mod spec;
mod state;
mod watch;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub use binary::{BinarySource, LlamaServer, PINNED_VERSION, SearchPlaces};
pub use context::{ContextInputs, DEFAULT_CONTEXT, available_memory, choose_context, threads};
pub use error::SupervisorError;
pub use exec::PARENT_DEATH_SIGNAL_ENV;
pub use locks::Lease;
pub(crate) use state::stamped;
pub use state::{RuntimeDir, RuntimeState, unix_now};

use locks::Exclusive;
use spec::{SUPERVISE_ARG, Spec};

/// The idle time unless configured.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(10 * 60);
/// How long llama-server may take to load a model unless configured.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(180);
/// How long [`Runtime::stop`] waits for a supervisor to stop before killing it.
const STOP_WAIT: Duration = Duration::from_secs(8);

/// The program that serves the supervisor's modes in this process, once registered.
static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Serves the runtime's hidden modes when this process was started as the supervisor (or as
/// the step that becomes llama-server, or the watch that ends it), and then exits; otherwise
/// registers this program as able to serve them and returns. Call it first thing in `main`,
/// before any thread starts.
pub fn maybe_run_supervisor() {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match args.first().and_then(|mode| mode.to_str()) {
        Some(SUPERVISE_ARG) => std::process::exit(daemon::run(&args[1..])),
        Some(exec::EXEC_ARG) => std::process::exit(exec::run(&args[1..])),
        Some(watch::WATCH_ARG) => std::process::exit(watch::run(&args[1..])),
        _ => {}
    }
    if let Ok(exe) = std::env::current_exe() {
        let _ = PROGRAM.set(exe);
    }
}

/// Whether this system can run the local model runtime: Linux, macOS and Windows. On each,
/// llama-server ends with its supervisor (the watch everywhere; the parent-death signal on
/// Linux, a Job Object on Windows), and `models stop` reaches the supervisor with a stop
/// request (and SIGTERM on Unix). Front ends ask this before they offer a model download
/// whose only use is this runtime.
pub const fn runtime_supported() -> bool {
    cfg!(any(unix, windows))
}

/// The model a runtime serves, with what its metadata says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalModel {
    /// Its name in the models folder (llama-server serves it under this name too).
    pub name: String,
    pub path: PathBuf,
    /// The context length it was trained for.
    pub trained_context: Option<u32>,
    /// Whether the GGUF carries a chat template.
    pub has_chat_template: bool,
    /// Its key-value cache per token, when the metadata tells.
    pub kv_bytes_per_token: Option<u64>,
}

impl LocalModel {
    /// A model known by name and file only.
    pub fn new(name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self {
            name: name.into(),
            path: path.into(),
            trained_context: None,
            has_chat_template: true,
            kv_bytes_per_token: None,
        }
    }
}

/// How the runtime runs, from `[local]` in `config.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeOptions {
    /// `[local] context_size`; unset, chosen (see [`choose_context`]).
    pub context_size: Option<u32>,
    /// Unused this long, the runtime stops (`[local] idle_minutes`).
    pub idle: Duration,
    pub start_timeout: Duration,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        Self {
            context_size: None,
            idle: DEFAULT_IDLE,
            start_timeout: DEFAULT_START_TIMEOUT,
        }
    }
}

/// Where a question sends its requests.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    pub api_key: String,
    /// The model's name, as llama-server serves it.
    pub model: String,
    pub context_size: u32,
    /// Whether the chat template renders tools; when not, tools go in the prompt.
    pub tools_in_template: bool,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("model", &self.model)
            .field("context_size", &self.context_size)
            .field("tools_in_template", &self.tools_in_template)
            .finish()
    }
}

impl From<&RuntimeState> for Endpoint {
    fn from(state: &RuntimeState) -> Self {
        Self {
            base_url: state.base_url(),
            api_key: state.api_key.clone(),
            model: state.model.clone(),
            context_size: state.context_size,
            tools_in_template: state.tools_in_template,
        }
    }
}

/// A runtime ready for a question, held for it.
#[derive(Debug)]
pub struct Running {
    pub endpoint: Endpoint,
    /// Keeps the runtime from stopping for being idle while the question runs.
    pub lease: Lease,
    /// Whether this call started it (the question waited for the model to load).
    pub started: bool,
}

/// The runtime as `tooltrail models ps` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeStatus {
    pub state: RuntimeState,
    /// A question holds it now.
    pub in_use: bool,
    /// Resident memory of llama-server and of the supervisor, where the system tells.
    pub server_rss: Option<u64>,
    pub supervisor_rss: Option<u64>,
}

impl RuntimeStatus {
    /// Seconds until it stops for being idle, at `now_unix`; `None` while a question holds it.
    pub fn stops_in_secs(&self, now_unix: u64) -> Option<u64> {
        if self.in_use {
            return None;
        }
        Some((self.state.last_used_unix + self.state.idle_secs).saturating_sub(now_unix))
    }
}

/// The user's runtime, found through its folder.
#[derive(Debug, Clone)]
pub struct Runtime {
    dir: RuntimeDir,
}

impl Runtime {
    /// The runtime whose files are in `<data_dir>/runtime/`.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            dir: RuntimeDir::in_data_dir(data_dir),
        }
    }

    pub fn dir(&self) -> &RuntimeDir {
        &self.dir
    }

    /// A runtime serving `model`, started when none is (see the module's docs), and held
    /// for the question until the returned lease is dropped. A runtime serving another model,
    /// or with another configured context size, is stopped first.
    pub async fn ensure_running(
        &self,
        model: &LocalModel,
        options: &RuntimeOptions,
    ) -> Result<Running, SupervisorError> {
        if !runtime_supported() {
            return Err(SupervisorError::Unsupported);
        }
        let program = PROGRAM.get().ok_or(SupervisorError::CannotSupervise)?;
        if !model.path.is_file() {
            return Err(SupervisorError::ModelFileMissing {
                path: model.path.clone(),
            });
        }
        self.dir.create()?;
        let in_use = self.dir.in_use_lock();
        let lease = blocking(move || Lease::acquire(&in_use)).await?;
        if let Some(state) = self.usable(model, options).await {
            return Ok(running(&state, lease, false));
        }
        let start_lock = self.dir.start_lock();
        let starting = blocking(move || Exclusive::acquire(&start_lock)).await?;
        // Another question may have started it while this one waited for the lock.
        if let Some(state) = self.usable(model, options).await {
            return Ok(running(&state, lease, false));
        }
        self.stop().await?;
        let binary = SearchPlaces::from_env().find()?;
        let spec = self.spec(model, options, &binary);
        let state = launch::start(program, &spec, &self.dir).await?;
        drop(starting);
        Ok(running(&state, lease, true))
    }

    /// The running runtime, if any.
    pub fn status(&self) -> Option<RuntimeStatus> {
        let state = self.dir.read_state()?;
        if !locks::is_held(&self.dir.alive_lock()) {
            return None;
        }
        Some(RuntimeStatus {
            in_use: locks::is_held(&self.dir.in_use_lock()),
            server_rss: rss_bytes(state.server_pid),
            supervisor_rss: rss_bytes(state.supervisor_pid),
            state,
        })
    }

    /// Stops the runtime now, whether or not a question uses it; returns what was stopped.
    /// The supervisor is asked (SIGTERM) and, when it does not stop in time, killed, which
    /// takes llama-server with it.
    pub async fn stop(&self) -> Result<Option<RuntimeState>, SupervisorError> {
        let state = self.dir.read_state();
        let alive = self.dir.alive_lock();
        let Some((pid, lock_start)) = supervisor_pid(&alive) else {
            // A state file whose supervisor died without removing it (killed outright).
            if state.is_some() {
                let _ = std::fs::remove_file(self.dir.root().join("state.json"));
            }
            return Ok(None);
        };
        // The id must still name the supervisor that wrote it: the same start time as it
        // recorded (in its lock, else in the state file).
        let recorded = lock_start.or_else(|| {
            state
                .as_ref()
                .filter(|state| state.supervisor_pid == pid)
                .and_then(|state| state.supervisor_start)
        });
        if !identity::same_process(pid, recorded) {
            return Err(SupervisorError::NotTheSupervisor {
                pid,
                lock: alive.clone(),
            });
        }
        ask_to_stop(&self.dir, pid);
        wait_while(STOP_WAIT, || locks::is_held(&alive)).await;
        if locks::is_held(&alive) {
            kill(pid);
            wait_while(Duration::from_secs(2), || locks::is_held(&alive)).await;
        }
        if !locks::is_held(&alive) {
            // The lock goes as the supervisor ends, a moment before the process itself, which
            // a busy machine can stretch: stopped means nothing of it still runs.
            wait_while(Duration::from_secs(2), || {
                identity::still_running(pid, recorded)
            })
            .await;
            // Not read when SIGTERM stopped it first; nothing is left to ask.
            self.dir.take_stop_request(pid);
        }
        if let Some(state) = &state {
            self.dir.remove_state_of(state.supervisor_pid);
        }
        Ok(state)
    }

    /// The runtime, when it serves `model` as configured and answers.
    async fn usable(&self, model: &LocalModel, options: &RuntimeOptions) -> Option<RuntimeState> {
        let state = self.status()?.state;
        let same_context = options.context_size.is_none_or(|tokens| {
            tokens.min(model.trained_context.unwrap_or(u32::MAX)) == state.context_size
        });
        if state.model_path != model.path || !same_context {
            return None;
        }
        // The port is the state file's: proven to be its llama-server's before a question
        // sends it the key (see `probe::identify`).
        let client = probe::client();
        let root = state.root_url();
        if !probe::healthy(&client, &root).await {
            return None;
        }
        probe::identify(&client, &root, state.port, state.server_pid, &state.api_key)
            .await
            .ok()
            .map(|_| state)
    }

    fn spec(&self, model: &LocalModel, options: &RuntimeOptions, binary: &LlamaServer) -> Spec {
        let model_bytes = std::fs::metadata(&model.path).map_or(0, |meta| meta.len());
        Spec {
            dir: self.dir.root().to_path_buf(),
            binary: binary.path.clone(),
            binary_source: binary.source.as_str().to_string(),
            model: model.name.clone(),
            model_path: model.path.clone(),
            model_has_template: model.has_chat_template,
            context_size: choose_context(ContextInputs {
                configured: options.context_size,
                trained: model.trained_context,
                model_bytes,
                kv_bytes_per_token: model.kv_bytes_per_token,
                available_bytes: available_memory(),
            }),
            threads: threads(),
            idle_secs: options.idle.as_secs().max(1),
            start_timeout_secs: options.start_timeout.as_secs().max(1),
        }
    }
}

fn running(state: &RuntimeState, lease: Lease, started: bool) -> Running {
    Running {
        endpoint: Endpoint::from(state),
        lease,
        started,
    }
}

/// Runs a lock wait off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, SupervisorError> + Send + 'static,
) -> Result<T, SupervisorError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| SupervisorError::Io {
            what: "wait for the local model runtime's lock".to_string(),
            source: std::io::Error::other(error.to_string()),
        })?
}

/// The live supervisor's process id, and its start time where the system tells, written in
/// the lock it holds (`PID START`).
fn supervisor_pid(alive: &Path) -> Option<(u32, Option<u64>)> {
    if !locks::is_held(alive) {
        return None;
    }
    let text = std::fs::read_to_string(alive).ok()?;
    let mut fields = text.split_whitespace();
    let pid = fields.next()?.parse().ok()?;
    Some((pid, fields.next().and_then(|start| start.parse().ok())))
}

/// Waits while `holds`, checking every 20 ms, for at most `limit`.
async fn wait_while(limit: Duration, holds: impl Fn() -> bool) {
    let deadline = Instant::now() + limit;
    while holds() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `off` leaves SIGTERM out of `models stop`, so that a test shows the stop request alone (the
/// way Windows asks) does the job.
pub const STOP_SIGNAL_ENV: &str = "TOOLTRAIL_RUNTIME_STOP_SIGNAL";

/// Asks the supervisor `pid` (checked to be the runtime's) to stop llama-server and end: the
/// stop request on every system, and SIGTERM on Unix, which is heard at once.
fn ask_to_stop(dir: &RuntimeDir, pid: u32) {
    // Without the file, Unix still has the signal; elsewhere the kill after the wait stops it.
    let _ = dir.request_stop(pid);
    #[cfg(unix)]
    if std::env::var_os(STOP_SIGNAL_ENV).is_none_or(|value| value != "off") {
        use rustix::process::{Pid, Signal, kill_process};
        if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
            let _ = kill_process(pid, Signal::TERM);
        }
    }
}

/// Ends the supervisor `pid` outright, when it did not stop when asked. Its llama-server
/// follows: the parent-death signal on Linux, the Job Object on Windows, the watch everywhere.
#[cfg(unix)]
fn kill(pid: u32) {
    use rustix::process::{Pid, Signal, kill_process};
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = kill_process(pid, Signal::KILL);
    }
}

#[cfg(windows)]
fn kill(pid: u32) {
    let _ = identity::with_process(pid, sysinfo::Process::kill);
}

#[cfg(not(any(unix, windows)))]
fn kill(_pid: u32) {}

/// A process's resident memory, from `/proc` (`None` elsewhere).
fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A runtime whose folder is in a new temporary folder (kept while the first is).
    fn runtime_in_a_new_folder() -> (tempfile::TempDir, Runtime) {
        let data = tempfile::tempdir().unwrap();
        let runtime = Runtime::new(data.path());
        runtime.dir().create().unwrap();
        (data, runtime)
    }

    #[test]
    fn the_runtime_is_offered_on_linux_macos_and_windows() {
        assert_eq!(
            runtime_supported(),
            cfg!(any(target_os = "linux", target_os = "macos", windows))
        );
    }

    /// The state file names a runtime whose port another program now holds (the server
    /// died and the port was taken before the supervisor noticed): a program that answers
    /// `/health` and a request without the key is not reused, and never sees the key.
    #[tokio::test]
    async fn attack_runtime_a_port_that_answers_without_the_key_is_not_reused() {
        use std::sync::{Arc, Mutex};
        let seen: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
        let record = Arc::clone(&seen);
        let router = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let record = Arc::clone(&record);
            async move {
                let keyed = request.headers().contains_key("authorization");
                record
                    .lock()
                    .unwrap()
                    .push((request.uri().path().to_string(), keyed));
                "{\"status\":\"ok\"}"
            }
        });
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, router).await });

        let (data, runtime) = runtime_in_a_new_folder();
        let model = LocalModel::new("tiny", data.path().join("tiny.gguf"));
        let held = Exclusive::acquire(&runtime.dir().alive_lock()).unwrap();
        runtime
            .dir()
            .write_state(&RuntimeState {
                supervisor_pid: std::process::id(),
                supervisor_start: None,
                server_pid: std::process::id(),
                server_start: None,
                port,
                api_key: "the-runtime-key".into(),
                model: "tiny".into(),
                model_path: model.path.clone(),
                context_size: 2048,
                threads: 1,
                binary: "/bin/llama-server".into(),
                binary_source: "PATH".into(),
                started_unix: 1,
                last_used_unix: 1,
                idle_secs: 600,
                tools_in_template: false,
            })
            .unwrap();

        assert!(
            runtime
                .usable(&model, &RuntimeOptions::default())
                .await
                .is_none()
        );
        let seen = seen.lock().unwrap().clone();
        assert_eq!(
            seen,
            [
                ("/health".to_string(), false),
                ("/props".to_string(), false)
            ]
        );
        drop(held);
    }

    /// The lock names a process id the system has since given to another process (here a
    /// `sleep` of the test's own, with a start time that is not its own): it is not signalled.
    #[tokio::test]
    #[cfg(target_os = "linux")]
    async fn attack_runtime_stop_does_not_signal_a_reused_process_id() {
        let (_data, runtime) = runtime_in_a_new_folder();
        let mut bystander = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let started = identity::start_time(bystander.id()).unwrap();
        let held = Exclusive::acquire(&runtime.dir().alive_lock()).unwrap();
        let mut file = held.into_file();
        std::io::Write::write_all(
            &mut file,
            format!("{} {}", bystander.id(), started + 1).as_bytes(),
        )
        .unwrap();

        let error = runtime.stop().await.unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "process {}, which {} names as the local model runtime's supervisor, is not that supervisor any more (it started at another time), so it was not signalled; if a runtime is still running, end it from the system's process list",
                bystander.id(),
                runtime.dir().alive_lock().display()
            )
        );
        assert!(
            bystander.try_wait().unwrap().is_none(),
            "the bystander was signalled"
        );
        bystander.kill().unwrap();
        bystander.wait().unwrap();
        drop(file);
    }

    /// A supervisor that lets its lock go well before it ends, as one descheduled on a busy
    /// machine does between the two: `stop` returns only once it has ended.
    #[tokio::test]
    #[cfg(target_os = "linux")]
    async fn stop_returns_once_the_supervisor_has_ended_not_when_its_lock_is_free() {
        use std::io::{BufRead, Write};

        let (_data, runtime) = runtime_in_a_new_folder();
        let lock = runtime.dir().alive_lock();
        std::fs::write(&lock, "").unwrap();
        let script = "import fcntl, os, signal, sys, time\n\
            lock = open(sys.argv[1], 'r+')\n\
            fcntl.flock(lock, fcntl.LOCK_EX)\n\
            def end(*_):\n    lock.close()\n    time.sleep(0.8)\n    os._exit(0)\n\
            signal.signal(signal.SIGTERM, end)\n\
            print('locked', flush=True)\n\
            while True:\n    time.sleep(1)\n";
        let mut supervisor = std::process::Command::new("python3")
            .arg("-c")
            .arg(script)
            .arg(&lock)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect(
                "python3 plays the supervisor in this test; install it (apt-get install python3)",
            );
        let mut said = String::new();
        std::io::BufReader::new(supervisor.stdout.take().unwrap())
            .read_line(&mut said)
            .unwrap();
        assert_eq!(said, "locked\n");
        let started = identity::start_time(supervisor.id()).unwrap();
        let mut file = std::fs::OpenOptions::new().write(true).open(&lock).unwrap();
        write!(file, "{} {started}", supervisor.id()).unwrap();

        runtime.stop().await.unwrap();
        assert!(
            supervisor.try_wait().unwrap().is_some(),
            "models stop returned while the supervisor still ran"
        );
    }
}
