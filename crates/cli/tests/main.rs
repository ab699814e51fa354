//! The command line's integration tests: one module a file of this folder, built into one
//! binary so that the engine is linked once rather than once a file. One file's tests:
//! `cargo test -p tooltrail-cli --test cli -- FILE::` (e.g. `-- mcp_sign_in::`).
//!
//! The tests of every file now share one process and run side by side, so none may change
//! what the process holds for all (its environment, its working folder): each runs
//! `tooltrail` as a child with an environment of its own.

// What the files share: running `tooltrail` (run), the MCP reference servers (mcp) and the
// local runtime's processes (runtime).
mod support {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    pub mod mcp;
    pub mod run;
    pub mod runtime;
}

mod cli;
mod code_query;
mod context_window;
mod file_write;
mod hostile_text;
mod keychain;
mod local_runtime;
mod local_runtime_double;
mod mcp;
mod mcp_content;
mod mcp_resources;
mod mcp_secrets;
mod mcp_sign_in;
mod mcp_tasks;
mod models;
mod network;
mod otel;
mod project_instructions;
mod providers;
mod real_llm;
mod real_llm_context;
mod replay;
mod run_script;
mod security;
mod serve;
mod snippets;
mod tool_modes;
mod toolchains;
