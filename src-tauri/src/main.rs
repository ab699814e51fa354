// No console window next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    // The OS sandbox's helper is this binary in a hidden mode; this returns at once otherwise.
    tooltrail_tools::maybe_run_helper();
    match tooltrail_app::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tooltrail: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
