//! `read_file` and `search_files` on a fixture tree.

// The fixtures use Unix symlinks (and `execute_bash` needs bash).
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use crate::support::fixture;

use pretty_assertions::assert_eq;
use serde_json::json;
use tooltrail_tools::ToolErrorCode;

use fixture::{fixture, write};

#[tokio::test]
async fn search_files_finds_every_go_file() {
    let fx = fixture();
    let expected = json!({
        "files": [
            "cmd/tool/main.go",
            "internal/util/util.go",
            "internal/util/util_test.go",
            "link_in.go",
            "main.go"
        ],
        "truncated": false,
        "total": 5
    });
    for pattern in ["**/*.go", "*.go"] {
        let out = fx.ok("search_files", json!({"pattern": pattern})).await;
        assert_eq!(out.data, expected, "{pattern}");
        assert!(
            out.text
                .starts_with(&format!("5 files match `{pattern}`:\n"))
        );
        assert!(out.text.contains("\ncmd/tool/main.go\n"));
    }
}

#[tokio::test]
async fn search_files_anchors_patterns_with_a_slash() {
    let fx = fixture();
    let files = |out: tooltrail_tools::ToolOutput| out.data["files"].clone();
    let out = fx
        .ok("search_files", json!({"pattern": "cmd/*/*.go"}))
        .await;
    assert_eq!(files(out), json!(["cmd/tool/main.go"]));
    let out = fx.ok("search_files", json!({"pattern": "tool/*.go"})).await;
    assert_eq!(files(out), json!([]));
    let out = fx
        .ok(
            "search_files",
            json!({"pattern": "util/*.go", "path": "internal"}),
        )
        .await;
    assert_eq!(
        files(out),
        json!(["internal/util/util.go", "internal/util/util_test.go"])
    );
    let out = fx
        .ok(
            "search_files",
            json!({"pattern": "*_test.go", "path": "./internal/"}),
        )
        .await;
    assert_eq!(files(out), json!(["internal/util/util_test.go"]));
    let out = fx.ok("search_files", json!({"pattern": "*.md"})).await;
    assert_eq!(files(out), json!(["README.md", "docs/notes.md"]));
}

#[tokio::test]
async fn search_files_respects_ignore_files_and_skips_git() {
    let fx = fixture();
    let out = fx.ok("search_files", json!({"pattern": "*.log"})).await;
    assert_eq!(out.data["total"], 0);
    assert!(out.text.starts_with("No files match `*.log`"));
    let out = fx
        .ok(
            "search_files",
            json!({"pattern": "**/*.go", "include_ignored": true}),
        )
        .await;
    assert_eq!(
        out.data["files"],
        json!([
            "cmd/tool/main.go",
            "generated/gen.go",
            "internal/util/util.go",
            "internal/util/util_test.go",
            "link_in.go",
            "main.go",
            "vendor/dep/dep.go"
        ])
    );
    let out = fx
        .ok(
            "search_files",
            json!({"pattern": "HEAD", "include_ignored": true}),
        )
        .await;
    assert_eq!(out.data["total"], 0);
}

#[tokio::test]
async fn search_files_caps_results_and_knows_the_total() {
    let fx = fixture();
    for i in 0..150 {
        write(&fx.root, &format!("many/f{i:03}.txt"), "x\n");
    }
    let out = fx
        .ok("search_files", json!({"pattern": "many/*.txt"}))
        .await;
    assert_eq!(out.data["truncated"], true);
    assert_eq!(out.data["total"], 150);
    let files = out.data["files"].as_array().unwrap();
    assert_eq!(files.len(), 100);
    assert_eq!(files[0], "many/f000.txt");
    assert_eq!(files[99], "many/f099.txt");
    assert!(
        out.text
            .starts_with("150 files match `many/*.txt`; the first 100 (sorted):\n")
    );
    assert!(
        out.text
            .ends_with("(50 more not shown; narrow the pattern or the path)\n")
    );
}

#[tokio::test]
async fn search_files_refuses_paths_outside_and_bad_patterns() {
    let fx = fixture();
    let error = fx
        .err(
            "search_files",
            json!({"pattern": "*.go", "path": "link_out"}),
        )
        .await;
    assert_eq!(error.code, ToolErrorCode::OutsideWorkspace);
    let error = fx
        .err("search_files", json!({"pattern": "*.go", "path": ".."}))
        .await;
    assert_eq!(error.code, ToolErrorCode::OutsideWorkspace);
    let evil = format!("{}/project-evil", fx.base.display());
    let error = fx
        .err("search_files", json!({"pattern": "*.go", "path": evil}))
        .await;
    assert_eq!(error.code, ToolErrorCode::OutsideWorkspace);
    let error = fx
        .err("search_files", json!({"pattern": "a[", "path": "."}))
        .await;
    assert_eq!(error.code, ToolErrorCode::InvalidPattern);
    let error = fx
        .err("search_files", json!({"pattern": "*", "path": "nope"}))
        .await;
    assert_eq!(error.code, ToolErrorCode::NotFound);
}

#[tokio::test]
async fn read_file_returns_numbered_lines() {
    let fx = fixture();
    let out = fx.ok("read_file", json!({"path": "README.md"})).await;
    assert_eq!(
        out.text,
        "`README.md`: lines 1-3 of 3\n     1\t# Demo\n     2\t\n     3\tA demo project.\n"
    );
    assert_eq!(out.data["lines"], json!(["# Demo", "", "A demo project."]));
    assert_eq!(out.data["total_lines"], 3);
    assert_eq!(out.data["more"], false);
}

#[tokio::test]
async fn read_file_pages_with_offset_and_limit() {
    let fx = fixture();
    let out = fx.ok("read_file", json!({"path": "data/rows.txt"})).await;
    assert!(
        out.text
            .starts_with("`data/rows.txt`: lines 1-100 of 250\n")
    );
    assert!(
        out.text
            .ends_with("(150 more lines; continue with offset=101)\n")
    );
    let out = fx
        .ok(
            "read_file",
            json!({"path": "data/rows.txt", "offset": 101, "limit": 50}),
        )
        .await;
    assert!(
        out.text
            .starts_with("`data/rows.txt`: lines 101-150 of 250\n   101\trow 101\n")
    );
    assert_eq!(out.data["next_offset"], 151);
    let out = fx
        .ok(
            "read_file",
            json!({"path": "data/rows.txt", "offset": 240, "limit": 50}),
        )
        .await;
    assert_eq!(out.data["more"], false);
    assert_eq!(out.data["end_line"], 250);
    let out = fx
        .ok("read_file", json!({"path": "data/rows.txt", "offset": 999}))
        .await;
    assert_eq!(
        out.text,
        "`data/rows.txt` has 250 lines; offset 999 is past the end.\n"
    );
}

#[tokio::test]
async fn read_file_reads_only_the_first_megabyte_of_a_large_file() {
    let fx = fixture();
    let out = fx
        .ok("read_file", json!({"path": "data/big.txt", "limit": 5}))
        .await;
    assert_eq!(out.data["truncated_at_limit"], true);
    assert_eq!(out.data["total_lines_exact"], false);
    assert!(
        out.text
            .contains("(the file is 2 MB; only its first 1 MB were read)"),
        "{}",
        out.text
    );
    assert!(
        out.text
            .starts_with("`data/big.txt`: lines 1-5 of at least ")
    );
}

#[tokio::test]
async fn read_file_refuses_binary_folders_and_outside_paths() {
    let fx = fixture();
    let cases = [
        (json!({"path": "image.png"}), ToolErrorCode::BinaryFile),
        (json!({"path": "docs"}), ToolErrorCode::NotAFile),
        (json!({"path": "missing.txt"}), ToolErrorCode::NotFound),
        (
            json!({"path": "/etc/passwd"}),
            ToolErrorCode::OutsideWorkspace,
        ),
        (
            json!({"path": "../outside/secret.go"}),
            ToolErrorCode::OutsideWorkspace,
        ),
        (
            json!({"path": "link_out/secret.go"}),
            ToolErrorCode::OutsideWorkspace,
        ),
        (
            json!({"path": "~/.bashrc"}),
            ToolErrorCode::OutsideWorkspace,
        ),
        (
            json!({"path": "README.md", "encoding": "klingon"}),
            ToolErrorCode::InvalidArguments,
        ),
        (
            json!({"path": "README.md", "limit": 0}),
            ToolErrorCode::InvalidArguments,
        ),
        (json!({"offset": 3}), ToolErrorCode::InvalidArguments),
    ];
    for (args, code) in cases {
        let error = fx.err("read_file", args.clone()).await;
        assert_eq!(error.code, code, "{args}: {error}");
    }
    let error = fx.err("read_file", json!({"path": "image.png"})).await;
    assert_eq!(
        error.message,
        "`image.png` is a binary file (18 bytes); only text files can be read"
    );
    let evil = format!("{}/project-evil/x.go", fx.base.display());
    let error = fx.err("read_file", json!({"path": evil})).await;
    assert_eq!(error.code, ToolErrorCode::OutsideWorkspace);
}

#[tokio::test]
async fn read_file_follows_links_inside_and_absolute_paths_inside() {
    let fx = fixture();
    let out = fx.ok("read_file", json!({"path": "link_in.go"})).await;
    assert!(out.text.starts_with("`main.go`: lines 1-7 of 7\n"));
    let absolute = format!("{}/README.md", fx.root.display());
    let out = fx.ok("read_file", json!({"path": absolute})).await;
    assert_eq!(out.data["path"], "README.md");
}

#[tokio::test]
async fn read_file_decodes_other_encodings() {
    let fx = fixture();
    let out = fx
        .ok("read_file", json!({"path": "gbk.txt", "encoding": "gbk"}))
        .await;
    assert_eq!(out.data["lines"], json!(["你好世界"]));
    assert_eq!(out.data["encoding"], "GBK");
    let out = fx.ok("read_file", json!({"path": "gbk.txt"})).await;
    assert_eq!(out.data["replaced_invalid"], true);
    assert!(out.text.contains("were replaced with U+FFFD"));
    let out = fx
        .ok(
            "read_file",
            json!({"path": "latin.txt", "encoding": "latin1"}),
        )
        .await;
    assert_eq!(out.data["lines"], json!(["café"]));
    let out = fx.ok("read_file", json!({"path": "latin.txt"})).await;
    assert_eq!(out.data["lines"], json!(["caf\u{fffd}"]));
    write(
        &fx.root,
        "sjis.txt",
        b"\x82\xb1\x82\xf1\x82\xc9\x82\xbf\x82\xcd\n",
    );
    let out = fx
        .ok(
            "read_file",
            json!({"path": "sjis.txt", "encoding": "shift_jis"}),
        )
        .await;
    assert_eq!(out.data["lines"], json!(["こんにちは"]));
    write(&fx.root, "utf16.txt", b"\xff\xfeh\0i\0\n\0");
    let out = fx.ok("read_file", json!({"path": "utf16.txt"})).await;
    assert_eq!(out.data["lines"], json!(["hi"]));
}
