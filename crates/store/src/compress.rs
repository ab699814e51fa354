//! Full results and structured data, deflated. Tool output is mostly text and code, which
//! shrinks three- to tenfold, and it is read rarely (when someone opens one call).

use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;

use crate::error::{Result, StoreError};

/// The `codec` column of `tool_results`: raw deflate.
pub(crate) const DEFLATE: i64 = 1;

pub(crate) fn deflate(bytes: &[u8]) -> Result<Vec<u8>> {
    // Level 6 (the default): most of the gain of 9 at a fraction of its time.
    let mut encoder =
        DeflateEncoder::new(Vec::with_capacity(bytes.len() / 3), Compression::default());
    encoder
        .write_all(bytes)
        .and_then(|()| encoder.finish())
        .map_err(|error| StoreError::Corrupt(format!("a result could not be compressed: {error}")))
}

pub(crate) fn inflate_text(codec: i64, bytes: &[u8]) -> Result<String> {
    if codec != DEFLATE {
        return Err(StoreError::Corrupt(format!("unknown result codec {codec}")));
    }
    let mut text = String::new();
    DeflateDecoder::new(bytes)
        .read_to_string(&mut text)
        .map_err(|error| {
            StoreError::Corrupt(format!("a stored result could not be read: {error}"))
        })?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn text_round_trips_and_shrinks() {
        let text = "fn main() {\n    println!(\"hello\");\n}\n".repeat(200);
        let packed = deflate(text.as_bytes()).unwrap();
        assert!(packed.len() * 5 < text.len());
        assert_eq!(inflate_text(DEFLATE, &packed).unwrap(), text);
    }

    #[test]
    fn unknown_codecs_are_refused() {
        assert!(inflate_text(9, b"x").is_err());
    }
}
