//! No function in the engine or the app is longer than [`MAX_LINES`] lines, from its `fn` line
//! to its closing brace: a longer one is split into named steps, so a newcomer reads what a
//! function does from the names of its steps. Tests are left out (a table of cases may be long).
//!
//! Every `.rs` file under `crates/*/src` and `src-tauri/src` is read with a small lexer that
//! blanks comments, strings and character literals (so a brace in them counts for nothing), then
//! each `fn` with a body is measured by counting braces. Test code is what sits in an item
//! marked `#[cfg(test)]` (a `mod tests { .. }`, or a file named by `#[cfg(test)] mod x;`).

// Helpers outside `#[test]` functions unwrap too: a failure there is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The longest a function may be, in lines.
const MAX_LINES: usize = 100;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file below `dir`, in a stable order.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

fn is_ident(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// `text` with every comment, string and character literal replaced by spaces, newlines kept,
/// so that what is left is code and line numbers still hold.
fn code_only(text: &str) -> Vec<char> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = chars.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for ch in &mut out[from..to.min(chars.len())] {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        let prev = if i > 0 { chars[i - 1] } else { ' ' };
        if ch == '/' && at(i + 1) == '/' {
            let end = (i..chars.len())
                .find(|&j| chars[j] == '\n')
                .unwrap_or(chars.len());
            blank(&mut out, i, end);
            i = end;
        } else if ch == '/' && at(i + 1) == '*' {
            // Block comments nest in Rust.
            let (mut depth, mut j) = (1, i + 2);
            while j < chars.len() && depth > 0 {
                if chars[j] == '/' && at(j + 1) == '*' {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && at(j + 1) == '/' {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if ch == 'r'
            && (!is_ident(prev) || (prev == 'b' && (i < 2 || !is_ident(chars[i - 2]))))
            && (at(i + 1) == '"' || at(i + 1) == '#')
        {
            // A raw string: r"..", r#".."#, br"..".
            let mut j = i + 1;
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            blank(&mut out, i, j);
            i = j;
        } else if ch == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if ch == '\'' {
            // A character literal ('a', '\n', '\u{7f}', '{'), or else a lifetime ('a).
            if at(i + 1) == '\\' {
                let end = (i + 2..chars.len())
                    .find(|&j| chars[j] == '\'')
                    .unwrap_or(i + 2);
                blank(&mut out, i, end + 1);
                i = end + 1;
            } else if at(i + 2) == '\'' {
                blank(&mut out, i, i + 3);
                i += 3;
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The index of the brace that closes the one at `open`.
fn closing(code: &[char], open: usize) -> usize {
    let mut depth = 0;
    for (i, &ch) in code.iter().enumerate().skip(open) {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    code.len()
}

fn starts_with_at(code: &[char], i: usize, word: &str) -> bool {
    let word: Vec<char> = word.chars().collect();
    code.len() >= i + word.len()
        && code[i..i + word.len()] == word[..]
        && (i == 0 || !is_ident(code[i - 1]))
        && code.get(i + word.len()).is_none_or(|&ch| !is_ident(ch))
}

/// The spans of items marked `#[cfg(test)]`, and the files such an item names
/// (`#[cfg(test)] mod x;`).
fn test_items(code: &[char], file: &Path) -> (Vec<(usize, usize)>, Vec<PathBuf>) {
    let marker: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut spans = Vec::new();
    let mut files = Vec::new();
    let mut i = 0;
    while i + marker.len() <= code.len() {
        if code[i..i + marker.len()] != marker[..] {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i + marker.len();
        // The item ends at its first `;` or at the brace that closes its body.
        while j < code.len() && code[j] != '{' && code[j] != ';' {
            j += 1;
        }
        if j >= code.len() {
            break;
        }
        if code[j] == '{' {
            let end = closing(code, j);
            spans.push((start, end));
            i = end;
        } else {
            let item: String = code[start + marker.len()..j].iter().collect();
            if let Some(name) = item.split_whitespace().skip_while(|w| *w != "mod").nth(1) {
                let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
                let dir = file.parent().unwrap();
                let base = if ["lib", "main", "mod"].contains(&stem.as_str()) {
                    dir.to_path_buf()
                } else {
                    dir.join(&stem)
                };
                files.push(base.join(format!("{name}.rs")));
            }
            i = j;
        }
    }
    (spans, files)
}

/// Every function with a body outside test code: (name, first line, lines).
fn functions(text: &str, file: &Path) -> (Vec<(String, usize, usize)>, Vec<PathBuf>) {
    let code = code_only(text);
    let (tests, test_files) = test_items(&code, file);
    let line_at = |i: usize| code[..i].iter().filter(|&&ch| ch == '\n').count() + 1;
    let mut out = Vec::new();
    for i in 0..code.len() {
        if code[i] != 'f'
            || !starts_with_at(&code, i, "fn")
            || tests.iter().any(|&(a, b)| a <= i && i <= b)
        {
            continue;
        }
        let name: String = code[i + 2..]
            .iter()
            .skip_while(|ch| ch.is_whitespace())
            .take_while(|&&ch| is_ident(ch))
            .collect();
        if name.is_empty() {
            // `fn(u8) -> u8`, a function pointer type.
            continue;
        }
        let Some(open) = (i..code.len()).find(|&j| code[j] == '{' || code[j] == ';') else {
            continue;
        };
        if code[open] == ';' {
            // A declaration in a trait, without a body.
            continue;
        }
        let end = closing(&code, open);
        let first = line_at(i);
        out.push((name, first, line_at(end) - first + 1));
    }
    (out, test_files)
}

#[test]
fn no_function_outside_tests_is_longer_than_a_hundred_lines() {
    let root = root();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        rust_files(&entry.path().join("src"), &mut files);
    }
    rust_files(&root.join("src-tauri/src"), &mut files);
    files.sort();
    assert!(
        files.len() > 100,
        "the sources were not found under {}",
        root.display()
    );

    let mut test_files = BTreeSet::new();
    let mut measured = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let (found, tests) = functions(&text, file);
        test_files.extend(tests);
        measured.push((file, found));
    }
    let mut long = Vec::new();
    let mut count = 0;
    for (file, found) in measured {
        if test_files.contains(file) {
            continue;
        }
        for (name, line, lines) in found {
            count += 1;
            if lines > MAX_LINES {
                let shown = file.strip_prefix(&root).unwrap_or(file).display();
                long.push(format!("{shown}:{line}: `{name}` is {lines} lines"));
            }
        }
    }
    assert!(count > 1000, "only {count} functions were found");
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines; split each into named steps:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_lexer_measures_a_function_and_ignores_braces_in_strings_comments_and_tests() {
    let text = r####"
fn short() {
    let s = "}}}"; // }
    let c = '{';
    /* } /* nested } */ } */
    let r = r#"}"#;
}
fn takes<'a>(x: &'a str) -> &'a str { x }
trait T { fn declared(&self); }
#[cfg(test)]
mod tests {
    fn helper() {}
}
"####;
    let (found, _) = functions(text, Path::new("x.rs"));
    let found: Vec<(&str, usize, usize)> = found
        .iter()
        .map(|(name, line, lines)| (name.as_str(), *line, *lines))
        .collect();
    assert_eq!(found, vec![("short", 2, 6), ("takes", 8, 1)]);
}
