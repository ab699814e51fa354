//! Standing approval rules: "always allow `cargo test` in this workspace", "never run
//! `git push` here". The store keeps them; the front end decides what a rule may hold and
//! matches calls against them (see `tooltrail_sandbox::rules`).

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use crate::conversations::now_ms;
use crate::error::{Result, StoreError};
use crate::kinds::workspace::workspace_id;
use crate::store::Store;

pub use tooltrail_protocol::RuleKind;

/// A rule to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRule {
    /// The workspace root, as turns record it.
    pub workspace: String,
    pub kind: RuleKind,
    pub tool: String,
    /// The command's first words.
    pub prefix: Vec<String>,
}

/// A stored rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRule {
    pub id: String,
    pub workspace: String,
    pub kind: RuleKind,
    pub tool: String,
    pub prefix: Vec<String>,
    pub created_ms: i64,
    pub revoked_ms: Option<i64>,
}

const COLUMNS: &str = "r.public_id, w.path, r.kind, r.tool, r.prefix, r.created_ms, r.revoked_ms";

impl Store {
    /// Adds a rule, or returns the live rule that already says the same.
    pub fn add_rule(&self, rule: &NewRule) -> Result<ApprovalRule> {
        let prefix = serde_json::to_string(&rule.prefix)?;
        self.with_conn(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let workspace = workspace_id(&tx, &rule.workspace)?
                .ok_or_else(|| StoreError::Corrupt("a rule needs a workspace".to_string()))?;
            let existing: Option<String> = tx
                .query_row(
                    "SELECT public_id FROM approval_rules WHERE workspace_id = ?1 AND kind = ?2 \
                     AND tool = ?3 AND prefix = ?4 AND revoked_ms IS NULL",
                    params![workspace, rule.kind.as_str(), rule.tool, prefix],
                    |row| row.get(0),
                )
                .optional()?;
            let id =
                match existing {
                    Some(id) => id,
                    None => {
                        let id = format!("rule_{}", uuid::Uuid::new_v4().simple());
                        tx.execute(
                        "INSERT INTO approval_rules(public_id, workspace_id, kind, tool, prefix, \
                         created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![id, workspace, rule.kind.as_str(), rule.tool, prefix, now_ms()],
                    )?;
                        id
                    }
                };
            let rule = find(&tx, &id)?;
            tx.commit()?;
            rule.ok_or(StoreError::RuleNotFound(id))
        })
    }

    /// The rules of `workspace` (every workspace when `None`), oldest first; revoked ones only
    /// when `include_revoked`.
    pub fn rules(
        &self,
        workspace: Option<&str>,
        include_revoked: bool,
    ) -> Result<Vec<ApprovalRule>> {
        self.with_conn(|conn| {
            let sql = format!(
                "SELECT {COLUMNS} FROM approval_rules r JOIN workspaces w ON w.id = r.workspace_id \
                 WHERE (?1 IS NULL OR w.path = ?1) AND (?2 OR r.revoked_ms IS NULL) \
                 ORDER BY r.created_ms, r.id"
            );
            let mut statement = conn.prepare(&sql)?;
            let rows = statement.query_map(params![workspace, include_revoked], raw_row)?;
            let mut rules = Vec::new();
            for row in rows {
                rules.push(decode(row?)?);
            }
            Ok(rules)
        })
    }

    /// Revokes a live rule; returns it as it now stands.
    pub fn revoke_rule(&self, id: &str) -> Result<ApprovalRule> {
        self.with_conn(|conn| {
            let changed = conn.execute(
                "UPDATE approval_rules SET revoked_ms = ?2 WHERE public_id = ?1 AND revoked_ms IS NULL",
                params![id, now_ms()],
            )?;
            if changed == 0 {
                return Err(StoreError::RuleNotFound(id.to_string()));
            }
            find(conn, id)?.ok_or_else(|| StoreError::RuleNotFound(id.to_string()))
        })
    }
}

type RawRule = (String, String, String, String, String, i64, Option<i64>);

fn raw_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawRule> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
    ))
}

fn decode(raw: RawRule) -> Result<ApprovalRule> {
    let (id, workspace, kind, tool, prefix, created_ms, revoked_ms) = raw;
    Ok(ApprovalRule {
        id,
        workspace,
        kind: RuleKind::parse(&kind)
            .ok_or_else(|| StoreError::Corrupt(format!("unknown rule kind {kind:?}")))?,
        tool,
        prefix: serde_json::from_str(&prefix)?,
        created_ms,
        revoked_ms,
    })
}

fn find(conn: &rusqlite::Connection, id: &str) -> Result<Option<ApprovalRule>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM approval_rules r JOIN workspaces w ON w.id = r.workspace_id \
         WHERE r.public_id = ?1"
    );
    let raw = conn.query_row(&sql, [id], raw_row).optional()?;
    raw.map(decode).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn new_rule(workspace: &str, kind: RuleKind, words: &[&str]) -> NewRule {
        NewRule {
            workspace: workspace.to_string(),
            kind,
            tool: "execute_bash".to_string(),
            prefix: words.iter().map(|word| word.to_string()).collect(),
        }
    }

    #[test]
    fn rules_are_added_once_listed_per_workspace_and_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("db.sqlite3")).unwrap();
        let allow = store
            .add_rule(&new_rule("/ws/a", RuleKind::Allow, &["cargo", "test"]))
            .unwrap();
        let again = store
            .add_rule(&new_rule("/ws/a", RuleKind::Allow, &["cargo", "test"]))
            .unwrap();
        assert_eq!(allow, again);
        let deny = store
            .add_rule(&new_rule("/ws/a", RuleKind::Deny, &["git", "push"]))
            .unwrap();
        store
            .add_rule(&new_rule("/ws/b", RuleKind::Allow, &["make"]))
            .unwrap();

        let listed = store.rules(Some("/ws/a"), false).unwrap();
        assert_eq!(listed, vec![allow.clone(), deny.clone()]);
        assert_eq!(
            listed[0].prefix,
            vec!["cargo".to_string(), "test".to_string()]
        );
        assert_eq!(store.rules(None, false).unwrap().len(), 3);

        let revoked = store.revoke_rule(&allow.id).unwrap();
        assert!(revoked.revoked_ms.is_some());
        assert_eq!(store.rules(Some("/ws/a"), false).unwrap(), vec![deny]);
        assert_eq!(store.rules(Some("/ws/a"), true).unwrap().len(), 2);
        assert!(matches!(
            store.revoke_rule(&allow.id),
            Err(StoreError::RuleNotFound(_))
        ));
        assert_eq!(
            store.revoke_rule("rule_nope").map_err(|e| e.to_string()),
            Err("No approval rule has the id rule_nope.".to_string())
        );
    }
}
