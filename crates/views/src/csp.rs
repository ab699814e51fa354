//! The headers that confine a view: its Content Security Policy, built as the MCP Apps
//! specification (2026-01-26) says from the domains the server declared in `_meta.ui.csp`, and
//! its Permissions Policy, which grants only what the server declared and the user allowed.
//!
//! Declared domains are outside input: an entry is kept only when it is a plain `https` or `wss`
//! origin of a public host name. Anything else (a CSP keyword, a bare `*`, a scheme such as
//! `data:`, a path, an IP address, `localhost` or a private name, a `;` that would start a
//! directive of its own) is refused and reported beside the policy, never copied into it.

use serde::Deserialize;

/// `_meta.ui.csp` of a view's resource.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ViewCsp {
    /// Origins the view may connect to (`connect-src`: fetch, XHR, WebSocket).
    pub connect_domains: Vec<String>,
    /// Origins of scripts, styles, images, fonts and media.
    pub resource_domains: Vec<String>,
    /// Origins of frames inside the view.
    pub frame_domains: Vec<String>,
    /// Origins the view's `<base>` may name.
    pub base_uri_domains: Vec<String>,
}

/// A browser feature a view may ask for in `_meta.ui.permissions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Feature {
    Camera,
    Microphone,
    Geolocation,
    ClipboardWrite,
}

impl Feature {
    /// Its name in `_meta.ui.permissions`.
    pub fn declared_as(self) -> &'static str {
        match self {
            Self::Camera => "camera",
            Self::Microphone => "microphone",
            Self::Geolocation => "geolocation",
            Self::ClipboardWrite => "clipboardWrite",
        }
    }

    /// Its name in a Permissions Policy.
    pub fn policy_name(self) -> &'static str {
        match self {
            Self::Camera => "camera",
            Self::Microphone => "microphone",
            Self::Geolocation => "geolocation",
            Self::ClipboardWrite => "clipboard-write",
        }
    }

    const ALL: [Self; 4] = [
        Self::Camera,
        Self::Microphone,
        Self::Geolocation,
        Self::ClipboardWrite,
    ];

    /// The features `_meta.ui.permissions` declares (an object whose keys name them); others
    /// are ignored.
    pub fn declared(permissions: &serde_json::Value) -> Vec<Self> {
        let Some(object) = permissions.as_object() else {
            return Vec::new();
        };
        Self::ALL
            .into_iter()
            .filter(|feature| object.contains_key(feature.declared_as()))
            .collect()
    }
}

/// The most entries read of one declared list.
const MAX_ENTRIES: usize = 32;
/// The longest entry read (a DNS name's limit, with room for the scheme and port).
const MAX_ENTRY: usize = 253;

/// A Content Security Policy and the declared entries left out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// The header's value.
    pub header: String,
    /// Declared entries that were not origins a view may name, as declared.
    pub refused: Vec<String>,
    /// The declared origins kept in `frame-src`: the only places, besides the view's own
    /// address, that a frame inside the view may load.
    pub frame_origins: Vec<String>,
}

/// The policy of a view: the specification's strict default when the server declared no
/// `csp`, else its construction over the declared origins that pass [`origin`]. Always added,
/// since a host may restrict further: no forms, no plugins, and `frame-ancestors` naming the
/// app's own origins, so that only the app may frame the view.
pub fn content_security_policy(csp: Option<&ViewCsp>, frame_ancestors: &[String]) -> Policy {
    let mut refused = Vec::new();
    let mut keep = |declared: &[String]| -> Vec<String> {
        let mut kept = Vec::new();
        for (index, entry) in declared.iter().enumerate() {
            match origin(entry) {
                Some(origin) if index < MAX_ENTRIES => {
                    if !kept.contains(&origin) {
                        kept.push(origin);
                    }
                }
                _ => refused.push(entry.chars().take(MAX_ENTRY).collect()),
            }
        }
        kept
    };
    let with = |base: &str, origins: &[String]| {
        if origins.is_empty() {
            base.to_string()
        } else {
            format!("{base} {}", origins.join(" "))
        }
    };
    let or_none = |origins: &[String], none: &str| {
        if origins.is_empty() {
            none.to_string()
        } else {
            origins.join(" ")
        }
    };
    let mut frame_origins = Vec::new();
    let mut directives: Vec<String> = match csp {
        None => vec![
            "default-src 'none'".to_string(),
            "script-src 'self' 'unsafe-inline'".to_string(),
            "style-src 'self' 'unsafe-inline'".to_string(),
            "img-src 'self' data:".to_string(),
            "media-src 'self' data:".to_string(),
            "connect-src 'none'".to_string(),
            "frame-src 'none'".to_string(),
            "object-src 'none'".to_string(),
            "base-uri 'self'".to_string(),
        ],
        Some(csp) => {
            let resource = keep(&csp.resource_domains);
            let connect = keep(&csp.connect_domains);
            let frame = keep(&csp.frame_domains);
            let base_uri = keep(&csp.base_uri_domains);
            frame_origins.clone_from(&frame);
            vec![
                "default-src 'none'".to_string(),
                with("script-src 'self' 'unsafe-inline'", &resource),
                with("style-src 'self' 'unsafe-inline'", &resource),
                with("connect-src 'self'", &connect),
                with("img-src 'self' data:", &resource),
                with("font-src 'self'", &resource),
                with("media-src 'self' data:", &resource),
                format!("frame-src {}", or_none(&frame, "'none'")),
                "object-src 'none'".to_string(),
                format!("base-uri {}", or_none(&base_uri, "'self'")),
            ]
        }
    };
    directives.push("form-action 'none'".to_string());
    let ancestors: Vec<String> = frame_ancestors
        .iter()
        .filter(|ancestor| is_plain_source(ancestor))
        .cloned()
        .collect();
    directives.push(format!("frame-ancestors {}", or_none(&ancestors, "'none'")));
    Policy {
        header: directives.join("; "),
        refused,
        frame_origins,
    }
}

/// The Permissions Policy of a view: every powerful feature off, but those `granted`.
pub fn permissions_policy(granted: &[Feature]) -> String {
    let mut parts: Vec<String> = Feature::ALL
        .into_iter()
        .map(|feature| {
            let allow = if granted.contains(&feature) {
                "(self)"
            } else {
                "()"
            };
            format!("{}={allow}", feature.policy_name())
        })
        .collect();
    for never in [
        "clipboard-read",
        "display-capture",
        "fullscreen",
        "payment",
        "usb",
    ] {
        parts.push(format!("{never}=()"));
    }
    parts.join(", ")
}

/// Whether a source the app gives (its own origins) is free of what could end a directive.
fn is_plain_source(source: &str) -> bool {
    !source.is_empty()
        && source
            .chars()
            .all(|c| c.is_ascii_graphic() && !matches!(c, ';' | ',' | '\'' | '"'))
}

/// `entry` as a CSP source a view may name: `https://host[:port]` or `wss://host[:port]`,
/// lower-case, where host is a public DNS name (one leading `*.` allowed). `None` otherwise.
pub fn origin(entry: &str) -> Option<String> {
    if entry.len() > MAX_ENTRY || entry.chars().any(|c| !c.is_ascii_graphic()) {
        return None;
    }
    let lower = entry.to_ascii_lowercase();
    let (scheme, rest) = lower.split_once("://")?;
    if !matches!(scheme, "https" | "wss") {
        return None;
    }
    // One trailing slash is how many people write an origin; anything else is a path.
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.contains(['/', '?', '#', '@', '[', ']', ';', ',', '\'', '"', '\\']) {
        return None;
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    if let Some(port) = port
        && port != "*"
        && !port.parse::<u16>().is_ok_and(|port| port > 0)
    {
        return None;
    }
    if !is_public_host(host) {
        return None;
    }
    Some(match port {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

/// A DNS name with at least two labels, not an IP address, not loopback or a private name.
fn is_public_host(host: &str) -> bool {
    let name = host.strip_prefix("*.").unwrap_or(host);
    let labels: Vec<&str> = name.split('.').collect();
    if labels.len() < 2
        || labels.iter().any(|label| {
            label.is_empty()
                || label.len() > 63
                || label.starts_with('-')
                || label.ends_with('-')
                || !label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
    {
        return false;
    }
    // An IPv4 address (its last label is all digits; no public suffix is).
    if labels
        .last()
        .is_some_and(|last| last.chars().all(|c| c.is_ascii_digit()))
    {
        return false;
    }
    let private = [".localhost", ".local", ".internal", ".home.arpa", ".lan"];
    let dotted = format!(".{name}");
    !private.iter().any(|suffix| dotted.ends_with(suffix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn ancestors() -> Vec<String> {
        vec![
            "tauri://localhost".to_string(),
            "http://tauri.localhost".to_string(),
        ]
    }

    #[test]
    fn attack_views_default_csp_is_the_specs_strict_one() {
        let policy = content_security_policy(None, &ancestors());
        assert_eq!(
            policy.header,
            "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; \
             img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; \
             object-src 'none'; base-uri 'self'; form-action 'none'; \
             frame-ancestors tauri://localhost http://tauri.localhost"
        );
        assert!(policy.refused.is_empty());
    }

    #[test]
    fn declared_origins_extend_the_policy_as_the_spec_builds_it() {
        let csp = ViewCsp {
            connect_domains: vec!["https://api.example.com".to_string()],
            resource_domains: vec![
                "https://cdn.example.com/".to_string(),
                "https://*.fonts.example.org".to_string(),
            ],
            frame_domains: vec!["https://www.youtube.com".to_string()],
            base_uri_domains: Vec::new(),
        };
        let policy = content_security_policy(Some(&csp), &ancestors());
        assert_eq!(
            policy.header,
            "default-src 'none'; \
             script-src 'self' 'unsafe-inline' https://cdn.example.com https://*.fonts.example.org; \
             style-src 'self' 'unsafe-inline' https://cdn.example.com https://*.fonts.example.org; \
             connect-src 'self' https://api.example.com; \
             img-src 'self' data: https://cdn.example.com https://*.fonts.example.org; \
             font-src 'self' https://cdn.example.com https://*.fonts.example.org; \
             media-src 'self' data: https://cdn.example.com https://*.fonts.example.org; \
             frame-src https://www.youtube.com; object-src 'none'; base-uri 'self'; \
             form-action 'none'; frame-ancestors tauri://localhost http://tauri.localhost"
        );
    }

    #[test]
    fn attack_views_csp_entries_that_are_not_origins_are_dropped() {
        let hostile = [
            "*",
            "'unsafe-eval'",
            "'self'",
            "https:",
            "data:",
            "blob:",
            "http://example.com",
            "ws://example.com",
            "https://example.com/path",
            "https://example.com?x=1",
            "https://user@example.com",
            "https://example.com; script-src *",
            "https://example.com 'unsafe-eval'",
            "https://example.com,https://evil.com",
            "https://exa\u{0}mple.com",
            "https://com",
            "https://example.com:0",
            "https://example.com:99999",
            "https://-bad-.example.com",
            "https://**.example.com",
            "javascript:alert(1)",
        ];
        let csp = ViewCsp {
            connect_domains: hostile.iter().map(|entry| entry.to_string()).collect(),
            ..ViewCsp::default()
        };
        let policy = content_security_policy(Some(&csp), &ancestors());
        assert!(
            policy.header.contains("; connect-src 'self'; "),
            "{}",
            policy.header
        );
        assert!(!policy.header.contains("unsafe-eval"), "{}", policy.header);
        assert!(!policy.header.contains("evil"), "{}", policy.header);
        assert_eq!(policy.refused.len(), hostile.len());
    }

    #[test]
    fn attack_views_declared_domains_never_reach_loopback_or_private_hosts() {
        for entry in [
            "https://localhost",
            "https://localhost:8080",
            "https://app.localhost",
            "https://127.0.0.1",
            "https://10.0.0.1:443",
            "https://[::1]",
            "https://printer.local",
            "https://db.internal",
            "https://router.home.arpa",
            "https://nas.lan",
            "wss://169.254.169.254",
        ] {
            assert_eq!(origin(entry), None, "{entry} was kept");
        }
        assert_eq!(
            origin("WSS://Live.Example.com:8443"),
            Some("wss://live.example.com:8443".to_string())
        );
        assert_eq!(
            origin("https://*.example.com:*"),
            Some("https://*.example.com:*".to_string())
        );
    }

    #[test]
    fn attack_views_a_flood_of_declared_domains_is_cut() {
        let csp = ViewCsp {
            resource_domains: (0..1000)
                .map(|index| format!("https://cdn{index}.example.com"))
                .collect(),
            ..ViewCsp::default()
        };
        let policy = content_security_policy(Some(&csp), &ancestors());
        assert!(policy.header.contains("https://cdn31.example.com"));
        assert!(!policy.header.contains("https://cdn32.example.com"));
        assert_eq!(policy.refused.len(), 1000 - 32);
    }

    #[test]
    fn attack_views_permissions_policy_denies_what_was_not_granted() {
        assert_eq!(
            permissions_policy(&[]),
            "camera=(), microphone=(), geolocation=(), clipboard-write=(), clipboard-read=(), \
             display-capture=(), fullscreen=(), payment=(), usb=()"
        );
        assert_eq!(
            permissions_policy(&[Feature::Camera, Feature::ClipboardWrite]),
            "camera=(self), microphone=(), geolocation=(), clipboard-write=(self), \
             clipboard-read=(), display-capture=(), fullscreen=(), payment=(), usb=()"
        );
    }

    #[test]
    fn declared_permissions_are_read_by_their_spec_names() {
        let declared = serde_json::json!({ "camera": {}, "clipboardWrite": {}, "usb": {} });
        assert_eq!(
            Feature::declared(&declared),
            vec![Feature::Camera, Feature::ClipboardWrite]
        );
        assert_eq!(Feature::declared(&serde_json::json!("camera")), Vec::new());
    }

    #[test]
    fn attack_views_an_app_origin_cannot_smuggle_a_directive() {
        let policy =
            content_security_policy(None, &["tauri://localhost; script-src *".to_string()]);
        assert!(
            policy.header.ends_with("frame-ancestors 'none'"),
            "{}",
            policy.header
        );
    }
}
