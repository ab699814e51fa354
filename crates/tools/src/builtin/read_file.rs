//! `read_file(path, offset?, limit?, encoding?)`: a window of a text file's lines, numbered.

use std::io::Read;

use async_trait::async_trait;
use encoding_rs::Encoding;
use serde::Deserialize;
use serde_json::{Value, json};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};
use tooltrail_sandbox::{ResolvedPath, Workspace};

use crate::args::{blocking, io_error, parse};
use crate::tool::{Tool, ToolContext};

const NAME: &str = "read_file";
const DEFAULT_LIMIT: u64 = 100;
const MAX_LIMIT: u64 = 2000;
/// Longest line shown in full; minified files would otherwise fill the model's context.
const MAX_LINE_CHARS: usize = 2000;
/// How far into a file binary content is looked for, as git and ripgrep do.
const BINARY_SNIFF: usize = 8 * 1024;

pub(crate) struct ReadFile {
    spec: ToolSpec,
}

#[derive(Deserialize)]
struct Args {
    path: String,
    offset: Option<u64>,
    limit: Option<u64>,
    encoding: Option<String>,
}

impl ReadFile {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "Read a text file: numbered lines (`limit`, default 100) and the \
                    offset to read on from."
                    .to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {
                            "type": "string"
                        },
                        "offset": {
                            "type": "integer",
                            "minimum": 1
                        },
                        "limit": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": MAX_LIMIT
                        },
                        "encoding": {
                            "type": "string"
                        }
                    },
                    "required": ["path"]
                }),
                read_only: true,
            },
        }
    }
}

#[async_trait]
impl Tool for ReadFile {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// A file is read as UTF-8 (or by its byte-order mark); one that is not says so and names
    /// `encoding`.
    fn unoffered_parameters(&self) -> &'static [&'static str] {
        &["encoding"]
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse(NAME, args)?;
        let encoding = match args.encoding.as_deref().map(str::trim) {
            None | Some("") => encoding_rs::UTF_8,
            Some(label) => Encoding::for_label(label.as_bytes()).ok_or_else(|| {
                ToolError::new(
                    ToolErrorCode::InvalidArguments,
                    format!(
                        "parameter `encoding`: unknown encoding `{label}`; try utf-8, gbk, gb18030, shift_jis, utf-16le or latin1"
                    ),
                )
            })?,
        };
        let request = Request {
            offset: args.offset.unwrap_or(1).max(1),
            limit: args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT),
            encoding,
            explicit_encoding: args.encoding.is_some(),
            max_bytes: ctx.limits.max_read_bytes,
        };
        let resolved = ctx.workspace.resolve(&args.path)?;
        let workspace = std::sync::Arc::clone(&ctx.workspace);
        blocking(move || read(&workspace, &resolved, &request)).await
    }
}

struct Request {
    offset: u64,
    limit: u64,
    encoding: &'static Encoding,
    explicit_encoding: bool,
    max_bytes: u64,
}

fn read(
    workspace: &Workspace,
    resolved: &ResolvedPath,
    request: &Request,
) -> Result<ToolOutput, ToolError> {
    let relative = resolved.relative();
    let file = read_bytes(workspace, resolved, request.max_bytes)?;
    refuse_binary(&file, request, relative)?;
    // A byte-order mark overrides the requested encoding, as browsers do.
    let (text, used, replaced) = request.encoding.decode(&file.bytes);
    let lines = split_lines(&text);
    let window = Window::of(&lines, request);

    let mut text_out = window.heading(relative, file.cut_at_limit);
    text_out.push_str(&window.body);
    if window.more {
        text_out.push_str(&format!(
            "({} more lines; continue with offset={})\n",
            window.total - window.last,
            window.last + 1
        ));
    }
    if file.cut_at_limit {
        text_out.push_str(&format!(
            "(the file is {}; only its first {} were read)\n",
            human_size(file.size),
            human_size(request.max_bytes)
        ));
    }
    if replaced {
        text_out.push_str(&format!(
            "(some bytes are not valid {} and were replaced with U+FFFD; pass `encoding`, e.g. gbk, shift_jis, utf-16le or latin1)\n",
            used.name()
        ));
    }

    let Window {
        first,
        last,
        total,
        more,
        shown,
        ..
    } = window;
    Ok(ToolOutput::new(
        text_out,
        json!({
            "path": relative,
            "encoding": used.name(),
            "offset": first,
            "end_line": if first <= total { last } else { first - 1 },
            "total_lines": total,
            "total_lines_exact": !file.cut_at_limit,
            "more": more,
            "next_offset": if more { Some(last + 1) } else { None },
            "size": file.size,
            "truncated_at_limit": file.cut_at_limit,
            "replaced_invalid": replaced,
            "lines": shown,
        }),
    ))
}

/// The start of a regular file, as read.
struct FileStart {
    /// At most the read limit, cut to whole lines when the file is longer.
    bytes: Vec<u8>,
    /// The file's whole size.
    size: u64,
    /// The file is longer than the read limit.
    cut_at_limit: bool,
}

/// Reads at most `max_bytes` of a regular file; a folder or a device is refused by name.
fn read_bytes(
    workspace: &Workspace,
    resolved: &ResolvedPath,
    max_bytes: u64,
) -> Result<FileStart, ToolError> {
    let relative = resolved.relative();
    // Opened through the folder's handle; what is checked below is the open file itself.
    let (file, meta) = workspace.open_read(resolved)?;
    if meta.is_dir() {
        return Err(ToolError::new(
            ToolErrorCode::NotAFile,
            format!("`{relative}` is a folder; use list_dir or search_files to see what it holds"),
        ));
    }
    if !meta.is_file() {
        return Err(ToolError::new(
            ToolErrorCode::NotAFile,
            format!("`{relative}` is not a regular file"),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(max_bytes) as usize + 1);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|err| io_error(relative, &err))?;
    let cut_at_limit = bytes.len() as u64 > max_bytes;
    if cut_at_limit {
        bytes.truncate(max_bytes as usize);
        // The last line is probably incomplete: keep only whole lines.
        if let Some(end) = memchr::memrchr(b'\n', &bytes) {
            bytes.truncate(end + 1);
        }
    }
    Ok(FileStart {
        bytes,
        size: meta.len(),
        cut_at_limit,
    })
}

/// A NUL byte near the start means binary, as git and ripgrep judge it; UTF-16 text is full of
/// them, so it is let through when its byte-order mark or the requested encoding says UTF-16.
fn refuse_binary(file: &FileStart, request: &Request, relative: &str) -> Result<(), ToolError> {
    let bytes = &file.bytes;
    let utf16 = bytes.starts_with(&[0xFF, 0xFE])
        || bytes.starts_with(&[0xFE, 0xFF])
        || (request.explicit_encoding
            && (request.encoding == encoding_rs::UTF_16LE
                || request.encoding == encoding_rs::UTF_16BE));
    let sniff = &bytes[..bytes.len().min(BINARY_SNIFF)];
    if !utf16 && memchr::memchr(0, sniff).is_some() {
        return Err(ToolError::new(
            ToolErrorCode::BinaryFile,
            format!(
                "`{relative}` is a binary file ({}); only text files can be read",
                human_size(file.size)
            ),
        ));
    }
    Ok(())
}

/// The lines asked for, numbered, and where they sit in the file.
struct Window {
    first: u64,
    /// The last line shown (below `first` when the offset is past the end).
    last: u64,
    total: u64,
    /// Lines follow the window.
    more: bool,
    /// The numbered lines, as the model reads them.
    body: String,
    /// The lines as shown, long ones cut.
    shown: Vec<String>,
}

impl Window {
    fn of(lines: &[&str], request: &Request) -> Self {
        let total = lines.len() as u64;
        let first = request.offset;
        let last = (first + request.limit - 1).min(total);
        let mut body = String::new();
        let mut shown = Vec::new();
        if first <= total {
            for (index, line) in lines[(first - 1) as usize..last as usize]
                .iter()
                .enumerate()
            {
                let number = first + index as u64;
                let line = cap_line(line);
                body.push_str(&format!("{number:>6}\t{line}\n"));
                shown.push(line);
            }
        }
        Self {
            first,
            last,
            total,
            more: last < total,
            body,
            shown,
        }
    }

    /// The first line of the answer: which lines of how many, or why there are none.
    fn heading(&self, relative: &str, cut_at_limit: bool) -> String {
        let Self {
            first, last, total, ..
        } = *self;
        let total_text = if cut_at_limit {
            format!("at least {total}")
        } else {
            total.to_string()
        };
        if total == 0 {
            format!("`{relative}` is empty.\n")
        } else if first > total {
            format!(
                "`{relative}` has {total_text} lines; offset {first} is past the end{}.\n",
                if cut_at_limit {
                    " of what the 1 MB read limit allows"
                } else {
                    ""
                }
            )
        } else {
            format!("`{relative}`: lines {first}-{last} of {total_text}\n")
        }
    }
}

/// Lines as `wc -l` counts them, plus a last line without its newline; `\r\n` endings trimmed.
fn split_lines(text: &str) -> Vec<&str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return Vec::new();
    }
    body.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect()
}

fn cap_line(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => line.to_string(),
        Some((cut, _)) => format!(
            "{}… [line cut at {MAX_LINE_CHARS} of {} characters]",
            &line[..cut],
            line.chars().count()
        ),
    }
}

pub(crate) fn human_size(bytes: u64) -> String {
    const MB: f64 = 1024.0 * 1024.0;
    let b = bytes as f64;
    if bytes >= 1024 * 1024 {
        let mb = b / MB;
        if (mb - mb.round()).abs() < 0.05 {
            format!("{} MB", mb.round())
        } else {
            format!("{mb:.1} MB")
        }
    } else if bytes >= 1024 {
        format!("{:.1} KB", b / 1024.0)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_like_wc() {
        assert_eq!(split_lines(""), Vec::<&str>::new());
        assert_eq!(split_lines("a"), vec!["a"]);
        assert_eq!(split_lines("a\n"), vec!["a"]);
        assert_eq!(split_lines("a\r\nb"), vec!["a", "b"]);
        assert_eq!(split_lines("\n\n"), vec!["", ""]);
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_size(12), "12 bytes");
        assert_eq!(human_size(2048), "2.0 KB");
        assert_eq!(human_size(1024 * 1024), "1 MB");
        assert_eq!(human_size(2 * 1024 * 1024 + 300 * 1024), "2.3 MB");
    }

    #[test]
    fn long_lines_are_cut() {
        let line = "x".repeat(MAX_LINE_CHARS + 5);
        let cut = cap_line(&line);
        assert!(cut.ends_with("[line cut at 2000 of 2005 characters]"));
    }
}
