//! The project folder tests ask about.

use std::path::Path;

use crate::error::SupportError;

/// A new temporary folder holding a small Go project: `README.md`, `cmd/app/main.go` (with
/// `func main`) and `util.go`. Removed when dropped.
pub fn demo_workspace() -> Result<tempfile::TempDir, SupportError> {
    let dir = tempfile::tempdir()
        .map_err(|source| write_error(Path::new("a temporary folder"), source))?;
    let files = [
        ("README.md", "# Demo\nA demo project.\n"),
        ("cmd/app/main.go", "package main\n\nfunc main() {}\n"),
        ("util.go", "package util\n"),
    ];
    for (name, text) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| write_error(parent, source))?;
        }
        std::fs::write(&path, text).map_err(|source| write_error(&path, source))?;
    }
    Ok(dir)
}

fn write_error(path: &Path, source: std::io::Error) -> SupportError {
    SupportError::Write {
        path: path.display().to_string(),
        source,
    }
}
