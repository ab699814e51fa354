//! Tooltrail's record: conversations, every message the model saw, and one row per tool call,
//! in one SQLite database.
//!
//! # Design
//!
//! - **One file, many processes.** The database lives in the OS's application-data folder
//!   (`TOOLTRAIL_DATA_DIR` overrides it). It runs in WAL mode, so the desktop app's history view,
//!   `tooltrail history` and a recorder writing a turn all work at once; nobody waits for a
//!   reader. Foreign keys are on; the schema is versioned (see `migrations.rs`).
//! - **Events in.** The engine emits [`tooltrail_protocol::Event`]s; a [`Recorder`] takes them
//!   without blocking and commits each one as it happens, on its own thread. Nothing that was
//!   shown is lost when the process dies: a call that had started is in the log as `running`,
//!   and the next [`Store::open`] marks it (and its turn) `cancelled` once the process that
//!   owned it is gone. The store depends on the protocol only, never on the engine: a shell
//!   forwards events to [`Recorder::record`] from its event sink.
//! - **The record by kind.** Each kind of record (a turn, a message, a usage row, a tool call)
//!   writes its rows from an event and reads them back, as a value and as that event, in one
//!   file of `kinds/`; the writer only sends each event to its kind, replay only walks the
//!   events in order, and every listing reads a call through the call's one reader.
//! - **Conversations need no set-up.** Events for a conversation or turn the store has not seen
//!   create it (its title from the first question). [`Store::create_conversation`] exists for
//!   callers that want an id before the first turn, or to keep the provider.
//! - **Rows a list can afford.** A call keeps its arguments, a 512-byte preview of its result
//!   and the full size; longer results and structured data are compressed into a side table.
//!   Every listing is keyset-paginated ([`Cursor`]) down an index, newest first, and searches go
//!   through FTS5, never `LIKE '%…%'`.
//! - **Snippets per workspace.** Named pieces of text the snippet tools save and find again
//!   ([`Store::save_snippet`], [`Store::snippets`]); a name is unique in its folder.
//! - **Search and figures that stay fast.** A ranked search scores the newest
//!   [`RANK_WINDOW`] matches with BM25 itself (see `rank.rs` for why not FTS5's `bm25()`).
//!   Counts, averages and percentiles per tool come from counters and duration histograms that
//!   triggers keep current, unless a filter needs the calls themselves.
//! - **Integer keys inside, string ids outside.** Conversations and turns are named by the
//!   engine's ids; a call by `tc_<n>`, which is never reused.
//!
//! # Example
//!
//! ```
//! use tooltrail_protocol::{Event, EventBody, Message};
//! use tooltrail_store::{HistoryFilter, Store};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! let store = Store::open(dir.path().join("tooltrail.sqlite3"))?;
//! let recorder = store.recorder()?;
//! let event = |seq, body| Event {
//!     conversation_id: "conv_1".into(),
//!     turn_id: "turn_1".into(),
//!     seq,
//!     time_ms: 1_714_555_800_000,
//!     body,
//! };
//! recorder.record(event(0, EventBody::TurnStarted {
//!     workspace: "/src/app".into(),
//!     model: "qwen3".into(),
//!     user_message: "Where is main?".into(),
//!     replay_of: None,
//! }));
//! recorder.record(event(1, EventBody::MessageAdded { message: Message::user("Where is main?") }));
//! recorder.flush()?; // everything recorded so far is committed
//!
//! assert_eq!(store.conversation("conv_1")?.title, "Where is main?");
//! assert_eq!(store.load_messages("conv_1")?, vec![Message::user("Where is main?")]);
//! assert!(store.history(&HistoryFilter::default())?.items.is_empty());
//! # Ok(())
//! # }
//! ```

mod calls_page;
mod codes;
mod compress;
mod connection;
mod conversations;
mod cursor;
mod error;
mod export;
mod file_changes;
mod history;
mod kinds;
mod maintenance;
mod migrations;
mod owner_only;
mod paths;
mod rank;
mod recorder;
mod recovery;
mod replay;
mod replays;
mod rules;
mod search;
mod snippets;
mod stats;
mod status;
mod store;
mod tokens;
mod writer;

pub use conversations::{ConversationFilter, ConversationSummary, NewConversation};
pub use cursor::{Cursor, DEFAULT_LIMIT, MAX_LIMIT, Page};
pub use error::{Result, StoreError};
pub use export::{
    ConversationExport, Format, format_time, render_conversation_markdown, render_history_markdown,
    render_jsonl,
};
pub use file_changes::{FileChangeRecord, KeptFile, LeftState};
pub use history::HistoryFilter;
pub use kinds::call::{HistoryRow, PREVIEW_BYTES, ToolCallRecord};
pub use kinds::task::OpenTask;
pub use maintenance::VacuumReport;
pub use migrations::SCHEMA_VERSION;
pub use paths::{DATA_DIR_ENV, DB_FILE_NAME, data_dir, default_db_path};
pub use rank::{DF_CAP, RANK_WINDOW};
pub use recorder::Recorder;
pub use recovery::{INTERRUPTED, Recovered};
pub use replays::ReplayPair;
pub use rules::{ApprovalRule, NewRule, RuleKind};
pub use search::{MessageHit, MessageSearch, fts_query};
pub use snippets::{NewSnippet, SavedSnippet, Snippet, SnippetSummary};
pub use stats::{Stats, StatsFilter, StatusCounts, ToolStats};
pub use status::CallStatus;
pub use store::Store;
pub use tokens::{DayTokens, TokenFilter};
