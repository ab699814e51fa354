//! `code_query` on a tree holding a definition of `load` in every language it reads, beside
//! calls, comments and strings that mention `load` without defining it.

// The fixture uses Unix symlinks.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use crate::support::fixture;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tooltrail_tools::{Gate, ToolErrorCode, ToolRegistry};

use fixture::{Fixture, fixture, write};

const RUST: &str = r#"//! Calls load() in docs.
/// load reads it.
pub fn load(path: &str) -> String {
    String::new()
}

pub struct Loader;

impl Loader {
    pub fn load(&self) -> String {
        load("x")
    }
}

pub static LOAD_LIMIT: usize = 3;

fn main() {
    let _ = load("a.txt"); // load again
    let s = "fn load";
}
"#;

/// Items in a macro call are a token tree to the grammar; a call with the name is not an item.
const RUST_MACRO: &str = r#"cfg_io! {
    /// load in a macro body
    pub(crate) fn load(path: &str) {}
}
m!(load);
"#;

const GO: &str = r#"package store

// load is documented here.
func load(path string) string {
	return path
}

type Loader struct{}

func (l Loader) load() string { return load("x") }

var loadCount = 0

func use() { _ = load("y") }
"#;

const PYTHON: &str = r#"# def load(): not this one
LOAD_TIMEOUT = 5

def load(path):
    return open(path).read()

class Loader:
    def load(self):
        return load("x")

text = "def load"
load("y")
"#;

const JS: &str = r#"// function load() {}
function load(path) {
  return fetch(path);
}
const loader = { load: () => load("x") };
load("y");
"#;

const TS: &str = r#"export function load(path: string): string {
  return path;
}
export interface Loader {
  load(): string;
}
export type LoadResult = string;
let x = load("y");
"#;

const TSX: &str = "export const load = (): JSX.Element => <div>{\"load\"}</div>;\n";

const JAVA: &str = r#"class Loader {
    // load() is below
    String load(String path) {
        return path;
    }
    void run() { load("x"); }
}
"#;

const C: &str = r#"#include "load.h"
/* load() in a comment */
int load(const char *path) {
    return 0;
}
int main(void) { return load("x"); }
"#;

const CPP: &str = r#"namespace io {
int load(const char* path) { return 0; }
}
int Loader::load() { return io::load("x"); }
"#;

fn polyglot() -> Fixture {
    let fx = fixture();
    let files = [
        ("src/lib.rs", RUST),
        ("src/macros.rs", RUST_MACRO),
        ("go/load.go", GO),
        ("py/load.py", PYTHON),
        ("web/load.js", JS),
        ("web/load.ts", TS),
        ("web/view.tsx", TSX),
        ("java/Load.java", JAVA),
        ("c/load.c", C),
        ("cpp/load.cpp", CPP),
        ("docs/load.md", "fn load() is described here\n"),
        // Ignored by the fixture's .gitignore and .ignore.
        ("vendor/dep/load.go", "package dep\n\nfunc load() {}\n"),
        ("generated/gen.rs", "fn load() {}\n"),
    ];
    for (path, content) in files {
        write(&fx.root, path, content);
    }
    write(&fx.root, "bin/blob.rs", b"fn load() {}\n\0\0\0");
    let mut big = String::from("fn load() {}\n");
    while big.len() <= 1024 * 1024 {
        big.push_str("// filler line to pass the read limit\n");
    }
    write(&fx.root, "big/huge.rs", big);
    fx
}

fn hits(out: &Value) -> Vec<String> {
    out["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}:{} {}",
                d["path"].as_str().unwrap(),
                d["line"],
                d["kind"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test]
async fn finds_definitions_in_every_language_and_nothing_else() {
    let fx = polyglot();
    let out = fx.ok("code_query", json!({"name": "load"})).await;
    assert_eq!(
        out.text,
        "16 definitions of `load`:\n\
         c/load.c:3: int load(const char *path) {  [function]\n\
         cpp/load.cpp:2: int load(const char* path) { return 0; }  [function]\n\
         cpp/load.cpp:4: int Loader::load() { return io::load(\"x\"); }  [function]\n\
         go/load.go:4: func load(path string) string {  [function]\n\
         go/load.go:10: func (l Loader) load() string { return load(\"x\") }  [function]\n\
         java/Load.java:3: String load(String path) {  [function]\n\
         py/load.py:4: def load(path):  [function]\n\
         py/load.py:8: def load(self):  [function]\n\
         src/lib.rs:3: pub fn load(path: &str) -> String {  [function]\n\
         src/lib.rs:10: pub fn load(&self) -> String {  [function]\n\
         src/macros.rs:3: pub(crate) fn load(path: &str) {}  [function]\n\
         web/load.js:2: function load(path) {  [function]\n\
         web/load.js:5: const loader = { load: () => load(\"x\") };  [function]\n\
         web/load.ts:1: export function load(path: string): string {  [function]\n\
         web/load.ts:5: load(): string;  [function]\n\
         web/view.tsx:1: export const load = (): JSX.Element => <div>{\"load\"}</div>;  [function]\n\
         (1 file over the read limit not searched)\n"
    );
    assert_eq!(out.data["total"], json!(16));
    assert_eq!(out.data["truncated"], json!(false));
    assert_eq!(out.data["too_large_skipped"], json!(1));
    assert_eq!(
        out.data["definitions"][0],
        json!({
            "path": "c/load.c",
            "line": 3,
            "name": "load",
            "kind": "function",
            "language": "c",
            "signature": "int load(const char *path) {"
        })
    );
}

#[tokio::test]
async fn kinds_and_prefixes() {
    let fx = polyglot();
    let out = fx
        .ok("code_query", json!({"name": "Load*", "kind": "type"}))
        .await;
    assert_eq!(
        hits(&out.data),
        vec![
            "go/load.go:8 type",
            "java/Load.java:1 type",
            "py/load.py:7 type",
            "src/lib.rs:7 type",
            "web/load.ts:4 type",
            "web/load.ts:7 type",
        ]
    );
    let out = fx
        .ok("code_query", json!({"name": "load*", "kind": "variable"}))
        .await;
    // The arrow function bound to `load` in view.tsx is a function, not also a variable.
    assert_eq!(
        hits(&out.data),
        vec!["go/load.go:12 variable", "web/load.js:5 variable"]
    );
    let out = fx
        .ok("code_query", json!({"name": "LOAD*", "kind": "any"}))
        .await;
    assert_eq!(
        hits(&out.data),
        vec!["py/load.py:2 variable", "src/lib.rs:15 variable"]
    );
    let out = fx
        .ok("code_query", json!({"name": "loa", "kind": "function"}))
        .await;
    assert_eq!(
        out.text,
        "No definitions of `loa` (function).\n(1 file over the read limit not searched)\n"
    );
}

#[tokio::test]
async fn language_and_path_filters() {
    let fx = polyglot();
    let out = fx
        .ok(
            "code_query",
            json!({"name": "load", "language": "typescript"}),
        )
        .await;
    assert_eq!(
        hits(&out.data),
        vec![
            "web/load.ts:1 function",
            "web/load.ts:5 function",
            "web/view.tsx:1 function"
        ]
    );
    let out = fx
        .ok("code_query", json!({"name": "load", "path": "cpp"}))
        .await;
    assert_eq!(
        out.text,
        "2 definitions of `load` under `cpp`:\n\
         cpp/load.cpp:2: int load(const char* path) { return 0; }  [function]\n\
         cpp/load.cpp:4: int Loader::load() { return io::load(\"x\"); }  [function]\n"
    );
    let out = fx
        .ok(
            "code_query",
            json!({"name": "load", "path": "src/lib.rs", "language": "rust"}),
        )
        .await;
    assert_eq!(
        hits(&out.data),
        vec!["src/lib.rs:3 function", "src/lib.rs:10 function"]
    );
}

#[tokio::test]
async fn caps_at_one_hundred_and_counts_the_rest() {
    let fx = fixture();
    let defs: String = (0..150)
        .map(|i| format!("def item_{i:03}():\n    pass\n"))
        .collect();
    write(&fx.root, "many/items.py", defs);
    let out = fx.ok("code_query", json!({"name": "item_*"})).await;
    let found = hits(&out.data);
    assert_eq!(found.len(), 100);
    assert_eq!(found[0], "many/items.py:1 function");
    assert_eq!(found[99], "many/items.py:199 function");
    assert_eq!(out.data["total"], json!(150));
    assert_eq!(out.data["truncated"], json!(true));
    assert!(
        out.text
            .starts_with("The first 100 of 150 definitions of `item_*` (in path order):\n")
    );
    assert!(
        out.text
            .ends_with("(50 more not shown; narrow with kind, language or path)\n")
    );
}

#[tokio::test]
async fn bad_arguments_name_the_parameter() {
    let fx = polyglot();
    let cases = [
        (json!({"name": "load", "kind": "klass"}), "parameter `kind`"),
        (
            json!({"name": "load", "language": "cobol"}),
            "parameter `language`",
        ),
        (json!({"name": "load x"}), "parameter `name`"),
        (json!({"name": "*"}), "parameter `name`"),
        (json!({}), "name"),
    ];
    for (args, named) in cases {
        let err = fx.err("code_query", args.clone()).await;
        assert_eq!(err.code, ToolErrorCode::InvalidArguments, "{args}");
        assert!(err.message.contains(named), "{args}: {}", err.message);
    }
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let fx = polyglot();
    for path in ["../outside", "/etc", "link_out"] {
        let err = fx
            .err("code_query", json!({"name": "main", "path": path}))
            .await;
        assert_eq!(err.code, ToolErrorCode::OutsideWorkspace, "{path}");
    }
}

#[test]
fn is_read_only() {
    let fx = fixture();
    let registry = ToolRegistry::with_builtins();
    let tool = registry.get("code_query").unwrap();
    assert_eq!(tool.gate(&json!({"name": "x"}), &fx.ctx), Gate::ReadOnly);
}

#[tokio::test]
async fn odd_files_neither_fail_nor_panic() {
    let fx = fixture();
    write(&fx.root, "odd/empty.rs", "");
    write(&fx.root, "odd/cut.rs", "pub fn load");
    write(&fx.root, "odd/bytes.rs", b"fn load(\xff\xfe) {}\n");
    write(&fx.root, "odd/start.py", "load");
    write(&fx.root, "odd/receiver.go", "func (");
    write(&fx.root, "odd/.rs", "fn load() {}\n");
    let out = fx
        .ok("code_query", json!({"name": "load", "path": "odd"}))
        .await;
    // A cut-off item is no definition; `.rs` is a hidden file's name, not an extension; bytes
    // that are not UTF-8 show as replacement characters.
    assert_eq!(
        out.text,
        "1 definition of `load` under `odd`:\nodd/bytes.rs:1: fn load(\u{fffd}\u{fffd}) {}  [function]\n"
    );
}
