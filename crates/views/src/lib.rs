//! MCP Apps: a server's interactive view, served to the window from an origin of its own.
//!
//! A view is HTML from an MCP server (a `ui://` resource of type `text/html;profile=mcp-app`).
//! It is code from outside, so it never runs in the app's origin, where Tauri's IPC is: each
//! view gets a loopback HTTP server and port of its own ([`ViewServer`]), which serves its page
//! once, with the Content Security Policy built from what the server declared and a
//! Permissions Policy that grants only what the user allowed, as HTTP headers ([`csp`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), tooltrail_views::ViewError> {
//! use tooltrail_views::{ViewPage, ViewServer};
//!
//! let server = ViewServer::new(vec!["tauri://localhost".to_string()]);
//! let view = server
//!     .open(ViewPage { html: "<p>hello</p>".to_string(), csp: None, granted: Vec::new() })
//!     .await?;
//! println!("frame src: {}", view.url);
//! # Ok(())
//! # }
//! ```

pub mod csp;
mod server;

pub use csp::{Feature, Policy, ViewCsp};
pub use server::{
    CLEAR_SITE_DATA, MAX_BIND_ATTEMPTS, MAX_PAGE_BYTES, OpenView, ViewError, ViewPage, ViewServer,
    is_view_site,
};
