//! Finding definitions in a tree: a parallel walk, a cheap byte search that rules out almost
//! every file, and a syntax tree only for the files that mention the name.
//!
//! The answer counts every match in the tree, so the whole tree is walked whatever the cap; the
//! walk is therefore `ignore`'s parallel one (as `count_lines` uses), not the ordered, early
//! stopping walk of `search_text`. Each worker keeps only the first `limit` definitions in path
//! order (a bounded heap) and a count, so memory stays flat however many match.

use std::collections::BinaryHeap;
use std::io::Read;
use std::path::{Path, PathBuf};

use memchr::memmem;
use tokio_util::sync::CancellationToken;
use tree_sitter::{Parser, QueryCursor, StreamingIterator};

use super::language::{Grammar, Kind, Language};

/// Longest signature kept, in characters.
const MAX_SIGNATURE_CHARS: usize = 200;
/// Bytes looked at for a NUL, as ripgrep decides a file is binary.
const BINARY_PROBE: usize = 8 * 1024;

/// What to look for.
pub(crate) struct Search {
    /// The name, or the prefix when `prefix` is set.
    pub name: String,
    pub prefix: bool,
    /// `None`: every kind.
    pub kind: Option<Kind>,
    pub language: Option<Language>,
    /// Folder or file to search.
    pub root: PathBuf,
    /// Every file is read through the folder's handle.
    pub workspace: std::sync::Arc<tooltrail_sandbox::Workspace>,
    /// Files larger than this are skipped.
    pub max_bytes: u64,
    /// Definitions kept, the first in path order.
    pub limit: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Definition {
    pub path: PathBuf,
    pub line: u64,
    pub column: u64,
    pub name: String,
    pub kind: Kind,
    pub language: Language,
    pub signature: String,
}

#[derive(Debug, Default)]
pub(crate) struct Found {
    /// The first `limit` definitions, in path then line order.
    pub definitions: Vec<Definition>,
    /// Every matching definition in the tree.
    pub total: usize,
    /// Files skipped for being larger than the read limit.
    pub too_large: usize,
}

/// Running results: a max-heap holding the `cap` first definitions.
#[derive(Default)]
struct Collected {
    first: BinaryHeap<Definition>,
    total: usize,
    too_large: usize,
    cap: usize,
}

impl Collected {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            ..Self::default()
        }
    }

    fn add(&mut self, definition: Definition) {
        self.total += 1;
        if self.first.len() >= self.cap {
            match self.first.peek() {
                Some(last) if definition < *last => {}
                _ => return,
            }
        }
        self.first.push(definition);
        if self.first.len() > self.cap {
            self.first.pop();
        }
    }

    fn merge(&mut self, other: Collected) {
        let total = self.total + other.total;
        for definition in other.first {
            self.add(definition);
        }
        self.total = total;
        self.too_large += other.too_large;
    }
}

/// One walker thread's state: its parser, cursor and buffer are reused for every file.
struct Worker<'a> {
    search: &'a Search,
    finder: memmem::Finder<'a>,
    parser: Parser,
    cursor: QueryCursor,
    buffer: Vec<u8>,
    local: Collected,
}

/// Searches the tree; `None` when cancelled.
pub(crate) fn search(search: &Search, cancel: &CancellationToken) -> Option<Found> {
    let workers = crate::walk::parallel(
        &mut crate::walk::builder(&search.root, false),
        cancel,
        || Worker {
            search,
            finder: memmem::Finder::new(search.name.as_bytes()),
            parser: Parser::new(),
            cursor: QueryCursor::new(),
            buffer: Vec::new(),
            local: Collected::new(search.limit),
        },
        |worker, entry| {
            // Symlinked files are not followed, as the other tools do.
            if entry.file_type().is_some_and(|kind| kind.is_file()) {
                worker.file(entry.path());
            }
        },
    )?;
    let mut collected = Collected::new(search.limit);
    for worker in workers {
        collected.merge(worker.local);
    }
    Some(Found {
        definitions: collected.first.into_sorted_vec(),
        total: collected.total,
        too_large: collected.too_large,
    })
}

impl Worker<'_> {
    fn file(&mut self, path: &Path) {
        let Some(grammar) = Grammar::for_path(path) else {
            return;
        };
        if self
            .search
            .language
            .is_some_and(|language| language != grammar.language())
        {
            return;
        }
        match read(
            &self.search.workspace,
            path,
            self.search.max_bytes,
            &mut self.buffer,
        ) {
            Contents::Text => {}
            Contents::TooLarge => {
                self.local.too_large += 1;
                return;
            }
            // Binary and unreadable files have no definitions.
            Contents::Skip => return,
        }
        let Some((start, end)) = mentions(
            grammar,
            &self.finder,
            &self.buffer,
            self.search.name.len(),
            self.search.prefix,
        ) else {
            return;
        };
        let Some(query) = grammar.query() else {
            return;
        };
        if self.parser.set_language(&grammar.ts_language()).is_err() {
            return;
        }
        let Some(tree) = self.parser.parse(&self.buffer, None) else {
            return;
        };
        let source = self.buffer.as_slice();
        // Only the stretch of the file that mentions the name can hold its definitions.
        self.cursor.set_byte_range(start..end);
        let mut found: Vec<(usize, Kind, tree_sitter::Node<'_>, tree_sitter::Node<'_>)> =
            Vec::new();
        let mut matches = self.cursor.matches(&query.query, tree.root_node(), source);
        while let Some(m) = matches.next() {
            let mut name = None;
            let mut definition = None;
            for capture in m.captures {
                if capture.index == query.name {
                    name = Some(capture.node);
                } else if let Some(Some(kind)) = query.kinds.get(capture.index as usize) {
                    definition = Some((*kind, capture.node));
                }
            }
            let (Some(name), Some((kind, node))) = (name, definition) else {
                continue;
            };
            let text = &source[name.byte_range()];
            let wanted = if self.search.prefix {
                text.starts_with(self.search.name.as_bytes())
            } else {
                text == self.search.name.as_bytes()
            };
            if wanted {
                found.push((name.start_byte(), kind, name, node));
            }
        }
        // Several patterns can match one name (a Rust method is also a function; a JavaScript
        // arrow function is also a variable): keep one, the most specific kind.
        found.sort_by_key(|(start, kind, _, _)| (*start, *kind));
        found.dedup_by_key(|(start, _, _, _)| *start);
        for (_, kind, name, node) in found {
            if self.search.kind.is_some_and(|wanted| wanted != kind) {
                continue;
            }
            let row = node.start_position().row;
            self.local.add(Definition {
                path: path.to_path_buf(),
                line: row as u64 + 1,
                column: name.start_position().column as u64 + 1,
                name: String::from_utf8_lossy(&source[name.byte_range()]).into_owned(),
                kind,
                language: grammar.language(),
                signature: signature(source, node.start_byte()),
            });
        }
    }
}

enum Contents {
    Text,
    TooLarge,
    Skip,
}

/// Reads a file into `buffer`, unless it is too large or binary.
fn read(
    workspace: &tooltrail_sandbox::Workspace,
    path: &Path,
    max_bytes: u64,
    buffer: &mut Vec<u8>,
) -> Contents {
    // Through the folder's handle: a folder swapped for a link during the walk cannot lead
    // the read out.
    let Ok(mut file) = workspace.open_found(path) else {
        return Contents::Skip;
    };
    match file.metadata() {
        Ok(meta) if !meta.is_file() => return Contents::Skip,
        Ok(meta) if meta.len() > max_bytes => return Contents::TooLarge,
        Ok(_) => {}
        Err(_) => return Contents::Skip,
    }
    buffer.clear();
    // One byte more than the limit tells a file that grew since its metadata was read.
    if file
        .by_ref()
        .take(max_bytes.saturating_add(1))
        .read_to_end(buffer)
        .is_err()
    {
        return Contents::Skip;
    }
    if buffer.len() as u64 > max_bytes {
        return Contents::TooLarge;
    }
    let probe = &buffer[..buffer.len().min(BINARY_PROBE)];
    if memchr::memchr(0, probe).is_some() {
        return Contents::Skip;
    }
    Contents::Text
}

/// The byte range from the first to the last place the name (or prefix) appears as a whole
/// identifier where it could be defined, or `None` when there is none. This is what keeps most
/// files from being parsed.
fn mentions(
    grammar: Grammar,
    finder: &memmem::Finder<'_>,
    source: &[u8],
    len: usize,
    prefix: bool,
) -> Option<(usize, usize)> {
    let mut range: Option<(usize, usize)> = None;
    for at in finder.find_iter(source) {
        let before = at.checked_sub(1).map(|i| source[i]);
        let after = source.get(at + len).copied();
        if before.is_some_and(is_identifier_byte)
            || (!prefix && after.is_some_and(is_identifier_byte))
            || !grammar.could_define(source, at)
        {
            continue;
        }
        let end = at + len;
        range = Some(match range {
            None => (at, end),
            Some((start, _)) => (start, end),
        });
    }
    range
}

/// Bytes that continue an identifier in the languages read (non-ASCII counts: a name may hold
/// letters of any script).
fn is_identifier_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' || byte >= 0x80
}

/// The definition's first line, trimmed and capped.
fn signature(source: &[u8], start: usize) -> String {
    let line_start = memchr::memrchr(b'\n', &source[..start]).map_or(0, |i| i + 1);
    let line_end = memchr::memchr(b'\n', &source[start..]).map_or(source.len(), |i| start + i);
    let text = String::from_utf8_lossy(&source[line_start..line_end]);
    let text = text.trim();
    match text.char_indices().nth(MAX_SIGNATURE_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn mentions_only_whole_identifiers() {
        let finder = memmem::Finder::new(b"parse");
        let source = b"reparse(); parse_all(); x.parse(); parser";
        let c = Grammar::C;
        assert_eq!(mentions(c, &finder, source, 5, false), Some((26, 31)));
        assert_eq!(mentions(c, &finder, source, 5, true), Some((11, 40)));
        assert_eq!(mentions(c, &finder, b"reparse", 5, true), None);
        let rust = b"fn parse() {}\nparse(); // fn parse_all";
        assert_eq!(
            mentions(Grammar::Rust, &finder, rust, 5, false),
            Some((3, 8))
        );
        assert_eq!(
            mentions(Grammar::Rust, &finder, rust, 5, true),
            Some((3, 34))
        );
    }

    #[test]
    fn signature_is_the_trimmed_first_line_capped() {
        let source = b"  fn a() {\n    body\n}";
        assert_eq!(signature(source, 2), "fn a() {");
        let long = format!("x{}", "y".repeat(300));
        assert_eq!(
            signature(long.as_bytes(), 0),
            format!("x{}…", "y".repeat(199))
        );
        assert_eq!(signature(b"", 0), "");
    }
}
