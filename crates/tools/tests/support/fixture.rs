//! A small project tree for the tool tests: Go files, a README, ignored folders, a 2 MB file, a
//! binary file, text in other encodings, and symlinks pointing in and out.

#![allow(dead_code, clippy::unwrap_used, clippy::disallowed_methods)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tooltrail_tools::{ToolContext, ToolError, ToolOutput, ToolRegistry};

pub struct Fixture {
    _dir: tempfile::TempDir,
    pub base: PathBuf,
    pub root: PathBuf,
    pub ctx: ToolContext,
    pub registry: ToolRegistry,
}

pub const MAIN_GO: &str =
    "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n";
pub const TOOL_GO: &str = "package main\n\n// The tool's entry point.\nfunc main() {\n}\n";
pub const UTIL_GO: &str = "package util\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n";
pub const UTIL_TEST_GO: &str =
    "package util\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {}\n";

pub fn write(root: &Path, path: &str, content: impl AsRef<[u8]>) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

pub fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("project");
    let files: &[(&str, &[u8])] = &[
        ("README.md", b"# Demo\n\nA demo project.\n"),
        ("go.mod", b"module example.com/demo\n\ngo 1.22\n"),
        ("main.go", MAIN_GO.as_bytes()),
        ("cmd/tool/main.go", TOOL_GO.as_bytes()),
        ("internal/util/util.go", UTIL_GO.as_bytes()),
        ("internal/util/util_test.go", UTIL_TEST_GO.as_bytes()),
        ("docs/notes.md", b"Notes.\nfunc main is mentioned here.\n"),
        (".gitignore", b"vendor/\n*.log\n"),
        (".ignore", b"generated/\n"),
        ("vendor/dep/dep.go", b"package dep\n\nfunc main() {}\n"),
        ("generated/gen.go", b"package gen\n\nfunc main() {}\n"),
        ("debug.log", b"func main log line\n"),
        (".git/HEAD", b"ref: refs/heads/main\n"),
        (".git/objects/x.go", b"func main() {}\n"),
        ("image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0"),
        ("gbk.txt", b"\xc4\xe3\xba\xc3\xca\xc0\xbd\xe7\n"),
        ("latin.txt", b"caf\xe9\n"),
    ];
    for (path, content) in files {
        write(&root, path, content);
    }
    let mut big = String::new();
    let mut n = 0;
    while big.len() < 2 * 1024 * 1024 {
        n += 1;
        big.push_str(&format!(
            "line {n:07} of a file larger than the read limit\n"
        ));
    }
    write(&root, "data/big.txt", big);
    let lines: String = (1..=250).map(|i| format!("row {i}\n")).collect();
    write(&root, "data/rows.txt", lines);
    write(
        &base,
        "outside/secret.go",
        "package secret\n\nfunc main() {}\n",
    );
    write(&base, "project-evil/x.go", "package evil\n");
    symlink("../outside", root.join("link_out")).unwrap();
    symlink("main.go", root.join("link_in.go")).unwrap();
    // A test binary cannot be the sandbox helper, so commands here run as they do where no OS
    // sandbox exists: with process hygiene only, once approved. (`crates/cli/tests/security.rs`
    // runs them sandboxed.)
    let ctx = ToolContext::open(&root).unwrap().approved(true);
    Fixture {
        _dir: dir,
        base,
        root,
        ctx,
        registry: ToolRegistry::with_builtins(),
    }
}

impl Fixture {
    pub async fn call(&self, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
        self.registry.call(tool, &args.to_string(), &self.ctx).await
    }

    pub async fn ok(&self, tool: &str, args: Value) -> ToolOutput {
        match self.call(tool, args.clone()).await {
            Ok(output) => output,
            Err(error) => panic!("{tool} {args} failed: {error}"),
        }
    }

    pub async fn err(&self, tool: &str, args: Value) -> ToolError {
        match self.call(tool, args.clone()).await {
            Ok(output) => panic!("{tool} {args} succeeded: {}", output.text),
            Err(error) => {
                let base = self.base.display().to_string();
                assert!(!error.message.contains(&base), "system path in {error}");
                error
            }
        }
    }
}
