//! The sandbox's integration tests: one module a file of this folder, built into one binary so
//! that the crate and what it depends on are linked once rather than once a file. One file's
//! tests: `cargo test -p tooltrail-sandbox --test sandbox -- FILE::`.

mod handle;
mod policy;
mod workspace;
