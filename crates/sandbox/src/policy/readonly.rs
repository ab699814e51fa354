//! Whether a parsed command is made only of read-only commands joined by plain operators.

use tree_sitter::Node;

use super::allowlist;
use super::syntax::{literal, text};

/// `Ok` when the whole tree only reads; otherwise the first reason it may not.
pub(crate) fn check(node: Node<'_>, source: &[u8]) -> Result<(), String> {
    match node.kind() {
        "program" | "list" | "pipeline" | "subshell" | "compound_statement" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                if child.is_named() {
                    check(child, source)?;
                } else {
                    operator(text(child, source))?;
                }
            }
            Ok(())
        }
        "comment" => Ok(()),
        "negated_command" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                check(child, source)?;
            }
            Ok(())
        }
        "command" => command(node, source),
        "redirected_statement" => {
            let mut cursor = node.walk();
            for (index, child) in node.children(&mut cursor).enumerate() {
                match node.field_name_for_child(index as u32) {
                    Some("body") => check(child, source)?,
                    Some("redirect") => redirect(child, source)?,
                    _ if child.is_named() => redirect(child, source)?,
                    _ => {}
                }
            }
            Ok(())
        }
        kind => Err(describe(kind)),
    }
}

fn operator(token: &str) -> Result<(), String> {
    match token {
        "&&" | "||" | ";" | ";;" | "|" | "|&" | "\n" | "(" | ")" | "{" | "}" | "!" => Ok(()),
        "&" => Err("it starts a command in the background".to_string()),
        other => Err(format!("it uses the shell operator `{other}`")),
    }
}

fn command(node: Node<'_>, source: &[u8]) -> Result<(), String> {
    let mut name = None;
    let mut args = Vec::new();
    let mut cursor = node.walk();
    for (index, child) in node.children(&mut cursor).enumerate() {
        match (node.field_name_for_child(index as u32), child.kind()) {
            (Some("name"), _) => {
                let word = child.named_child(0).unwrap_or(child);
                name = Some(literal(word, source)?);
            }
            (Some("argument"), _) => args.push(literal(child, source)?),
            (Some("redirect"), _) => redirect(child, source)?,
            (_, "variable_assignment") => {
                return Err("it sets environment variables for the command".to_string());
            }
            (_, kind) if child.is_named() => return Err(describe(kind)),
            _ => {}
        }
    }
    let Some(name) = name else {
        return Err("it has no command to run".to_string());
    };
    if name.contains('/') {
        return Err(format!(
            "`{name}` runs a program by its path, not one from the read-only list"
        ));
    }
    allowlist::check(&name, &args)?;
    match args.iter().find(|arg| names_outside(arg)) {
        Some(arg) => Err(format!("it names a path outside the workspace (`{arg}`)")),
        None => Ok(()),
    }
}

/// Whether an argument (or the value of `--option=value`) is an absolute path or climbs with
/// `..`. Reading outside the workspace is asked about: the user sees it, and on a machine where
/// no OS sandbox confines reads this is the only guard.
fn names_outside(arg: &str) -> bool {
    let value = arg.split_once('=').map_or(arg, |(_, value)| value);
    [arg, value].iter().any(|candidate| {
        (candidate.starts_with('/') && *candidate != "/dev/null")
            || candidate.split('/').any(|part| part == "..")
    })
}

/// Only output thrown away (`2>/dev/null`) or streams merged (`2>&1`) stay read-only.
fn redirect(node: Node<'_>, source: &[u8]) -> Result<(), String> {
    match node.kind() {
        "file_redirect" => {}
        "heredoc_redirect" => return Err("it uses a here-document".to_string()),
        "herestring_redirect" => return Err("it uses a here-string".to_string()),
        kind => return Err(describe(kind)),
    }
    let mut op = String::new();
    let mut destination = None;
    let mut cursor = node.walk();
    for (index, child) in node.children(&mut cursor).enumerate() {
        match node.field_name_for_child(index as u32) {
            Some("destination") => destination = Some(literal(child, source)?),
            Some("descriptor") => {}
            _ if !child.is_named() => op.push_str(text(child, source)),
            _ => {}
        }
    }
    let destination = destination.unwrap_or_default();
    let merges_streams =
        matches!(op.as_str(), ">&" | "<&") && matches!(destination.as_str(), "1" | "2" | "-");
    if destination == "/dev/null" || merges_streams {
        return Ok(());
    }
    if op.starts_with('<') {
        Err("it reads input from a file through a redirection".to_string())
    } else {
        Err("it redirects output to a file".to_string())
    }
}

fn describe(kind: &str) -> String {
    match kind {
        "function_definition" => "it defines a shell function".to_string(),
        "for_statement" | "c_style_for_statement" | "while_statement" => {
            "it uses a shell loop".to_string()
        }
        "if_statement" | "case_statement" => "it uses a shell conditional".to_string(),
        "variable_assignment" | "variable_assignments" => "it sets shell variables".to_string(),
        "declaration_command" | "unset_command" => "it declares or unsets variables".to_string(),
        "test_command" => "it uses a test expression".to_string(),
        "command_substitution" => "it uses command substitution".to_string(),
        "process_substitution" => "it uses process substitution".to_string(),
        "simple_expansion" | "expansion" => "it expands variables".to_string(),
        other => format!("it uses shell syntax (`{other}`) beyond plain commands"),
    }
}
