//! Keyset pagination: a page ends with a cursor naming its last row, and the next page starts
//! strictly after it. Unlike an offset, a cursor stays right while new rows arrive at the top
//! and costs the same on page 1 and page 1000.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::StoreError;

/// Where the next page starts. Opaque to callers: print it, pass it back as `before`. It travels
/// as its text, so TypeScript sees a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ts_rs::TS)]
#[ts(type = "string")]
pub struct Cursor(pub(crate) Key);

/// What a cursor holds depends on the order of the query that gave it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    /// Newest first by time, ties broken by row id.
    Time { time_ms: i64, id: i64 },
    /// Newest first by row id (full-text matches).
    Id(i64),
    /// Best first by search rank; ranks are recomputed per page, so this is a row count.
    Offset(u64),
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Key::Time { time_ms, id } => write!(f, "t{time_ms}.{id}"),
            Key::Id(id) => write!(f, "i{id}"),
            Key::Offset(offset) => write!(f, "o{offset}"),
        }
    }
}

impl FromStr for Cursor {
    type Err = StoreError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || StoreError::BadCursor(text.to_string());
        let key = if let Some(rest) = text.strip_prefix('t') {
            let (time_ms, id) = rest.split_once('.').ok_or_else(bad)?;
            Key::Time {
                time_ms: time_ms.parse().map_err(|_| bad())?,
                id: id.parse().map_err(|_| bad())?,
            }
        } else if let Some(rest) = text.strip_prefix('i') {
            Key::Id(rest.parse().map_err(|_| bad())?)
        } else if let Some(rest) = text.strip_prefix('o') {
            Key::Offset(rest.parse().map_err(|_| bad())?)
        } else {
            return Err(bad());
        };
        Ok(Self(key))
    }
}

impl Serialize for Cursor {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Cursor {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One page of a listing, newest (or best) first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// Pass as `before` for the next page; `None` on the last page.
    pub next: Option<Cursor>,
}

/// Rows per page when a filter asks for none, and the most one page may hold.
pub const DEFAULT_LIMIT: usize = 50;
pub const MAX_LIMIT: usize = 1000;

pub(crate) fn clamp_limit(limit: usize) -> usize {
    if limit == 0 {
        DEFAULT_LIMIT
    } else {
        limit.min(MAX_LIMIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn cursors_print_and_parse_back() {
        for key in [
            Key::Time {
                time_ms: 1_700_000_000_123,
                id: 42,
            },
            Key::Id(7),
            Key::Offset(100),
        ] {
            let cursor = Cursor(key);
            assert_eq!(cursor.to_string().parse::<Cursor>().unwrap(), cursor);
            let json = serde_json::to_string(&cursor).unwrap();
            assert_eq!(serde_json::from_str::<Cursor>(&json).unwrap(), cursor);
        }
        for bad in ["", "x1", "t12", "i", "oo", "t1.x"] {
            assert!(bad.parse::<Cursor>().is_err(), "{bad}");
        }
    }
}
