//! The MCP client's integration tests: one module a file of this folder, built into one binary
//! so that the crate and what it depends on are linked once rather than once a file. One file's
//! tests: `cargo test -p tooltrail-mcp --test mcp -- FILE::`.

// What the files share: the reference servers, their fixtures, a manager and a registry.
#[macro_use]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod support;

mod content;
mod interop;
mod resources_prompts;
mod skills;
mod standing_stream;
mod tasks;
