//! Parsing a command with tree-sitter-bash, and reading its words.

use tree_sitter::{Node, Parser, Tree};

pub(crate) fn parse(source: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    parser.parse(source, None)
}

pub(crate) fn text<'a>(node: Node<'_>, source: &'a [u8]) -> &'a str {
    node.utf8_text(source).unwrap_or_default()
}

/// The value of a word as bash would pass it to the program, when it is plain: no expansion of
/// any kind. Otherwise the reason it is not plain.
pub(crate) fn literal(node: Node<'_>, source: &[u8]) -> Result<String, String> {
    let raw = text(node, source);
    match node.kind() {
        "word" => {
            if raw.starts_with('~') || raw.contains("=~") || raw.contains(":~") {
                return Err("it uses `~` (home folder) expansion".to_string());
            }
            Ok(unescape_word(raw))
        }
        "number" => Ok(raw.to_string()),
        "raw_string" => Ok(strip(raw, 1, 1).to_string()),
        "ansi_c_string" => Ok(strip(raw, 2, 1).to_string()),
        "string" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                if child.kind() != "string_content" {
                    return Err(expansion_reason(child.kind()));
                }
            }
            Ok(unescape_double_quoted(strip(raw, 1, 1)))
        }
        "concatenation" => {
            let mut out = String::new();
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                if child.is_named() {
                    out.push_str(&literal(child, source)?);
                } else {
                    out.push_str(text(child, source));
                }
            }
            Ok(out)
        }
        kind => Err(expansion_reason(kind)),
    }
}

/// A best-effort value of any word, for the deny check: quotes and backslashes dropped,
/// `$IFS` read as a space and `$HOME` as `~`. Other expansions stay as written.
pub(crate) fn loose(raw: &str) -> String {
    let replaced = raw
        .replace("${IFS}", " ")
        .replace("$IFS", " ")
        .replace("${HOME}", "~")
        .replace("$HOME", "~");
    replaced
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect()
}

pub(crate) fn expansion_reason(kind: &str) -> String {
    match kind {
        "simple_expansion" | "expansion" => "it expands variables".to_string(),
        "command_substitution" => "it uses command substitution".to_string(),
        "process_substitution" => "it uses process substitution".to_string(),
        "arithmetic_expansion" => "it uses arithmetic expansion".to_string(),
        "translated_string" => "it uses a translated string".to_string(),
        other => format!("it uses shell syntax (`{other}`) beyond plain words"),
    }
}

fn strip(raw: &str, front: usize, back: usize) -> &str {
    raw.get(front..raw.len().saturating_sub(back))
        .unwrap_or_default()
}

fn unescape_word(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(next) => out.push(next),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn unescape_double_quoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}
