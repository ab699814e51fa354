//! `docs/architecture.md` against the manifests: the map names every crate of the workspace,
//! and its block of dependency arrows is what the `Cargo.toml` files say, arrow for arrow.
//! A crate added, removed or given another workspace dependency fails here until the map
//! says so too, so the map a newcomer reads first cannot drift from the code.
//!
//! The arrows block is the fenced block right after the line `<!-- dependency arrows -->`.
//! Each line is `crate -> dep, dep, ...` (or `crate -> (none)`), crates named without their
//! `tooltrail-` prefix and the desktop app, the root package, as `app`; a line that starts
//! with a space continues the list of the line above. Only normal dependencies count (those of
//! `[dependencies]` and `[target.*.dependencies]`), not dev- or build-dependencies.

// Helpers outside `#[test]` functions unwrap too: a failure there is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use toml::{Table, Value};

const MARKER: &str = "<!-- dependency arrows -->";

type Arrows = BTreeMap<String, BTreeSet<String>>;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read_toml(path: &Path) -> Table {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("{} could not be read: {error}", path.display()));
    text.parse::<Table>()
        .unwrap_or_else(|error| panic!("{} is not valid TOML: {error}", path.display()))
}

/// A package's name as the map writes it: without `tooltrail-` (so the root package,
/// `tooltrail-app`, is `app`).
fn short(package: &str) -> String {
    package
        .strip_prefix("tooltrail-")
        .unwrap_or(package)
        .to_string()
}

/// The workspace's members, as (directory relative to the root, manifest), the root package
/// first. `crates/*`-style entries are expanded to the folders holding a `Cargo.toml`.
fn members() -> Vec<(String, Table)> {
    let root = root();
    let manifest = read_toml(&root.join("Cargo.toml"));
    let mut out = vec![(".".to_string(), manifest.clone())];
    let listed = manifest["workspace"]["members"]
        .as_array()
        .expect("the root Cargo.toml lists the workspace's members");
    for entry in listed {
        let entry = entry.as_str().expect("a member is a path");
        let dirs: Vec<String> = match entry.strip_suffix("/*") {
            Some(parent) => {
                let mut found: Vec<String> = std::fs::read_dir(root.join(parent))
                    .unwrap()
                    .flatten()
                    .filter(|dir| dir.path().join("Cargo.toml").is_file())
                    .map(|dir| format!("{parent}/{}", dir.file_name().to_string_lossy()))
                    .collect();
                found.sort();
                found
            }
            None => vec![entry.to_string()],
        };
        for dir in dirs {
            let manifest = read_toml(&root.join(&dir).join("Cargo.toml"));
            out.push((dir, manifest));
        }
    }
    out
}

/// The `tooltrail-*` packages among a manifest's normal dependencies, on every platform.
fn workspace_deps(manifest: &Table) -> BTreeSet<String> {
    let mut tables: Vec<&Table> = Vec::new();
    if let Some(Value::Table(deps)) = manifest.get("dependencies") {
        tables.push(deps);
    }
    if let Some(Value::Table(targets)) = manifest.get("target") {
        for target in targets.values() {
            if let Some(Value::Table(deps)) = target.get("dependencies") {
                tables.push(deps);
            }
        }
    }
    let mut out = BTreeSet::new();
    for deps in tables {
        for (key, spec) in deps {
            // `name = { package = "tooltrail-x", ... }` depends on tooltrail-x.
            let package = spec.get("package").and_then(Value::as_str).unwrap_or(key);
            if package.starts_with("tooltrail-") {
                out.insert(short(package));
            }
        }
    }
    out
}

/// The arrows the manifests draw, by crate.
fn manifest_arrows(members: &[(String, Table)]) -> Arrows {
    members
        .iter()
        .map(|(dir, manifest)| {
            let name = manifest["package"]["name"]
                .as_str()
                .unwrap_or_else(|| panic!("{dir}/Cargo.toml has no package name"));
            (short(name), workspace_deps(manifest))
        })
        .collect()
}

/// The lines of the fenced block that follows `marker` in `doc`.
fn block_after<'a>(doc: &'a str, marker: &str) -> Vec<&'a str> {
    let mut lines = doc.lines().skip_while(|line| line.trim() != marker).skip(1);
    let fence = lines.next().unwrap_or_default();
    assert!(
        fence.starts_with("```"),
        "docs/architecture.md has no fenced block right after `{marker}`"
    );
    lines.take_while(|line| !line.starts_with("```")).collect()
}

/// The arrows the map draws: `crate -> a, b` lines, continued by lines that start with a space.
fn map_arrows(doc: &str) -> Arrows {
    let mut arrows = Arrows::new();
    let mut current: Option<String> = None;
    for line in block_after(doc, MARKER) {
        if line.trim().is_empty() {
            continue;
        }
        let (name, deps) = if line.starts_with(char::is_whitespace) {
            let name = current.clone().unwrap_or_else(|| {
                panic!("the arrows block starts with a continued line: {line:?}")
            });
            (name, line)
        } else {
            let (name, deps) = line
                .split_once("->")
                .unwrap_or_else(|| panic!("an arrow line reads `crate -> deps`, not {line:?}"));
            let name = name.trim().to_string();
            assert!(
                !arrows.contains_key(&name),
                "the arrows block has two lines for {name}"
            );
            arrows.insert(name.clone(), BTreeSet::new());
            current = Some(name.clone());
            (name, deps)
        };
        let set = arrows.get_mut(&name).unwrap();
        for dep in deps.split(',').map(str::trim).filter(|dep| !dep.is_empty()) {
            if dep != "(none)" {
                assert!(
                    !dep.contains(char::is_whitespace),
                    "{dep:?} on the line of {name} is not a crate's name"
                );
                set.insert(dep.to_string());
            }
        }
    }
    arrows
}

fn architecture_md() -> String {
    std::fs::read_to_string(root().join("docs/architecture.md")).unwrap()
}

#[test]
fn the_maps_arrows_are_the_manifests_dependencies() {
    let members = members();
    assert_eq!(
        map_arrows(&architecture_md()),
        manifest_arrows(&members),
        "docs/architecture.md's dependency arrows (left) differ from the Cargo.toml files \
         (right): change the block after `{MARKER}` with the manifest"
    );
}

#[test]
fn the_map_names_every_crate_of_the_workspace() {
    let doc = architecture_md();
    let missing: Vec<String> = members()
        .into_iter()
        .filter(|(dir, _)| dir != ".")
        .filter(|(dir, _)| match dir.strip_prefix("crates/") {
            // A crate of `crates/` has its line in the map's tree, as `  name/  what it does`.
            Some(name) => !doc.lines().any(|line| {
                line.strip_prefix("  ")
                    .and_then(|rest| rest.strip_prefix(name))
                    .is_some_and(|rest| rest.starts_with("/ "))
            }),
            None => !doc.contains(dir.as_str()),
        })
        .map(|(dir, _)| dir)
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md says nothing of {missing:?}: give each its line in the map"
    );
}

#[test]
fn the_arrows_block_is_read_as_written() {
    let doc = format!(
        "text\n{MARKER}\n```text\nhost  ->  agent, store,\n          tools\nprotocol -> (none)\n```\nafter -> x\n"
    );
    let expected: Arrows = [
        ("host", vec!["agent", "store", "tools"]),
        ("protocol", vec![]),
    ]
    .into_iter()
    .map(|(name, deps)| {
        (
            name.to_string(),
            deps.into_iter().map(str::to_string).collect(),
        )
    })
    .collect();
    assert_eq!(map_arrows(&doc), expected);
}

/// The front ends (the window, the command line, the HTTP API) reach the engine through host
/// alone: a front end that named the agent, the tools, the model client or the sandbox itself
/// would be composing part of a question on its own, where the others could not follow.
#[test]
fn the_front_ends_reach_the_engine_through_host() {
    let arrows = manifest_arrows(&members());
    let engine = ["agent", "tools", "llm", "sandbox"];
    for front_end in ["app", "cli", "server"] {
        let deps = arrows
            .get(front_end)
            .unwrap_or_else(|| panic!("no crate {front_end} in the workspace"));
        assert!(
            deps.contains("host"),
            "{front_end} does not go through host"
        );
        let below: Vec<&str> = engine
            .into_iter()
            .filter(|crate_name| deps.contains(*crate_name))
            .collect();
        assert!(
            below.is_empty(),
            "{front_end} depends on {below:?} directly; reach them through host (its re-exports \
             and its functions, as crates/host/src/lib.rs lists them)"
        );
    }
}
