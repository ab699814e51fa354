//! `llama-server-stand-in`: answers as llama.cpp's `llama-server` does to what Tooltrail's
//! runtime supervisor asks of it (see `tooltrail_test_support::stand_in`), for tests that run
//! the supervisor without a real model server:
//!
//! ```sh
//! TOOLTRAIL_LLAMA_SERVER=target/debug/llama-server-stand-in tooltrail ask "hello"
//! ```

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    match tooltrail_test_support::stand_in::run(std::env::args_os().skip(1).collect()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
