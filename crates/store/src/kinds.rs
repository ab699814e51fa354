//! The record by kind: one module a kind of record (a turn, a message, a usage row, a tool call,
//! and the conversation and folder they belong to), each holding both sides of its rows: how an
//! event writes them and how they are read back, as a value and as the event they were recorded
//! from. A field added to an event of one kind is written and read in that kind's file, side by
//! side; `migrations.rs` adds its column.
//!
//! `writer.rs` sends each event to its kind and keeps the `events` row that orders it;
//! `replay.rs` walks those rows and asks each kind for its event back. Events kept whole as
//! their own JSON in `events.body` (the deltas, approvals, a server's requests, ...) belong to no
//! kind here: serde writes and reads every field of theirs.
//!
//! Dependencies point one way: `call`, `message` and `usage` use `turn`, which uses
//! `conversation` and `workspace`; nothing here uses the writer, replay or the listings.

pub(crate) mod call;
pub(crate) mod conversation;
pub(crate) mod message;
pub(crate) mod task;
pub(crate) mod turn;
pub(crate) mod usage;
pub(crate) mod workspace;
