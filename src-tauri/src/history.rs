//! The SQLite record (`tooltrail-store`): every event of every turn is committed as it happens,
//! so conversations survive the app and show up in `tooltrail history` too. When the database
//! cannot be opened the app still works, keeping this session's conversations in memory.

use tooltrail_protocol::{Event, Message};
use tooltrail_settings::rules::WorkspaceRules;
use tooltrail_store::{ConversationFilter, Recorder, Store};

use crate::conversations::ConversationSummary;
use crate::error::{CommandError, CommandResult};

/// How many conversations the list shows.
const LIST_LIMIT: usize = 200;

pub struct History {
    store: Option<Store>,
    recorder: Option<Recorder>,
}

impl History {
    /// Opens the database in the app-data folder (`TOOLTRAIL_DATA_DIR` overrides it).
    pub fn open() -> Self {
        let store = match Store::open_default() {
            Ok(store) => store,
            Err(error) => {
                eprintln!("tooltrail: history is kept in memory only: {error}");
                return Self::in_memory();
            }
        };
        match store.recorder() {
            Ok(recorder) => Self {
                store: Some(store),
                recorder: Some(recorder),
            },
            Err(error) => {
                eprintln!("tooltrail: history is kept in memory only: {error}");
                Self::in_memory()
            }
        }
    }

    pub fn in_memory() -> Self {
        Self {
            store: None,
            recorder: None,
        }
    }

    /// The standing approval rules of `workspace` (none without a database).
    pub fn rules(&self, workspace: &str) -> WorkspaceRules {
        WorkspaceRules::load(self.store.as_ref().map(Store::path), workspace)
    }

    /// The database, with every queued event committed first; an error in words without one.
    pub fn store(&self) -> CommandResult<&Store> {
        if let Some(recorder) = &self.recorder {
            let _ = recorder.flush();
        }
        self.store.as_ref().ok_or_else(|| {
            CommandError::new(
                "no_history",
                "History is not being kept: the database could not be opened when the app started.",
            )
        })
    }

    pub fn is_stored(&self) -> bool {
        self.recorder.is_some()
    }

    /// Queues an event for commit; never blocks the stream.
    pub fn record(&self, event: &Event) {
        if let Some(recorder) = &self.recorder {
            recorder.record(event.clone());
        }
    }

    /// The stored conversations of a folder, newest first; `None` without a database.
    pub fn list(&self, workspace: &str) -> Option<Vec<ConversationSummary>> {
        let store = self.store.as_ref()?;
        let page = store
            .conversations(&ConversationFilter {
                workspace: Some(workspace.to_string()),
                limit: LIST_LIMIT,
                before: None,
            })
            .ok()?;
        Some(
            page.items
                .into_iter()
                .map(|c| ConversationSummary {
                    id: c.id,
                    title: c.title,
                    workspace: c.workspace.unwrap_or_default(),
                    updated_ms: c.updated_ms,
                    turns: usize::try_from(c.turns).unwrap_or(usize::MAX),
                    running: c.running,
                })
                .collect(),
        )
    }

    /// Every event of a stored conversation, turn after turn.
    pub fn events(&self, id: &str) -> Option<Vec<Event>> {
        let store = self.store.as_ref()?;
        // Commit what is queued first, so a conversation opened right after a turn is whole.
        if let Some(recorder) = &self.recorder {
            let _ = recorder.flush();
        }
        store.conversation_events(id).ok()
    }

    /// What the model saw in a stored conversation, to carry it on.
    pub fn messages(&self, id: &str) -> Option<Vec<Message>> {
        self.store.as_ref()?.load_messages(id).ok()
    }
}
