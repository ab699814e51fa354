//! Where a request comes from: its `Host` and its `Origin`, checked before the token.
//!
//! The token already keeps out other users and other web pages, which cannot read it. These
//! checks are defence in depth, as the MCP specification asks of servers on localhost:
//!
//! - **`Host`** must name the address served. A web page on a name the attacker controls can
//!   re-point that name at 127.0.0.1 (DNS rebinding) and so reach the server as the same
//!   origin; its requests still carry the attacker's name in `Host`, and are refused. The
//!   server is reached by address (`127.0.0.1`, `[::1]`, or the address it listens on) or as
//!   `localhost`; on an address of every interface (`0.0.0.0`, `::`), by any address.
//! - **`Origin`**, which browsers send with a page's requests, must be one given with
//!   `--allow-origin`; none is by default. Clients that are not browsers send none. An allowed
//!   origin also gets the CORS answer a browser asks before it sends the token.

use std::net::{IpAddr, SocketAddr};

use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// The origins browsers may send requests from, and the address served.
#[derive(Debug, Clone)]
pub struct Origins {
    served: SocketAddr,
    allowed: Vec<String>,
}

/// What the checks say of one request.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not from a browser, or from an allowed origin: on to the token.
    Pass {
        cors: Option<HeaderValue>,
    },
    /// A browser's preflight from an allowed origin: answered here, without the token (a
    /// preflight never carries it).
    Preflight(HeaderValue),
    Refuse(ApiError),
}

impl Origins {
    /// `allowed` as given with `--allow-origin` (`http://localhost:3000`); a trailing slash is
    /// ignored and the comparison is by scheme, host and port, as browsers send them.
    pub fn new(served: SocketAddr, allowed: &[String]) -> Self {
        Self {
            served,
            allowed: allowed
                .iter()
                .map(|origin| origin.trim().trim_end_matches('/').to_ascii_lowercase())
                .filter(|origin| !origin.is_empty())
                .collect(),
        }
    }

    pub fn check(&self, method: &Method, host: Option<&str>, headers: &HeaderMap) -> Verdict {
        let Some(host) = host else {
            return Verdict::Refuse(refusal(
                "host_not_allowed",
                "The request names no host; it is refused, since this server answers only requests sent to the address it listens on.".to_string(),
            ));
        };
        if !self.host_allowed(host) {
            return Verdict::Refuse(refusal(
                "host_not_allowed",
                format!(
                    "The request was sent to \"{host}\", which is not the address this server listens on ({}); it is refused, since a web page can point a name of its own at this computer. Use http://{} instead.",
                    self.served, self.served
                ),
            ));
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Verdict::Pass { cors: None };
        };
        let text = origin.to_str().unwrap_or_default().to_ascii_lowercase();
        if !self.allowed.contains(&text) {
            return Verdict::Refuse(refusal(
                "origin_not_allowed",
                format!(
                    "Requests from the web page at \"{}\" are refused. To let a page of yours use this server, start it with --allow-origin {}.",
                    origin.to_str().unwrap_or("?"),
                    origin.to_str().unwrap_or("ORIGIN")
                ),
            ));
        }
        if method == Method::OPTIONS && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
        {
            return Verdict::Preflight(origin.clone());
        }
        Verdict::Pass {
            cors: Some(origin.clone()),
        }
    }

    fn host_allowed(&self, host: &str) -> bool {
        let Some((name, port)) = split_host(host) else {
            return false;
        };
        // Without a port, the client meant HTTP's default one.
        if port.unwrap_or(80) != self.served.port() {
            return false;
        }
        let served = self.served.ip();
        if name.eq_ignore_ascii_case("localhost") {
            return served.is_loopback() || served.is_unspecified();
        }
        let Ok(ip) = name.parse::<IpAddr>() else {
            return false;
        };
        if served.is_unspecified() {
            return true;
        }
        ip == served || (served.is_loopback() && ip.is_loopback())
    }
}

/// `name` and `port` of a `Host` header: `127.0.0.1:8080`, `[::1]:8080`, `localhost`.
fn split_host(host: &str) -> Option<(&str, Option<u16>)> {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(port) => Some((name, Some(port.parse().ok()?))),
            None if after.is_empty() => Some((name, None)),
            None => None,
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) => Some((name, Some(port.parse().ok()?))),
        None => Some((host, None)),
    }
}

fn refusal(code: &str, message: String) -> ApiError {
    ApiError::forbidden(code, message)
}

/// The answer to an allowed origin's preflight.
pub fn preflight(origin: HeaderValue) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("authorization, content-type, traceparent"),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static("600"),
    );
    headers.insert(header::VARY, HeaderValue::from_static("Origin"));
    response
}

/// Lets an allowed origin's page read the answer.
pub fn allow(response: &mut Response, origin: HeaderValue) {
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(header::VARY, HeaderValue::from_static("Origin"));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn headers(origin: Option<&str>) -> HeaderMap {
        let mut map = HeaderMap::new();
        if let Some(origin) = origin {
            map.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        map
    }

    fn passes(origins: &Origins, host: &str) -> bool {
        matches!(
            origins.check(&Method::POST, Some(host), &headers(None)),
            Verdict::Pass { .. }
        )
    }

    #[test]
    fn loopback_is_reached_by_its_address_or_localhost_on_its_port() {
        let origins = Origins::new("127.0.0.1:8080".parse().unwrap(), &[]);
        assert!(passes(&origins, "127.0.0.1:8080"));
        assert!(passes(&origins, "localhost:8080"));
        assert!(passes(&origins, "LOCALHOST:8080"));
        assert!(passes(&origins, "[::1]:8080"));
        assert!(!passes(&origins, "127.0.0.1:9090"));
        assert!(!passes(&origins, "127.0.0.1"));
        assert!(!passes(&origins, "attacker.example:8080"));
        assert!(!passes(&origins, "192.168.1.2:8080"));
        assert!(!passes(&origins, "[::1:8080"));
    }

    #[test]
    fn every_interface_takes_any_address_but_no_name() {
        let origins = Origins::new("0.0.0.0:80".parse().unwrap(), &[]);
        assert!(passes(&origins, "192.168.1.2"));
        assert!(passes(&origins, "10.0.0.5:80"));
        assert!(passes(&origins, "localhost"));
        assert!(!passes(&origins, "rebind.example"));
    }

    #[test]
    fn only_given_origins_pass_and_their_preflight_is_answered() {
        let origins = Origins::new(
            "127.0.0.1:8080".parse().unwrap(),
            &["http://localhost:3000/".to_string()],
        );
        let host = Some("127.0.0.1:8080");
        let Verdict::Refuse(error) =
            origins.check(&Method::POST, host, &headers(Some("https://evil.example")))
        else {
            panic!("a page of another origin passed");
        };
        assert_eq!(error.code, "origin_not_allowed");
        assert_eq!(
            origins.check(&Method::POST, host, &headers(Some("http://localhost:3000"))),
            Verdict::Pass {
                cors: Some(HeaderValue::from_static("http://localhost:3000"))
            }
        );
        let mut preflight = headers(Some("http://localhost:3000"));
        preflight.insert(
            header::ACCESS_CONTROL_REQUEST_METHOD,
            HeaderValue::from_static("POST"),
        );
        assert_eq!(
            origins.check(&Method::OPTIONS, host, &preflight),
            Verdict::Preflight(HeaderValue::from_static("http://localhost:3000"))
        );
    }
}
