//! Everything the command line writes goes through here: [`out`], [`err`] and [`json`] are the
//! only ways to stdout and stderr in this crate (`clippy.toml` refuses `println!`, `eprintln!`,
//! `std::io::stdout` and `std::io::stderr` elsewhere).
//!
//! Most of what is printed comes from outside: the model's answer, tool names and arguments,
//! servers' names, errors and results, view addresses. A terminal reads control characters in
//! that text as commands: `ESC ] 52` sets the clipboard, `ESC [ 2J` clears the screen, a
//! carriage return writes over a line that was printed. So the writers drop every control
//! character but newline and tab (C0, DEL and C1, and bytes that are not UTF-8) from whatever is
//! written through them, wherever it came from, and the command line's own colours and line
//! clearing go out only as [`Style`]s and [`Clean::clear_line`], which no text can name. JSON
//! stays whole: its writer spells a control character the way JSON may (`\u009b`), so a program
//! reads the same value and a terminal sees no control.
//!
//! Whether the terminal reads escape sequences at all: every Unix terminal does; Windows'
//! console does once asked to (virtual terminal processing, Windows 10 and later), and where it
//! refuses, the command line writes plain text rather than `←[32m`.

// The one place allowed to reach stdout and stderr (see the crate's clippy.toml).
#![allow(clippy::disallowed_methods)]

use std::io::{self, IsTerminal, StderrLock, StdoutLock, Write};
use std::sync::OnceLock;

/// Whether escape sequences written to stdout and stderr are read as such; asked once.
pub fn escapes_work() -> bool {
    static WORK: OnceLock<bool> = OnceLock::new();
    *WORK.get_or_init(|| anstyle_query::windows::enable_ansi_colors().unwrap_or(true))
}

/// Whether stdout is a terminal.
pub fn stdout_is_terminal() -> bool {
    io::stdout().is_terminal()
}

/// Whether stderr is a terminal.
pub fn stderr_is_terminal() -> bool {
    io::stderr().is_terminal()
}

/// Whether a stream that is a terminal (or not) gets colours.
fn colors_for(terminal: bool) -> bool {
    terminal && std::env::var_os("NO_COLOR").is_none() && escapes_work()
}

/// Stdout for people: control characters dropped, colours where the terminal shows them.
pub fn out() -> Clean<StdoutLock<'static>> {
    Clean::new(
        io::stdout().lock(),
        Mode::Strip,
        colors_for(stdout_is_terminal()),
    )
}

/// Stderr for people: control characters dropped, colours where the terminal shows them.
pub fn err() -> Clean<StderrLock<'static>> {
    Clean::new(
        io::stderr().lock(),
        Mode::Strip,
        colors_for(stderr_is_terminal()),
    )
}

/// Stdout for JSON (`json`) or for people.
pub fn stdout_for(json: bool) -> Clean<StdoutLock<'static>> {
    if json { self::json() } else { out() }
}

/// Stdout for programs reading JSON: control characters that JSON allows raw in a string (C1)
/// written as `\u00XX` escapes instead, so the values are the same and no terminal reads them.
pub fn json() -> Clean<StdoutLock<'static>> {
    Clean::new(io::stdout().lock(), Mode::Escape, false)
}

/// A colour or weight of the command line's own, the only escape sequences it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Bold,
    Dim,
    Red,
    Green,
    Yellow,
    Cyan,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Self::Bold => "1",
            Self::Dim => "2",
            Self::Red => "31",
            Self::Green => "32",
            Self::Yellow => "33",
            Self::Cyan => "36",
        }
    }
}

/// Text in parts, each plain or in a [`Style`]; written by [`Clean::painted`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Painted {
    parts: Vec<(Option<Style>, String)>,
}

impl Painted {
    /// `text` in `style`.
    pub fn styled(style: Style, text: impl Into<String>) -> Self {
        Self::default().and(Some(style), text)
    }

    /// This, then `text` in `style` (or plain).
    pub fn and(mut self, style: Option<Style>, text: impl Into<String>) -> Self {
        self.parts.push((style, text.into()));
        self
    }
}

/// What a [`Clean`] does with a control character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Drop it (text for people).
    Strip,
    /// Write it as a JSON escape (JSON for programs).
    Escape,
}

/// A writer that lets no control character through but newline and tab (see the module's
/// docs). Bytes that are not UTF-8 are dropped; a character cut between two writes is kept
/// for the next.
pub struct Clean<W: Write> {
    inner: W,
    mode: Mode,
    color: bool,
    /// The start of a character whose other bytes have not been written yet.
    pending: Vec<u8>,
}

impl<W: Write> Clean<W> {
    fn new(inner: W, mode: Mode, color: bool) -> Self {
        Self {
            inner,
            mode,
            color,
            pending: Vec::new(),
        }
    }

    /// Writes `painted`: its text cleaned, its styles as the command line's own escape
    /// sequences where the terminal shows colours.
    pub fn painted(&mut self, painted: &Painted) -> io::Result<()> {
        for (style, text) in &painted.parts {
            match style {
                Some(style) if self.color => {
                    write!(self.inner, "\x1b[{}m", style.code())?;
                    self.write_all(text.as_bytes())?;
                    self.inner.write_all(b"\x1b[0m")?;
                }
                _ => self.write_all(text.as_bytes())?,
            }
        }
        Ok(())
    }

    /// Goes back to the start of the line and clears it, where the terminal reads escape
    /// sequences; `false` (and nothing written) where it does not.
    pub fn clear_line(&mut self) -> io::Result<bool> {
        if !escapes_work() {
            return Ok(false);
        }
        self.inner.write_all(b"\r\x1b[K")?;
        Ok(true)
    }
}

/// `text` with its control characters dropped or escaped as `mode` says.
fn push_clean(out: &mut String, text: &str, mode: Mode) {
    for c in text.chars() {
        if !c.is_control() || c == '\n' || (c == '\t' && mode == Mode::Strip) {
            out.push(c);
        } else if mode == Mode::Escape {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        }
    }
}

impl<W: Write> Write for Clean<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let mut clean = String::with_capacity(self.pending.len());
        let mut start = 0;
        while start < self.pending.len() {
            match std::str::from_utf8(&self.pending[start..]) {
                Ok(text) => {
                    push_clean(&mut clean, text, self.mode);
                    start = self.pending.len();
                }
                Err(error) => {
                    let valid = start + error.valid_up_to();
                    if let Ok(text) = std::str::from_utf8(&self.pending[start..valid]) {
                        push_clean(&mut clean, text, self.mode);
                    }
                    match error.error_len() {
                        // Not UTF-8: dropped (a lone 0x9b is CSI to an 8-bit terminal).
                        Some(bad) => start = valid + bad,
                        // A character cut short: the rest comes with the next write.
                        None => {
                            start = valid;
                            break;
                        }
                    }
                }
            }
        }
        self.pending.drain(..start);
        self.inner.write_all(clean.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn written(mode: Mode, color: bool, write: impl FnOnce(&mut Clean<&mut Vec<u8>>)) -> String {
        let mut bytes = Vec::new();
        let mut clean = Clean::new(&mut bytes, mode, color);
        write(&mut clean);
        drop(clean);
        String::from_utf8(bytes).unwrap()
    }

    const HOSTILE: &str = "a\x1b]52;c;aGk=\x07b\x1b[2J\r\u{9b}31mc\u{7f}\x00\td\n";

    #[test]
    fn attack_terminal_text_loses_every_control_but_newline_and_tab() {
        let text = written(Mode::Strip, false, |out| {
            write!(out, "{HOSTILE}").unwrap();
        });
        assert_eq!(text, "a]52;c;aGk=b[2J31mc\td\n");
    }

    #[test]
    fn attack_terminal_only_the_command_lines_own_styles_reach_the_terminal() {
        let line =
            Painted::styled(Style::Bold, format!("tool{HOSTILE}")).and(None, " \x1b[8mhidden");
        let colored = written(Mode::Strip, true, |out| out.painted(&line).unwrap());
        assert_eq!(
            colored,
            "\x1b[1mtoola]52;c;aGk=b[2J31mc\td\n\x1b[0m [8mhidden"
        );
        let plain = written(Mode::Strip, false, |out| out.painted(&line).unwrap());
        assert_eq!(plain, "toola]52;c;aGk=b[2J31mc\td\n [8mhidden");
    }

    #[test]
    fn attack_terminal_json_keeps_its_values_and_no_control() {
        let line = serde_json::to_string(&serde_json::json!({"text": HOSTILE})).unwrap();
        let text = written(Mode::Escape, false, |out| {
            writeln!(out, "{line}").unwrap();
        });
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["text"], HOSTILE);
    }

    #[test]
    fn characters_cut_between_writes_are_kept_and_bytes_that_are_not_utf8_dropped() {
        let text = written(Mode::Strip, false, |out| {
            let bytes = "·✓".as_bytes();
            out.write_all(&bytes[..1]).unwrap();
            out.write_all(&bytes[1..3]).unwrap();
            out.write_all(&bytes[3..]).unwrap();
            out.write_all(b"x\x9b2Jy\xff").unwrap();
        });
        assert_eq!(text, "·✓x2Jy");
    }
}
