//! A test whose dependency is missing (node, a model server, `mount`, a keychain): outside CI
//! it says what is missing and returns without running; under `CI=true` it fails with that
//! same sentence, so that a CI run can never count as passed a test that ran nothing.

/// Whether this is a CI run (`CI=true`, as CI sets it).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|ci| ci.eq_ignore_ascii_case("true") || ci == "1")
}

/// Says that the test cannot run because of `why` (a sentence naming the dependency and how
/// to get it). Under `CI=true` this fails the test with that sentence; otherwise it prints
/// `skipped: …` and the caller returns.
#[track_caller]
#[allow(clippy::panic)] // failing the test is the point, and only under CI
pub fn dependency_missing(why: &str) {
    if in_ci() {
        panic!("{why}; under CI=true a test whose dependency is missing fails instead of skipping");
    }
    eprintln!("skipped: {why}");
}
