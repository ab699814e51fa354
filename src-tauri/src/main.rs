// No console window next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    // The OS sandbox's helper is this binary in a hidden mode; this returns at once otherwise.
    tooltrail_host::maybe_run_helper();
    // So is the supervisor of the local model runtime, which a question to the `local`
    // provider starts from here as from the command line.
    tooltrail_host::maybe_run_supervisor();
    #[cfg(target_os = "linux")]
    webkit_switches();
    match tooltrail_app::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tooltrail: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// WebKit reads these switches from the environment when its processes start. Changing the
/// environment of a running program is unsafe, so the app starts itself again with them set:
/// `exec` keeps the process id and leaves nothing behind. A switch the user set is left alone.
///
/// - Without a GPU render node (a virtual machine, a remote or virtual display), WebKitGTK's
///   DMA-BUF renderer falls back to software OpenGL: slower, about 95 MiB heavier, and on some
///   virtual machines a blank window. Its shared-memory path draws the same page.
/// - JavaScriptCore's optimising compilers (DFG, and FTL above it) cost the window 3 MiB as soon
///   as the UI has started; the baseline JIT alone streams an answer as fast (p95 10 ms either
///   way, `scripts/bench-app`) and runs heavy scripts about 10% slower.
/// - The baseline JIT compiles a function once it has run 500 times (100 when it loops): most
///   of the UI's code runs that often only while it starts, and its machine code and profiles
///   then stay. At 5,000 (1,000) the idle window keeps 3 MiB less, and what runs on, such as
///   streaming an answer, is compiled all the same (p95 11–12 ms with or without).
#[cfg(target_os = "linux")]
fn webkit_switches() {
    use std::os::unix::process::CommandExt;

    let mut switches = vec![
        ("JSC_useDFGJIT", "false"),
        ("JSC_thresholdForJITAfterWarmUp", "5000"),
        ("JSC_thresholdForJITSoon", "1000"),
    ];
    if !has_render_node() {
        switches.push(("WEBKIT_DISABLE_DMABUF_RENDERER", "1"));
    }
    switches.retain(|(name, _)| std::env::var_os(name).is_none());
    if switches.is_empty() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let mut again = std::process::Command::new(exe);
    if let Some(name) = args.next() {
        again.arg0(name);
    }
    // Returns only if the app could not be started again; it then goes on as it is.
    let _ = again.args(args).envs(switches).exec();
}

#[cfg(target_os = "linux")]
fn has_render_node() -> bool {
    std::fs::read_dir("/dev/dri").is_ok_and(|entries| {
        entries
            .flatten()
            .any(|entry| entry.file_name().to_string_lossy().starts_with("renderD"))
    })
}
