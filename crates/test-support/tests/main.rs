//! The test support crate's integration tests, and the checks of the workspace as a whole (the
//! map against the manifests, the length of functions, every test file built): one module a
//! file of this folder, built into one binary. One file's tests: `cargo test -p
//! tooltrail-test-support --test test-support -- FILE::`.

mod architecture_map;
mod function_length;
mod server;
mod stand_in;
mod test_binaries;
