//! Path confinement through the public API: a table of paths and a randomised property check.

// The fixtures use Unix symlinks (and `execute_bash` needs bash).
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use tooltrail_protocol::{ToolError, ToolErrorCode};
use tooltrail_sandbox::{PathError, Workspace};

struct Fixture {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
}

/// `base/ws` is the workspace; `base/ws-evil` and `base/outside` lie beside it.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("ws");
    for folder in ["ws/src", "ws/sub/deep", "ws-evil", "outside"] {
        std::fs::create_dir_all(base.join(folder)).unwrap();
    }
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join("file.txt"), "x\n").unwrap();
    std::fs::write(base.join("ws-evil/secret.txt"), "secret\n").unwrap();
    std::fs::write(base.join("outside/secret.txt"), "secret\n").unwrap();
    symlink("src/main.rs", root.join("link_in")).unwrap();
    symlink(root.join("src"), root.join("link_in_abs")).unwrap();
    symlink("../sub", root.join("src/link_up_in")).unwrap();
    symlink("../outside", root.join("link_out")).unwrap();
    symlink(base.join("outside"), root.join("link_out_abs")).unwrap();
    symlink("/etc/passwd", root.join("link_passwd")).unwrap();
    symlink("sub/../../outside", root.join("link_sneaky")).unwrap();
    symlink("loop_b", root.join("loop_a")).unwrap();
    symlink("loop_a", root.join("loop_b")).unwrap();
    symlink("missing_target", root.join("dangling")).unwrap();
    symlink("ws", base.join("alias")).unwrap();
    Fixture {
        _dir: dir,
        base,
        root,
    }
}

fn resolve(ws: &Workspace, path: &str) -> Result<String, PathError> {
    ws.resolve(path)
        .map(|resolved| resolved.relative().to_string())
}

#[test]
fn path_table() {
    let fx = fixture();
    let ws = Workspace::open(&fx.root).unwrap();
    let root = fx.root.display().to_string();
    let base = fx.base.display().to_string();
    let ok = |s: &str| Ok::<String, PathError>(s.to_string());
    let outside = |s: &str| Err::<String, PathError>(PathError::Outside(s.to_string()));
    let refused = Err::<String, PathError>(PathError::Refused(
        "Windows drive, UNC and device paths are not accepted; use a path relative to the workspace root",
    ));
    let tilde = Err::<String, PathError>(PathError::Refused(
        "`~` is not expanded; use a path relative to the workspace root",
    ));
    let cases: Vec<(String, Result<String, PathError>)> = vec![
        ("src/main.rs".into(), ok("src/main.rs")),
        ("./src/../src/main.rs".into(), ok("src/main.rs")),
        ("".into(), ok(".")),
        (".".into(), ok(".")),
        ("src/".into(), ok("src")),
        ("sub/deep/..".into(), ok("sub")),
        (root.clone(), ok(".")),
        (format!("{root}/src/main.rs"), ok("src/main.rs")),
        (
            format!("{base}/alias/src/main.rs"),
            Err(PathError::AbsoluteOutside),
        ),
        ("..".into(), outside("..")),
        (
            "../outside/secret.txt".into(),
            outside("../outside/secret.txt"),
        ),
        ("src/../../outside".into(), outside("src/../../outside")),
        ("../ws/src/main.rs".into(), outside("../ws/src/main.rs")),
        (
            format!("{base}/ws-evil/secret.txt"),
            Err(PathError::AbsoluteOutside),
        ),
        (format!("{base}/ws-evil"), Err(PathError::AbsoluteOutside)),
        (format!("{root}/../ws-evil/secret.txt"), outside("the path")),
        ("/etc/passwd".into(), Err(PathError::AbsoluteOutside)),
        ("/".into(), Err(PathError::AbsoluteOutside)),
        ("link_in".into(), ok("src/main.rs")),
        ("link_in_abs/main.rs".into(), ok("src/main.rs")),
        ("src/link_up_in/deep".into(), ok("sub/deep")),
        ("link_out".into(), outside("link_out")),
        ("link_out/secret.txt".into(), outside("link_out")),
        ("link_out_abs/secret.txt".into(), outside("link_out_abs")),
        ("link_passwd".into(), outside("link_passwd")),
        ("link_sneaky".into(), outside("link_sneaky")),
        (
            "loop_a".into(),
            Err(PathError::TooManyLinks("loop_a".into())),
        ),
        (
            "dangling".into(),
            Err(PathError::NotFound("missing_target".into())),
        ),
        (
            "missing.txt".into(),
            Err(PathError::NotFound("missing.txt".into())),
        ),
        (
            "src/missing/deeper.rs".into(),
            Err(PathError::NotFound("src/missing/deeper.rs".into())),
        ),
        (
            "file.txt/x".into(),
            Err(PathError::NotADirectory("file.txt".into())),
        ),
        (
            "a\0b".into(),
            Err(PathError::Refused("paths may not contain NUL bytes")),
        ),
        (
            "src/main.rs\0.txt".into(),
            Err(PathError::Refused("paths may not contain NUL bytes")),
        ),
        ("~".into(), tilde.clone()),
        ("~/.ssh/id_rsa".into(), tilde.clone()),
        ("~root/x".into(), tilde),
        ("C:\\Windows\\system32".into(), refused.clone()),
        ("C:/Windows".into(), refused.clone()),
        ("c:foo".into(), refused.clone()),
        ("\\\\server\\share\\x".into(), refused.clone()),
        ("\\\\?\\C:\\x".into(), refused.clone()),
        ("\\\\.\\PhysicalDrive0".into(), refused.clone()),
        ("//server/share".into(), refused),
        // No variable expansion or percent decoding: these are plain (missing) names.
        ("$HOME".into(), Err(PathError::NotFound("$HOME".into()))),
        (
            "%2e%2e/outside".into(),
            Err(PathError::NotFound("%2e%2e/outside".into())),
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(resolve(&ws, &input), expected, "resolving {input:?}");
    }
}

#[test]
fn root_given_through_a_symlink_accepts_both_spellings() {
    let fx = fixture();
    let ws = Workspace::open(fx.base.join("alias")).unwrap();
    assert_eq!(ws.root(), fx.root.as_path());
    let via_alias = format!("{}/alias/src/main.rs", fx.base.display());
    let canonical = format!("{}/src/main.rs", fx.root.display());
    assert_eq!(resolve(&ws, &via_alias), Ok("src/main.rs".into()));
    assert_eq!(resolve(&ws, &canonical), Ok("src/main.rs".into()));
    let evil = format!("{}/alias-evil/x", fx.base.display());
    assert_eq!(resolve(&ws, &evil), Err(PathError::AbsoluteOutside));
}

#[test]
fn resolve_new_allows_missing_tails_inside_only() {
    let fx = fixture();
    let ws = Workspace::open(&fx.root).unwrap();
    let new = ws.resolve_new("new/dir/file.txt").unwrap();
    assert!(!new.exists());
    assert_eq!(new.relative(), "new/dir/file.txt");
    assert_eq!(new.path(), fx.root.join("new/dir/file.txt"));

    let existing = ws.resolve_new("src/main.rs").unwrap();
    assert!(existing.exists());

    let through_link = ws.resolve_new("link_in_abs/new.rs").unwrap();
    assert_eq!(through_link.relative(), "src/new.rs");

    assert_eq!(
        ws.resolve_new("link_out/new.txt"),
        Err(PathError::Outside("link_out".into()))
    );
    assert_eq!(
        ws.resolve_new("../new.txt"),
        Err(PathError::Outside("../new.txt".into()))
    );
    assert_eq!(
        ws.resolve_new("new/../../x"),
        Err(PathError::NotFound("new/x".into()))
    );
    // A dangling link inside the workspace resolves to where its target would be created.
    assert_eq!(
        ws.resolve_new("dangling").unwrap().relative(),
        "missing_target"
    );
}

#[test]
fn relative_display() {
    let fx = fixture();
    let ws = Workspace::open(&fx.root).unwrap();
    assert_eq!(ws.relative(&fx.root), ".");
    assert_eq!(ws.relative(&fx.root.join("src/main.rs")), "src/main.rs");
    assert_eq!(ws.relative(Path::new("src/main.rs")), "src/main.rs");
    assert_eq!(ws.relative(Path::new("/etc/passwd")), "passwd");
    assert!(ws.contains(&fx.root.join("src")));
    assert!(!ws.contains(&fx.base.join("ws-evil")));
}

#[test]
fn errors_become_tool_errors_without_system_paths() {
    let fx = fixture();
    let ws = Workspace::open(&fx.root).unwrap();
    let base = fx.base.display().to_string();
    let inputs = [
        format!("{base}/outside/secret.txt"),
        format!("{base}/ws/../outside"),
        "link_out_abs/secret.txt".to_string(),
        "link_passwd".to_string(),
        "missing".to_string(),
    ];
    for input in inputs {
        let error: ToolError = ws.resolve(&input).unwrap_err().into();
        assert!(!error.message.contains(&base), "{input}: {}", error.message);
        assert!(
            !error.message.contains("/etc"),
            "{input}: {}",
            error.message
        );
    }
    let error: ToolError = ws.resolve("/etc/passwd").unwrap_err().into();
    assert_eq!(error.code, ToolErrorCode::OutsideWorkspace);
    let error: ToolError = ws.resolve("missing").unwrap_err().into();
    assert_eq!(
        error,
        ToolError::new(ToolErrorCode::NotFound, "`missing` does not exist")
    );
}

/// Whatever random path is asked for, an accepted one is exactly where the kernel would go,
/// and lies inside the root.
#[test]
fn accepted_paths_agree_with_the_kernel_and_stay_inside() {
    let fx = fixture();
    let ws = Workspace::open(&fx.root).unwrap();
    let parts = [
        "src",
        "sub",
        "deep",
        "..",
        ".",
        "main.rs",
        "link_in",
        "link_in_abs",
        "link_up_in",
        "link_out",
        "link_out_abs",
        "link_sneaky",
        "ws",
        "ws-evil",
        "outside",
        "secret.txt",
        "file.txt",
        "loop_a",
        "missing",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut accepted = 0;
    for _ in 0..5000 {
        let len = 1 + (next() % 6) as usize;
        let mut path = String::new();
        if next() % 5 == 0 {
            path.push_str(&fx.root.display().to_string());
            path.push('/');
        }
        for i in 0..len {
            if i > 0 {
                path.push('/');
            }
            path.push_str(parts[(next() % parts.len() as u64) as usize]);
        }
        match ws.resolve(&path) {
            Ok(resolved) => {
                accepted += 1;
                let kernel = match fx.root.join(&path).canonicalize() {
                    Ok(kernel) => kernel,
                    // `file.txt/.` names the file here; the kernel insists on a folder.
                    Err(err) if err.kind() == std::io::ErrorKind::NotADirectory => continue,
                    Err(err) => panic!("{path}: {err}"),
                };
                assert_eq!(resolved.path(), kernel.as_path(), "{path}");
                assert!(kernel.starts_with(&fx.root), "{path}");
                assert_eq!(ws.relative(&kernel), resolved.relative(), "{path}");
            }
            Err(error) => {
                let message = error.to_string();
                assert!(
                    !message.contains(&fx.base.display().to_string()),
                    "{message}"
                );
                // Refused paths either escape, are missing, or go through a non-folder.
                if let Ok(kernel) = fx.root.join(&path).canonicalize() {
                    let escapes = !kernel.starts_with(&fx.root) || path_leaves_root(&path);
                    assert!(
                        escapes || matches!(error, PathError::NotADirectory(_)),
                        "{path} was refused ({message}) but lies inside"
                    );
                }
            }
        }
    }
    assert!(accepted > 200, "only {accepted} paths accepted");
}

/// Whether the kernel's walk of `path` passes above the root at some step (via `..` or a
/// symlink), even when it comes back.
fn path_leaves_root(path: &str) -> bool {
    path.split('/').any(|part| {
        matches!(
            part,
            ".." | "link_out" | "link_out_abs" | "link_sneaky" | "ws" | "ws-evil" | "outside"
        )
    })
}
