//! MCP Tasks: a call the server runs in the background, followed until it ends.
//!
//! A server whose tool runs for minutes or hours answers `tools/call` with a task instead of
//! the result; the client asks `tasks/get` where it stands, no faster than the server's
//! `pollInterval` suggests, and fetches the result when it is done. Two forms are spoken, and
//! one loop follows both, telling them apart by what the server sends:
//!
//! - the 2025-11-25 revision's (the TypeScript SDK's `experimental.tasks`, which the reference
//!   servers on npm use): the call carries a `task` parameter, the answer is
//!   `{task: {taskId, status, pollInterval, ...}}`, the result comes from `tasks/result`, and a
//!   question the task asks (`input_required`) comes as an ordinary request while
//!   `tasks/result` is open;
//! - the Tasks extension (`io.modelcontextprotocol/tasks`): the answer has
//!   `resultType: "task"`, `tasks/get` carries the result or error once the task ends, and
//!   questions come in `inputRequests`, answered with `tasks/update`.
//!
//! Each change of state goes to the call's progress (what the card shows and the record
//! keeps, with the task's id: the record picks an open task up again after a restart). Stop
//! sends `tasks/cancel`; so does running past the tool's timeout, which bounds the whole task.
//! A follow dropped without either (the app closing) leaves the task at the server, on purpose.

use std::time::Duration;

use rmcp::model::{
    CallToolResult, ClientRequest, CustomRequest, ElicitRequestParams, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleClient};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use tooltrail_protocol::{TaskProgress, TaskStatus, ToolProgress};

use crate::connection::{RequestFailure, failure};

/// The shortest wait between two `tasks/get`, whatever the server suggests.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(250);
/// The longest: a server that suggests more is still asked once a minute.
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(60);
/// The wait when the server suggests none.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// How long to wait before asking again, from the server's suggestion.
pub(crate) fn poll_interval(suggested: Option<Duration>) -> Duration {
    suggested
        .unwrap_or(DEFAULT_POLL_INTERVAL)
        .clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
}

/// A task as one answer of the server shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot {
    pub task_id: String,
    pub status: TaskStatus,
    pub message: Option<String>,
    pub poll: Option<Duration>,
    /// The extension's inline result (`completed`).
    pub result: Option<Value>,
    /// The extension's inline error (`failed`).
    pub error: Option<Value>,
    /// The extension's questions (`input_required`).
    pub input_requests: Option<Map<String, Value>>,
}

/// Reads a task out of a `tools/call` or `tasks/get` answer, in either form: the task under
/// `task` (2025-11-25's `CreateTaskResult`) or its fields at the top.
pub(crate) fn read_task(value: &Value) -> Option<Snapshot> {
    let task = match value.get("task") {
        Some(task @ Value::Object(_)) => task,
        _ => value,
    };
    let task_id = task.get("taskId")?.as_str()?.to_string();
    let status = match task.get("status")?.as_str()? {
        "working" => TaskStatus::Working,
        "input_required" => TaskStatus::InputRequired,
        "completed" => TaskStatus::Completed,
        "failed" => TaskStatus::Failed,
        "cancelled" => TaskStatus::Cancelled,
        _ => return None,
    };
    let poll = task
        .get("pollInterval")
        .or_else(|| task.get("pollIntervalMs"))
        .and_then(Value::as_u64)
        .map(Duration::from_millis);
    let message = task
        .get("statusMessage")
        .and_then(Value::as_str)
        .map(status_line)
        .filter(|line| !line.is_empty());
    Some(Snapshot {
        task_id,
        status,
        message,
        poll,
        result: task.get("result").filter(|v| v.is_object()).cloned(),
        error: task.get("error").filter(|v| v.is_object()).cloned(),
        input_requests: task
            .get("inputRequests")
            .and_then(Value::as_object)
            .cloned(),
    })
}

/// The longest status message kept, in characters: it is one line on a card and in the record,
/// sent again with every change, and a server decides what it holds.
pub const MAX_STATUS_CHARS: usize = 300;

/// A server's status message as one line of at most [`MAX_STATUS_CHARS`]: line breaks and
/// other control characters become spaces, runs of spaces one, and a longer one is cut with `…`.
fn status_line(text: &str) -> String {
    let words = text
        .split(|c: char| c.is_control() || c.is_whitespace())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if words.chars().count() <= MAX_STATUS_CHARS {
        return words;
    }
    let mut cut: String = words.chars().take(MAX_STATUS_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// Answers the questions a task asks (the extension's `inputRequests`): each key to its answer.
#[async_trait::async_trait]
pub(crate) trait TaskQuestions: Send + Sync {
    async fn elicit(&self, request: ElicitRequestParams) -> Value;
}

/// One task being followed until it ends.
pub(crate) struct Follow<'a> {
    pub peer: &'a Peer<RoleClient>,
    /// The server's name and its own name of the tool, for the progress.
    pub server: &'a str,
    pub tool: &'a str,
    /// The longest the whole task may take, from the moment following began.
    pub limit: Duration,
    /// The longest one `tasks/get` may take.
    pub request_timeout: Duration,
    pub cancel: &'a CancellationToken,
    pub forward: Option<UnboundedSender<ToolProgress>>,
    pub questions: Option<&'a dyn TaskQuestions>,
}

type Pending = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<ServerResult, RequestFailure>> + Send + 'static>,
>;

impl Follow<'_> {
    /// Starts the task: `tools/call` with the `task` parameter. The first snapshot, or why not.
    pub(crate) async fn create(
        peer: &Peer<RoleClient>,
        tool: &str,
        arguments: Map<String, Value>,
        ttl: Duration,
        meta: Option<Value>,
        timeout: Duration,
    ) -> Result<Created, RequestFailure> {
        let mut params = json!({
            "name": tool,
            "arguments": arguments,
            "task": {"ttl": u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)},
        });
        if let (Some(meta), Some(params)) = (meta, params.as_object_mut()) {
            params.insert("_meta".into(), meta);
        }
        let answer = send(peer, "tools/call", params, timeout).await?;
        match answer {
            ServerResult::CallToolResult(result) => Ok(Created::Done(result)),
            other => {
                let value = serde_json::to_value(&other).unwrap_or(Value::Null);
                read_task(&value).map(Created::Task).ok_or_else(|| {
                    RequestFailure::Other(
                        "the server answered a task's tools/call with neither a task nor a \
                         tool result"
                            .into(),
                    )
                })
            }
        }
    }

    /// Follows the task from `first` to its end: its result, or why there is none.
    pub(crate) async fn run(self, first: Snapshot) -> Result<CallToolResult, RequestFailure> {
        let deadline = tokio::time::Instant::now() + self.limit;
        let task_id = first.task_id.clone();
        let mut shown: Option<(TaskStatus, Option<String>)> = None;
        let mut steps = 0u32;
        // 2025-11-25's `tasks/result`, once asked: it answers when the task ends, and the
        // questions the task asks come while it is open.
        let mut fetching: Option<Pending> = None;
        let mut answered: std::collections::HashSet<String> = Default::default();
        let mut snapshot = first;
        // Whether `snapshot` came from `tasks/get` (rather than from the call that made it).
        let mut polled = false;
        loop {
            if shown.as_ref() != Some(&(snapshot.status, snapshot.message.clone())) {
                shown = Some((snapshot.status, snapshot.message.clone()));
                steps += 1;
                self.report(&snapshot, steps);
            }
            match snapshot.status {
                TaskStatus::Completed => {
                    return self
                        .completed(&mut snapshot, fetching.take(), deadline)
                        .await;
                }
                TaskStatus::Failed | TaskStatus::Cancelled => return Err(ended(&snapshot)),
                TaskStatus::InputRequired => match snapshot.input_requests.take() {
                    Some(requests) => {
                        self.answer(&task_id, requests, &mut answered).await?;
                    }
                    // 2025-11-25's questions come while `tasks/result` is open. A task just
                    // created may not list the extension's yet: it is asked once more first.
                    None if fetching.is_none() && polled => {
                        fetching = Some(self.fetch_result(&task_id));
                    }
                    None => {}
                },
                TaskStatus::Working => {}
            }
            let wait = poll_interval(snapshot.poll);
            let fetched = async {
                match fetching.as_mut() {
                    Some(pending) => pending.await,
                    None => std::future::pending().await,
                }
            };
            let answer = tokio::select! {
                () = tokio::time::sleep(wait) => None,
                answer = fetched => Some(answer),
                () = self.cancel.cancelled() => return Err(self.cancel_task(&task_id).await),
                () = tokio::time::sleep_until(deadline) => {
                    let _ = self.cancel_task(&task_id).await;
                    return Err(RequestFailure::Timeout(self.limit));
                }
            };
            if let Some(answer) = answer {
                // `tasks/result` answered: the task ended, and this is how.
                let result = tool_result(answer?);
                if result.is_ok() {
                    snapshot.status = TaskStatus::Completed;
                    snapshot.message = None;
                    self.report(&snapshot, steps + 1);
                }
                return result;
            }
            snapshot = self.poll(&task_id, snapshot.poll).await?;
            polled = true;
        }
    }

    /// The result of a task that is done: inline (the extension), or from `tasks/result`
    /// (asked now, or already asked for its questions).
    async fn completed(
        &self,
        snapshot: &mut Snapshot,
        fetching: Option<Pending>,
        deadline: tokio::time::Instant,
    ) -> Result<CallToolResult, RequestFailure> {
        if let Some(result) = snapshot.result.take() {
            return tool_result(ServerResult::CustomResult(rmcp::model::CustomResult(
                result,
            )));
        }
        let pending = fetching.unwrap_or_else(|| self.fetch_result(&snapshot.task_id));
        tokio::select! {
            answer = pending => tool_result(answer?),
            () = self.cancel.cancelled() => Err(self.cancel_task(&snapshot.task_id).await),
            () = tokio::time::sleep_until(deadline) => {
                let _ = self.cancel_task(&snapshot.task_id).await;
                Err(RequestFailure::Timeout(self.limit))
            }
        }
    }

    /// `tasks/get`: where the task stands now. The poll interval the server suggested before is
    /// kept when this answer omits it (it is the server's to change).
    async fn poll(
        &self,
        task_id: &str,
        suggested: Option<Duration>,
    ) -> Result<Snapshot, RequestFailure> {
        let value = send(
            self.peer,
            "tasks/get",
            json!({"taskId": task_id}),
            self.request_timeout,
        )
        .await
        .map(|answer| serde_json::to_value(&answer).unwrap_or(Value::Null))?;
        let Some(next) = read_task(&value) else {
            return Err(RequestFailure::Other(
                "the server answered tasks/get with something other than a task".into(),
            ));
        };
        let poll = next.poll.or(suggested);
        Ok(Snapshot { poll, ..next })
    }

    fn report(&self, snapshot: &Snapshot, steps: u32) {
        let Some(forward) = &self.forward else {
            return;
        };
        let _ = forward.send(ToolProgress {
            progress: f64::from(steps),
            total: None,
            message: snapshot.message.clone(),
            task: Some(TaskProgress {
                server: self.server.to_string(),
                tool: self.tool.to_string(),
                task_id: snapshot.task_id.clone(),
                status: snapshot.status,
                message: snapshot.message.clone(),
            }),
        });
    }

    /// `tasks/result`, sent now and awaited later.
    fn fetch_result(&self, task_id: &str) -> Pending {
        let peer = self.peer.clone();
        let params = json!({"taskId": task_id});
        // Its answer waits for the task's end: bounded by the whole task's limit.
        let timeout = self.limit;
        Box::pin(async move { send(&peer, "tasks/result", params, timeout).await })
    }

    /// `tasks/cancel`: the server is told to stop; a cancelled call whatever it answers.
    async fn cancel_task(&self, task_id: &str) -> RequestFailure {
        let _ = send(
            self.peer,
            "tasks/cancel",
            json!({"taskId": task_id}),
            self.request_timeout,
        )
        .await;
        if let Some(forward) = &self.forward {
            let _ = forward.send(ToolProgress {
                progress: 0.0,
                total: None,
                message: None,
                task: Some(TaskProgress {
                    server: self.server.to_string(),
                    tool: self.tool.to_string(),
                    task_id: task_id.to_string(),
                    status: TaskStatus::Cancelled,
                    message: None,
                }),
            });
        }
        RequestFailure::Cancelled
    }

    /// The extension's questions: each asked through the same answerer as elicitation, the
    /// answers sent with `tasks/update`. A question already answered is not asked again.
    async fn answer(
        &self,
        task_id: &str,
        requests: Map<String, Value>,
        answered: &mut std::collections::HashSet<String>,
    ) -> Result<(), RequestFailure> {
        let mut responses = Map::new();
        for (key, request) in requests {
            if answered.contains(&key) {
                continue;
            }
            let asks_input =
                request.get("method").and_then(Value::as_str) == Some("elicitation/create");
            let params = request.get("params").cloned().unwrap_or(Value::Null);
            let response = match (asks_input, self.questions) {
                (true, Some(questions)) => match serde_json::from_value(params) {
                    Ok(params) => questions.elicit(params).await,
                    Err(_) => json!({"action": "decline"}),
                },
                // What Tooltrail cannot answer inside a task (the model, the roots) is declined.
                _ => json!({"action": "decline"}),
            };
            answered.insert(key.clone());
            responses.insert(key, response);
        }
        if responses.is_empty() {
            return Ok(());
        }
        send(
            self.peer,
            "tasks/update",
            json!({"taskId": task_id, "inputResponses": responses}),
            self.request_timeout,
        )
        .await
        .map(|_| ())
    }
}

/// Why a task that failed or was cancelled by its server has no result.
fn ended(snapshot: &Snapshot) -> RequestFailure {
    if snapshot.status == TaskStatus::Cancelled {
        return RequestFailure::Other("the server cancelled the task before it finished".into());
    }
    let message = snapshot
        .error
        .as_ref()
        .and_then(|error| error.get("message"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(snapshot.message.clone())
        .unwrap_or_else(|| "the task failed".to_string());
    RequestFailure::Other(format!("the server's task failed: {message}"))
}

/// What `tools/call` with a task parameter gave.
pub(crate) enum Created {
    /// The server ran it at once all the same.
    Done(CallToolResult),
    Task(Snapshot),
}

/// One request by its method name, with its answer as rmcp reads it.
async fn send(
    peer: &Peer<RoleClient>,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<ServerResult, RequestFailure> {
    let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
        .await
        .map_err(failure)?;
    handle.await_response().await.map_err(failure)
}

/// A task's result as a tool result.
fn tool_result(answer: ServerResult) -> Result<CallToolResult, RequestFailure> {
    match answer {
        ServerResult::CallToolResult(result) => Ok(result),
        other => {
            let value = serde_json::to_value(&other).unwrap_or(Value::Null);
            serde_json::from_value::<CallToolResult>(value).map_err(|_| {
                RequestFailure::Other(
                    "the server's task ended without a tool result Tooltrail can read".into(),
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn both_forms_of_a_task_are_read() {
        let created = json!({"task": {"taskId": "t1", "status": "working",
            "statusMessage": "Gathering sources...", "createdAt": "x", "lastUpdatedAt": "x",
            "ttl": 300000, "pollInterval": 1000}});
        let task = read_task(&created).unwrap();
        assert_eq!(task.task_id, "t1");
        assert_eq!(task.status, TaskStatus::Working);
        assert_eq!(task.message.as_deref(), Some("Gathering sources..."));
        assert_eq!(task.poll, Some(Duration::from_secs(1)));
        let extension = json!({"resultType": "complete", "taskId": "t2", "status": "completed",
            "pollIntervalMs": 500, "result": {"content": [{"type": "text", "text": "done"}]}});
        let task = read_task(&extension).unwrap();
        assert_eq!(task.status, TaskStatus::Completed);
        assert_eq!(task.poll, Some(Duration::from_millis(500)));
        assert!(task.result.is_some());
        assert_eq!(read_task(&json!({"content": []})), None);
        assert_eq!(
            read_task(&json!({"taskId": "t", "status": "exploded"})),
            None
        );
    }

    #[test]
    fn attack_tasks_a_status_message_is_one_short_line_whatever_the_server_sends() {
        let long = format!("Step 1\n\r\u{1b}[2J{}", "x".repeat(10_000));
        let task =
            read_task(&json!({"taskId": "t", "status": "working", "statusMessage": long})).unwrap();
        let message = task.message.unwrap();
        assert_eq!(message.chars().count(), MAX_STATUS_CHARS);
        assert!(message.starts_with("Step 1 [2J"), "{message}");
        assert!(message.ends_with('…'));
        assert!(!message.chars().any(char::is_control));
        let blank = json!({"taskId": "t", "status": "working", "statusMessage": " \n\t "});
        assert_eq!(read_task(&blank).unwrap().message, None);
    }

    #[test]
    fn polling_honours_the_server_within_bounds() {
        assert_eq!(poll_interval(None), DEFAULT_POLL_INTERVAL);
        assert_eq!(
            poll_interval(Some(Duration::from_millis(5))),
            MIN_POLL_INTERVAL
        );
        assert_eq!(
            poll_interval(Some(Duration::from_secs(5))),
            Duration::from_secs(5)
        );
        assert_eq!(
            poll_interval(Some(Duration::from_secs(3600))),
            MAX_POLL_INTERVAL
        );
    }
}
