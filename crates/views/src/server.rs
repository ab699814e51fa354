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

use std::net::{Ipv4Addr, SocketAddr};
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
}

/// Opens views. `frame_ancestors` are the app's own origins, the only pages that may frame one.
#[derive(Debug, Clone)]
pub struct ViewServer {
    frame_ancestors: Vec<String>,
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
        Self { frame_ancestors }
    }

    /// Serves `page` from a loopback port of its own.
    pub async fn open(&self, page: ViewPage) -> Result<OpenView, ViewError> {
        if page.html.len() > MAX_PAGE_BYTES {
            return Err(ViewError::TooLarge {
                size: page.html.len(),
            });
        }
        let listener = tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .await
            .map_err(ViewError::Bind)?;
        let address = listener.local_addr().map_err(ViewError::Bind)?;
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
