//! Tools: the [`Tool`] trait, the [`ToolRegistry`] that validates arguments against each tool's
//! JSON Schema before every call, and the built-in workspace tools.
//!
//! Built-in tools and MCP tools implement the same trait, so they share one registry, one
//! validation step, one approval gate and one audit log. A tool never ends a turn: every
//! failure is a [`ToolError`] with a short code the model can act on.
//!
//! The built-in tools ([`builtin::all`]) are `search_files`, `read_file`, `search_text`,
//! `count_lines`, `list_dir`, `execute_bash`, `code_query` (definitions by name, from
//! tree-sitter syntax trees of eight languages), and `snippets`, which saves, loads and lists named snippets through the context's
//! [`SnippetBook`] (the host backs it with the store; the tools never see SQLite). Two more are
//! off until the user turns them on or need a person: `file_write` (every call asks, showing
//! the [`diff`]; what it replaces goes to the context's [`ChangeJournal`] so a turn can be
//! undone) and `ask_user` (a question through the context's [`UserAsker`]). Paths go
//! through [`tooltrail_sandbox::Workspace::resolve`]; walks use ripgrep's `ignore` walker
//! (gitignore aware, `.git` skipped, symlinks not followed) and its `globset` and
//! `grep-searcher` crates; results are sorted, capped and say when they were truncated.
//! `execute_bash` is judged by [`tooltrail_sandbox::policy`] in [`Tool::gate`] and again before
//! it runs, and runs in the OS sandbox ([`ToolContext::sandbox`]): read-only unless the call
//! was approved. Where no sandbox is enforced, every command asks first.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use tooltrail_tools::{ToolContext, ToolRegistry};
//! let registry = ToolRegistry::with_builtins();
//! let ctx = ToolContext::open(".")?;
//! let out = registry.call("search_files", r#"{"pattern":"**/*.rs"}"#, &ctx).await?;
//! println!("{}", out.text);
//! # Ok(()) }
//! ```

mod args;
pub mod builtin;
mod change_journal;
mod changed;
pub mod diff;
mod error;
mod find_tools;
mod glob;
mod grep;
mod registry;
mod snippet_book;
mod tool;
mod user_asker;
mod walk;

pub use change_journal::{CallScope, ChangeJournal};
pub use changed::{ChangedFiles, changed_since};
pub use error::DuplicateTool;
pub use find_tools::{FIND_TOOLS, FindTools};
pub use registry::{ToolRegistry, compact_schema};
pub use snippet_book::{SnippetBook, SnippetDraft, SnippetEntry, SnippetListing};
pub use tool::{Gate, Tool, ToolContext, ToolLimits};
pub use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSource, ToolSpec};
/// The OS sandbox, for the binaries that host it (their `main` calls [`maybe_run_helper`]).
pub use tooltrail_sandbox::{Sandbox, SandboxStatus, maybe_run_helper};
pub use user_asker::{NoAnswer, Question, UserAsker};
