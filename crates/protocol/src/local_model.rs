//! What a question waits for before its first request when Tooltrail serves the model itself:
//! the local runtime starting, then its saved prompt prefix coming back. Front ends show it
//! (`ask` on a terminal, the app in the pending turn), so the wait is never silent.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One step of the local model's start, for the question waiting on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum LocalModelStatus {
    /// The runtime is not running: llama-server is starting and loading `model`.
    Starting { model: String },
    /// The runtime is up; the fixed start of every request (the instructions and the tools)
    /// is being restored from disk, or read for the first time.
    Warming { model: String },
    /// The model is ready for the question, after `seconds` of start.
    Ready {
        model: String,
        #[ts(type = "number")]
        seconds: f64,
    },
}
