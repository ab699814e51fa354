//! How big a context llama-server gets, and how many threads.
//!
//! The context: `[local] context_size` when set, else 8,192 tokens; never more than the model
//! was trained for (a longer window only produces garbage past the trained length), and less
//! when the memory left after loading the model cannot hold the key-value cache of a full
//! window. The cache costs `2 × layers × KV heads × head size × 2 bytes` per token (f16); when
//! the model's metadata does not say, 160 KiB a token is assumed, which covers the 1–8 B
//! models people run on laptops (Qwen3 4B needs 144 KiB).

/// The window a model gets unless configured or squeezed.
pub const DEFAULT_CONTEXT: u32 = 8192;
/// Below this a question with its tools does not fit; memory permitting, never less.
pub const MIN_CONTEXT: u32 = 2048;
/// The key-value cache per token when the model does not say.
const ASSUMED_KV_BYTES_PER_TOKEN: u64 = 160 * 1024;
/// Memory kept free for everything else: the system, the app, llama-server's buffers.
const HEADROOM_BYTES: u64 = 1024 * 1024 * 1024;

/// What the context size is chosen from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContextInputs {
    /// `[local] context_size`.
    pub configured: Option<u32>,
    /// The length the model was trained for (GGUF `<arch>.context_length`).
    pub trained: Option<u32>,
    /// The model file's size: roughly what loading it takes.
    pub model_bytes: u64,
    /// The key-value cache per token, when the metadata says.
    pub kv_bytes_per_token: Option<u64>,
    /// Memory available now (Linux's `MemAvailable`), when known.
    pub available_bytes: Option<u64>,
}

/// The context size for llama-server's `-c` (see the module's docs).
pub fn choose_context(inputs: ContextInputs) -> u32 {
    let trained = inputs
        .trained
        .filter(|tokens| *tokens > 0)
        .unwrap_or(u32::MAX);
    if let Some(configured) = inputs.configured {
        return configured.min(trained);
    }
    let mut tokens = DEFAULT_CONTEXT.min(trained);
    if let Some(available) = inputs.available_bytes {
        let per_token = inputs
            .kv_bytes_per_token
            .filter(|bytes| *bytes > 0)
            .unwrap_or(ASSUMED_KV_BYTES_PER_TOKEN);
        let budget = available.saturating_sub(inputs.model_bytes + HEADROOM_BYTES);
        // Halved until the cache fits, but not below what a question needs.
        while tokens > MIN_CONTEXT && u64::from(tokens) * per_token > budget {
            tokens /= 2;
        }
        tokens = tokens.max(MIN_CONTEXT.min(trained));
    }
    tokens
}

/// Memory available now, from `/proc/meminfo` (`None` elsewhere).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
}

/// llama-server's `-t`: every core this process may use; from 8 up, half of them,
/// since those are usually hyper-threads, which slow the matrix work down rather than help.
pub fn threads() -> u32 {
    let cores = std::thread::available_parallelism()
        .map(|cores| cores.get())
        .unwrap_or(1);
    threads_for(cores)
}

fn threads_for(cores: usize) -> u32 {
    let threads = if cores >= 8 { cores / 2 } else { cores };
    u32::try_from(threads.max(1)).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const GIB: u64 = 1024 * 1024 * 1024;

    #[test]
    fn the_default_window_never_exceeds_the_trained_length() {
        let inputs = |trained| ContextInputs {
            trained,
            model_bytes: GIB,
            available_bytes: Some(32 * GIB),
            ..ContextInputs::default()
        };
        assert_eq!(choose_context(inputs(None)), 8192);
        assert_eq!(choose_context(inputs(Some(32768))), 8192);
        assert_eq!(choose_context(inputs(Some(4096))), 4096);
        assert_eq!(choose_context(inputs(Some(0))), 8192);
    }

    #[test]
    fn the_configured_size_wins_up_to_the_trained_length() {
        let inputs = ContextInputs {
            configured: Some(16384),
            trained: Some(32768),
            model_bytes: GIB,
            available_bytes: Some(GIB),
            ..ContextInputs::default()
        };
        assert_eq!(choose_context(inputs), 16384);
        assert_eq!(
            choose_context(ContextInputs {
                trained: Some(8192),
                ..inputs
            }),
            8192
        );
    }

    #[test]
    fn short_memory_shrinks_the_window_down_to_the_minimum() {
        let inputs = |available, kv| ContextInputs {
            trained: Some(32768),
            model_bytes: 2 * GIB,
            kv_bytes_per_token: kv,
            available_bytes: Some(available),
            ..ContextInputs::default()
        };
        // 8192 × 160 KiB = 1.25 GiB of cache, over 3 GiB for model and headroom.
        assert_eq!(choose_context(inputs(5 * GIB, None)), 8192);
        assert_eq!(choose_context(inputs(4 * GIB, None)), 4096);
        assert_eq!(choose_context(inputs(3 * GIB, None)), 2048);
        // A small cache per token fits the whole default.
        assert_eq!(
            choose_context(inputs(3 * GIB + 200 * 1024 * 1024, Some(18 * 1024))),
            8192
        );
        // Unknown memory: the default.
        assert_eq!(
            choose_context(ContextInputs {
                available_bytes: None,
                ..inputs(0, None)
            }),
            8192
        );
    }

    #[test]
    fn threads_follow_the_cores() {
        assert_eq!(threads_for(1), 1);
        assert_eq!(threads_for(2), 2);
        assert_eq!(threads_for(4), 4);
        assert_eq!(threads_for(8), 4);
        assert_eq!(threads_for(16), 8);
        assert_eq!(threads_for(0), 1);
    }
}
