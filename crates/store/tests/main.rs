//! The store's integration tests: one module a file of this folder, built into one binary so
//! that the crate and what it depends on are linked once rather than once a file. One file's
//! tests: `cargo test -p tooltrail-store --test store -- FILE::`.

// What the files share: scripted turns.
mod support {
    pub mod fixture;
}

mod concurrency;
mod crash;
mod open_tasks;
mod record;
mod round_trip;
mod tokens;
