//! The model client's integration tests: one module a file of this folder, built into one
//! binary so that the crate and what it depends on are linked once rather than once a file. One
//! file's tests: `cargo test -p tooltrail-llm --test llm -- FILE::`.

mod failures;
mod fixtures;
mod prompt_mode;
mod real_llm;
mod requests;
mod streaming;
mod window;
