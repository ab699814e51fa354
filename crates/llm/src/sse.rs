//! Server-sent events framing, as the WHATWG HTML standard defines it.
//!
//! Bytes arrive in network chunks that split lines (and UTF-8 characters) anywhere. Lines end
//! in `\n`, `\r\n` or `\r`; a blank line ends an event; `data:` lines of one event are joined
//! with `\n`; lines starting with `:` are comments (keep-alives); `event:` names the event;
//! `id:`, `retry:` and unknown fields are ignored. One space after the colon is dropped.

/// One event: its type (`message` unless named) and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: String,
    pub data: String,
}

#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    /// The line being read, until its end arrives.
    line: Vec<u8>,
    /// The last byte seen was `\r`: a `\n` right after it ends no further line.
    after_cr: bool,
    /// The first line has been read (it may start with a byte order mark).
    started: bool,
    data: String,
    has_data: bool,
    event: String,
    /// The first line that is not SSE at all, kept to describe a body that is not a stream.
    stray_line: Option<String>,
}

impl SseDecoder {
    /// Reads the next bytes, appending every event they complete to `out`.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            let is_lf = bytes[end] == b'\n';
            if end == 0 && is_lf && self.after_cr {
                // The `\n` of a `\r\n` split across two reads, or just after `\r`.
                self.after_cr = false;
                bytes = &bytes[1..];
                continue;
            }
            self.line.extend_from_slice(&bytes[..end]);
            self.after_cr = !is_lf;
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, out);
            bytes = &bytes[end + 1..];
            if self.after_cr && bytes.first() == Some(&b'\n') {
                self.after_cr = false;
                bytes = &bytes[1..];
            }
        }
        if !bytes.is_empty() {
            self.after_cr = false;
            self.line.extend_from_slice(bytes);
        }
    }

    /// The body ended. Servers often close right after their last event without the blank
    /// line that should end it, so a pending event is still dispatched, and an unfinished
    /// last line is read as a line. Callers treat data that then fails to parse as a cut.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, out);
        }
        self.dispatch(out);
    }

    /// The first line of the body that was not SSE, if any.
    pub fn stray_line(&self) -> Option<&str> {
        self.stray_line.as_deref()
    }

    fn line_done(&mut self, mut line: &[u8], out: &mut Vec<SseEvent>) {
        if !self.started {
            // A byte order mark may open the stream (split across reads or not: the whole
            // first line is here now).
            self.started = true;
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_string(),
            "id" | "retry" => {}
            _ => {
                if self.stray_line.is_none() {
                    self.stray_line = Some(line.chars().take(80).collect());
                }
            }
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event: if event.is_empty() {
                "message".to_string()
            } else {
                event
            },
            data: std::mem::take(&mut self.data),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    fn decode_in_pieces(body: &[u8], size: usize) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::default();
        let mut out = Vec::new();
        for piece in body.chunks(size) {
            decoder.feed(piece, &mut out);
        }
        decoder.finish(&mut out);
        out
    }

    fn message(data: &str) -> SseEvent {
        SseEvent {
            event: "message".into(),
            data: data.into(),
        }
    }

    #[test]
    fn every_split_gives_the_same_events() {
        let body = "\u{feff}: keep-alive\r\ndata: {\"a\":\"é\"}\r\n\r\ndata:x\rdata: y\r\rdata:  two spaces\n\nevent: error\ndata: bad\n\nid: 7\nretry: 10\ndata: [DONE]\n\n";
        let expected = vec![
            message("{\"a\":\"é\"}"),
            message("x\ny"),
            message(" two spaces"),
            SseEvent {
                event: "error".into(),
                data: "bad".into(),
            },
            message("[DONE]"),
        ];
        for size in 1..=body.len() {
            assert_eq!(
                decode_in_pieces(body.as_bytes(), size),
                expected,
                "pieces of {size}"
            );
        }
    }

    #[test]
    fn a_last_event_without_blank_line_is_kept() {
        assert_eq!(
            decode_in_pieces(b"data: 1\n\ndata: [DONE]", 4),
            vec![message("1"), message("[DONE]")]
        );
    }

    #[test]
    fn comments_and_empty_events_dispatch_nothing() {
        assert_eq!(
            decode_in_pieces(b": ping\n\n\n\nevent: x\n\n", 3),
            Vec::new()
        );
    }

    /// One generated event: its lines as a server would write them, and what a reader must
    /// make of it (`None` when it has no data and so dispatches nothing).
    fn event_lines() -> impl Strategy<Value = (Vec<String>, Option<SseEvent>)> {
        (
            prop::option::of("[a-z_]{1,8}"),
            prop::collection::vec("[^\r\n]{0,12}", 0..4),
            prop::option::of("[^\r\n]{0,10}"),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(name, data, comment, id, space)| {
                let mut lines = Vec::new();
                if let Some(comment) = comment {
                    lines.push(format!(":{comment}"));
                }
                if let Some(name) = &name {
                    lines.push(format!("event: {name}"));
                }
                for value in &data {
                    // One space after the colon is dropped; a second one is data.
                    lines.push(if space {
                        format!("data: {value}")
                    } else {
                        format!("data:{value}")
                    });
                }
                if id {
                    lines.push("id: 7".into());
                    lines.push("retry: 1000".into());
                }
                let read: Vec<&str> = data
                    .iter()
                    .map(|value| match space {
                        true => value.as_str(),
                        false => value.strip_prefix(' ').unwrap_or(value),
                    })
                    .collect();
                let expected = (!data.is_empty()).then(|| SseEvent {
                    event: name.unwrap_or_else(|| "message".into()),
                    data: read.join("\n"),
                });
                (lines, expected)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::default())]

        /// A stream of events written with any line endings (`\n`, `\r\n`, `\r`), with or
        /// without a byte order mark and a blank line after the last event, read in pieces cut
        /// anywhere (inside `\r\n` and inside UTF-8 characters too), gives the events it holds.
        #[test]
        fn prop_any_chunking_gives_the_same_events(
            events in prop::collection::vec(event_lines(), 0..6),
            endings in prop::collection::vec(prop::sample::select(vec!["\n", "\r\n", "\r"]), 1..4),
            bom in any::<bool>(),
            last_blank in any::<bool>(),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..16),
        ) {
            let mut body = if bom { "\u{feff}".to_string() } else { String::new() };
            let mut expected = Vec::new();
            let mut endings = endings.iter().cycle();
            // A `\n` right after a `\r` ending would join it into one `\r\n`.
            let mut end_line = |body: &mut String| {
                let ending = endings.next().copied().unwrap_or("\n");
                if ending == "\n" && body.ends_with('\r') {
                    body.push_str("\r\n");
                } else {
                    body.push_str(ending);
                }
            };
            let count = events.len();
            for (number, (lines, event)) in events.into_iter().enumerate() {
                for line in lines {
                    body.push_str(&line);
                    end_line(&mut body);
                }
                if number + 1 < count || last_blank {
                    end_line(&mut body);
                }
                expected.extend(event);
            }
            let bytes = body.as_bytes();
            let mut positions: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
            positions.sort_unstable();
            let mut decoder = SseDecoder::default();
            let mut out = Vec::new();
            let mut start = 0;
            for at in positions {
                decoder.feed(&bytes[start..at], &mut out);
                start = at;
            }
            decoder.feed(&bytes[start..], &mut out);
            decoder.finish(&mut out);
            prop_assert_eq!(out, expected);
        }
    }

    #[test]
    fn stray_lines_are_noted() {
        let mut decoder = SseDecoder::default();
        let mut out = Vec::new();
        decoder.feed(b"<html>\nhello\n", &mut out);
        decoder.finish(&mut out);
        assert_eq!(out, Vec::new());
        assert_eq!(decoder.stray_line(), Some("<html>"));
    }
}
