//! Sessions (a request's `session_id`, see docs/requirements.md): a conversation in the store
//! that requests carry on, and the folder its tools work in.
//!
//! With `--session-workspaces DIR` each session gets `DIR/<session_id>`, made on its first
//! request; otherwise every session works in `--workspace`. A session idle for longer than
//! `--session-ttl` expires: its folder is removed and the next request with its id starts a
//! new conversation (the old one stays in the history). Sessions live in this process: after
//! a restart an id starts afresh. A session with a request running never expires.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tooltrail_host::ToolContext;

use crate::error::{ApiError, ServerError};

/// Longest session id; ids name folders, so they are kept short and plain.
const MAX_ID: usize = 64;

struct Session {
    conversation: Option<String>,
    ctx: ToolContext,
    /// The session's own folder, removed when it expires.
    folder: Option<PathBuf>,
    last_used: Instant,
    running: usize,
}

/// A session that expired: what is left to clean up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    pub id: String,
    pub conversation: Option<String>,
    pub folder: Option<PathBuf>,
}

/// The sessions of this process.
pub struct Sessions {
    /// `--session-workspaces`.
    root: Option<PathBuf>,
    /// `--workspace`: where requests without a session, and every session without a root,
    /// work. One context, so the OS sandbox is probed once.
    shared: ToolContext,
    ttl: Duration,
    map: Mutex<HashMap<String, Session>>,
}

/// A request's hold on its session: the session does not expire while it lives.
pub struct Lease {
    sessions: Arc<Sessions>,
    pub id: String,
    /// The session's conversation, once its first request made one.
    pub conversation: Option<String>,
    pub ctx: ToolContext,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut map = self.sessions.lock();
        if let Some(session) = map.get_mut(&self.id) {
            session.running = session.running.saturating_sub(1);
            session.last_used = Instant::now();
        }
    }
}

impl Sessions {
    pub fn new(
        shared: ToolContext,
        root: Option<PathBuf>,
        ttl: Duration,
    ) -> Result<Self, ServerError> {
        if let Some(root) = &root {
            std::fs::create_dir_all(root).map_err(|source| ServerError::SessionFolder {
                path: root.clone(),
                source,
            })?;
        }
        Ok(Self {
            root,
            shared,
            ttl,
            map: Mutex::new(HashMap::new()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        match self.map.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The context of requests without a session.
    pub fn shared(&self) -> &ToolContext {
        &self.shared
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Takes session `id` for a request, making it (and its folder) on first use.
    pub fn lease(self: &Arc<Self>, id: &str) -> Result<Lease, ApiError> {
        check_id(id)?;
        let mut map = self.lock();
        let session = match map.get_mut(id) {
            Some(session) => session,
            None => {
                let (ctx, folder) = match &self.root {
                    Some(root) => {
                        let folder = root.join(id);
                        (open_folder(&folder)?, Some(folder))
                    }
                    None => (self.shared.clone(), None),
                };
                map.entry(id.to_string()).or_insert(Session {
                    conversation: None,
                    ctx,
                    folder,
                    last_used: Instant::now(),
                    running: 0,
                })
            }
        };
        session.running += 1;
        session.last_used = Instant::now();
        Ok(Lease {
            sessions: Arc::clone(self),
            id: id.to_string(),
            conversation: session.conversation.clone(),
            ctx: session.ctx.clone(),
        })
    }

    /// Gives the session of `lease` its conversation, unless a request that raced this one
    /// gave it one first; returns the conversation the session has.
    pub fn adopt(&self, lease: &Lease, conversation: String) -> String {
        let mut map = self.lock();
        match map.get_mut(&lease.id) {
            Some(session) => session.conversation.get_or_insert(conversation).clone(),
            None => conversation,
        }
    }

    /// Removes the sessions idle for longer than the time to live at `now`.
    pub fn expire(&self, now: Instant) -> Vec<Expired> {
        let mut map = self.lock();
        let idle: Vec<String> = map
            .iter()
            .filter(|(_, session)| {
                session.running == 0 && now.saturating_duration_since(session.last_used) > self.ttl
            })
            .map(|(id, _)| id.clone())
            .collect();
        idle.into_iter()
            .filter_map(|id| {
                map.remove(&id).map(|session| Expired {
                    id,
                    conversation: session.conversation,
                    folder: session.folder,
                })
            })
            .collect()
    }

    /// The ids of the live sessions, sorted.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.lock().keys().cloned().collect();
        ids.sort();
        ids
    }
}

fn open_folder(folder: &Path) -> Result<ToolContext, ApiError> {
    std::fs::create_dir_all(folder).map_err(|error| {
        ApiError::internal(format!("The session folder could not be made: {error}."))
    })?;
    ToolContext::open(folder)
        .map_err(|error| ApiError::internal(format!("The session folder cannot be used: {error}.")))
}

/// Session ids name folders: letters, digits, `_` and `-` only, at most 64.
fn check_id(id: &str) -> Result<(), ApiError> {
    let plain = id
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
    if id.is_empty() || id.len() > MAX_ID || !plain {
        return Err(ApiError::invalid(
            "invalid_session_id",
            "A session_id is 1 to 64 letters, digits, `_` or `-`.",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn sessions_get_folders_of_their_own_and_expire_when_idle() {
        let shared = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let sessions = Arc::new(
            Sessions::new(
                ToolContext::open(shared.path()).unwrap(),
                Some(root.path().join("sessions")),
                Duration::from_secs(60),
            )
            .unwrap(),
        );
        let lease = sessions.lease("sess_a").unwrap();
        let folder = root.path().join("sessions/sess_a");
        assert!(folder.is_dir());
        assert_eq!(lease.ctx.workspace.root(), folder.canonicalize().unwrap());
        assert_eq!(sessions.adopt(&lease, "conv_1".into()), "conv_1");
        assert_eq!(sessions.adopt(&lease, "conv_2".into()), "conv_1");
        // Running: never expires.
        let later = Instant::now() + Duration::from_secs(120);
        assert_eq!(sessions.expire(later), vec![]);
        drop(lease);
        assert_eq!(
            sessions.lease("sess_a").unwrap().conversation,
            Some("conv_1".into())
        );
        assert_eq!(
            sessions.expire(Instant::now() + Duration::from_secs(120)),
            vec![Expired {
                id: "sess_a".into(),
                conversation: Some("conv_1".into()),
                folder: Some(folder),
            }]
        );
        assert_eq!(sessions.ids(), Vec::<String>::new());
        for bad in ["", "../x", "a/b", ".", &"x".repeat(65)] {
            assert_eq!(
                sessions.lease(bad).err().map(|e| e.code),
                Some("invalid_session_id".to_string()),
                "{bad}"
            );
        }
    }
}
