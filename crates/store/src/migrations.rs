//! The schema, as a list of migrations applied in order and counted in SQLite's `user_version`.
//!
//! A migration is never edited once released: a change to the schema is a new entry at the end.
//! Opening a database runs the ones it lacks, all in one `BEGIN IMMEDIATE` transaction, so two
//! processes opening the same new database at once do not both migrate it, and a crash mid-way
//! leaves the old version intact.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Result, StoreError};

/// Version 1: the record itself.
///
/// Integer primary keys inside; the engine's string ids (`public_id`) at the edges. Tool calls
/// keep only what a history list shows (arguments, a preview of the result, its full size); full
/// results longer than the preview go to `tool_results`, compressed, so the main table and its
/// indexes stay small. The tool's source and description repeat on every call, so they live once
/// in `tool_specs`.
///
/// `tool_calls.turn_id` and `message_id` are not declared foreign keys: those rows are deleted
/// with their conversation, and declaring them would need two more indexes on the largest table
/// only so that SQLite could check deletes that never happen on their own.
///
/// `events` keeps the order and times of a turn's events. Events whose content is stored in a
/// table of its own (turns, messages, tool calls, usage) keep only a reference (`ref_id`); the
/// others keep their JSON body. Streaming deltas are dropped once the assistant message they
/// build is recorded, and progress reports once their call finishes (see `writer.rs`).
const V1_RECORD: &str = r#"
CREATE TABLE workspaces (
    id   INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE
);

CREATE TABLE conversations (
    id           INTEGER PRIMARY KEY,
    public_id    TEXT NOT NULL UNIQUE,
    workspace_id INTEGER REFERENCES workspaces(id),
    title        TEXT NOT NULL DEFAULT '',
    model        TEXT,
    provider     TEXT,
    created_ms   INTEGER NOT NULL,
    updated_ms   INTEGER NOT NULL
);
CREATE INDEX conversations_by_time ON conversations(updated_ms);
CREATE INDEX conversations_by_workspace ON conversations(workspace_id, updated_ms);

CREATE TABLE turns (
    id              INTEGER PRIMARY KEY,
    public_id       TEXT NOT NULL UNIQUE,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    workspace_id    INTEGER REFERENCES workspaces(id),
    model           TEXT NOT NULL DEFAULT '',
    user_message    TEXT NOT NULL DEFAULT '',
    started_ms      INTEGER NOT NULL,
    finished_ms     INTEGER,
    -- NULL while the turn runs; then completed, round_limit, cancelled or error.
    end_reason      TEXT,
    rounds          INTEGER NOT NULL DEFAULT 0,
    text            TEXT NOT NULL DEFAULT '',
    -- The recorder writing this turn, so that a later open can tell a turn whose process died
    -- from one that is still running in another process (see recovery.rs).
    writer          TEXT
);
CREATE INDEX turns_by_conversation ON turns(conversation_id);
CREATE INDEX turns_unfinished ON turns(writer) WHERE end_reason IS NULL;

CREATE TABLE messages (
    id              INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    turn_id         INTEGER,
    position        INTEGER NOT NULL,
    role            TEXT NOT NULL,
    -- JSON of tooltrail_protocol::Message.
    body            TEXT NOT NULL,
    time_ms         INTEGER NOT NULL,
    UNIQUE (conversation_id, position)
);

CREATE TABLE tool_specs (
    id          INTEGER PRIMARY KEY,
    tool        TEXT NOT NULL,
    -- 'builtin', or 'mcp:' followed by the server's name.
    source      TEXT NOT NULL,
    description TEXT NOT NULL,
    UNIQUE (tool, source, description)
);

-- AUTOINCREMENT: a call's id ("tc_<id>" at the API) is never reused, even after deletes.
CREATE TABLE tool_calls (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id     INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    workspace_id        INTEGER REFERENCES workspaces(id),
    turn_id             INTEGER NOT NULL,
    message_id          INTEGER,
    call_id             TEXT NOT NULL,
    round               INTEGER NOT NULL,
    tool                TEXT NOT NULL,
    spec_id             INTEGER REFERENCES tool_specs(id),
    -- JSON; the raw text as a JSON string when the model's arguments were not valid JSON.
    arguments           TEXT NOT NULL,
    started_ms          INTEGER NOT NULL,
    -- NULL while running, and for calls a crash interrupted.
    duration_ms         INTEGER,
    -- running, success, error, denied, cancelled or timeout.
    status              TEXT NOT NULL,
    error_code          TEXT,
    error_message       TEXT,
    preview             TEXT NOT NULL DEFAULT '',
    result_size         INTEGER NOT NULL DEFAULT 0,
    truncated_for_model INTEGER NOT NULL DEFAULT 0,
    approval_allowed    INTEGER NOT NULL,
    -- policy, user, conversation, rule or setting; approval_rule holds a rule's id.
    approval_by         TEXT NOT NULL,
    approval_rule       TEXT,
    approval_reason     TEXT
);
-- Every history query walks one of these newest first; the rowid that ends each entry breaks
-- ties between calls started in the same millisecond.
CREATE INDEX tool_calls_by_time ON tool_calls(started_ms);
CREATE INDEX tool_calls_by_conversation ON tool_calls(conversation_id, started_ms);
CREATE INDEX tool_calls_by_workspace ON tool_calls(workspace_id, started_ms);
CREATE INDEX tool_calls_by_tool ON tool_calls(tool, started_ms);
-- Most calls succeed; leaving them out keeps this index small. Queries for 'success' walk the
-- time index instead, where nearly every row matches. SQLite uses a partial index only when the
-- query repeats "status <> 'success'" word for word, so every query on status does.
CREATE INDEX tool_calls_by_status ON tool_calls(status, started_ms) WHERE status <> 'success';

-- Full results longer than the preview, and structured results, compressed with deflate.
CREATE TABLE tool_results (
    call_id INTEGER PRIMARY KEY REFERENCES tool_calls(id) ON DELETE CASCADE,
    codec   INTEGER NOT NULL,
    result  BLOB,
    data    BLOB
);

CREATE TABLE usage (
    id                INTEGER PRIMARY KEY,
    turn_id           INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    time_ms           INTEGER NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    total_tokens      INTEGER NOT NULL
);
CREATE INDEX usage_by_turn ON usage(turn_id);

-- kind: see codes.rs (EventKind).
CREATE TABLE events (
    turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    time_ms INTEGER NOT NULL,
    kind    INTEGER NOT NULL,
    ref_id  INTEGER,
    body    TEXT,
    PRIMARY KEY (turn_id, seq)
) WITHOUT ROWID;
"#;

// SQLite's triggers cannot share statements, so the three on `tool_calls` each carry what they
// have in common: an update counts the old row out and the new one in, as a delete and an
// insert do. Those statements are written once below and joined into version 2's text, which
// stays as it was released.

/// Version 2's statements that count the call `new` into `tool_stats` and `tool_durations`.
macro_rules! v2_count_new_call {
    () => {
        r#"
    INSERT INTO tool_stats(workspace_id, tool, status, calls, total_ms, timed)
        SELECT scope.id, new.tool, new.status, 1, coalesce(new.duration_ms, 0),
            new.duration_ms IS NOT NULL
        FROM (SELECT coalesce(new.workspace_id, 0) AS id UNION ALL SELECT -1) AS scope WHERE true
        ON CONFLICT DO UPDATE SET calls = calls + 1, total_ms = total_ms + excluded.total_ms,
            timed = timed + excluded.timed;
    INSERT INTO tool_durations(workspace_id, tool, bucket, calls)
        SELECT scope.id, new.tool, CASE WHEN new.duration_ms < 100 THEN new.duration_ms
            ELSE length(new.duration_ms) * 100 + CAST(substr(new.duration_ms, 1, 2) AS INTEGER) END, 1
        FROM (SELECT coalesce(new.workspace_id, 0) AS id UNION ALL SELECT -1) AS scope WHERE new.duration_ms IS NOT NULL
        ON CONFLICT DO UPDATE SET calls = calls + 1;"#
    };
}

/// Version 2's statements that count the call `old` out of `tool_stats` and `tool_durations`,
/// dropping the rows that reach zero.
macro_rules! v2_count_old_call_out {
    () => {
        r#"
    UPDATE tool_stats SET calls = calls - 1, total_ms = total_ms - coalesce(old.duration_ms, 0),
            timed = timed - (old.duration_ms IS NOT NULL)
        WHERE workspace_id IN (coalesce(old.workspace_id, 0), -1) AND tool = old.tool AND status = old.status;
    DELETE FROM tool_stats
        WHERE workspace_id IN (coalesce(old.workspace_id, 0), -1) AND tool = old.tool AND status = old.status
            AND calls <= 0;
    UPDATE tool_durations SET calls = calls - 1
        WHERE old.duration_ms IS NOT NULL AND workspace_id IN (coalesce(old.workspace_id, 0), -1)
            AND tool = old.tool AND bucket = CASE WHEN old.duration_ms < 100 THEN old.duration_ms
            ELSE length(old.duration_ms) * 100 + CAST(substr(old.duration_ms, 1, 2) AS INTEGER) END;
    DELETE FROM tool_durations
        WHERE old.duration_ms IS NOT NULL AND workspace_id IN (coalesce(old.workspace_id, 0), -1)
            AND tool = old.tool AND bucket = CASE WHEN old.duration_ms < 100 THEN old.duration_ms
            ELSE length(old.duration_ms) * 100 + CAST(substr(old.duration_ms, 1, 2) AS INTEGER) END AND calls <= 0;"#
    };
}

/// Version 2: full-text search, per-tool counters and duration histograms, built from the rows
/// already there.
///
/// Both FTS5 tables are contentless (`content=''`): the text is already in `tool_calls` and
/// `messages`, so the index keeps only tokens and positions; `contentless_delete=1` lets
/// triggers remove a row's tokens when the row goes. Calls are indexed once they finish (their
/// result and error are known then); calls never change after that.
///
/// `tool_stats` counts calls per workspace, tool and status, and `tool_durations` per duration
/// bucket; triggers keep both current, so the figures a stats view opens with cost a few rows
/// instead of a scan of the whole log.
const V2_SEARCH_AND_COUNTS: &str = concat!(
    r#"
CREATE VIRTUAL TABLE tool_calls_fts USING fts5(
    body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE messages_fts USING fts5(
    body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);

-- Counters per workspace (0: calls recorded without one) and, under workspace -1, for all
-- workspaces together, so that neither kind of stats has to add up the other.
CREATE TABLE tool_stats (
    workspace_id INTEGER NOT NULL,
    tool         TEXT NOT NULL,
    status       TEXT NOT NULL,
    calls        INTEGER NOT NULL,
    -- Sum and count of the known durations (running and interrupted calls have none).
    total_ms     INTEGER NOT NULL,
    timed        INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, tool, status)
) WITHOUT ROWID;

-- How many calls of each tool took how long, for percentiles without reading every call.
-- bucket is the duration itself below 100 ms, and above that its number of digits times 100
-- plus its first two digits (1234 ms -> 412): exact to the millisecond below 100 ms, within
-- 10% above, and ordered like the durations. Workspaces as in tool_stats.
CREATE TABLE tool_durations (
    workspace_id INTEGER NOT NULL,
    tool         TEXT NOT NULL,
    bucket       INTEGER NOT NULL,
    calls        INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, tool, bucket)
) WITHOUT ROWID;

CREATE TRIGGER tool_calls_after_insert AFTER INSERT ON tool_calls BEGIN
    INSERT INTO tool_calls_fts(rowid, body)
        SELECT new.id, new.tool || ' ' || new.arguments || ' ' || new.preview || ' '
            || coalesce(new.error_message, '')
        WHERE new.status <> 'running';"#,
    v2_count_new_call!(),
    r#"
END;

CREATE TRIGGER tool_calls_after_update
AFTER UPDATE OF tool, arguments, preview, error_message, status, duration_ms, workspace_id
ON tool_calls BEGIN
    DELETE FROM tool_calls_fts WHERE rowid = old.id AND old.status <> 'running';
    INSERT INTO tool_calls_fts(rowid, body)
        SELECT new.id, new.tool || ' ' || new.arguments || ' ' || new.preview || ' '
            || coalesce(new.error_message, '')
        WHERE new.status <> 'running';"#,
    v2_count_old_call_out!(),
    v2_count_new_call!(),
    r#"
END;

CREATE TRIGGER tool_calls_after_delete AFTER DELETE ON tool_calls BEGIN
    DELETE FROM tool_calls_fts WHERE rowid = old.id AND old.status <> 'running';"#,
    v2_count_old_call_out!(),
    r#"
END;

-- The system prompt is the same in every conversation: indexing it would only add noise.
CREATE TRIGGER messages_after_insert AFTER INSERT ON messages WHEN new.role <> 'system' BEGIN
    INSERT INTO messages_fts(rowid, body)
        VALUES (new.id, coalesce(json_extract(new.body, '$.content'), ''));
END;

CREATE TRIGGER messages_after_delete AFTER DELETE ON messages WHEN old.role <> 'system' BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
END;

INSERT INTO tool_calls_fts(rowid, body)
    SELECT id, tool || ' ' || arguments || ' ' || preview || ' ' || coalesce(error_message, '')
    FROM tool_calls WHERE status <> 'running';
INSERT INTO messages_fts(rowid, body)
    SELECT id, coalesce(json_extract(body, '$.content'), '') FROM messages WHERE role <> 'system';
INSERT INTO tool_stats(workspace_id, tool, status, calls, total_ms, timed)
    SELECT scope, tool, status, count(*), coalesce(sum(duration_ms), 0), count(duration_ms)
    FROM (SELECT coalesce(workspace_id, 0) AS scope, tool, status, duration_ms FROM tool_calls
          UNION ALL SELECT -1, tool, status, duration_ms FROM tool_calls)
    GROUP BY 1, 2, 3;
INSERT INTO tool_durations(workspace_id, tool, bucket, calls)
    SELECT scope, tool, CASE WHEN duration_ms < 100 THEN duration_ms
            ELSE length(duration_ms) * 100 + CAST(substr(duration_ms, 1, 2) AS INTEGER) END, count(*)
    FROM (SELECT coalesce(workspace_id, 0) AS scope, tool, duration_ms FROM tool_calls
          UNION ALL SELECT -1, tool, duration_ms FROM tool_calls)
    WHERE duration_ms IS NOT NULL GROUP BY 1, 2, 3;
"#
);

/// Version 3: the user's standing approval rules for commands, per workspace.
///
/// `prefix` is the JSON array of the command's first words (`["cargo","test"]`). A revoked
/// rule stays, with the time it was revoked, so that the calls it allowed still name it; only
/// one live rule may hold the same kind, tool and prefix in a workspace.
const V3_APPROVAL_RULES: &str = r#"
CREATE TABLE approval_rules (
    id           INTEGER PRIMARY KEY,
    public_id    TEXT NOT NULL UNIQUE,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
    kind         TEXT NOT NULL CHECK (kind IN ('allow', 'deny')),
    tool         TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    created_ms   INTEGER NOT NULL,
    revoked_ms   INTEGER
);
CREATE UNIQUE INDEX approval_rules_live
    ON approval_rules(workspace_id, kind, tool, prefix) WHERE revoked_ms IS NULL;
"#;

/// Version 4: snippets the model (or the user) keeps per workspace, by name.
///
/// A name is unique in its workspace; saving it again replaces the row in place (`updated_ms`
/// changes, `created_ms` stays). `snippets_fts` indexes the name, language, description and
/// content together, contentless like the other indexes, kept by triggers.
const V4_SNIPPETS: &str = r#"
CREATE TABLE snippets (
    id           INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
    name         TEXT NOT NULL,
    language     TEXT,
    description  TEXT,
    content      TEXT NOT NULL,
    created_ms   INTEGER NOT NULL,
    updated_ms   INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
);

CREATE VIRTUAL TABLE snippets_fts USING fts5(
    body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER snippets_after_insert AFTER INSERT ON snippets BEGIN
    INSERT INTO snippets_fts(rowid, body)
        VALUES (new.id, new.name || ' ' || coalesce(new.language, '') || ' '
            || coalesce(new.description, '') || ' ' || new.content);
END;

CREATE TRIGGER snippets_after_update AFTER UPDATE ON snippets BEGIN
    DELETE FROM snippets_fts WHERE rowid = old.id;
    INSERT INTO snippets_fts(rowid, body)
        VALUES (new.id, new.name || ' ' || coalesce(new.language, '') || ' '
            || coalesce(new.description, '') || ' ' || new.content);
END;

CREATE TRIGGER snippets_after_delete AFTER DELETE ON snippets BEGIN
    DELETE FROM snippets_fts WHERE rowid = old.id;
END;
"#;

/// Version 5: what each turn's file writes replaced, so the turn can be undone.
///
/// One row per turn and file: `prior` is the file as it was before the turn first wrote it
/// (`existed = 0`: it did not exist), `written_sha256` what the turn's last write left there
/// (undo refuses when the file no longer holds it), `undone_ms` when it was put back. Rows
/// name conversations and turns by their public ids: a write is kept before its call's events
/// are recorded.
const V5_FILE_CHANGES: &str = r#"
CREATE TABLE file_changes (
    id              INTEGER PRIMARY KEY,
    workspace       TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    turn_id         TEXT NOT NULL,
    path            TEXT NOT NULL,
    existed         INTEGER NOT NULL,
    prior           BLOB,
    written_sha256  TEXT,
    first_call_id   TEXT NOT NULL,
    last_call_id    TEXT NOT NULL,
    created_ms      INTEGER NOT NULL,
    written_ms      INTEGER,
    undone_ms       INTEGER,
    UNIQUE (turn_id, path)
);

CREATE INDEX file_changes_by_conversation ON file_changes(conversation_id, id);
"#;

/// Version 6: MCP App views. A view turn (`kind = 'view'`) records what the view of one call
/// did: `parent_call_id` is that call. The calls a view makes keep the same parent, and a call of
/// a tool with a view keeps its page's `ui://` address.
const V6_VIEWS: &str = r#"
ALTER TABLE turns ADD COLUMN kind TEXT NOT NULL DEFAULT 'question';
ALTER TABLE turns ADD COLUMN parent_call_id INTEGER REFERENCES tool_calls(id) ON DELETE SET NULL;
ALTER TABLE tool_calls ADD COLUMN view_uri TEXT;
ALTER TABLE tool_calls ADD COLUMN parent_call_id INTEGER REFERENCES tool_calls(id) ON DELETE SET NULL;
CREATE INDEX tool_calls_by_parent ON tool_calls(parent_call_id) WHERE parent_call_id IS NOT NULL;
"#;

/// Version 7: replays. A turn that asks a recorded question again with another model names the
/// turn it replays (its public id: the original may be deleted, the replay stays readable).
const V7_REPLAYS: &str = r#"
ALTER TABLE turns ADD COLUMN replay_of TEXT;
CREATE INDEX turns_by_replay ON turns(replay_of) WHERE replay_of IS NOT NULL;
"#;

/// Version 8: MCP tasks still open. A call whose MCP server runs it as a task (MCP Tasks) is
/// kept here, with the server and the task's id, from its first report until it ends; a call
/// whose process died mid-task stays, so that the next start picks the task up and writes its
/// result over the call's row. Gone with the call.
const V8_OPEN_TASKS: &str = r#"
CREATE TABLE open_tasks (
    call_row   INTEGER PRIMARY KEY REFERENCES tool_calls(id) ON DELETE CASCADE,
    server     TEXT NOT NULL,
    tool       TEXT NOT NULL,
    task_id    TEXT NOT NULL,
    updated_ms INTEGER NOT NULL
);
"#;

/// Every migration, oldest first; entry `i` brings the schema to version `i + 1`.
const MIGRATIONS: &[&str] = &[
    V1_RECORD,
    V2_SEARCH_AND_COUNTS,
    V3_APPROVAL_RULES,
    V4_SNIPPETS,
    V5_FILE_CHANGES,
    V6_VIEWS,
    V7_REPLAYS,
    V8_OPEN_TASKS,
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the database to [`SCHEMA_VERSION`].
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    migrate_to(conn, path, SCHEMA_VERSION)
}

fn user_version(conn: &Connection) -> Result<i64> {
    Ok(conn.pragma_query_value(None, "user_version", |row| row.get(0))?)
}

/// Brings the database to `target`, which is at most [`SCHEMA_VERSION`].
fn migrate_to(conn: &mut Connection, path: &Path, target: i64) -> Result<()> {
    let too_new = |found| StoreError::TooNew {
        path: path.to_path_buf(),
        found,
        known: SCHEMA_VERSION,
    };
    let current = user_version(conn)?;
    if current > SCHEMA_VERSION {
        return Err(too_new(current));
    }
    if current >= target {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another process may have migrated between the read above and taking the lock.
    let current = user_version(&tx)?;
    if current > SCHEMA_VERSION {
        return Err(too_new(current));
    }
    for (index, sql) in MIGRATIONS.iter().enumerate() {
        let version = index as i64 + 1;
        if version > current && version <= target {
            tx.execute_batch(sql)?;
        }
    }
    if target > current {
        tx.pragma_update(None, "user_version", target)?;
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use pretty_assertions::assert_eq;
    use tooltrail_protocol::{ApprovalRecord, Event, EventBody, Message, ToolSource, ToolStatus};

    fn event(seq: u64, body: EventBody) -> Event {
        Event {
            conversation_id: "conv_old".into(),
            turn_id: "turn_old".into(),
            seq,
            time_ms: 1_700_000_000_000 + seq as i64,
            body,
        }
    }

    fn tables(conn: &Connection) -> Vec<String> {
        let mut statement = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type IN ('table', 'index', 'trigger') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%fts_%' ORDER BY name")
            .unwrap();
        statement
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    #[test]
    fn an_empty_database_gets_every_migration() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite3");
        let store = Store::open(&path).unwrap();
        drop(store);
        let conn = Connection::open(&path).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        let names = tables(&conn);
        for expected in [
            "approval_rules",
            "approval_rules_live",
            "conversations",
            "snippets",
            "snippets_after_insert",
            "events",
            "messages",
            "tool_calls",
            "tool_calls_by_status",
            "tool_calls_fts",
            "tool_results",
            "tool_specs",
            "tool_stats",
            "turns",
            "usage",
            "workspaces",
        ] {
            assert!(
                names.iter().any(|name| name == expected),
                "{expected} missing from {names:?}"
            );
        }
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |row| row.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn a_version_1_database_is_migrated_and_its_rows_become_searchable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite3");
        {
            let mut conn =
                crate::connection::open(&crate::connection::Location::File(path.clone())).unwrap();
            migrate_to(&mut conn, &path, 1).unwrap();
            assert_eq!(user_version(&conn).unwrap(), 1);
            let events = vec![
                event(
                    0,
                    EventBody::TurnStarted {
                        replay_of: None,
                        workspace: "/w".into(),
                        model: "m".into(),
                        user_message: "where is the parser".into(),
                    },
                ),
                event(
                    1,
                    EventBody::MessageAdded {
                        message: Message::user("where is the parser"),
                    },
                ),
                event(
                    2,
                    EventBody::ToolCallFinished {
                        view: None,
                        round: 1,
                        call_id: "call_1".into(),
                        tool: "grep".into(),
                        source: ToolSource::Builtin,
                        description: "Search text.".into(),
                        arguments: serde_json::json!({"pattern": "fn parse_header"}),
                        status: ToolStatus::Success,
                        duration_ms: 12,
                        result: "src/header.rs:10: fn parse_header".into(),
                        data: None,
                        error: None,
                        approval: ApprovalRecord::not_needed(),
                        truncated_for_model: false,
                    },
                ),
            ];
            // This build's writer fills the later versions' columns too: they are there for the write
            // and gone after it, so what is left is a version-1 record.
            const LATER_COLUMNS: &[(&str, &str)] = &[
                ("turns", "kind TEXT NOT NULL DEFAULT 'question'"),
                ("turns", "parent_call_id INTEGER"),
                ("tool_calls", "view_uri TEXT"),
                ("tool_calls", "parent_call_id INTEGER"),
                ("turns", "replay_of TEXT"),
            ];
            for (table, column) in LATER_COLUMNS {
                conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column}"))
                    .unwrap();
            }
            // And the later versions' tables.
            conn.execute_batch(V8_OPEN_TASKS).unwrap();
            let tx = conn.transaction().unwrap();
            for event in &events {
                crate::writer::apply(&tx, None, event).unwrap();
            }
            tx.commit().unwrap();
            for (table, column) in LATER_COLUMNS {
                let name = column.split(' ').next().unwrap();
                conn.execute_batch(&format!("ALTER TABLE {table} DROP COLUMN {name}"))
                    .unwrap();
            }
            conn.execute_batch("DROP TABLE open_tasks").unwrap();
        }

        let store = Store::open(&path).unwrap();
        store
            .with_conn(|conn| {
                assert_eq!(user_version(conn)?, SCHEMA_VERSION);
                Ok(())
            })
            .unwrap();
        let found = store
            .history(&crate::HistoryFilter {
                search: Some("parse_header".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(found.items.len(), 1);
        assert_eq!(found.items[0].tool, "grep");
        let messages = store
            .search_messages(&crate::MessageSearch {
                text: "parser".into(),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(messages.items.len(), 1);
        let stats = store.stats(&crate::StatsFilter::default()).unwrap();
        assert_eq!(stats.total, 1);
    }

    #[test]
    fn a_database_from_a_newer_tooltrail_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite3");
        {
            let conn = Connection::open(&path).unwrap();
            conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
                .unwrap();
        }
        let error = Store::open(&path).err().unwrap();
        assert!(
            matches!(error, StoreError::TooNew { found, .. } if found == SCHEMA_VERSION + 1),
            "{error}"
        );
    }

    #[test]
    fn a_version_3_database_gains_snippets_and_keeps_its_rules() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite3");
        {
            let mut conn =
                crate::connection::open(&crate::connection::Location::File(path.clone())).unwrap();
            migrate_to(&mut conn, &path, 3).unwrap();
            assert!(!tables(&conn).iter().any(|name| name == "snippets"));
            conn.execute_batch(
                "INSERT INTO workspaces(id, path) VALUES (1, '/w');
                 INSERT INTO approval_rules(public_id, workspace_id, kind, tool, prefix, created_ms)
                     VALUES ('rule_1', 1, 'allow', 'execute_bash', '[\"make\"]', 5);",
            )
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        store
            .save_snippet(&crate::NewSnippet {
                workspace: "/w".into(),
                name: "build".into(),
                content: "make release".into(),
                language: Some("sh".into()),
                description: None,
            })
            .unwrap();
        let found = store.snippets("/w", Some("release"), 10).unwrap();
        assert_eq!(
            found.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            vec!["build"]
        );
        assert_eq!(
            store.rules(Some("/w"), false).unwrap(),
            vec![crate::ApprovalRule {
                id: "rule_1".into(),
                workspace: "/w".into(),
                kind: crate::RuleKind::Allow,
                tool: "execute_bash".into(),
                prefix: vec!["make".into()],
                created_ms: 5,
                revoked_ms: None,
            }]
        );
        store
            .with_conn(|conn| {
                assert_eq!(user_version(conn)?, SCHEMA_VERSION);
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn opening_twice_migrates_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite3");
        drop(Store::open(&path).unwrap());
        drop(Store::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
    }
}
