//! A crate whose integration tests are one binary (`autotests = false` in its `Cargo.toml`, and
//! a `[[test]]` whose `tests/main.rs` declares a module a file) builds a file of `tests/` only
//! when `main.rs` names it: cargo no longer finds it by itself. A file added there and not
//! named would never run, silently; this fails instead, naming it.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use toml::Table;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The modules `main` declares at its top level (`mod NAME;`, attributes before it aside).
fn declared_modules(main: &str) -> BTreeSet<String> {
    main.lines()
        .filter_map(|line| line.strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_owned)
        .collect()
}

/// Every `tests/*.rs` file of a crate that builds its tests only as its manifest says, which no
/// test binary of the manifest builds (as its root or as a module of its `tests/main.rs`).
fn unbuilt_test_files(krate: &Path) -> Vec<String> {
    let manifest: Table = std::fs::read_to_string(krate.join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let autotests = manifest["package"]
        .get("autotests")
        .and_then(toml::Value::as_bool)
        .unwrap_or(true);
    if autotests {
        return Vec::new();
    }
    let roots: BTreeSet<String> = manifest
        .get("test")
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|test| test.get("path")?.as_str().map(str::to_owned))
        .collect();
    let modules = if roots.contains("tests/main.rs") {
        declared_modules(&std::fs::read_to_string(krate.join("tests/main.rs")).unwrap())
    } else {
        BTreeSet::new()
    };
    let Ok(entries) = std::fs::read_dir(krate.join("tests")) else {
        return Vec::new();
    };
    let mut unbuilt: Vec<String> = entries
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|name| name.strip_suffix(".rs").map(str::to_owned))
        .filter(|stem| !roots.contains(&format!("tests/{stem}.rs")) && !modules.contains(stem))
        .map(|stem| format!("{}/tests/{stem}.rs", krate.display()))
        .collect();
    unbuilt.sort();
    unbuilt
}

#[test]
fn every_test_file_is_built_into_its_crates_test_binary() {
    let crates = workspace().join("crates");
    let mut unbuilt = Vec::new();
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).unwrap() {
        let krate = entry.unwrap().path();
        if krate.join("Cargo.toml").is_file() {
            checked += 1;
            unbuilt.extend(unbuilt_test_files(&krate));
        }
    }
    assert!(
        checked > 10,
        "only {checked} crates found under {}",
        crates.display()
    );
    assert!(
        unbuilt.is_empty(),
        "these test files are built by no test binary; add `mod NAME;` to their folder's \
         main.rs (or a [[test]] to the crate's Cargo.toml): {unbuilt:#?}"
    );
}
