//! The agent's integration tests: one module a file of this folder, built into one binary so
//! that the crate and what it depends on are linked once rather than once a file. One file's
//! tests: `cargo test -p tooltrail-agent --test agent -- FILE::`.

// What the files share: an agent on the built-in tools.
mod support;

mod context;
mod loops;
mod tool_modes;
mod turn;
