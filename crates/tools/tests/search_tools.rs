//! `search_text`, `count_lines` and `list_dir` on a fixture tree.

// The fixtures use Unix symlinks (and `execute_bash` needs bash).
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use crate::support::fixture;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tooltrail_tools::ToolErrorCode;

use fixture::{fixture, write};

fn paths(matches: &Value) -> Vec<String> {
    matches
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{}:{}", m["path"].as_str().unwrap(), m["line"]))
        .collect()
}

#[tokio::test]
async fn search_text_respects_ignores_and_skips_binary_files() {
    let fx = fixture();
    write(&fx.root, "blob.bin", b"func main\0\0binary");
    let out = fx.ok("search_text", json!({"pattern": "func main"})).await;
    assert_eq!(
        paths(&out.data["matches"]),
        vec!["cmd/tool/main.go:4", "docs/notes.md:2", "main.go:5"]
    );
    let out = fx
        .ok(
            "search_text",
            json!({"pattern": "func main", "include_ignored": true}),
        )
        .await;
    assert_eq!(
        paths(&out.data["matches"]),
        vec![
            "cmd/tool/main.go:4",
            "debug.log:1",
            "docs/notes.md:2",
            "generated/gen.go:3",
            "main.go:5",
            "vendor/dep/dep.go:3"
        ]
    );
}

#[tokio::test]
async fn search_text_reads_windows_line_endings_as_unix_ones() {
    let fx = fixture();
    let lines = ["let total = 1;", "print(total)", "return total;"];
    write(&fx.root, "unix.txt", lines.join("\n") + "\n");
    write(&fx.root, "windows.txt", lines.join("\r\n") + "\r\n");
    for (pattern, line) in [("total;$", 3), ("^print\\(total\\)$", 2), ("1;$", 1)] {
        let out = fx
            .ok("search_text", json!({"pattern": pattern, "glob": "*.txt"}))
            .await;
        assert_eq!(
            paths(&out.data["matches"]),
            vec![format!("unix.txt:{line}"), format!("windows.txt:{line}")],
            "{pattern}"
        );
        assert!(!out.text.contains('\r'), "{pattern}: {:?}", out.text);
    }
}

#[tokio::test]
async fn search_text_options() {
    let fx = fixture();
    let out = fx
        .ok(
            "search_text",
            json!({"pattern": "FUNC MAIN", "glob": "*.go"}),
        )
        .await;
    assert_eq!(out.data["total"], 0);
    assert!(out.text.starts_with("No matches for `FUNC MAIN`"));
    // `include_ignored` is not offered up front: a search that found nothing names it.
    assert!(
        out.text
            .contains("`include_ignored: true` looks at them too"),
        "{}",
        out.text
    );
    let out = fx
        .ok(
            "search_text",
            json!({"pattern": "FUNC MAIN", "glob": "*.go", "include_ignored": true}),
        )
        .await;
    assert!(!out.text.contains("include_ignored"), "{}", out.text);
    let out = fx
        .ok(
            "search_text",
            json!({"pattern": "FUNC MAIN", "glob": "*.go", "ignore_case": true}),
        )
        .await;
    assert_eq!(out.data["total"], 2);
    let out = fx
        .ok("search_text", json!({"pattern": "a.b", "path": "internal"}))
        .await;
    assert_eq!(out.data["total"], 0);
    let out = fx
        .ok(
            "search_text",
            json!({"pattern": "a + b", "fixed_strings": true}),
        )
        .await;
    assert_eq!(paths(&out.data["matches"]), vec!["internal/util/util.go:4"]);
    // Not a valid regex: searched as plain text, and said so.
    let out = fx
        .ok(
            "search_text",
            json!({"pattern": "Println(", "glob": "*.go"}),
        )
        .await;
    assert_eq!(paths(&out.data["matches"]), vec!["main.go:6"]);
    assert!(
        out.text
            .starts_with("(`Println(` is not a valid regex; searched for it as plain text)\n")
    );
    let out = fx
        .ok(
            "search_text",
            json!({"pattern": "^package", "path": "main.go"}),
        )
        .await;
    assert_eq!(paths(&out.data["matches"]), vec!["main.go:1"]);
    let out = fx
        .ok(
            "search_text",
            json!({"pattern": "Add", "path": "internal/util"}),
        )
        .await;
    assert_eq!(
        paths(&out.data["matches"]),
        vec!["internal/util/util.go:3", "internal/util/util_test.go:5"]
    );
}

#[tokio::test]
async fn search_text_stops_at_the_limit_in_path_order() {
    let fx = fixture();
    for i in 0..300 {
        let body: String = (0..10).map(|j| format!("needle {i} {j}\n")).collect();
        write(&fx.root, &format!("hay/d{:02}/f{i:03}.txt", i % 7), body);
    }
    let first = fx
        .ok("search_text", json!({"pattern": "needle", "path": "hay"}))
        .await;
    assert_eq!(first.data["truncated"], true);
    assert_eq!(first.data["total"], Value::Null);
    let matches = first.data["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 100);
    assert_eq!(matches[0]["path"], "hay/d00/f000.txt");
    assert_eq!(matches[0]["line"], 1);
    assert_eq!(matches[99]["path"], "hay/d00/f063.txt");
    assert_eq!(matches[99]["line"], 10);
    assert!(first.text.starts_with(
        "The first 100 matching lines for `needle` under `hay` (in path order; more exist):\n"
    ));
    for _ in 0..5 {
        let again = fx
            .ok("search_text", json!({"pattern": "needle", "path": "hay"}))
            .await;
        assert_eq!(again, first);
    }
}

#[tokio::test]
async fn search_text_with_exactly_the_limit_is_complete() {
    let fx = fixture();
    for i in 0..10 {
        let body: String = (0..10).map(|j| format!("exact {j}\n")).collect();
        write(&fx.root, &format!("exact/f{i}.txt"), body);
    }
    let out = fx
        .ok("search_text", json!({"pattern": "exact", "path": "exact"}))
        .await;
    assert_eq!(out.data["truncated"], false);
    assert_eq!(out.data["total"], 100);
}

#[tokio::test]
async fn search_text_errors() {
    let fx = fixture();
    let cases = [
        (
            json!({"pattern": "x", "path": "../outside"}),
            ToolErrorCode::OutsideWorkspace,
        ),
        (
            json!({"pattern": "x", "path": "link_out"}),
            ToolErrorCode::OutsideWorkspace,
        ),
        (
            json!({"pattern": "x", "glob": "a["}),
            ToolErrorCode::InvalidPattern,
        ),
        (json!({"pattern": ""}), ToolErrorCode::InvalidPattern),
        (
            json!({"pattern": "x", "path": "nope"}),
            ToolErrorCode::NotFound,
        ),
    ];
    for (args, code) in cases {
        assert_eq!(
            fx.err("search_text", args.clone()).await.code,
            code,
            "{args}"
        );
    }
}

#[tokio::test]
async fn count_lines_lists_the_largest_files_first() {
    let fx = fixture();
    let out = fx.ok("count_lines", json!({"path": "internal"})).await;
    assert_eq!(
        out.data,
        json!({
            "total": 10,
            "file_count": 2,
            "binary_skipped": 0,
            "files": [
                {"path": "internal/util/util.go", "lines": 5},
                {"path": "internal/util/util_test.go", "lines": 5}
            ],
            "truncated": false
        })
    );
    let out = fx.ok("count_lines", json!({"path": "data/rows.txt"})).await;
    assert_eq!(out.data["total"], 250);
    assert_eq!(out.text, "250 lines in 1 file under `data/rows.txt`.\n");
    let out = fx.ok("count_lines", json!({"path": "."})).await;
    assert_eq!(out.data["binary_skipped"], 1);
    assert_eq!(out.data["files"][0]["path"], "data/big.txt");
    for i in 0..60 {
        write(&fx.root, &format!("many/f{i:02}.txt"), "x\n".repeat(i + 1));
    }
    let out = fx.ok("count_lines", json!({"path": "many"})).await;
    assert_eq!(out.data["total"], (1..=60).sum::<u64>());
    assert_eq!(out.data["truncated"], true);
    let files = out.data["files"].as_array().unwrap();
    assert_eq!(files.len(), 50);
    assert_eq!(files[0], json!({"path": "many/f59.txt", "lines": 60}));
    assert!(
        out.text
            .contains("The 50 largest:\n      60  many/f59.txt\n")
    );
}

#[tokio::test]
async fn count_lines_errors() {
    let fx = fixture();
    assert_eq!(
        fx.err("count_lines", json!({"path": "image.png"}))
            .await
            .code,
        ToolErrorCode::BinaryFile
    );
    assert_eq!(
        fx.err("count_lines", json!({"path": "/etc"})).await.code,
        ToolErrorCode::OutsideWorkspace
    );
    assert_eq!(
        fx.err("count_lines", json!({"pattern": "*.go"})).await.code,
        ToolErrorCode::InvalidArguments
    );
}

#[tokio::test]
async fn list_dir_shows_entries_with_type_size_and_time() {
    let fx = fixture();
    let out = fx.ok("list_dir", json!({})).await;
    let entries = out.data["entries"].as_array().unwrap();
    let names: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        vec![
            (".gitignore", "file"),
            (".ignore", "file"),
            ("README.md", "file"),
            ("cmd", "dir"),
            ("data", "dir"),
            ("docs", "dir"),
            ("gbk.txt", "file"),
            ("go.mod", "file"),
            ("image.png", "file"),
            ("internal", "dir"),
            ("latin.txt", "file"),
            ("link_in.go", "symlink"),
            ("link_out", "symlink"),
            ("main.go", "file"),
        ]
    );
    let readme = &entries[2];
    assert_eq!(readme["size"], 24);
    assert!(readme["modified"].as_str().unwrap().contains('T'));
    assert_eq!(entries[3]["size"], Value::Null);
    assert!(out.text.starts_with("`.`: 14 entries:\n"));
    assert!(out.text.contains("dir"));

    let out = fx
        .ok("list_dir", json!({"path": "internal", "recursive": true}))
        .await;
    let names: Vec<&str> = out.data["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "internal/util",
            "internal/util/util.go",
            "internal/util/util_test.go"
        ]
    );
    let out = fx
        .ok(
            "list_dir",
            json!({"recursive": true, "pattern": "*_test.go"}),
        )
        .await;
    assert_eq!(out.data["total"], 1);
}

#[tokio::test]
async fn list_dir_caps_and_refuses() {
    let fx = fixture();
    for i in 0..120 {
        write(&fx.root, &format!("many/f{i:03}.txt"), "x");
    }
    let out = fx.ok("list_dir", json!({"path": "many"})).await;
    assert_eq!(out.data["total"], 120);
    assert_eq!(out.data["truncated"], true);
    assert_eq!(out.data["entries"].as_array().unwrap().len(), 100);
    assert_eq!(
        fx.err("list_dir", json!({"path": "README.md"})).await.code,
        ToolErrorCode::NotADirectory
    );
    assert_eq!(
        fx.err("list_dir", json!({"path": "link_out"})).await.code,
        ToolErrorCode::OutsideWorkspace
    );
}

#[tokio::test]
async fn cancelled_searches_say_so() {
    let fx = fixture();
    fx.ctx.cancel.cancel();
    for (tool, args) in [
        ("search_text", json!({"pattern": "func"})),
        ("search_files", json!({"pattern": "*.go"})),
        ("count_lines", json!({"path": "."})),
        ("list_dir", json!({"recursive": true})),
    ] {
        assert_eq!(
            fx.err(tool, args).await.code,
            ToolErrorCode::Cancelled,
            "{tool}"
        );
    }
}
