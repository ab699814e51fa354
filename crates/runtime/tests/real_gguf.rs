//! The GGUF reader on a real model: the Gemma 3 270M file that `scripts/real-llm build` puts
//! in the cache (`${TOOLTRAIL_CACHE:-~/.cache/tooltrail}/gemma-3-270m-q4_k_m.gguf`). Skipped,
//! with the reason printed, when it is not there.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Read;
use std::path::PathBuf;

use pretty_assertions::assert_eq;
use tooltrail_runtime::gguf::{GgufInfo, read_gguf_from};

fn model() -> Option<PathBuf> {
    let cache = std::env::var_os("TOOLTRAIL_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/tooltrail"))
        })?;
    let path = cache.join("gemma-3-270m-q4_k_m.gguf");
    path.is_file().then_some(path)
}

/// Counts the bytes the reader takes.
struct Counting<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

#[test]
fn the_header_of_the_real_gemma_model_is_read_without_reading_the_weights() {
    let Some(path) = model() else {
        tooltrail_test_support::dependency_missing(
            "no Gemma 3 270M GGUF in the cache (scripts/real-llm build puts it there)",
        );
        return;
    };
    let size = std::fs::metadata(&path).unwrap().len();
    let mut counting = Counting {
        inner: std::fs::File::open(&path).unwrap(),
        read: 0,
    };
    let started = std::time::Instant::now();
    let info = read_gguf_from(&mut counting, "gemma").unwrap();
    let took = started.elapsed();
    assert_eq!(
        info,
        GgufInfo {
            version: 3,
            architecture: Some("gemma3".into()),
            name: Some("Gemma 3 270m".into()),
            size_label: Some("270M".into()),
            parameter_count: Some(268_098_176),
            context_length: Some(32768),
            has_chat_template: false,
            chat_template_mentions_tools: false,
            file_type: Some(15),
            quantization: Some("Q4_K_M".into()),
            tensor_count: 236,
        }
    );
    // The vocabulary (262,144 tokens with their scores and types) is most of the header; the
    // weights are not read.
    assert!(
        counting.read < size / 10,
        "{} of {size} bytes read",
        counting.read
    );
    eprintln!(
        "read {} bytes of {size} in {:.1} ms",
        counting.read,
        took.as_secs_f64() * 1000.0
    );
}
