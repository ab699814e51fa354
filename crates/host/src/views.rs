//! MCP App views: a tool's interactive view, shown in its call's card, and the calls the view
//! makes, approved like the model's and recorded in a turn of the view's own, opened under the
//! call whose view it is.
//!
//! A view is shown in two steps. [`Views::prepare`] finds the call on the record, reads its
//! server's page (checked by `tooltrail_mcp`) and says what the page asks for (permissions);
//! nothing is served yet. [`Views::start`] serves the page from a loopback origin of its own
//! (`tooltrail_views`) with only the permissions the user granted, and opens the view's turn
//! on the record. From then on the view's requests come through [`Views::call_tool`] and
//! [`Views::read_resource`], until [`Views::close`] (every open view: [`Views::close_all`],
//! when the app closes).
//!
//! The page is read again from the server each time a view is shown; the record keeps the
//! call's input and result, which the view gets back, and the tool is never run again for it.
//!
//! A view's request is admitted before anything else: at most `MAX_IN_FLIGHT` at once and
//! `MAX_PER_MINUTE` a minute. A tool name or arguments past their size (`MAX_NAME_BYTES`,
//! `MAX_ARGUMENT_BYTES`) are refused and recorded small, as is a tool the view may not call
//! (another server's, or one not meant for views); a resource address past `MAX_URI_BYTES` is
//! refused. Every refusal counts: `FLOOD_REFUSALS` within `FLOOD_WINDOW` close the view as
//! flooding.
//!
//! The host also keeps the addresses it issued: [`Views::admits_navigation`], which the
//! window's navigation handler asks before any request leaves, lets a frame load a view's own
//! address while that view is open, an origin the view's server declared for frames inside it
//! (a public `https` origin, never loopback), and the app's own pages; nothing else.
//!
//! When the last open view closes, for whatever reason, the front end is told
//! ([`Views::when_none_open`]): the engine keeps website data by host, every view's port
//! together, so only then can it clear what views kept ([`is_view_site`]) without taking it
//! from a view still open.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};
use tooltrail_agent::{
    AgentConfig, Approver, Conversation, EventSink, RuleBook, ViewCallOutcome, ViewCallScope,
    ViewTurn,
};
use tooltrail_mcp::{McpServer, ViewResource};
use tooltrail_protocol::{EventBody, ToolSource, ToolStatus, ViewEnd, ViewLink};
use tooltrail_store::{CallStatus, Store, ToolCallRecord};
use tooltrail_tools::{Tool, ToolContext};
pub use tooltrail_views::is_view_site;
use tooltrail_views::{Feature, OpenView, ViewCsp, ViewPage, ViewServer};
use ts_rs::TS;

use crate::error::HostError;
use crate::view_download::{self, DownloadRules, SavedFile, ViewFile, ViewFileSource};

/// The app's own origins, the only pages that may frame a view.
pub const APP_ORIGINS: &[&str] = &[
    "tauri://localhost",
    "http://tauri.localhost",
    "https://tauri.localhost",
];

/// Requests one view may have waiting at once.
const MAX_IN_FLIGHT: usize = 4;
/// Requests one view may make in a minute.
const MAX_PER_MINUTE: usize = 120;
/// Refused requests within [`FLOOD_WINDOW`] after which the view is closed as flooding.
const FLOOD_REFUSALS: usize = 200;
const FLOOD_WINDOW: Duration = Duration::from_secs(10);
/// The longest tool name a view may call (the MCP specification's limit for tool names).
const MAX_NAME_BYTES: usize = 128;
/// The most a view's call's arguments may weigh, as JSON.
const MAX_ARGUMENT_BYTES: usize = 64 * 1024;
/// The longest resource address a view may read.
const MAX_URI_BYTES: usize = 2048;
/// A refused call's arguments are recorded when they are this small; else only their size.
const MAX_REFUSED_ARGUMENT_BYTES: usize = 1024;

/// What the window needs to show a call's view, before anything is served.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ViewPlan {
    pub view_id: String,
    pub server: String,
    /// The tool as the record names it (`server__tool`).
    pub tool: String,
    pub resource_uri: String,
    /// What the page asks for (`camera`, `microphone`, `geolocation`, `clipboard-write`);
    /// none is granted unless the user says yes.
    pub permissions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub prefers_border: Option<bool>,
    /// The tool as its server lists it, for the view's host context.
    #[ts(type = "unknown")]
    pub tool_info: Value,
    /// The call's arguments, as recorded.
    #[ts(type = "unknown")]
    pub input: Value,
    pub outcome: ViewOutcome,
}

/// How the call whose view this is ended, as the view is told.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ViewOutcome {
    /// Still running: the window sends the result when the call's end comes.
    Pending,
    /// The call's result (an MCP `CallToolResult`).
    Result {
        #[ts(type = "unknown")]
        result: Value,
    },
    /// The call never ran, or was stopped.
    Cancelled { reason: String },
}

/// Where the window loads a started view.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ViewStart {
    /// The frame's address; it answers once.
    pub url: String,
    /// The view's origin: its messages must come from it.
    pub origin: String,
    /// The Content-Security-Policy the page is served with.
    pub csp: String,
    /// Domains the server declared that were left out.
    pub refused_domains: Vec<String>,
}

struct Prepared {
    conversation_id: String,
    parent_turn_id: String,
    parent_call_id: String,
    server: Arc<McpServer>,
    tool: String,
    page: ViewResource,
    /// The permissions the page declared, which the user may grant.
    asked: Vec<Feature>,
    /// Set for a live call not on the record yet: the record that will hold it.
    awaits_call: Option<Arc<Store>>,
}

struct Live {
    conversation_id: String,
    server: Arc<McpServer>,
    /// The address the host issued for the view's frame.
    address: String,
    /// The declared origins a frame inside the view may load.
    frame_origins: Vec<String>,
    /// The view's turn on the record, once open.
    turn: Mutex<Option<Arc<ViewTurn>>>,
    /// A live call's view is shown while the model writes the call: its turn opens once the
    /// call is on the record (the record files a view's turn under its call), and until then
    /// the view may not act.
    waiting: Mutex<Option<Waiting>>,
    served: Mutex<Option<OpenView>>,
    limits: Mutex<Limits>,
}

/// What opens a live call's view turn once the call is on the record.
struct Waiting {
    store: Arc<Store>,
    view_id: String,
    parent_turn_id: String,
    parent_call_id: String,
    sink: Arc<dyn EventSink>,
    opened: EventBody,
}

impl Live {
    /// The view's turn: open, or opened now if its call has reached the record.
    fn turn(&self) -> Result<Arc<ViewTurn>, HostError> {
        if let Some(turn) = lock(&self.turn).clone() {
            return Ok(turn);
        }
        let mut waiting = lock(&self.waiting);
        let Some(pending) = waiting.as_ref() else {
            return Err(refused("that view is closed"));
        };
        let recorded = pending
            .store
            .call_in_turn(&pending.parent_turn_id, &pending.parent_call_id)
            .ok()
            .flatten()
            .is_some();
        if !recorded {
            return Err(refused(
                "the view's call has not started yet; the view may act once it has",
            ));
        }
        let Some(pending) = waiting.take() else {
            return Err(refused("that view is closed"));
        };
        let turn = Arc::new(ViewTurn::open(
            self.conversation_id.clone(),
            pending.view_id,
            pending.sink,
            pending.opened,
        ));
        *lock(&self.turn) = Some(Arc::clone(&turn));
        Ok(turn)
    }
}

#[derive(Default)]
struct Limits {
    in_flight: usize,
    recent: VecDeque<Instant>,
    refusals: VecDeque<Instant>,
}

/// Open views, and the views' "allow for this conversation" answers.
pub struct Views {
    server: ViewServer,
    /// The app's own origins, where the window's pages are.
    app_origins: Vec<String>,
    prepared: Mutex<HashMap<String, Prepared>>,
    live: Mutex<HashMap<String, Arc<Live>>>,
    allowances: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Conversation>>>>,
    /// Told, with the last one's reason, each time the last open view has closed.
    none_open: Mutex<Option<NoneOpen>>,
}

/// What [`Views::when_none_open`] is given.
type NoneOpen = Arc<dyn Fn(ViewEnd) + Send + Sync>;

impl Default for Views {
    fn default() -> Self {
        Self::new(
            APP_ORIGINS
                .iter()
                .map(|origin| origin.to_string())
                .collect(),
        )
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn refused(text: impl Into<String>) -> HostError {
    HostError::View(text.into())
}

/// A call's result as a view reads it (an MCP `CallToolResult`): the server's own result when
/// the record has it whole (an MCP tool's data is `{server, tool, result}`), else the
/// recorded text.
fn call_tool_result(status: ToolStatus, text: &str, data: Option<&Value>) -> Value {
    match data.and_then(|data| data.get("result")) {
        Some(result @ Value::Object(object))
            if status == ToolStatus::Success && object.contains_key("content") =>
        {
            result.clone()
        }
        _ => json!({
            "content": [{ "type": "text", "text": text }],
            "isError": status != ToolStatus::Success,
        }),
    }
}

impl Views {
    pub fn new(frame_ancestors: Vec<String>) -> Self {
        Self {
            app_origins: frame_ancestors.clone(),
            server: ViewServer::new(frame_ancestors),
            prepared: Mutex::default(),
            live: Mutex::default(),
            allowances: Mutex::default(),
            none_open: Mutex::default(),
        }
    }

    /// Calls `then` each time the last open view has closed, with why it closed (its origin
    /// no longer answers by then): the moment the front end clears what views left in the
    /// engine's storage.
    pub fn when_none_open(&self, then: impl Fn(ViewEnd) + Send + Sync + 'static) {
        *lock(&self.none_open) = Some(Arc::new(then));
    }

    /// Finds the call `call_id` of turn `turn_id` in `conversation_id` on the record and reads
    /// its view's page from its server, among `servers` (those of the call's folder).
    pub async fn prepare(
        &self,
        store: &Arc<Store>,
        servers: &[Arc<McpServer>],
        conversation_id: &str,
        turn_id: &str,
        call_id: &str,
    ) -> Result<ViewPlan, HostError> {
        let found = match store
            .call_in_turn(turn_id, call_id)?
            .filter(|record| record.row.conversation_id == conversation_id)
        {
            Some(record) => Found::from_record(record)?,
            None => Found::live(store, conversation_id, turn_id, call_id)?,
        };
        let live_call = found.server.is_none();
        // A live call's server is the one whose name its tool's begins with (`server__tool`).
        let name = match &found.server {
            Some(server) => server.clone(),
            None => servers
                .iter()
                .map(|server| server.name())
                .filter(|name| found.tool.starts_with(&format!("{name}__")))
                .max_by_key(|name| name.len())
                .unwrap_or_default()
                .to_string(),
        };
        let server = servers
            .iter()
            .find(|server| server.name() == name)
            .cloned()
            .ok_or_else(|| {
                refused(format!(
                    "the MCP server {name:?} is not running for this folder, so its view cannot be shown; the result stays as text"
                ))
            })?;
        let view = match found.view.clone() {
            Some(view) => view,
            None => listed_view(&server, &found.tool)
                .ok_or_else(|| refused(format!("the call of {} has no view", found.tool)))?,
        };
        let page = server
            .view_resource(&view.resource_uri)
            .await
            .map_err(|error| refused(error.to_string()))?;
        let tool_info = tool_info(&server, &found.tool, &view.resource_uri);
        let asked = page
            .permissions
            .as_ref()
            .map(Feature::declared)
            .unwrap_or_default();
        let permissions = asked
            .iter()
            .map(|feature| feature.declared_as().to_string())
            .collect();
        let view_id = format!("view_{}", uuid::Uuid::new_v4().simple());
        let plan = ViewPlan {
            view_id: view_id.clone(),
            server: name.clone(),
            tool: found.tool.clone(),
            resource_uri: view.resource_uri.clone(),
            permissions,
            prefers_border: page.prefers_border,
            tool_info,
            input: found.input,
            outcome: found.outcome,
        };
        lock(&self.prepared).insert(
            view_id,
            Prepared {
                conversation_id: conversation_id.to_string(),
                parent_turn_id: turn_id.to_string(),
                parent_call_id: call_id.to_string(),
                server,
                tool: found.tool,
                page,
                asked,
                awaits_call: live_call.then(|| Arc::clone(store)),
            },
        );
        Ok(plan)
    }

    /// Serves a prepared view with the permissions in `granted` (a subset of what it asked for;
    /// anything else is not granted) and opens its turn, whose events go to `sink`.
    pub async fn start(
        &self,
        view_id: &str,
        granted: &[String],
        sink: Arc<dyn EventSink>,
    ) -> Result<ViewStart, HostError> {
        let prepared = lock(&self.prepared)
            .remove(view_id)
            .ok_or_else(|| refused("that view is no longer waiting to be shown; show it again"))?;
        let granted: Vec<Feature> = prepared
            .asked
            .iter()
            .copied()
            .filter(|feature| granted.iter().any(|name| name == feature.declared_as()))
            .collect();
        let csp: Option<ViewCsp> = prepared
            .page
            .csp
            .clone()
            .and_then(|csp| serde_json::from_value(csp).ok());
        let served = self
            .server
            .open(ViewPage {
                html: prepared.page.html.clone(),
                csp,
                granted: granted.clone(),
            })
            .await
            .map_err(|error| refused(format!("the view could not be served: {error}")))?;
        let start = ViewStart {
            url: served.url.clone(),
            origin: served.origin.clone(),
            csp: served.csp.clone(),
            refused_domains: served.refused_domains.clone(),
        };
        let opened = EventBody::ViewOpened {
            parent_turn_id: prepared.parent_turn_id.clone(),
            parent_call_id: prepared.parent_call_id.clone(),
            server: prepared.server.name().to_string(),
            tool: prepared.tool,
            resource_uri: prepared.page.uri.clone(),
            csp: start.csp.clone(),
            refused_domains: start.refused_domains.clone(),
            granted: granted
                .iter()
                .map(|feature| feature.declared_as().to_string())
                .collect(),
        };
        // A call on the record has its view's turn opened now; a live one's waits for it.
        let (turn, waiting) = match prepared.awaits_call {
            None => (
                Some(Arc::new(ViewTurn::open(
                    prepared.conversation_id.clone(),
                    view_id,
                    sink,
                    opened,
                ))),
                None,
            ),
            Some(store) => (
                None,
                Some(Waiting {
                    store,
                    view_id: view_id.to_string(),
                    parent_turn_id: prepared.parent_turn_id,
                    parent_call_id: prepared.parent_call_id,
                    sink,
                    opened,
                }),
            ),
        };
        lock(&self.live).insert(
            view_id.to_string(),
            Arc::new(Live {
                conversation_id: prepared.conversation_id,
                server: prepared.server,
                address: served.url.clone(),
                frame_origins: served.frame_origins.clone(),
                turn: Mutex::new(turn),
                waiting: Mutex::new(waiting),
                served: Mutex::new(Some(served)),
                limits: Mutex::default(),
            }),
        );
        Ok(start)
    }

    fn live(&self, view_id: &str) -> Result<Arc<Live>, HostError> {
        lock(&self.live)
            .get(view_id)
            .cloned()
            .ok_or_else(|| refused("that view is closed"))
    }

    /// Whether the view is open: it is said in a sentence when it is not.
    pub fn ensure_open(&self, view_id: &str) -> Result<(), HostError> {
        self.live(view_id).map(|_| ())
    }

    /// Admits one request of the view, or says why not; a view that keeps sending past the
    /// limits is closed as flooding.
    async fn admit(&self, view_id: &str) -> Result<Admitted, HostError> {
        let live = self.live(view_id)?;
        let now = Instant::now();
        let refusal = {
            let mut limits = lock(&live.limits);
            while limits
                .recent
                .front()
                .is_some_and(|at| now.duration_since(*at) > Duration::from_secs(60))
            {
                limits.recent.pop_front();
            }
            if limits.in_flight >= MAX_IN_FLIGHT || limits.recent.len() >= MAX_PER_MINUTE {
                Some(limits.refuse(now))
            } else {
                limits.in_flight += 1;
                limits.recent.push_back(now);
                None
            }
        };
        match refusal {
            None => Ok(Admitted(live)),
            Some(flooded) => {
                if flooded {
                    self.close(view_id, ViewEnd::Flooded).await;
                    return Err(refused("the view sent too many requests and was closed"));
                }
                Err(refused("too many requests from this view; wait a moment"))
            }
        }
    }

    /// Counts a request of the view that was refused (a tool not for views, an oversized
    /// request) toward flooding; a view past the limit is closed, and the request is answered
    /// with that instead.
    async fn count_refusal(&self, view_id: &str, live: &Live) -> Result<(), HostError> {
        let flooded = lock(&live.limits).refuse(Instant::now());
        if flooded {
            self.close(view_id, ViewEnd::Flooded).await;
            return Err(refused("the view sent too many requests and was closed"));
        }
        Ok(())
    }

    /// Whether a frame of the window may load `url`, asked before the request leaves: the exact
    /// address the host issued for a view that is open, an origin a view's server declared for
    /// frames inside it (a public `https` origin, never loopback), or a page of the app itself.
    /// Anything else, another loopback port or path among it, is refused.
    pub fn admits_navigation(&self, url: &str) -> bool {
        let within = |origin: &str| {
            url.strip_prefix(origin)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        if matches!(url, "about:blank" | "about:srcdoc")
            || self.app_origins.iter().any(|origin| within(origin))
        {
            return true;
        }
        lock(&self.live).values().any(|live| {
            live.address == url || live.frame_origins.iter().any(|origin| within(origin))
        })
    }

    fn allowances(&self, conversation_id: &str) -> Arc<tokio::sync::Mutex<Conversation>> {
        Arc::clone(
            lock(&self.allowances)
                .entry(conversation_id.to_string())
                .or_insert_with(|| {
                    Arc::new(tokio::sync::Mutex::new(Conversation::with_id(
                        conversation_id,
                    )))
                }),
        )
    }

    /// The view's `tools/call`: a tool of its own server whose visibility includes `"app"`,
    /// approved like the model's calls, on the record under the view's call. A tool it may not
    /// call is recorded as refused, and the view gets an error result saying why.
    pub async fn call_tool(
        &self,
        view_id: &str,
        name: &str,
        arguments: Value,
        calls: ViewCalls<'_>,
    ) -> Result<Value, HostError> {
        let admitted = self.admit(view_id).await?;
        let live = &admitted.0;
        let turn = live.turn()?;
        if turn.is_closed() {
            return Err(refused("that view is closed"));
        }
        let source = ToolSource::Mcp {
            server: live.server.name().to_string(),
        };
        // Measured before anything is looked up or recorded: an oversized request is refused
        // and recorded small.
        let size = json_size(&arguments);
        let oversized = if name.len() > MAX_NAME_BYTES {
            Some(format!(
                "the view asked for a tool whose name is {} bytes long; a tool's name has at most {MAX_NAME_BYTES}",
                name.len()
            ))
        } else if size > MAX_ARGUMENT_BYTES {
            Some(format!(
                "the view sent {size} bytes of arguments; a view's call may carry at most {MAX_ARGUMENT_BYTES}"
            ))
        } else {
            None
        };
        let outcome = if let Some(reason) = oversized {
            self.count_refusal(view_id, live).await?;
            turn.refuse(
                &short_name(name),
                small_arguments(arguments, size),
                &reason,
                source,
                calls.ctx,
            )
            .await
        } else {
            match live.server.tool_for_view(name).await {
                Ok(tool) => self.run(live, &turn, tool, arguments, calls).await,
                Err(error) => {
                    self.count_refusal(view_id, live).await?;
                    turn.refuse(
                        name,
                        small_arguments(arguments, size),
                        &error.to_string(),
                        source,
                        calls.ctx,
                    )
                    .await
                }
            }
        };
        Ok(call_tool_result(
            outcome.status,
            &outcome.text,
            outcome.data.as_ref(),
        ))
    }

    /// The view's `resources/read`: a resource of its own server, read through that server's
    /// `read_resource` and its approval, on the record like a call.
    pub async fn read_resource(
        &self,
        view_id: &str,
        uri: &str,
        calls: ViewCalls<'_>,
    ) -> Result<Value, HostError> {
        let admitted = self.admit(view_id).await?;
        let live = &admitted.0;
        if uri.len() > MAX_URI_BYTES {
            self.count_refusal(view_id, live).await?;
            return Err(refused(format!(
                "the view asked for a resource whose address is {} bytes long; an address has at most {MAX_URI_BYTES}",
                uri.len()
            )));
        }
        let Some(tool) = tooltrail_mcp::ReadResourceTool::new(vec![Arc::clone(&live.server)])
        else {
            return Err(refused("the view's server has no resources"));
        };
        let arguments = json!({ "server": live.server.name(), "uri": uri });
        let turn = live.turn()?;
        let outcome = self
            .run(live, &turn, Arc::new(tool), arguments, calls)
            .await;
        if outcome.status != ToolStatus::Success {
            return Err(refused(outcome.text));
        }
        Ok(match outcome.data {
            Some(data @ Value::Object(_)) if data.get("contents").is_some() => data,
            _ => {
                json!({ "contents": [{ "uri": uri, "mimeType": "text/plain", "text": outcome.text }] })
            }
        })
    }

    /// Checks a view's `ui/download-file` before the user is asked where to save it: the file
    /// is one a view may name (`view_download::check`), and a web address's host resolves only
    /// to addresses the view may reach. A refusal is counted toward flooding and recorded in
    /// the view's turn under its call, and said in a sentence; nothing is fetched.
    pub async fn check_download(
        &self,
        view_id: &str,
        file: &ViewFile,
        calls: ViewCalls<'_>,
    ) -> Result<(), HostError> {
        let admitted = self.admit(view_id).await?;
        self.checked_download(view_id, &admitted.0, file, true, calls)
            .await
            .map(|_| ())
    }

    /// The file checked under the view's rules, or the refusal recorded.
    async fn checked_download(
        &self,
        view_id: &str,
        live: &Live,
        file: &ViewFile,
        resolve: bool,
        calls: ViewCalls<'_>,
    ) -> Result<(view_download::Checked, DownloadRules), HostError> {
        // A live call's view saves nothing before its call started.
        let turn = live.turn()?;
        let rules = DownloadRules {
            allow_private_addresses: live
                .server
                .config()
                .oauth
                .as_ref()
                .is_some_and(|oauth| oauth.allow_private_addresses),
        };
        let checked = match view_download::check(file) {
            Ok(view_download::Checked::Web(url)) if resolve => {
                view_download::reachable(&url, rules)
                    .await
                    .map(|()| view_download::Checked::Web(url))
            }
            other => other,
        };
        match checked {
            Ok(checked) => Ok((checked, rules)),
            Err(reason) => {
                self.count_refusal(view_id, live).await?;
                let arguments = json!({
                    "name": view_download::file_name(file),
                    "from": describe(&file.source),
                });
                let source = ToolSource::Mcp {
                    server: live.server.name().to_string(),
                };
                turn.refuse(
                    view_download::SAVE_TOOL,
                    arguments,
                    &reason,
                    source,
                    calls.ctx,
                )
                .await;
                Err(refused(reason))
            }
        }
    }

    /// The view's `ui/download-file`, once the user said yes on the bar and chose where in the
    /// save dialog: the file is checked again (`view_download`; a web address's hosts are
    /// checked as it is fetched), fetched or taken inline, handed to `write`, and the save is
    /// recorded in the view's turn under its call. A file the rules refuse is refused before
    /// anything is fetched, counted toward flooding and recorded as refused.
    pub async fn download(
        &self,
        view_id: &str,
        file: &ViewFile,
        path: &std::path::Path,
        write: view_download::Writer,
        calls: ViewCalls<'_>,
    ) -> Result<SavedFile, HostError> {
        let admitted = self.admit(view_id).await?;
        let live = &admitted.0;
        let name = view_download::file_name(file);
        let (checked, rules) = self
            .checked_download(view_id, live, file, false, calls)
            .await?;
        let tool = view_download::SaveTool::new(
            live.server.name().to_string(),
            checked,
            rules,
            path.display().to_string(),
            write,
        );
        let arguments = tool.arguments(&name);
        let turn = live.turn()?;
        let outcome = self
            .run(live, &turn, Arc::new(tool), arguments, calls)
            .await;
        if outcome.status != ToolStatus::Success {
            return Err(refused(outcome.text));
        }
        let bytes = outcome
            .data
            .as_ref()
            .and_then(|data| data.get("bytes"))
            .and_then(Value::as_u64)
            .unwrap_or_default();
        Ok(SavedFile {
            path: path.display().to_string(),
            bytes,
        })
    }

    async fn run(
        &self,
        live: &Live,
        turn: &ViewTurn,
        tool: Arc<dyn Tool>,
        arguments: Value,
        calls: ViewCalls<'_>,
    ) -> ViewCallOutcome {
        let allowances = self.allowances(&live.conversation_id);
        let mut allowances = allowances.lock().await;
        let config = AgentConfig::default();
        turn.call(
            tool,
            arguments,
            ViewCallScope {
                ctx: calls.ctx,
                config: &config,
                rules: calls.rules,
                approver: calls.approver,
                allowances: &mut allowances,
            },
        )
        .await
    }

    /// Closes a view: its origin stops answering and its turn ends with `reason`. Closing a
    /// view that is gone does nothing.
    pub async fn close(&self, view_id: &str, reason: ViewEnd) {
        lock(&self.prepared).remove(view_id);
        let (live, none_open) = {
            let mut open = lock(&self.live);
            let Some(live) = open.remove(view_id) else {
                return;
            };
            (live, open.is_empty())
        };
        if let Some(served) = lock(&live.served).take() {
            served.close();
        }
        if none_open {
            let then = lock(&self.none_open).clone();
            if let Some(then) = then {
                then(reason);
            }
        }
        // A live call's view closed before its call reached the record left no turn there;
        // one whose call has reached it is opened on the record now, and closed.
        if let Ok(turn) = live.turn() {
            turn.close(reason).await;
        }
    }

    /// Closes every open view (the app is closing).
    pub async fn close_all(&self) {
        let open: Vec<String> = lock(&self.live).keys().cloned().collect();
        for view_id in open {
            self.close(&view_id, ViewEnd::AppClosed).await;
        }
    }
}

impl Limits {
    /// Notes a refused request at `now`; says whether the view has now flooded.
    fn refuse(&mut self, now: Instant) -> bool {
        while self
            .refusals
            .front()
            .is_some_and(|at| now.duration_since(*at) > FLOOD_WINDOW)
        {
            self.refusals.pop_front();
        }
        self.refusals.push_back(now);
        self.refusals.len() >= FLOOD_REFUSALS
    }
}

/// A refused file's source as the record keeps it: an address cut short, inline data by size.
fn describe(source: &ViewFileSource) -> Value {
    match source {
        ViewFileSource::Url { url } if url.len() <= MAX_URI_BYTES && !url.starts_with("data:") => {
            json!(url)
        }
        ViewFileSource::Url { url } => json!(format!("an address of {} bytes", url.len())),
        ViewFileSource::Text { text } => json!(format!("{} bytes of text", text.len())),
        ViewFileSource::Blob { blob } => json!(format!("{} bytes of base64", blob.len())),
    }
}

/// The length of `value` as JSON.
fn json_size(value: &Value) -> usize {
    serde_json::to_string(value).map_or(usize::MAX, |text| text.len())
}

/// A name as the record keeps it: cut, marked so, when it is too long to be a tool's.
fn short_name(name: &str) -> String {
    if name.len() <= MAX_NAME_BYTES {
        return name.to_string();
    }
    let mut end = MAX_NAME_BYTES;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &name[..end])
}

/// A refused call's arguments as the record keeps them: whole when small, else their size.
fn small_arguments(arguments: Value, size: usize) -> Value {
    if size <= MAX_REFUSED_ARGUMENT_BYTES {
        arguments
    } else {
        json!({ "not_kept": format!("{size} bytes of arguments") })
    }
}

/// Frees the view's place among its requests in flight when the request ends.
struct Admitted(Arc<Live>);

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut limits = lock(&self.0.limits);
        limits.in_flight = limits.in_flight.saturating_sub(1);
    }
}

/// What a view's calls run with: the folder's context, its standing rules and who approves.
#[derive(Clone, Copy)]
pub struct ViewCalls<'a> {
    pub ctx: &'a ToolContext,
    pub rules: Option<&'a dyn RuleBook>,
    pub approver: &'a dyn Approver,
}

/// The call whose view is asked for: on the record, or live and not yet there.
struct Found {
    tool: String,
    /// Its server, when the record names it (a live call's is found by the tool's name).
    server: Option<String>,
    /// The view's link; a live call whose deltas are gone from the record (its message came)
    /// finds it among its server's tools.
    view: Option<ViewLink>,
    input: Value,
    outcome: ViewOutcome,
}

impl Found {
    fn from_record(record: ToolCallRecord) -> Result<Self, HostError> {
        let Some(view) = record.row.view.clone() else {
            return Err(refused(format!(
                "the call of {} has no view",
                record.row.tool
            )));
        };
        let ToolSource::Mcp { server } = &record.row.source else {
            return Err(refused("only an MCP server's tool has a view"));
        };
        Ok(Self {
            server: Some(server.clone()),
            view: Some(view),
            input: record.row.arguments.clone(),
            outcome: outcome_of(&record),
            tool: record.row.tool,
        })
    }

    /// A call of a turn still running, whose start is not on the record yet: the model is
    /// writing its arguments (its deltas name the view) or the call waits (the model's message
    /// holds it whole). Its view opens with what there is; the rest reaches it as it comes.
    fn live(
        store: &Store,
        conversation_id: &str,
        turn_id: &str,
        call_id: &str,
    ) -> Result<Self, HostError> {
        let missing = || refused("the record has no such call in this conversation");
        let events = store.turn_events(turn_id).map_err(|_| missing())?;
        let mut tool = None;
        let mut view = None;
        let mut input = json!({});
        for event in events
            .iter()
            .filter(|event| event.conversation_id == conversation_id)
        {
            match &event.body {
                EventBody::ToolCallDelta {
                    call_id: id,
                    tool: named,
                    view: link,
                    ..
                } if id == call_id => {
                    tool = tool.or(named.clone());
                    view = view.or(link.clone());
                }
                EventBody::MessageAdded {
                    message: tooltrail_protocol::Message::Assistant { tool_calls, .. },
                } => {
                    if let Some(call) = tool_calls.iter().find(|call| call.id == call_id) {
                        tool = Some(call.name.clone());
                        input = serde_json::from_str(&call.arguments).unwrap_or(json!({}));
                    }
                }
                _ => {}
            }
        }
        let Some(tool) = tool else {
            return Err(missing());
        };
        Ok(Self {
            tool,
            server: None,
            view,
            input,
            outcome: ViewOutcome::Pending,
        })
    }
}

/// How the recorded call ended, as its view is told.
fn outcome_of(record: &ToolCallRecord) -> ViewOutcome {
    let status = match record.row.status {
        CallStatus::Running => return ViewOutcome::Pending,
        CallStatus::Success => ToolStatus::Success,
        CallStatus::Error => ToolStatus::Error,
        CallStatus::Denied | CallStatus::Cancelled | CallStatus::Timeout => {
            return ViewOutcome::Cancelled {
                reason: record
                    .row
                    .error
                    .as_ref()
                    .map(|error| error.message.clone())
                    .unwrap_or_else(|| "the call did not run".to_string()),
            };
        }
    };
    let text = match &record.row.error {
        Some(error) => error.message.clone(),
        None => record.result.clone(),
    };
    ViewOutcome::Result {
        result: call_tool_result(status, &text, record.data.as_ref()),
    }
}

/// The view of `tool` (as the record names it, `server__tool`) as `server` lists it.
fn listed_view(server: &McpServer, tool: &str) -> Option<ViewLink> {
    let name = tool.strip_prefix(&format!("{}__", server.name()))?;
    server
        .known_tools()
        .unwrap_or_default()
        .into_iter()
        .find(|listed| listed.name.as_ref() == name)
        .and_then(|listed| tooltrail_mcp::ui_of(&listed).resource_uri)
        .map(|resource_uri| ViewLink { resource_uri })
}

/// The tool `tool` (as the record names it) as `server` lists it: the one with that view whose
/// name the record's ends with. Empty when the server no longer lists it.
fn tool_info(server: &McpServer, tool: &str, resource_uri: &str) -> Value {
    server
        .known_tools()
        .unwrap_or_default()
        .into_iter()
        .filter(|listed| tooltrail_mcp::ui_of(listed).resource_uri.as_deref() == Some(resource_uri))
        .find(|listed| tool.ends_with(listed.name.as_ref()))
        .and_then(|listed| serde_json::to_value(listed).ok())
        .unwrap_or_else(|| json!({ "name": tool, "inputSchema": { "type": "object" } }))
}
