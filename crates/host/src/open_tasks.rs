//! Tasks calls of an earlier run left open at their MCP servers (MCP Tasks), picked up again:
//! a process that ended while a server ran a call as a task leaves the task in the record
//! (`tooltrail_store::OpenTask`); the next start in that folder follows it at the server and
//! writes how it ended over the call, so the result lands under the call that asked for it.
//! A task its server no longer holds is forgotten with a note on the call; one whose server
//! cannot be reached now stays for the next start.

use std::path::Path;

use tokio_util::sync::CancellationToken;
use tooltrail_mcp::Resumed;
use tooltrail_protocol::{ToolError, ToolOutput};
use tooltrail_store::{OpenTask, Store};

use crate::toolbox::Toolbox;

/// What became of one open task.
#[derive(Debug)]
pub struct PickedUp {
    pub task: OpenTask,
    pub outcome: PickUp,
}

#[derive(Debug)]
pub enum PickUp {
    /// It ended; its call now holds this.
    Ended(Result<ToolOutput, ToolError>),
    /// Its server no longer holds it (or is no longer configured): forgotten, with why.
    Gone(String),
    /// Its server could not be reached: left for the next start, with why.
    Later(String),
}

/// Follows every task `workspace`'s calls left open to its end (all at once), recording each
/// as it ends and then telling `ended` of it. Stopped by `cancel`, a task stays open at its
/// server and in the record.
pub async fn pick_up_tasks(
    store: &Store,
    toolbox: &Toolbox,
    workspace: &Path,
    cancel: &CancellationToken,
    ended: &(dyn Fn(&PickedUp) + Send + Sync),
) -> Vec<PickedUp> {
    let open = match store.open_tasks(&workspace.display().to_string()) {
        Ok(open) if !open.is_empty() => open,
        Ok(_) | Err(_) => return Vec::new(),
    };
    // The folder's servers, started as for a question.
    let _ = toolbox.tools(workspace, &[]).await;
    let servers = toolbox.mcp_servers(workspace).await;
    let follows = open.into_iter().map(|task| {
        let server = servers
            .iter()
            .find(|server| server.name() == task.server)
            .cloned();
        async move {
            let outcome = match server {
                None => PickUp::Gone(format!(
                    "no MCP server named {:?} is configured any more",
                    task.server
                )),
                Some(server) => {
                    match server
                        .resume_task(&task.remote_tool, &task.task_id, cancel, None)
                        .await
                    {
                        Resumed::Ended(Err(error))
                            if error.code == tooltrail_protocol::ToolErrorCode::Cancelled
                                && cancel.is_cancelled() =>
                        {
                            PickUp::Later("picking it up was stopped".into())
                        }
                        Resumed::Ended(outcome) => PickUp::Ended(outcome),
                        Resumed::Gone(why) => PickUp::Gone(why),
                        Resumed::Unreachable(why) => PickUp::Later(why),
                    }
                }
            };
            let ended_ms = now_ms();
            let _ = match &outcome {
                PickUp::Ended(result) => store.finish_open_task(&task, ended_ms, result),
                PickUp::Gone(why) => store.drop_open_task(
                    &task,
                    &format!("Its MCP task could not be picked up again: {why}."),
                ),
                PickUp::Later(_) => Ok(()),
            };
            let picked = PickedUp { task, outcome };
            ended(&picked);
            picked
        }
    });
    futures::future::join_all(follows).await
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
