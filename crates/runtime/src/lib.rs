//! The local model runtime.
//!
//! - [`detect`]: the model servers already running on this machine (Ollama, LM Studio,
//!   llama.cpp's server, vLLM, Jan, and any URL the user lists), probed in parallel.
//! - [`models`]: the models folder in the data folder: pull from a Hugging Face-style hub
//!   (resumable, verified), import a GGUF the user has, list, remove, choose.
//! - [`gguf`]: a model file's metadata (architecture, context length, chat template,
//!   quantization), read from its header alone.
//! - [`supervisor`]: llama-server run as a supervised child, shared by every front end and
//!   stopped when idle.
//! - [`prefix`]: the first token: the prompt prefix every question begins with (system
//!   prompt, tools, the folder's context), kept as llama-server's saved slot: restored from
//!   disk when it was saved before, else read once and saved, so a question reads only itself.
//! - [`prefix_store`]: the folder those prefixes are saved in, below both the supervisor (which
//!   starts llama-server with it) and [`prefix`].

pub mod detect;
pub mod error;
pub mod gguf;
pub mod models;
pub mod prefix;
pub mod prefix_store;
pub mod supervisor;

pub use error::RuntimeError;
