//! The built-in tools' integration tests: one module a file of this folder, built into one
//! binary so that the crate and what it depends on are linked once rather than once a file. One
//! file's tests: `cargo test -p tooltrail-tools --test tools -- FILE::`.

// What the files share: the fixture tree (its files are for Unix, as are the tests using it).
#[cfg(unix)]
mod support {
    pub mod fixture;
}

mod acceptance;
mod changed;
mod code_query;
mod execute_bash;
mod file_tools;
mod search_tools;
mod snippets;
