//! One loopback HTTP server per view: its own port, so its own origin, apart from the app's
//! (`tauri://localhost`) and from every other view, whose storage and cookies it cannot reach.
//!
//! It answers one request: `GET /<token>/`, where the token is 32 random bytes, once; then the
//! page is gone (410). Any other path is 404, any other method 405, and a `Host` header that
//! is not the server's own address 421, so that a page elsewhere cannot reach it through a name
//! that resolves to loopback (DNS rebinding). The page comes with its Content Security Policy
//! and Permissions Policy as headers, where the HTML it carries cannot change them, and with
//! `Clear-Site-Data`, so that a view served later on a port an earlier one used starts with
//! nothing of the earlier one's storage.
//!
//! Within one run a port serves one view only: the server remembers every port it has served
//! from, and a port the OS hands back again is let go and another asked for. So a later view
//! never shares an origin (and its storage) with an earlier one while the app runs; what views
//! of an earlier run left at a port is for the app to clear, by [`is_view_site`].

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore as _;
use tokio::sync::oneshot;

use crate::csp::{Feature, ViewCsp, content_security_policy, permissions_policy};

/// What a view's page clears of its origin before it runs.
pub const CLEAR_SITE_DATA: &str = "\"cache\", \"cookies\", \"storage\"";

/// The most a view's page may weigh.
pub const MAX_PAGE_BYTES: usize = 5 * 1024 * 1024;

/// How many times a view asks the OS for a port before giving up, when each one it gets was
/// already a view's. The OS hands a recent port back rarely; this many in a row means the
/// loopback ports are running out.
pub const MAX_BIND_ATTEMPTS: usize = 32;

/// What a view is: its HTML, and what its server declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewPage {
    pub html: String,
    /// `_meta.ui.csp`; `None` gets the specification's strict default.
    pub csp: Option<ViewCsp>,
    /// Features declared in `_meta.ui.permissions` that the user allowed.
    pub granted: Vec<Feature>,
}

#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("the view's page is {size} bytes, more than the {MAX_PAGE_BYTES} a view may have")]
    TooLarge { size: usize },
    #[error("no loopback port could be opened for the view ({0})")]
    Bind(#[source] std::io::Error),
    #[error(
        "no loopback port that no earlier view used could be opened for the view: the system handed back a used one {MAX_BIND_ATTEMPTS} times in a row"
    )]
    NoFreshPort,
}

/// Opens views. `frame_ancestors` are the app's own origins, the only pages that may frame one.
/// Clones share the ports served from.
#[derive(Debug, Clone)]
pub struct ViewServer {
    frame_ancestors: Vec<String>,
    /// Every port a view has been served from in this run, never to serve another.
    used_ports: Arc<Mutex<HashSet<u16>>>,
}

/// Whether the engine's website data named `site` may be a view's: data kept for a loopback
/// address (`127.0.0.1`, any of `127.0.0.0/8`, `::1`), where views are served. WebKit names its
/// data records by host, ports together, so this is every view's data at once. `localhost` is
/// not one: no view is served under that name (a view's requests must name its address), and
/// the app's own pages are at `tauri://localhost`, whose data the window keeps.
pub fn is_view_site(site: &str) -> bool {
    let host = site
        .strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
        .unwrap_or(site);
    host.parse::<IpAddr>()
        .is_ok_and(|address| address.is_loopback())
}

/// A view being served. Dropping it (or [`OpenView::close`]) stops its server.
#[derive(Debug)]
pub struct OpenView {
    /// The address to load in the frame.
    pub url: String,
    /// The view's origin (`http://127.0.0.1:PORT`), which its messages must come from.
    pub origin: String,
    /// The Content-Security-Policy header the page is served with.
    pub csp: String,
    /// Declared CSP entries left out of the policy, as declared.
    pub refused_domains: Vec<String>,
    /// The declared origins a frame inside the view may load (its `frame-src`).
    pub frame_origins: Vec<String>,
    stop: Option<oneshot::Sender<()>>,
}

impl OpenView {
    pub fn close(mut self) {
        self.stop_serving();
    }

    fn stop_serving(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for OpenView {
    fn drop(&mut self) {
        self.stop_serving();
    }
}

/// The one page a server answers with, and what it must be asked with.
struct Served {
    path: String,
    host: String,
    page: Mutex<Option<Response>>,
}

impl ViewServer {
    pub fn new(frame_ancestors: Vec<String>) -> Self {
        Self {
            frame_ancestors,
            used_ports: Arc::default(),
        }
    }

    /// Serves `page` from a loopback port of its own, one no view was served from before.
    pub async fn open(&self, page: ViewPage) -> Result<OpenView, ViewError> {
        self.open_with(page, async || {
            tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await
        })
        .await
    }

    /// [`ViewServer::open`], with the ports asked of `bind`.
    async fn open_with(
        &self,
        page: ViewPage,
        bind: impl AsyncFnMut() -> std::io::Result<tokio::net::TcpListener>,
    ) -> Result<OpenView, ViewError> {
        if page.html.len() > MAX_PAGE_BYTES {
            return Err(ViewError::TooLarge {
                size: page.html.len(),
            });
        }
        let (listener, address) = self.fresh_port(bind).await?;
        let mut token = [0u8; 32];
        rand::rng().fill_bytes(&mut token);
        let token = URL_SAFE_NO_PAD.encode(token);
        let origin = format!("http://{address}");
        let policy = content_security_policy(page.csp.as_ref(), &self.frame_ancestors);
        let csp = policy.header.clone();
        let response = page_response(
            page.html,
            &policy.header,
            &permissions_policy(&page.granted),
        );
        let served = Arc::new(Served {
            path: format!("/{token}/"),
            host: address.to_string(),
            page: Mutex::new(Some(response)),
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let app = axum::Router::new().fallback(answer).with_state(served);
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(OpenView {
            url: format!("{origin}/{token}/"),
            origin,
            csp,
            refused_domains: policy.refused,
            frame_origins: policy.frame_origins,
            stop: Some(stop),
        })
    }
}

impl ViewServer {
    /// A listener on a port no view was served from in this run, taken for this one. A port
    /// already used is let go (the listener dropped) and another asked for, at most
    /// [`MAX_BIND_ATTEMPTS`] times.
    async fn fresh_port(
        &self,
        mut bind: impl AsyncFnMut() -> std::io::Result<tokio::net::TcpListener>,
    ) -> Result<(tokio::net::TcpListener, SocketAddr), ViewError> {
        for _ in 0..MAX_BIND_ATTEMPTS {
            let listener = bind().await.map_err(ViewError::Bind)?;
            let address = listener.local_addr().map_err(ViewError::Bind)?;
            let fresh = self
                .used_ports
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(address.port());
            if fresh {
                return Ok((listener, address));
            }
        }
        Err(ViewError::NoFreshPort)
    }
}

async fn answer(State(served): State<Arc<Served>>, request: Request) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|host| host.to_str().ok());
    if host != Some(served.host.as_str()) {
        return status(StatusCode::MISDIRECTED_REQUEST);
    }
    if request.method() != Method::GET {
        return status(StatusCode::METHOD_NOT_ALLOWED);
    }
    if request.uri().path() != served.path || request.uri().query().is_some() {
        return status(StatusCode::NOT_FOUND);
    }
    // A browser says what the request is for; a view is only ever loaded in a frame.
    if request
        .headers()
        .get("sec-fetch-dest")
        .is_some_and(|dest| dest != "iframe")
    {
        return status(StatusCode::FORBIDDEN);
    }
    let page = served
        .page
        .lock()
        .map(|mut page| page.take())
        .unwrap_or(None);
    page.unwrap_or_else(|| status(StatusCode::GONE))
}

fn page_response(html: String, csp: &str, permissions: &str) -> Response {
    let mut response = Response::new(Body::from(html));
    let headers: &mut HeaderMap = response.headers_mut();
    let mut set = |name: header::HeaderName, value: &str| {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    };
    set(header::CONTENT_TYPE, "text/html; charset=utf-8");
    set(header::CONTENT_SECURITY_POLICY, csp);
    set(
        header::HeaderName::from_static("permissions-policy"),
        permissions,
    );
    set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(header::REFERRER_POLICY, "no-referrer");
    set(header::CACHE_CONTROL, "no-store");
    // Ports are reused: whatever an earlier view left at this origin (its storage, cookies,
    // cache) is cleared before this view's page runs. Browsers honour it on loopback, a
    // potentially trustworthy origin; WebKit has since 2.40 (cache, cookies and storage).
    set(
        header::HeaderName::from_static("clear-site-data"),
        CLEAR_SITE_DATA,
    );
    set(
        header::HeaderName::from_static("cross-origin-resource-policy"),
        "same-origin",
    );
    response
}

fn status(code: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = code;
    response
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn page() -> ViewPage {
        ViewPage {
            html: "<p>view</p>".to_string(),
            csp: None,
            granted: Vec::new(),
        }
    }

    fn port_of(view: &OpenView) -> u16 {
        view.origin.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Binds `port` on loopback, waiting for a closed view's server to let it go.
    async fn bind_again(port: u16) -> tokio::net::TcpListener {
        for _ in 0..100 {
            if let Ok(listener) =
                tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await
            {
                return listener;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("port {port} was not let go");
    }

    /// The OS hands a closed view's port to the next view (here, as it may any time): the
    /// server lets it go and serves the later view from another port, so the later view never
    /// shares the earlier one's origin, nor what it kept there.
    #[tokio::test]
    async fn attack_views_a_port_handed_back_is_never_served_again() {
        let server = ViewServer::new(vec!["tauri://localhost".to_string()]);
        let earlier = server.open(page()).await.unwrap();
        let used = port_of(&earlier);
        earlier.close();
        let mut asked = 0;
        let later = server
            .open_with(page(), async || {
                asked += 1;
                if asked == 1 {
                    Ok(bind_again(used).await)
                } else {
                    tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await
                }
            })
            .await
            .unwrap();
        assert_ne!(port_of(&later), used);
        assert_eq!(asked, 2, "the used port was let go and another asked for");
    }

    /// A system that keeps handing back a used port gets a sentence, not a view at an old
    /// origin; the ports asked for are tried a bounded number of times.
    #[tokio::test]
    async fn attack_views_no_view_is_served_when_only_used_ports_come_back() {
        let server = ViewServer::new(vec!["tauri://localhost".to_string()]);
        let earlier = server.open(page()).await.unwrap();
        let used = port_of(&earlier);
        earlier.close();
        let mut asked = 0;
        let error = server
            .open_with(page(), async || {
                asked += 1;
                Ok(bind_again(used).await)
            })
            .await
            .unwrap_err();
        assert!(matches!(error, ViewError::NoFreshPort), "{error:?}");
        assert_eq!(asked, MAX_BIND_ATTEMPTS);
        assert!(
            error
                .to_string()
                .starts_with("no loopback port that no earlier view used")
        );
    }

    /// The engine's data records that are views': loopback addresses, never the app's own
    /// (`localhost`, where `tauri://localhost` is) nor another site.
    #[test]
    fn attack_views_only_loopback_addresses_name_a_views_data() {
        for site in ["127.0.0.1", "127.0.0.2", "::1", "[::1]"] {
            assert!(is_view_site(site), "{site}");
        }
        for site in [
            "localhost",
            "tauri.localhost",
            "",
            "Local files",
            "example.com",
            "127.0.0.1.example.com",
            "10.0.0.1",
            "::2",
            "[::1",
            "0.0.0.0",
        ] {
            assert!(!is_view_site(site), "{site}");
        }
    }
}
