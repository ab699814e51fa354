//! Glob rules as ripgrep applies them: a pattern without `/` matches a file name at any depth
//! (`*.go` finds `a/b/c.go`); a pattern with `/` matches the path from the search root
//! (`src/*.rs` finds `src/main.rs` but not `src/a/b.rs`; `**/` crosses any number of folders).

use std::ffi::OsStr;
use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use tooltrail_protocol::{ToolError, ToolErrorCode};

#[derive(Debug, Clone)]
pub(crate) struct PathGlob {
    matcher: GlobMatcher,
    /// No `/` in the pattern: match the file name only.
    by_name: bool,
}

impl PathGlob {
    pub(crate) fn new(pattern: &str) -> Result<Self, ToolError> {
        let trimmed = pattern.trim();
        let trimmed = trimmed.strip_prefix("./").unwrap_or(trimmed);
        let trimmed = trimmed.strip_prefix('/').unwrap_or(trimmed);
        let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
        if trimmed.is_empty() {
            return Err(ToolError::new(
                ToolErrorCode::InvalidPattern,
                "the glob pattern is empty; use e.g. `*.rs` or `src/**/*.ts`",
            ));
        }
        let glob = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|err| {
                ToolError::new(
                    ToolErrorCode::InvalidPattern,
                    format!("invalid glob `{pattern}`: {}", err.kind()),
                )
            })?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            by_name: !trimmed.contains('/'),
        })
    }

    /// Whether a file matches. `from_search_root` is its path below the folder being searched;
    /// `from_workspace_root` its path below the workspace root. Path patterns are tried against
    /// both, since callers often write the workspace path even when searching a sub-folder.
    pub(crate) fn is_match(
        &self,
        file_name: &OsStr,
        from_search_root: &Path,
        from_workspace_root: &Path,
    ) -> bool {
        if self.by_name {
            self.matcher.is_match(file_name)
        } else {
            self.matcher.is_match(from_search_root)
                || (from_workspace_root != from_search_root
                    && self.matcher.is_match(from_workspace_root))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, path: &str) -> bool {
        let glob = PathGlob::new(pattern).unwrap();
        let path = Path::new(path);
        glob.is_match(path.file_name().unwrap(), path, path)
    }

    #[test]
    fn glob_rules_table() {
        let cases = [
            ("*.go", "main.go", true),
            ("*.go", "a/b/c.go", true),
            ("*.go", "a/b/c.go.txt", false),
            ("**/*.go", "main.go", true),
            ("**/*.go", "a/b/c.go", true),
            ("src/*.rs", "src/main.rs", true),
            ("src/*.rs", "src/a/b.rs", false),
            ("src/*.rs", "x/src/main.rs", false),
            ("src/**/*.rs", "src/main.rs", true),
            ("src/**/*.rs", "src/a/b/c.rs", true),
            ("src/**", "src/a/b/c.rs", true),
            ("./src/*.rs", "src/main.rs", true),
            ("/src/*.rs", "src/main.rs", true),
            ("README*", "README.md", true),
            ("README*", "docs/README.md", true),
            ("*.{rs,toml}", "crates/x/Cargo.toml", true),
            ("*.{rs,toml}", "crates/x/Cargo.lock", false),
            ("Makefile", "a/Makefile", true),
            ("Makefile", "a/Makefile.am", false),
            ("?.c", "x/a.c", true),
            ("?.c", "x/ab.c", false),
            ("[ab].c", "b.c", true),
            ("*", "a/b/c", true),
            ("*.GO", "main.go", false),
        ];
        for (pattern, path, expected) in cases {
            assert_eq!(matches(pattern, path), expected, "{pattern} vs {path}");
        }
    }

    #[test]
    fn workspace_relative_path_patterns_work_in_sub_folders() {
        let glob = PathGlob::new("src/*.rs").unwrap();
        assert!(glob.is_match(
            OsStr::new("main.rs"),
            Path::new("main.rs"),
            Path::new("src/main.rs")
        ));
    }

    #[test]
    fn bad_patterns_are_invalid_pattern_errors() {
        for pattern in ["", "  ", "a[", "{a,b"] {
            let error = PathGlob::new(pattern).unwrap_err();
            assert_eq!(error.code, ToolErrorCode::InvalidPattern, "{pattern}");
        }
    }
}
