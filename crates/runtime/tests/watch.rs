//! The watch that ties llama-server to its supervisor, on its own: the supervisor is started
//! as it is for a question, against the stand-in for llama-server, with Linux's parent-death
//! signal switched off (macOS has none; Windows also holds llama-server in a Job Object), and
//! then killed outright. llama-server must go all the same. And a stop as `models stop` asks
//! it, with the stop request alone (SIGTERM switched off: Windows has no signal to send),
//! ends llama-server and its watcher. Processes are looked at through `sysinfo`, on every
//! system.
//!
//! The supervisor, the step that becomes llama-server and the watcher are this test's own
//! program started again in hidden modes, as they are the `tooltrail` binary's; so is the
//! stand-in. That takes a `main` of the test's own (`harness = false`), which serves those
//! modes first, then starts itself again with `TOOLTRAIL_LLAMA_SERVER` pointing at itself.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    tooltrail_runtime::supervisor::maybe_run_supervisor();
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    // llama-server's command line, as the supervisor gives it: be the stand-in.
    if args.first().is_some_and(|arg| arg == "--model") {
        return stand_in(args);
    }
    watch::main()
}

fn stand_in(args: Vec<OsString>) -> ExitCode {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    match runtime.block_on(tooltrail_test_support::stand_in::run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error:#}");
            ExitCode::FAILURE
        }
    }
}

mod watch {
    use std::path::Path;
    use std::process::ExitCode;
    use std::time::{Duration, Instant};

    use sysinfo::{Pid, ProcessRefreshKind, ProcessStatus, ProcessesToUpdate, System, UpdateKind};
    use tooltrail_runtime::supervisor::{
        LocalModel, PARENT_DEATH_SIGNAL_ENV, Runtime, RuntimeOptions, RuntimeState, STOP_SIGNAL_ENV,
    };
    use tooltrail_test_support::gguf::GgufBuilder;

    /// Long enough for anything but "never": speed is not what is tested.
    const DEADLINE: Duration = Duration::from_secs(20);

    pub fn main() -> ExitCode {
        let exe = std::env::current_exe().unwrap();
        if std::env::var_os("TOOLTRAIL_LLAMA_SERVER").is_none() {
            let status = std::process::Command::new(&exe)
                .args(std::env::args_os().skip(1))
                .env("TOOLTRAIL_LLAMA_SERVER", &exe)
                .env(PARENT_DEATH_SIGNAL_ENV, "off")
                .env(STOP_SIGNAL_ENV, "off")
                .status()
                .unwrap();
            return if status.success() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            };
        }
        let tests: [(&str, fn()); 2] = [
            (
                "llama_server_goes_when_its_supervisor_is_killed_by_the_watch_alone",
                llama_server_goes_when_its_supervisor_is_killed_by_the_watch_alone,
            ),
            (
                "a_runtime_stopped_as_asked_leaves_no_watch_behind",
                a_runtime_stopped_as_asked_leaves_no_watch_behind,
            ),
        ];
        for (name, test) in tests {
            println!("test {name} ...");
            test();
            println!("test {name} ... ok");
        }
        ExitCode::SUCCESS
    }

    /// A runtime started as a question starts it, with the parent-death signal off (which
    /// llama-server's log confirms on Linux), and its watcher.
    fn start(data: &Path) -> (Runtime, RuntimeState, u32) {
        let path = data.join("tiny.gguf");
        std::fs::write(
            &path,
            GgufBuilder::new()
                .string("general.architecture", "llama")
                .u32("llama.context_length", 4096)
                .tensor("token_embd.weight", &[64, 64], 12)
                .data_bytes(10_000)
                .build(),
        )
        .unwrap();
        let mut model = LocalModel::new("tiny", path);
        model.trained_context = Some(4096);
        let options = RuntimeOptions {
            context_size: Some(2048),
            idle: Duration::from_secs(600),
            start_timeout: Duration::from_secs(60),
        };
        let runtime = Runtime::new(data);
        let tokio = tokio::runtime::Runtime::new().unwrap();
        let running = tokio
            .block_on(runtime.ensure_running(&model, &options))
            .unwrap();
        drop(running);
        let state = runtime.status().unwrap().state;
        if cfg!(target_os = "linux") {
            let log = std::fs::read_to_string(runtime.dir().server_log()).unwrap();
            assert!(
                log.contains("without the parent-death signal"),
                "the parent-death signal was not switched off: {log}"
            );
        }
        assert!(alive(state.server_pid));
        let watcher = watcher_of(state.server_pid).expect("no watcher runs for llama-server");
        (runtime, state, watcher)
    }

    fn llama_server_goes_when_its_supervisor_is_killed_by_the_watch_alone() {
        let data = tempfile::tempdir().unwrap();
        let (_runtime, state, _watcher) = start(data.path());
        kill(state.supervisor_pid);
        let gone = wait_until(|| !alive(state.server_pid));
        if !gone {
            kill(state.server_pid);
        }
        assert!(
            gone,
            "llama-server (pid {}) still runs {} s after its supervisor was killed",
            state.server_pid,
            DEADLINE.as_secs()
        );
    }

    fn a_runtime_stopped_as_asked_leaves_no_watch_behind() {
        let data = tempfile::tempdir().unwrap();
        let (runtime, state, watcher) = start(data.path());
        let tokio = tokio::runtime::Runtime::new().unwrap();
        let stopped = tokio.block_on(runtime.stop()).unwrap();
        assert_eq!(
            stopped.map(|stopped| stopped.server_pid),
            Some(state.server_pid)
        );
        let gone = wait_until(|| !alive(state.server_pid) && !alive(watcher));
        for pid in [state.server_pid, watcher, state.supervisor_pid] {
            if alive(pid) {
                kill(pid);
            }
        }
        assert!(gone, "llama-server or its watcher still runs after a stop");
        let log = std::fs::read_to_string(runtime.dir().supervisor_log()).unwrap();
        assert!(
            log.contains("stopping on request"),
            "the supervisor did not stop on the stop request: {log}"
        );
    }

    /// What `read` makes of process `pid`, looked up on its own; `None` once it is gone.
    fn with_process<T>(pid: u32, read: impl FnOnce(&sysinfo::Process) -> T) -> Option<T> {
        let mut system = System::new();
        let pid = Pid::from_u32(pid);
        system.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            true,
            ProcessRefreshKind::nothing(),
        );
        system.process(pid).map(read)
    }

    /// Whether `pid` runs (an ended process not yet reaped does not).
    fn alive(pid: u32) -> bool {
        with_process(pid, |process| {
            !matches!(
                process.status(),
                ProcessStatus::Zombie | ProcessStatus::Dead
            )
        })
        .unwrap_or(false)
    }

    /// The watcher started for llama-server `pid`, by its command line.
    fn watcher_of(pid: u32) -> Option<u32> {
        let mut system = System::new();
        system.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::nothing().with_cmd(UpdateKind::Always),
        );
        let pid = pid.to_string();
        system.processes().iter().find_map(|(id, process)| {
            let cmd = process.cmd();
            let watches = cmd
                .windows(2)
                .any(|pair| pair[0] == "__runtime-watch" && pair[1] == pid.as_str());
            watches.then(|| id.as_u32())
        })
    }

    fn kill(pid: u32) {
        with_process(pid, sysinfo::Process::kill);
    }

    fn wait_until(done: impl Fn() -> bool) -> bool {
        let deadline = Instant::now() + DEADLINE;
        while Instant::now() < deadline {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        done()
    }
}
