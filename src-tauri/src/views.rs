//! The window's commands for MCP App views (see `tooltrail_host::views`). The view itself runs
//! in a frame served from a loopback origin of its own: it never reaches these commands. The
//! window's bridge hears the view's messages and asks here on its behalf, so every call a view
//! makes passes the same approval as the model's and lands on the record.
//!
//! What views keep in the engine (storage, cookies, caches) is cleared at the start, before any
//! view, and each time the last open view closes ([`forget_view_data`]); a view waits for a
//! clearing under way before it is served ([`ViewData`]).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager};
use tauri_plugin_dialog::DialogExt;
use tooltrail_host::Host;
use tooltrail_host::view_download::{SavedFile, ViewFile};
use tooltrail_host::views::{ViewCalls, ViewPlan, ViewStart};
use tooltrail_protocol::{Event, ViewEnd};

use crate::approvals::WindowApprover;
use crate::error::{CommandError, CommandResult};
use crate::questions::WindowAsker;
use crate::turn::WindowSink;
use crate::workspace::WorkspaceState;

/// Reads the view of call `call_id` (of turn `turn_id`) and says what it asks for; nothing is
/// served until `start_view`.
#[tauri::command]
pub async fn prepare_view(
    app: AppHandle,
    conversation_id: String,
    turn_id: String,
    call_id: String,
) -> CommandResult<ViewPlan> {
    let (_, info) = app.state::<WorkspaceState>().context()?;
    let host = app.state::<Host>();
    let root = std::path::PathBuf::from(&info.path);
    let mut servers = host.toolbox().mcp_servers(&root).await;
    if servers.is_empty() {
        // The folder's servers start with its first question; a reopened conversation may
        // come before that.
        host.warm_up(&root).await;
        servers = host.toolbox().mcp_servers(&root).await;
    }
    Ok(host
        .views()
        .prepare(host.store(), &servers, &conversation_id, &turn_id, &call_id)
        .await?)
}

/// Serves a prepared view with the permissions the user granted; its turn's events come on
/// `on_event`, committed first.
#[tauri::command]
pub async fn start_view(
    app: AppHandle,
    view_id: String,
    granted: Vec<String>,
    on_event: Channel<Event>,
) -> CommandResult<ViewStart> {
    app.state::<ViewData>().cleared().await;
    let host = app.state::<Host>();
    let sink = Arc::new(host.sink(Box::new(WindowSink { channel: on_event })));
    Ok(host.views().start(&view_id, &granted, sink).await?)
}

/// How long a view waits for a clearing under way before it is served anyway (its page's
/// `Clear-Site-Data` still clears its own origin, and its port is one no view used in this run).
const CLEARING_WAIT: Duration = Duration::from_secs(5);

/// Whether what views kept in the engine has been cleared: not until the clearing at the start
/// has run, and not while a clearing is under way.
pub struct ViewData {
    cleared: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Default for ViewData {
    fn default() -> Self {
        Self {
            cleared: Arc::new(tokio::sync::watch::Sender::new(false)),
        }
    }
}

impl ViewData {
    async fn cleared(&self) {
        let mut cleared = self.cleared.subscribe();
        let _ = tokio::time::timeout(CLEARING_WAIT, cleared.wait_for(|done| *done)).await;
    }
}

/// Clears what views kept in the engine: every record of website data filed under a loopback
/// host ([`tooltrail_host::views::is_view_site`]), never the app's own. The engine files its
/// data by host, every port together, so this runs only when no view is open: at the start,
/// for what an earlier run left (it may have ended with views open), and when the last open
/// view closes (wired in `lib.rs` through `Views::when_none_open`).
pub fn forget_view_data(app: &AppHandle) {
    let cleared = Arc::clone(&app.state::<ViewData>().cleared);
    cleared.send_replace(false);
    let done = move || {
        cleared.send_replace(true);
    };
    let Some(window) = app.get_webview_window("main") else {
        return done();
    };
    #[cfg(target_os = "linux")]
    {
        let in_engine = done.clone();
        if let Err(error) =
            window.with_webview(move |webview| forget_in_webkit(&webview.inner(), in_engine))
        {
            eprintln!("tooltrail: the views' website data could not be cleared: {error}");
            done();
        }
    }
    // macOS (WKWebsiteDataStore: fetchDataRecordsOfTypes, then removeDataOfTypes:forDataRecords:
    // for the records whose displayName is a view's) and Windows (WebView2: the DevTools
    // protocol's Storage.clearDataForOrigin for each view's origin, as ClearBrowsingData has
    // no origin filter) need objc2-web-kit and webview2-com named as dependencies; until then
    // a view's page clears its origin with Clear-Site-Data and no port serves two views in a run.
    #[cfg(not(target_os = "linux"))]
    {
        let _ = window;
        done();
    }
}

/// WebKitGTK: fetches the website data records, removes those of the views' loopback host,
/// then calls `done`. Runs on the main thread, where the engine answers.
#[cfg(target_os = "linux")]
fn forget_in_webkit(webview: &webkit2gtk::WebView, done: impl Fn() + Send + 'static) {
    use webkit2gtk::{
        WebViewExt as _, WebsiteData, WebsiteDataManagerExt as _, WebsiteDataManagerExtManual as _,
        WebsiteDataTypes, gio,
    };
    let Some(manager) = webview.website_data_manager() else {
        return done();
    };
    let remover = manager.clone();
    manager.fetch(
        WebsiteDataTypes::ALL,
        None::<&gio::Cancellable>,
        move |records| {
            let records = match records {
                Ok(records) => records,
                Err(error) => {
                    eprintln!("tooltrail: the views' website data could not be listed: {error}");
                    return done();
                }
            };
            let views: Vec<&WebsiteData> = records
                .iter()
                .filter(|record| {
                    record
                        .name()
                        .is_some_and(|name| tooltrail_host::views::is_view_site(&name))
                })
                .collect();
            if views.is_empty() {
                return done();
            }
            remover.remove(
                WebsiteDataTypes::ALL,
                &views,
                None::<&gio::Cancellable>,
                move |removed| {
                    if let Err(error) = removed {
                        eprintln!(
                            "tooltrail: the views' website data could not be cleared: {error}"
                        );
                    }
                    done();
                },
            );
        },
    );
}

/// Runs the approval and the call for a view's request, in the open folder.
async fn with_calls<T>(
    app: &AppHandle,
    run: impl AsyncFnOnce(ViewCalls<'_>) -> Result<T, tooltrail_host::HostError>,
) -> CommandResult<T> {
    let (ctx, info) = app.state::<WorkspaceState>().context()?;
    let ctx = ctx.with_user(Arc::new(WindowAsker { app: app.clone() }));
    let host = app.state::<Host>();
    let rules = Arc::new(tooltrail_host::WorkspaceRules::load(
        Arc::clone(host.store()),
        &info.path,
    ));
    let approver = WindowApprover {
        app: app.clone(),
        rules: Arc::clone(&rules),
    };
    let calls = ViewCalls {
        ctx: &ctx,
        rules: Some(rules.as_ref()),
        approver: &approver,
    };
    Ok(run(calls).await?)
}

/// A view's `tools/call`: the server's `CallToolResult`, or an error result saying why the
/// call was refused.
#[tauri::command]
pub async fn view_call_tool(
    app: AppHandle,
    view_id: String,
    name: String,
    arguments: Option<Value>,
) -> CommandResult<Value> {
    let arguments = arguments.unwrap_or_else(|| Value::Object(Default::default()));
    let host = app.state::<Host>();
    with_calls(&app, async |calls| {
        host.views()
            .call_tool(&view_id, &name, arguments, calls)
            .await
    })
    .await
}

/// A view's `resources/read`, of its own server's resources.
#[tauri::command]
pub async fn view_read_resource(
    app: AppHandle,
    view_id: String,
    uri: String,
) -> CommandResult<Value> {
    let host = app.state::<Host>();
    with_calls(&app, async |calls| {
        host.views().read_resource(&view_id, &uri, calls).await
    })
    .await
}

/// Closes a view: its origin stops answering and its turn ends on the record.
#[tauri::command]
pub async fn close_view(app: AppHandle, view_id: String, reason: ViewEnd) -> CommandResult<()> {
    app.state::<Host>().views().close(&view_id, reason).await;
    Ok(())
}

/// Opens a web page a view linked to, once the user said yes on Tooltrail's own bar: only
/// http and https, only for a view that is open, never an address that carries a user name or
/// password, and as the bar showed it (its host in ASCII, as it will be looked up).
#[tauri::command]
pub async fn open_view_link(app: AppHandle, view_id: String, url: String) -> CommandResult<()> {
    app.state::<Host>().views().ensure_open(&view_id)?;
    crate::server_requests::open_in_browser(&link_to_open(&url)?)
}

/// Saves a file a view asked to download (`ui/download-file`), once the user said yes on
/// Tooltrail's bar: where the user chooses in the native save dialog (`path` stands for the
/// dialog's answer, as in the exports), fetched or taken inline under the host's rules
/// ([`tooltrail_host::view_download`]), written whole or not at all, and recorded under the
/// view's call. `None` when the user closed the dialog: nothing is fetched or written.
#[tauri::command]
pub async fn save_view_file(
    app: AppHandle,
    view_id: String,
    file: ViewFile,
    path: Option<String>,
) -> CommandResult<Option<SavedFile>> {
    let host = app.state::<Host>();
    host.views().ensure_open(&view_id)?;
    // Refused before the dialog: a file the rules do not take (an address that is not the
    // web's, a host on this computer or the private network) is not asked about; the host
    // records the refusal.
    with_calls(&app, async |calls| {
        host.views().check_download(&view_id, &file, calls).await
    })
    .await?;
    let name = tooltrail_host::view_download::file_name(&file);
    let Some(path) = crate::dialog::given_or_picked(
        path,
        |reply| {
            app.dialog()
                .file()
                .set_title("Save the view's file")
                .set_file_name(&name)
                .save_file(reply);
        },
        CommandError::new("view", "That file cannot be written."),
    )
    .await?
    else {
        return Ok(None);
    };
    let target = path.clone();
    let write: tooltrail_host::view_download::Writer =
        Box::new(move |bytes| tooltrail_atomic_write::write_atomically(&target, bytes));
    with_calls(&app, async |calls| {
        host.views()
            .download(&view_id, &file, &path, write, calls)
            .await
    })
    .await
    .map(Some)
}

/// The address a view's link opens, or why it is refused. `user:pass@` in front of a host is
/// how a link passes for another site (`https://bank.example@evil.example/`), so it is refused
/// here, where it counts, whatever the window showed.
fn link_to_open(raw: &str) -> CommandResult<String> {
    let refuse = |message: &str| CommandError::new("link_refused", message);
    let url = tauri::Url::parse(raw.trim())
        .map_err(|_| refuse("The view's link is not a web address, so it was not opened."))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refuse(
            "Only web pages (http and https addresses) are opened.",
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse(
            "The view's link carries a user name or password before its host, which can disguise the site it opens, so it was not opened.",
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(refuse(
            "The view's link names no host, so it was not opened.",
        ));
    }
    Ok(url.to_string())
}

/// The window's navigation handler, asked by the engine before any page or frame loads
/// (WebKitGTK's `decide-policy` for navigation actions, main frame and frames alike, and
/// WKWebView's navigation delegate): a frame may load only an address the host issued for an
/// open view ([`tooltrail_host::views::Views::admits_navigation`]), so a view cannot send its
/// frame to another local service or out by URL; the request never leaves.
pub fn navigation_guard<R: tauri::Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri::plugin::Builder::new("view-navigation")
        .on_navigation(|webview, url| {
            let app = webview.app_handle();
            // `tauri dev` serves the window from its development server.
            let dev = app
                .config()
                .build
                .dev_url
                .as_ref()
                .is_some_and(|dev| dev.origin() == url.origin());
            dev || app
                .try_state::<Host>()
                .is_some_and(|host| host.views().admits_navigation(url.as_str()))
        })
        .build()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    fn json(path: &str) -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    }

    /// A view is a page from `http://127.0.0.1:PORT`: a capability with `remote` URLs would let
    /// such a page call the app's commands. None has any.
    #[test]
    fn attack_views_no_capability_reaches_a_remote_origin() {
        let folder =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src-tauri/capabilities");
        let mut seen = 0;
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|ext| ext.to_str()) != Some("json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let capability: Value = serde_json::from_str(&text).unwrap();
            assert!(
                capability.get("remote").is_none(),
                "{} lets remote pages call commands",
                path.display()
            );
            seen += 1;
        }
        assert!(seen > 0, "no capability files in {}", folder.display());
    }

    /// A view's link opens only as a plain web address: a user name or password before the host
    /// (which makes `https://bank.example@evil.example/` read as the bank) is refused, whatever
    /// the window showed; the host opens in its ASCII form.
    #[test]
    fn attack_views_a_link_with_a_user_name_or_password_is_refused() {
        for raw in [
            "https://bank.example@evil.example/",
            "https://user:pass@evil.example/",
            "http://:secret@evil.example/",
            "javascript:alert(1)",
            "file:///etc/passwd",
            "not a link",
        ] {
            let error = super::link_to_open(raw).unwrap_err();
            assert_eq!(error.code, "link_refused", "{raw}");
        }
        assert_eq!(
            super::link_to_open("https://bücher.example/a?b=1").unwrap(),
            "https://xn--bcher-kva.example/a?b=1"
        );
        assert_eq!(
            super::link_to_open("https://modelcontextprotocol.io/").unwrap(),
            "https://modelcontextprotocol.io/"
        );
    }

    /// The window may frame pages from loopback HTTP alone (the views' origins), and nothing may
    /// frame the window.
    #[test]
    fn attack_views_the_app_csp_frames_only_loopback_http() {
        let config = json("tauri.conf.json");
        let csp = &config["app"]["security"]["csp"];
        assert_eq!(csp["frame-src"], "http://127.0.0.1:*");
        assert_eq!(csp["frame-ancestors"], "'none'");
        assert_eq!(csp["default-src"], "'self'");
        assert_eq!(csp["connect-src"], "ipc: http://ipc.localhost");
    }
}
