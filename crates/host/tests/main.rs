//! The host's integration tests: one module a file of this folder, built into one binary so
//! that the crate and what it depends on are linked once rather than once a file. One file's
//! tests: `cargo test -p tooltrail-host --test host -- FILE::`.

mod open_tasks;
mod server_requests;
mod views;
mod warm_up;
