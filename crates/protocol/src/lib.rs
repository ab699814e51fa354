//! The contract between Tooltrail's engine and everything that shows or stores it.
//!
//! Every type that crosses a boundary — engine to UI, engine to store, CLI `--json` output —
//! lives here, as plain serde data with no I/O and no async runtime. Each derives `ts_rs::TS`:
//! the desktop app generates the UI's TypeScript types from them (with its own payloads, in its
//! `bindings` module), and a test there fails when the committed TypeScript drifts from the Rust.
//!
//! The groups of types:
//! - [`message`]: the conversation as the model sees it (system, user, assistant with tool
//!   calls, tool results).
//! - [`tool`]: what a tool is to the model ([`ToolSpec`]), what a call returns ([`ToolOutput`]),
//!   and how approvals are asked for and recorded.
//! - [`event`]: the stream of [`Event`]s one turn produces, each tagged with its conversation,
//!   turn, sequence number and time.
//! - [`attachment`]: what a question carries besides its text (a file or an MCP resource,
//!   read), how it is put in the question, and the MCP resources and prompts a front end lists.
//! - [`view`]: a tool's MCP App view, and the view turns that record what a view did.
//! - [`telemetry`]: the `[telemetry]` table of `config.toml`, which the settings read and the
//!   telemetry crate resolves.
//!
//! ```
//! use tooltrail_protocol::{Event, EventBody};
//! let event = Event {
//!     conversation_id: "c1".into(),
//!     turn_id: "t1".into(),
//!     seq: 3,
//!     time_ms: 0,
//!     body: EventBody::TextDelta { round: 1, text: "Hello".into() },
//! };
//! let json = serde_json::to_value(&event).unwrap();
//! assert_eq!(json["type"], "text_delta");
//! assert_eq!(json["text"], "Hello");
//! ```

pub mod attachment;
pub mod change;
pub mod event;
pub mod instructions;
pub mod local_model;
pub mod media;
pub mod message;
pub mod server_request;
pub mod telemetry;
pub mod tool;
pub mod tool_mode;
pub mod view;

pub use attachment::{
    AttachedContent, Attachment, AttachmentSource, PromptArgumentItem, PromptItem,
    PromptMessageItem, PromptRole, ResourceItem, fit_attachments, question_with,
};
pub use change::{DiffHunk, DiffLine, DiffLineKind, FileChange, WriteMode};
pub use event::{ErrorCode, Event, EventBody, TurnEnd, Usage, repetition_sentence};
pub use instructions::{InstructionsLeftOut, LeftOutReason};
pub use local_model::LocalModelStatus;
pub use media::{Media, MediaKind};
pub use message::{Message, ToolCall};
pub use server_request::{
    ElicitationAction, ElicitationRequest, FieldKind, FieldOption, FormField, SamplingMessage,
    form_fields,
};
pub use telemetry::TelemetrySection;
pub use tool::{
    ApprovalBy, ApprovalRecord, ApprovalReply, RuleKind, TaskProgress, TaskStatus, ToolChoice,
    ToolError, ToolErrorCode, ToolOutput, ToolProgress, ToolSource, ToolSpec, ToolStatus,
};
pub use tool_mode::{ToolMode, UnknownToolMode};
pub use view::{ViewEnd, ViewLink};

/// An error message as users read it everywhere: capitalised, ending in a full stop (or another
/// sentence end).
pub fn sentence(text: &str) -> String {
    let mut chars = text.trim().chars();
    let mut out: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => return String::new(),
    };
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod sentence_tests {
    use super::sentence;

    #[test]
    fn errors_read_as_sentences() {
        assert_eq!(sentence("could not connect"), "Could not connect.");
        assert_eq!(sentence(" Done. "), "Done.");
        assert_eq!(sentence("why?"), "Why?");
        assert_eq!(sentence(""), "");
    }
}
