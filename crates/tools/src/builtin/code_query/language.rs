//! The languages `code_query` reads: which files are which, and the query that finds their
//! definitions.
//!
//! Each query is the grammar crate's own tags query (the one GitHub's code navigation runs)
//! followed by a few patterns of ours for what it leaves out, mostly variables and constants.
//! Only a pattern's `@name` and `@definition.*` captures are used; the tags queries' references
//! and doc-comment captures are ignored. Queries are compiled once per process, on first use.

use std::path::Path;
use std::sync::OnceLock;

use tree_sitter::Query;

/// A language as the caller names it (the `language` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Language {
    Rust,
    Go,
    Python,
    JavaScript,
    TypeScript,
    Java,
    C,
    Cpp,
}

impl Language {
    pub(crate) const ALL: [Language; 8] = [
        Language::Rust,
        Language::Go,
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Java,
        Language::C,
        Language::Cpp,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Go => "go",
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|lang| lang.name() == name)
    }
}

/// A grammar: a language can have more than one (TypeScript and TSX).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Grammar {
    Rust,
    Go,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Java,
    C,
    Cpp,
}

impl Grammar {
    /// The grammar for a file, by its extension; `None` for files no grammar reads.
    pub(crate) fn for_path(path: &Path) -> Option<Grammar> {
        let ext = path.extension()?.to_str()?;
        Some(match ext {
            "rs" => Grammar::Rust,
            "go" => Grammar::Go,
            "py" | "pyi" => Grammar::Python,
            "js" | "mjs" | "cjs" | "jsx" => Grammar::JavaScript,
            "ts" | "mts" | "cts" => Grammar::TypeScript,
            "tsx" => Grammar::Tsx,
            "java" => Grammar::Java,
            // A `.h` header is read as C: the C++ grammar would read it too, but C headers are
            // the more common, and C code is not always valid C++.
            "c" | "h" => Grammar::C,
            "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" => Grammar::Cpp,
            _ => return None,
        })
    }

    pub(crate) fn language(self) -> Language {
        match self {
            Grammar::Rust => Language::Rust,
            Grammar::Go => Language::Go,
            Grammar::Python => Language::Python,
            Grammar::JavaScript => Language::JavaScript,
            Grammar::TypeScript | Grammar::Tsx => Language::TypeScript,
            Grammar::Java => Language::Java,
            Grammar::C => Language::C,
            Grammar::Cpp => Language::Cpp,
        }
    }

    pub(crate) fn ts_language(self) -> tree_sitter::Language {
        match self {
            Grammar::Rust => tree_sitter_rust::LANGUAGE.into(),
            Grammar::Go => tree_sitter_go::LANGUAGE.into(),
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Grammar::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Grammar::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Grammar::Java => tree_sitter_java::LANGUAGE.into(),
            Grammar::C => tree_sitter_c::LANGUAGE.into(),
            Grammar::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
    }

    /// The query source: the bundled tags query and our additions.
    fn query_source(self) -> String {
        match self {
            Grammar::Rust => format!("{}\n{RUST_EXTRA}", tree_sitter_rust::TAGS_QUERY),
            Grammar::Go => format!("{}\n{GO_EXTRA}", tree_sitter_go::TAGS_QUERY),
            Grammar::Python => tree_sitter_python::TAGS_QUERY.to_string(),
            Grammar::JavaScript => format!("{}\n{JS_EXTRA}", tree_sitter_javascript::TAGS_QUERY),
            // TypeScript's tags query only adds to JavaScript's (its grammar extends it).
            Grammar::TypeScript | Grammar::Tsx => format!(
                "{}\n{}\n{TS_EXTRA}",
                tree_sitter_javascript::TAGS_QUERY,
                tree_sitter_typescript::TAGS_QUERY
            ),
            Grammar::Java => format!("{}\n{JAVA_EXTRA}", tree_sitter_java::TAGS_QUERY),
            Grammar::C => format!("{}\n{C_EXTRA}", tree_sitter_c::TAGS_QUERY),
            Grammar::Cpp => format!("{}\n{C_EXTRA}\n{CPP_EXTRA}", tree_sitter_cpp::TAGS_QUERY),
        }
    }

    /// Whether the name found at byte `at` could be a definition, from the bytes before it. A
    /// cheap test that only rules out what the query could never capture, so that a file where
    /// the name is only called or used (`String::from_utf8(…)`, in hundreds of files of a large
    /// Rust tree) is not parsed. Rust, Python and Go name a definition after a keyword (or, in
    /// Go, a receiver or a group); the other languages put a type or nothing there, so every
    /// mention counts.
    pub(crate) fn could_define(self, source: &[u8], at: usize) -> bool {
        let before = &source[..at];
        let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        let trimmed = before.trim_ascii_end();
        // A raw identifier (`fn r#type`) has its keyword before the `r#`.
        let trimmed = trimmed
            .strip_suffix(b"r#")
            .unwrap_or(trimmed)
            .trim_ascii_end();
        let word_start = trimmed
            .iter()
            .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'!'))
            .map_or(0, |i| i + 1);
        let word = &trimmed[word_start..];
        match self {
            Grammar::Rust => matches!(
                word,
                b"fn"
                    | b"struct"
                    | b"enum"
                    | b"union"
                    | b"trait"
                    | b"type"
                    | b"mod"
                    | b"const"
                    | b"static"
                    | b"mut"
                    | b"macro_rules!"
            ),
            // A module-level assignment starts its line.
            Grammar::Python => matches!(word, b"def" | b"class") || at == line_start,
            // `func (r T) name`, `var a, name`, and the specs of a `var (…)` group, one a line.
            Grammar::Go => {
                matches!(word, b"func" | b"type" | b"var" | b"const")
                    || trimmed.ends_with(b")")
                    || trimmed.ends_with(b",")
                    || before[line_start..].trim_ascii().is_empty()
            }
            Grammar::JavaScript
            | Grammar::TypeScript
            | Grammar::Tsx
            | Grammar::Java
            | Grammar::C
            | Grammar::Cpp => true,
        }
    }

    /// The compiled query, or `None` if it does not compile (a unit test makes sure each one
    /// does; a grammar update that broke one would only leave its files unread).
    pub(crate) fn query(self) -> Option<&'static DefinitionQuery> {
        static QUERIES: [OnceLock<Option<DefinitionQuery>>; 9] = [const { OnceLock::new() }; 9];
        QUERIES[self as usize]
            .get_or_init(|| DefinitionQuery::new(self).ok())
            .as_ref()
    }
}

/// What a definition is, as the `kind` parameter groups them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Function,
    Type,
    Module,
    Variable,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Function => "function",
            Kind::Type => "type",
            Kind::Module => "module",
            Kind::Variable => "variable",
        }
    }

    /// The kind of a tags capture such as `definition.method`.
    fn from_capture(capture: &str) -> Option<Kind> {
        Some(match capture.strip_prefix("definition.")? {
            "function" | "method" | "macro" => Kind::Function,
            "class" | "interface" | "type" | "enum" | "struct" | "union" => Kind::Type,
            "module" | "namespace" => Kind::Module,
            "constant" | "variable" | "field" => Kind::Variable,
            _ => return None,
        })
    }
}

/// A compiled query and the meaning of its captures.
pub(crate) struct DefinitionQuery {
    pub(crate) query: Query,
    /// Index of the `@name` capture.
    pub(crate) name: u32,
    /// For each capture index, the kind it defines, if it is a `@definition.*` capture.
    pub(crate) kinds: Vec<Option<Kind>>,
}

impl DefinitionQuery {
    fn new(grammar: Grammar) -> Result<Self, tree_sitter::QueryError> {
        let query = Query::new(&grammar.ts_language(), &grammar.query_source())?;
        let name = query.capture_index_for_name("name").unwrap_or(u32::MAX);
        let kinds = query
            .capture_names()
            .iter()
            .map(|capture| Kind::from_capture(capture))
            .collect();
        Ok(Self { query, name, kinds })
    }
}

const RUST_EXTRA: &str = r#"
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(function_signature_item name: (identifier) @name) @definition.function
; Items inside a macro call (`cfg_rt! { pub fn spawn_blocking() … }`, common in large crates)
; are a token tree to the grammar: a keyword followed by a name is what is left to go by.
(token_tree "fn" @definition.function . (identifier) @name)
(token_tree ["struct" "enum" "union" "trait" "type"] @definition.type . (identifier) @name)
(token_tree ["const" "static"] @definition.constant . (identifier) @name)
"#;

const GO_EXTRA: &str = r#"
(var_spec name: (identifier) @name) @definition.variable
(const_spec name: (identifier) @name) @definition.constant
"#;

const JS_EXTRA: &str = r#"
(variable_declarator name: (identifier) @name) @definition.variable
"#;

const TS_EXTRA: &str = r#"
(variable_declarator name: (identifier) @name) @definition.variable
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
"#;

const JAVA_EXTRA: &str = r#"
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.interface
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field
"#;

const C_EXTRA: &str = r#"
(translation_unit (declaration declarator: (init_declarator declarator: (identifier) @name)) @definition.variable)
(translation_unit (declaration declarator: (identifier) @name) @definition.variable)
(preproc_def name: (identifier) @name) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.macro
"#;

const CPP_EXTRA: &str = r#"
(namespace_definition name: (namespace_identifier) @name) @definition.module
(alias_declaration name: (type_identifier) @name) @definition.type
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles() {
        let grammars = [
            Grammar::Rust,
            Grammar::Go,
            Grammar::Python,
            Grammar::JavaScript,
            Grammar::TypeScript,
            Grammar::Tsx,
            Grammar::Java,
            Grammar::C,
            Grammar::Cpp,
        ];
        for grammar in grammars {
            if let Err(err) = DefinitionQuery::new(grammar) {
                panic!("{grammar:?}: {err}");
            }
        }
    }

    #[test]
    fn could_define_by_the_bytes_before() {
        let cases: [(Grammar, &str, bool); 12] = [
            (Grammar::Rust, "pub fn load", true),
            (Grammar::Rust, "macro_rules! load", true),
            (Grammar::Rust, "static mut load", true),
            (Grammar::Rust, "fn r#load", true),
            (Grammar::Rust, "x = load", false),
            (Grammar::Rust, "Self::load", false),
            (Grammar::Python, "load", true),
            (Grammar::Python, "    x = load", false),
            (Grammar::Go, "func (l *L) load", true),
            (Grammar::Go, "var (\n\tload", true),
            (Grammar::Go, "x := load", false),
            (Grammar::C, "x = load", true),
        ];
        let found: Vec<(Grammar, &str, bool)> = cases
            .iter()
            .map(|(grammar, text, _)| {
                let source = text.as_bytes();
                let at = source.len() - "load".len();
                (*grammar, *text, grammar.could_define(source, at))
            })
            .collect();
        assert_eq!(found, cases.to_vec());
    }

    #[test]
    fn files_by_extension() {
        let found: Vec<Option<Grammar>> = ["a.rs", "b.tsx", "c.h", "d.hpp", "e.txt", "Makefile"]
            .iter()
            .map(|p| Grammar::for_path(Path::new(p)))
            .collect();
        assert_eq!(
            found,
            vec![
                Some(Grammar::Rust),
                Some(Grammar::Tsx),
                Some(Grammar::C),
                Some(Grammar::Cpp),
                None,
                None
            ]
        );
    }
}
