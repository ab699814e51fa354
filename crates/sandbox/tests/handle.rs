//! The folder's handle, tried on random trees: folders, files and links of every kind
//! (relative, absolute, looping, climbing out, into a sibling folder outside), random names,
//! and random operations through the handle, with the tree changed between each path's check
//! and its use. Whatever happens inside, nothing outside the folder is read, written, made or
//! removed.

#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::io::Read as _;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use tooltrail_sandbox::Workspace;

/// What every file outside holds; no read through the handle may ever return it.
const CANARY: &[u8] = b"OUTSIDE-CANARY-never-read-through-the-handle";

/// A name a random path part may take: the names the tree is built of, and the tricky ones.
fn part() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["a", "b", "c", "d", "e"]).prop_map(str::to_string),
        1 => Just("..".to_string()),
        1 => Just(".".to_string()),
        1 => Just(".a.tmp".to_string()),
    ]
}

fn rel_path() -> impl Strategy<Value = String> {
    prop::collection::vec(part(), 1..5).prop_map(|parts| parts.join("/"))
}

/// Where a link may point.
#[derive(Debug, Clone)]
enum Target {
    /// A relative path among the tree's names (may climb with `..`).
    Relative(String),
    /// The outside folder or a file in it, by absolute path.
    AbsoluteOutside(&'static str),
    /// Out by climbing: `../outside/…`, `../../..`.
    ClimbOutside(&'static str),
    /// Somewhere inside, by absolute path.
    AbsoluteInside(String),
    /// Itself.
    Loop,
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        3 => rel_path().prop_map(Target::Relative),
        2 => prop::sample::select(vec!["", "secret", "sub", "sub/deep"]).prop_map(Target::AbsoluteOutside),
        2 => prop::sample::select(vec!["../outside", "../outside/secret", "../../..", "..", "../outside/sub"]).prop_map(Target::ClimbOutside),
        1 => rel_path().prop_map(Target::AbsoluteInside),
        1 => Just(Target::Loop),
    ]
}

#[derive(Debug, Clone)]
enum Node {
    Dir(String),
    File(String, Vec<u8>),
    Link(String, Target),
}

fn node() -> impl Strategy<Value = Node> {
    prop_oneof![
        2 => rel_path().prop_map(Node::Dir),
        2 => (rel_path(), prop::collection::vec(b'a'..=b'z', 0..16)).prop_map(|(p, c)| Node::File(p, c)),
        3 => (rel_path(), target()).prop_map(|(p, t)| Node::Link(p, t)),
    ]
}

/// A change made between a path's check and its use, as a racing process would.
#[derive(Debug, Clone)]
enum Swap {
    None,
    /// A folder (or whatever stands there) replaced by a link.
    Replace(String, Target),
}

fn swap() -> impl Strategy<Value = Swap> {
    prop_oneof![
        1 => Just(Swap::None),
        2 => (rel_path(), target()).prop_map(|(p, t)| Swap::Replace(p, t)),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Read(String, Swap),
    Write(String, Vec<u8>, Swap),
    Remove(String, Swap),
    Metadata(String, Swap),
    /// A path a walk reported, read without any check first.
    ReadFound(String),
    FoundMetadata(String, bool),
}

fn op() -> impl Strategy<Value = Op> {
    let content = prop::collection::vec(b'A'..=b'Z', 1..16);
    prop_oneof![
        (rel_path(), swap()).prop_map(|(p, s)| Op::Read(p, s)),
        (rel_path(), content, swap()).prop_map(|(p, c, s)| Op::Write(p, c, s)),
        (rel_path(), swap()).prop_map(|(p, s)| Op::Remove(p, s)),
        (rel_path(), swap()).prop_map(|(p, s)| Op::Metadata(p, s)),
        rel_path().prop_map(Op::ReadFound),
        (rel_path(), any::<bool>()).prop_map(|(p, f)| Op::FoundMetadata(p, f)),
    ]
}

struct Lab {
    _base: tempfile::TempDir,
    inside: PathBuf,
    outside: PathBuf,
}

impl Lab {
    fn new() -> Self {
        let base = tempfile::tempdir().unwrap();
        let base_path = base.path().canonicalize().unwrap();
        let inside = base_path.join("ws");
        let outside = base_path.join("outside");
        std::fs::create_dir_all(outside.join("sub/deep")).unwrap();
        std::fs::write(outside.join("secret"), CANARY).unwrap();
        std::fs::write(outside.join("sub/secret"), CANARY).unwrap();
        std::fs::write(outside.join("sub/deep/secret"), CANARY).unwrap();
        std::fs::create_dir(&inside).unwrap();
        Self {
            _base: base,
            inside,
            outside,
        }
    }

    fn link_target(&self, at: &Path, target: &Target) -> PathBuf {
        match target {
            Target::Relative(rel) => PathBuf::from(rel),
            Target::AbsoluteOutside(rel) => self.outside.join(rel),
            Target::ClimbOutside(rel) => PathBuf::from(rel),
            Target::AbsoluteInside(rel) => self.inside.join(rel),
            Target::Loop => at.to_path_buf(),
        }
    }

    /// Builds `node` inside, as a repository could (anything that cannot be made is left).
    fn plant(&self, node: &Node) {
        match node {
            Node::Dir(rel) => {
                if self.plain_inside(rel) {
                    let _ = std::fs::create_dir_all(self.inside.join(rel));
                }
            }
            Node::File(rel, content) => {
                if self.plain_inside(rel) {
                    let _ = std::fs::write(self.inside.join(rel), content);
                }
            }
            Node::Link(rel, target) => self.replace_with_link(rel, target),
        }
    }

    /// Replaces what stands at `rel` by a link, as a racing process would.
    fn replace_with_link(&self, rel: &str, target: &Target) {
        if !self.plain_inside(rel) {
            return;
        }
        let path = self.inside.join(rel);
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            if meta.is_dir() {
                let _ = std::fs::remove_dir_all(&path);
            } else {
                let _ = std::fs::remove_file(&path);
            }
        }
        let _ = symlink(self.link_target(&path, target), &path);
    }

    /// Whether `rel` names an entry below the folder with no `.`, `..` or link on the way, so
    /// the lab itself (which works by path) never touches anything outside.
    fn plain_inside(&self, rel: &str) -> bool {
        let parts: Vec<&str> = rel.split('/').collect();
        if parts.iter().any(|part| matches!(*part, "" | "." | "..")) {
            return false;
        }
        let mut at = self.inside.clone();
        for part in &parts[..parts.len() - 1] {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.is_dir() => {}
                // Missing folders are made by the planting itself.
                Err(_) => {}
                Ok(_) => return false,
            }
        }
        true
    }

    /// Every entry outside: its path, kind, and content for files.
    fn outside_snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut seen = BTreeMap::new();
        snapshot(&self.outside, &self.outside, &mut seen);
        seen
    }
}

fn snapshot(root: &Path, dir: &Path, seen: &mut BTreeMap<PathBuf, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap().to_path_buf();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            seen.insert(rel, "dir".to_string());
            snapshot(root, &path, seen);
        } else if meta.is_file() {
            use std::os::unix::fs::PermissionsExt;
            let content = std::fs::read(&path).unwrap();
            seen.insert(
                rel,
                format!(
                    "file {:o} {}",
                    meta.permissions().mode(),
                    String::from_utf8_lossy(&content)
                ),
            );
        } else {
            seen.insert(rel, "other".to_string());
        }
    }
}

fn apply_swap(lab: &Lab, swap: &Swap) {
    match swap {
        Swap::None => {}
        Swap::Replace(rel, target) => lab.replace_with_link(rel, target),
    }
}

fn read_all(mut file: std::fs::File) -> Vec<u8> {
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    bytes
}

fn run(lab: &Lab, workspace: &Workspace, op: &Op) -> Option<Vec<u8>> {
    match op {
        Op::Read(rel, swap) => {
            let resolved = workspace.resolve(rel).ok()?;
            apply_swap(lab, swap);
            let (file, meta) = workspace.open_read(&resolved).ok()?;
            meta.is_file().then(|| read_all(file))
        }
        Op::Write(rel, content, swap) => {
            let resolved = workspace.resolve_new(rel).ok()?;
            apply_swap(lab, swap);
            let _ = workspace.write(&resolved, content);
            None
        }
        Op::Remove(rel, swap) => {
            let resolved = workspace.resolve(rel).ok()?;
            apply_swap(lab, swap);
            let _ = workspace.remove_file(&resolved);
            None
        }
        Op::Metadata(rel, swap) => {
            let resolved = workspace.resolve(rel).ok()?;
            apply_swap(lab, swap);
            let _ = workspace.metadata(&resolved);
            let _ = workspace
                .read(&resolved)
                .ok()
                .map(|bytes| assert_no_canary(&bytes));
            None
        }
        Op::ReadFound(rel) => {
            let file = workspace.open_found(&lab.inside.join(rel)).ok()?;
            Some(read_all(file))
        }
        Op::FoundMetadata(rel, follow) => {
            let _ = workspace.found_metadata(&lab.inside.join(rel), *follow);
            None
        }
    }
}

fn assert_no_canary(bytes: &[u8]) {
    assert!(
        !bytes.windows(CANARY.len()).any(|window| window == CANARY),
        "a read through the handle returned a file from outside the folder"
    );
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 192,
        // A case is a whole tree on disk: shrinking replays many of them.
        max_shrink_iters: 256,
        ..ProptestConfig::default()
    })]

    #[test]
    fn attack_links_no_operation_through_the_handle_reads_or_writes_outside(
        tree in prop::collection::vec(node(), 1..24),
        ops in prop::collection::vec(op(), 1..24),
    ) {
        let lab = Lab::new();
        for node in &tree {
            lab.plant(node);
        }
        let before = lab.outside_snapshot();
        let workspace = Workspace::open(&lab.inside).unwrap();
        for op in &ops {
            if let Some(bytes) = run(&lab, &workspace, op) {
                assert_no_canary(&bytes);
            }
            prop_assert_eq!(&lab.outside_snapshot(), &before, "after {:?}", op);
        }
    }
}

/// The case the class was found by, kept by name: links planted at the temporary names an
/// approved write of `README.md` used to take, and a folder on the way swapped for a link out
/// after the path was checked. The outside file keeps its content and `README.md` stays a file.
#[test]
fn attack_links_an_approved_write_is_not_led_out_by_planted_or_swapped_links() {
    let lab = Lab::new();
    std::fs::write(lab.inside.join("README.md"), "old").unwrap();
    let own = std::process::id();
    for pid in own.saturating_sub(20)..own + 20 {
        symlink(
            lab.outside.join("secret"),
            lab.inside.join(format!(".README.md.tooltrail-{pid}.tmp")),
        )
        .unwrap();
    }
    let workspace = Workspace::open(&lab.inside).unwrap();
    let resolved = workspace.resolve_new("README.md").unwrap();
    workspace.write(&resolved, b"approved").unwrap();
    assert!(
        std::fs::symlink_metadata(lab.inside.join("README.md"))
            .unwrap()
            .is_file()
    );
    assert_eq!(
        std::fs::read(lab.inside.join("README.md")).unwrap(),
        b"approved"
    );

    std::fs::create_dir(lab.inside.join("docs")).unwrap();
    let resolved = workspace.resolve_new("docs/notes.md").unwrap();
    std::fs::remove_dir(lab.inside.join("docs")).unwrap();
    symlink(lab.outside.join("sub"), lab.inside.join("docs")).unwrap();
    assert!(workspace.write(&resolved, b"approved").is_err());
    assert!(!lab.outside.join("sub/notes.md").exists());
    assert_eq!(std::fs::read(lab.outside.join("secret")).unwrap(), CANARY);
}

/// A read checked, then its folder swapped for a link out: the handle refuses it and says the
/// path leads outside.
#[test]
fn attack_links_a_read_whose_folder_was_swapped_after_the_check_is_refused() {
    let lab = Lab::new();
    std::fs::create_dir(lab.inside.join("src")).unwrap();
    std::fs::write(lab.inside.join("src/secret"), "inside").unwrap();
    let workspace = Workspace::open(&lab.inside).unwrap();
    let resolved = workspace.resolve("src/secret").unwrap();
    std::fs::remove_dir_all(lab.inside.join("src")).unwrap();
    symlink(&lab.outside, lab.inside.join("src")).unwrap();
    let error = workspace.open_read(&resolved).unwrap_err();
    assert_eq!(error.to_string(), "`src/secret` is outside the workspace");
}
