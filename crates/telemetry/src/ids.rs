//! Trace and span ids derived from the record's own ids, and W3C `traceparent` headers.
//!
//! A question's trace id is its turn id (`turn_` followed by 32 hex digits, a UUID), and every
//! span id is a hash of the turn id and what the span stands for. So the spans a question
//! sends live and those `tooltrail export --otlp` sends later from the record are the same
//! spans, and a front end can name a call's trace from the call's turn alone, without asking
//! the telemetry for it.

use std::fmt;

use opentelemetry::trace::{SpanId, TraceId};

/// The trace id of the turn `turn_id`: its UUID when it has one, else a hash of it.
pub fn trace_id_of_turn(turn_id: &str) -> TraceId {
    let hex = turn_id.strip_prefix("turn_").unwrap_or(turn_id);
    match u128::from_str_radix(hex, 16) {
        Ok(value) if hex.len() == 32 && value != 0 => TraceId::from(value),
        _ => {
            let high = u128::from(fnv1a(&[turn_id, "trace-high"]));
            let low = u128::from(fnv1a(&[turn_id, "trace-low"]));
            TraceId::from((high << 64) | low)
        }
    }
}

/// The span id of what `parts` name within a turn (the first part is the turn id).
pub fn span_id(parts: &[&str]) -> SpanId {
    SpanId::from(fnv1a(parts))
}

/// FNV-1a over the parts, each followed by a separator byte: stable across builds and
/// platforms, unlike the standard library's hasher, and never zero (an invalid span id).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.bytes().chain(std::iter::once(0x1f)) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    if hash == 0 { 1 } else { hash }
}

/// A W3C trace context parent: the caller's trace, and its span our spans hang under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    pub trace_id: TraceId,
    pub span_id: SpanId,
    pub sampled: bool,
}

impl TraceParent {
    /// Reads a `traceparent` header (`00-<32 hex>-<16 hex>-<2 hex>`). `None` for anything
    /// else, as the W3C spec asks: a malformed header starts a new trace rather than failing
    /// the request.
    pub fn parse(header: &str) -> Option<Self> {
        let mut parts = header.trim().split('-');
        let version = parts.next()?;
        let trace = parts.next()?;
        let span = parts.next()?;
        let flags = parts.next()?;
        // Version 00 has exactly four parts; later versions may add more after them.
        if version.len() != 2 || version == "ff" || (version == "00" && parts.next().is_some()) {
            return None;
        }
        if trace.len() != 32 || span.len() != 16 || flags.len() != 2 {
            return None;
        }
        let lower_hex = |text: &str| text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if ![version, trace, span, flags]
            .iter()
            .all(|part| lower_hex(part))
        {
            return None;
        }
        let trace_id = u128::from_str_radix(trace, 16).ok()?;
        let span_id = u64::from_str_radix(span, 16).ok()?;
        let flags = u8::from_str_radix(flags, 16).ok()?;
        if trace_id == 0 || span_id == 0 {
            return None;
        }
        Some(Self {
            trace_id: TraceId::from(trace_id),
            span_id: SpanId::from(span_id),
            sampled: flags & 1 == 1,
        })
    }

    /// The parent a span of ours makes for the next hop.
    pub fn of_span(trace_id: TraceId, span_id: SpanId) -> Self {
        Self {
            trace_id,
            span_id,
            sampled: true,
        }
    }
}

impl fmt::Display for TraceParent {
    /// The header value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "00-{}-{}-{:02x}",
            self.trace_id,
            self.span_id,
            u8::from(self.sampled)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_turn_id_is_its_trace_id() {
        let id = trace_id_of_turn("turn_4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(id.to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        // Any other id still gives a valid, stable trace id.
        let other = trace_id_of_turn("not-a-uuid");
        assert_ne!(other, TraceId::INVALID);
        assert_eq!(other, trace_id_of_turn("not-a-uuid"));
    }

    #[test]
    fn span_ids_are_stable_and_distinct() {
        assert_eq!(
            span_id(&["turn_1", "call", "a"]),
            span_id(&["turn_1", "call", "a"])
        );
        assert_ne!(
            span_id(&["turn_1", "call", "a"]),
            span_id(&["turn_1", "calla"])
        );
        assert_ne!(span_id(&["turn_1"]), SpanId::INVALID);
    }

    #[test]
    fn traceparent_round_trips_and_refuses_malformed_headers() {
        let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let parent = TraceParent::parse(header).unwrap();
        assert!(parent.sampled);
        assert_eq!(parent.to_string(), header);
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad:?}");
        }
    }
}
