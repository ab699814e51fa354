//! The local model runtime.
//!
//! - [`detect`]: the model servers already running on this machine (Ollama, LM Studio,
//!   llama.cpp's server, vLLM, Jan, and any URL the user lists), probed in parallel.
//! - [`models`]: the models folder in the data folder: pull from a Hugging Face-style hub
//!   (resumable, verified), import a GGUF the user has, list, remove, choose.
//! - [`supervisor`]: llama-server run as a supervised child, shared by every front end and
//!   stopped when idle.

pub mod detect;
pub mod error;
pub mod models;
pub mod supervisor;

pub use error::RuntimeError;
