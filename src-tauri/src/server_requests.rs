//! MCP servers' requests waiting for the user on the chat's cards: a form to fill in or a page
//! to open (elicitation), and a use of the model to allow (sampling).
//!
//! The host puts the request on the timeline (`elicitation_requested`, `sampling_requested`),
//! then asks the [`WindowRequests`], which parks a one-shot channel under the request id until
//! `answer_elicitation` or `answer_sampling` fills it. A page is opened only by
//! `open_elicitation_url`, for the request that named it: the window never hands an address of
//! its own to the system's opener.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use serde_json::Value;
use tauri::{AppHandle, Manager};
use tokio::sync::oneshot;
use tooltrail_host::server_requests::check_form;
use tooltrail_host::{RequestUser, ServerRequest};
use tooltrail_mcp::{ElicitationAsk, ElicitationReply, SamplingAsk};
use tooltrail_protocol::{ElicitationAction, ElicitationRequest, FormField};

use crate::error::{CommandError, CommandResult};

/// What a waiting request is answered with.
enum Waiting {
    Elicitation {
        /// The form's fields (empty for a page), to check an answer against.
        fields: Vec<FormField>,
        url: Option<String>,
        answer: oneshot::Sender<ElicitationReply>,
    },
    Sampling {
        allow: oneshot::Sender<bool>,
    },
}

#[derive(Default)]
pub struct PendingServerRequests {
    waiting: Mutex<HashMap<String, Waiting>>,
}

fn not_waiting() -> CommandError {
    CommandError::new(
        "not_waiting",
        "That request is no longer waiting for an answer.",
    )
}

impl PendingServerRequests {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        match self.waiting.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The user's answer to a form or a page. An accepted form must hold its required fields,
    /// each of its kind; the request keeps waiting otherwise.
    pub fn answer_elicitation(
        &self,
        request_id: &str,
        action: ElicitationAction,
        content: Option<Value>,
    ) -> CommandResult<()> {
        let mut waiting = self.lock();
        let Some(Waiting::Elicitation { fields, .. }) = waiting.get(request_id) else {
            return Err(not_waiting());
        };
        let content = match (action, content) {
            (ElicitationAction::Accept, Some(Value::Object(values))) if !fields.is_empty() => {
                check_form(fields, &values).map_err(|problem| {
                    CommandError::new("invalid", tooltrail_protocol::sentence(&problem))
                })?;
                Some(values)
            }
            (ElicitationAction::Accept, None) if !fields.is_empty() => {
                return Err(CommandError::new("invalid", "Fill in the form to send it."));
            }
            _ => None,
        };
        let Some(Waiting::Elicitation { answer, .. }) = waiting.remove(request_id) else {
            return Err(not_waiting());
        };
        answer
            .send(ElicitationReply { action, content })
            .map_err(|_| not_waiting())
    }

    /// Whether the user lets the server use the model.
    pub fn answer_sampling(&self, request_id: &str, allow: bool) -> CommandResult<()> {
        let mut waiting = self.lock();
        match waiting.remove(request_id) {
            Some(Waiting::Sampling { allow: sender }) => {
                sender.send(allow).map_err(|_| not_waiting())
            }
            Some(other) => {
                waiting.insert(request_id.to_string(), other);
                Err(not_waiting())
            }
            None => Err(not_waiting()),
        }
    }

    /// The address of a waiting page request.
    pub fn url_of(&self, request_id: &str) -> CommandResult<String> {
        match self.lock().get(request_id) {
            Some(Waiting::Elicitation { url: Some(url), .. }) => Ok(url.clone()),
            Some(Waiting::Elicitation { url: None, .. } | Waiting::Sampling { .. }) | None => {
                Err(not_waiting())
            }
        }
    }

    fn park(&self, request_id: &str, waiting: Waiting) {
        self.lock().insert(request_id.to_string(), waiting);
    }

    fn forget(&self, request_id: &str) {
        self.lock().remove(request_id);
    }
}

/// Forgets a request when its wait ends, however it ends.
struct Forget<'a> {
    pending: &'a PendingServerRequests,
    request_id: &'a str,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.pending.forget(self.request_id);
    }
}

/// Opens `url` in the user's browser, through the launcher the command line's sign-in uses:
/// only web addresses (a server cannot have the app run a file or another scheme's handler),
/// handed to the system's opener as one argument, never through a shell.
pub fn open_in_browser(url: &str) -> CommandResult<()> {
    use tooltrail_mcp::launcher::{LaunchError, open_web_page};
    open_web_page(url).map_err(|error| match error {
        LaunchError::NotWeb => CommandError::new(
            "not_web",
            "Only web pages (http and https addresses) are opened.",
        ),
        LaunchError::EmptyCommand => CommandError::new(
            "no_browser",
            "The BROWSER variable names no command; copy the address instead.",
        ),
        LaunchError::Start { program, reason } => CommandError::new(
            "no_browser",
            format!(
                "The browser could not be opened ({program}: {reason}); copy the address instead."
            ),
        ),
    })
}

/// Puts servers' requests on the chat's cards, with an OS notification when the window is in
/// the background.
pub struct WindowRequests {
    pub app: AppHandle,
}

impl WindowRequests {
    fn notify(&self, body: &str) {
        crate::notify::when_in_background(&self.app, "Tooltrail: an MCP server asks", body);
    }
}

#[async_trait]
impl RequestUser for WindowRequests {
    async fn elicit(
        &self,
        request: &ServerRequest,
        ask: &ElicitationAsk,
    ) -> Result<ElicitationReply, String> {
        let (fields, url) = match &ask.request {
            ElicitationRequest::Form { fields } => (fields.clone(), None),
            ElicitationRequest::Url { url } => (Vec::new(), Some(url.clone())),
        };
        let (sender, receiver) = oneshot::channel();
        let pending = self.app.state::<PendingServerRequests>();
        pending.park(
            &request.request_id,
            Waiting::Elicitation {
                fields,
                url,
                answer: sender,
            },
        );
        let _forget = Forget {
            pending: &pending,
            request_id: &request.request_id,
        };
        self.notify(&ask.message);
        receiver
            .await
            .map_err(|_| "the request was closed without an answer".to_string())
    }

    async fn allow_sampling(
        &self,
        request: &ServerRequest,
        _ask: &SamplingAsk,
    ) -> Result<(), String> {
        let (sender, receiver) = oneshot::channel();
        let pending = self.app.state::<PendingServerRequests>();
        pending.park(&request.request_id, Waiting::Sampling { allow: sender });
        let _forget = Forget {
            pending: &pending,
            request_id: &request.request_id,
        };
        self.notify(&format!("{} asks to use your model.", request.server));
        match receiver.await {
            Ok(true) => Ok(()),
            Ok(false) => Err("the user said no".to_string()),
            Err(_) => Err("the request was closed without an answer".to_string()),
        }
    }
}

/// The user's answer to a server's form or page (`content`: the form's values, when accepted).
#[tauri::command]
pub fn answer_elicitation(
    pending: tauri::State<'_, PendingServerRequests>,
    request_id: String,
    action: ElicitationAction,
    content: Option<Value>,
) -> CommandResult<()> {
    pending.answer_elicitation(&request_id, action, content)
}

/// Whether a server may use the model for the request it made.
#[tauri::command]
pub fn answer_sampling(
    pending: tauri::State<'_, PendingServerRequests>,
    request_id: String,
    allow: bool,
) -> CommandResult<()> {
    pending.answer_sampling(&request_id, allow)
}

/// Opens the page a waiting request names, in the user's browser.
#[tauri::command]
pub fn open_elicitation_url(
    pending: tauri::State<'_, PendingServerRequests>,
    request_id: String,
) -> CommandResult<()> {
    open_in_browser(&pending.url_of(&request_id)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form_request(pending: &PendingServerRequests) -> oneshot::Receiver<ElicitationReply> {
        let (sender, receiver) = oneshot::channel();
        pending.park(
            "req_1",
            Waiting::Elicitation {
                fields: tooltrail_protocol::form_fields(&json!({
                    "type": "object",
                    "properties": {"name": {"type": "string", "title": "Name"}},
                    "required": ["name"]
                })),
                url: None,
                answer: sender,
            },
        );
        receiver
    }

    #[test]
    fn a_form_answer_is_checked_before_it_goes_and_goes_once() {
        let pending = PendingServerRequests::default();
        let mut receiver = form_request(&pending);
        let error = pending
            .answer_elicitation(
                "req_1",
                ElicitationAction::Accept,
                Some(json!({"name": ""})),
            )
            .unwrap_err();
        assert_eq!(error.message, "Name is required.");
        pending
            .answer_elicitation(
                "req_1",
                ElicitationAction::Accept,
                Some(json!({"name": "Ada"})),
            )
            .unwrap();
        let reply = receiver.try_recv().unwrap();
        assert_eq!(reply.action, ElicitationAction::Accept);
        assert_eq!(reply.content.unwrap()["name"], "Ada");
        assert_eq!(
            pending
                .answer_elicitation("req_1", ElicitationAction::Decline, None)
                .unwrap_err()
                .code,
            "not_waiting"
        );
    }

    #[test]
    fn only_the_page_a_request_names_is_opened_and_only_on_the_web() {
        let pending = PendingServerRequests::default();
        let _receiver = form_request(&pending);
        assert_eq!(pending.url_of("req_1").unwrap_err().code, "not_waiting");
        assert_eq!(
            open_in_browser("file:///etc/passwd").unwrap_err().code,
            "not_web"
        );
        let (allow, mut allowed) = oneshot::channel();
        pending.park("req_2", Waiting::Sampling { allow });
        assert_eq!(
            pending
                .answer_elicitation("req_2", ElicitationAction::Accept, None)
                .unwrap_err()
                .code,
            "not_waiting"
        );
        pending.answer_sampling("req_2", true).unwrap();
        assert_eq!(allowed.try_recv(), Ok(true));
    }
}
