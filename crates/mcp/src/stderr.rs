//! A server's recent stderr, kept in a bounded ring of lines for display.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use crate::redact::Redactor;

/// Lines kept per server.
const MAX_LINES: usize = 200;
/// Characters kept per line.
const MAX_LINE_CHARS: usize = 2000;

/// The last lines a server wrote to stderr (and log messages it sent). Cloning shares the log.
/// Lines are kept with the server's own secrets scrubbed out (a server that prints its
/// environment or its request headers), since they are shown and recorded.
#[derive(Clone, Default)]
pub struct StderrLog {
    lines: Arc<Mutex<VecDeque<String>>>,
    redactor: Redactor,
}

impl std::fmt::Debug for StderrLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StderrLog")
            .field("lines", &self.len())
            .finish()
    }
}

impl StderrLog {
    pub fn new() -> Self {
        Self::default()
    }

    /// A log that scrubs `redactor`'s secrets out of every line it keeps.
    pub(crate) fn redacting(redactor: Redactor) -> Self {
        Self {
            redactor,
            ..Self::default()
        }
    }

    /// Adds one line, dropping the oldest when full.
    pub fn push(&self, line: &str) {
        let line = self.redactor.redact(line.trim_end_matches(['\r', '\n']));
        let line = match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line.to_string(),
        };
        let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == MAX_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The last `count` lines, oldest first.
    pub fn tail(&self, count: usize) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        let skip = lines.len().saturating_sub(count);
        lines.iter().skip(skip).cloned().collect()
    }

    /// Every kept line, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.tail(MAX_LINES)
    }

    pub fn len(&self) -> usize {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies `stream` into the log line by line until it ends. Bytes that are not UTF-8 are
    /// replaced rather than ending the copy.
    pub(crate) fn follow(&self, stream: impl AsyncRead + Unpin + Send + 'static) {
        let log = self.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stream);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => log.push(&String::from_utf8_lossy(&buf)),
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn keeps_the_last_lines_and_cuts_long_ones() {
        let log = StderrLog::new();
        for n in 0..(MAX_LINES + 5) {
            log.push(&format!("line {n}\n"));
        }
        assert_eq!(log.len(), MAX_LINES);
        assert_eq!(
            log.tail(2),
            vec![
                format!("line {}", MAX_LINES + 3),
                format!("line {}", MAX_LINES + 4)
            ]
        );
        assert_eq!(log.lines()[0], "line 5");
        log.push(&"x".repeat(MAX_LINE_CHARS + 10));
        assert_eq!(log.tail(1)[0].chars().count(), MAX_LINE_CHARS + 1);
    }

    #[tokio::test]
    async fn follows_a_stream_to_its_end() {
        let log = StderrLog::new();
        let (mut writer, reader) = tokio::io::duplex(64);
        log.follow(reader);
        tokio::io::AsyncWriteExt::write_all(&mut writer, b"one\ntw\xffo\nthree")
            .await
            .unwrap();
        drop(writer);
        for _ in 0..100 {
            if log.len() == 3 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(log.lines(), vec!["one", "tw\u{fffd}o", "three"]);
    }
}
