//! The local runtime's integration tests (but `watch.rs`, a binary of its own with its own
//! `main`): one module a file of this folder, built into one binary so that the crate and what
//! it depends on are linked once rather than once a file. One file's tests: `cargo test -p
//! tooltrail-runtime --test runtime -- FILE::`.

mod detect;
mod models;
mod real_gguf;
