//! A file an MCP App view asks to save (`ui/download-file`): its bytes, fetched or taken from
//! the request, under the rules the app keeps for anything from outside.
//!
//! The window asks the user on Tooltrail's own bar and then in the native save dialog; only
//! then does the front end hand the request here, with where to write it. What a view may name:
//!
//! - a web address (`http`/`https`, no user name or password before the host): fetched with a
//!   timeout ([`DOWNLOAD_TIMEOUT`]) and a size cap ([`MAX_DOWNLOAD_BYTES`]), redirects followed
//!   by hand so each hop passes the same checks; a host that is or resolves to a loopback,
//!   private, link-local or otherwise non-public address is refused, unless the view's server's
//!   entry in `mcp.json` says `"allow_private_addresses": true` (a server on the user's own
//!   network). The addresses checked are the ones connected to, so a name cannot resolve
//!   differently between the check and the request;
//! - inline data: the text or base64 of an embedded resource, or a `data:` URL, at most
//!   [`MAX_INLINE_BYTES`].
//!
//! Anything else (`file:`, `javascript:`, a path) is refused with a sentence. The save is
//! recorded in the view's turn like the view's calls (see `views.rs`).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use base64::Engine as _;
use reqwest::Url;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The most a view's download may weigh when fetched from the web.
pub const MAX_DOWNLOAD_BYTES: u64 = 100 * 1024 * 1024;
/// The most inline data a view may hand over (the window drops any message over 1 MiB first).
pub const MAX_INLINE_BYTES: usize = 1024 * 1024;
/// How long a download may take, from the first request to the last byte.
pub const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(60);
/// Redirects followed before the download is given up.
const MAX_REDIRECTS: usize = 5;
/// The longest name a saved file is offered under.
const MAX_NAME_CHARS: usize = 120;

/// A file a view asked to save, as the window passes it on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ViewFile {
    /// The name the view suggested; the save dialog offers it cleaned ([`file_name`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mime_type: Option<String>,
    pub source: ViewFileSource,
}

/// Where a view's file comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ViewFileSource {
    /// A web address to fetch, or a `data:` URL.
    Url { url: String },
    /// An embedded resource's text.
    Text { text: String },
    /// An embedded resource's bytes, in base64.
    Blob { blob: String },
}

/// A file saved for a view.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct SavedFile {
    pub path: String,
    #[ts(type = "number")]
    pub bytes: u64,
}

/// What a download needs from the host: whether private addresses are allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct DownloadRules {
    pub allow_private_addresses: bool,
}

/// What a view's file is, checked: its bytes are at hand, or at a web address.
#[derive(Debug, Clone, PartialEq)]
pub enum Checked {
    Inline(Vec<u8>),
    Web(Url),
}

/// Checks a view's file before anything is asked or fetched: the sentence says why not.
pub fn check(file: &ViewFile) -> Result<Checked, String> {
    match &file.source {
        ViewFileSource::Text { text } => inline(text.as_bytes().to_vec()),
        ViewFileSource::Blob { blob } => {
            if blob.len() > MAX_INLINE_BYTES / 3 * 4 + 4 {
                return Err(too_large_inline());
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob.trim())
                .map_err(|_| {
                    "The view's file is not valid base64, so it was not saved.".to_string()
                })?;
            inline(bytes)
        }
        ViewFileSource::Url { url } => {
            let trimmed = url.trim();
            if trimmed.len() >= 5 && trimmed[..5].eq_ignore_ascii_case("data:") {
                return data_url(trimmed).and_then(inline);
            }
            web_address(trimmed).map(Checked::Web)
        }
    }
}

fn too_large_inline() -> String {
    format!(
        "The view's file is larger than {} KiB, the most a view may hand over inline, so it was not saved.",
        MAX_INLINE_BYTES / 1024
    )
}

fn inline(bytes: Vec<u8>) -> Result<Checked, String> {
    if bytes.len() > MAX_INLINE_BYTES {
        return Err(too_large_inline());
    }
    Ok(Checked::Inline(bytes))
}

/// The bytes of a `data:` URL (`data:[type][;base64],payload`).
fn data_url(url: &str) -> Result<Vec<u8>, String> {
    let bad =
        || "The view's data address is not a valid data: URL, so nothing was saved.".to_string();
    // Checked before decoding, so an oversized one is not decoded at all.
    if url.len() > MAX_INLINE_BYTES / 3 * 4 + 1024 {
        return Err(too_large_inline());
    }
    let (head, payload) = url[5..].split_once(',').ok_or_else(bad)?;
    if head
        .rsplit(';')
        .next()
        .is_some_and(|last| last.eq_ignore_ascii_case("base64"))
    {
        let compact: String = payload.chars().filter(|c| !c.is_whitespace()).collect();
        let decoded = percent_decode(&compact).ok_or_else(bad)?;
        base64::engine::general_purpose::STANDARD
            .decode(decoded)
            .map_err(|_| bad())
    } else {
        percent_decode(payload).ok_or_else(bad)
    }
}

fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = text.get(at + 1..at + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    Some(out)
}

/// A web address a view may download from: http or https, a host, no user name or password.
fn web_address(raw: &str) -> Result<Url, String> {
    let url = Url::parse(raw).map_err(|_| {
        "The view's file is neither a web address nor inline data, so nothing was saved."
            .to_string()
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "Only files from web addresses (http and https) or handed over inline are saved; the view named a {}: address, so nothing was saved.",
            url.scheme()
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("The view's address carries a user name or password before its host, which can disguise the site it is fetched from, so nothing was saved.".to_string());
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("The view's address names no host, so nothing was saved.".to_string());
    }
    Ok(url)
}

/// The name the save dialog offers: the view's suggestion (or the address's last part) without
/// folders, control characters or a leading dot, cut to a sane length; `download` when nothing
/// is left.
pub fn file_name(file: &ViewFile) -> String {
    let suggested = file.name.clone().or_else(|| match &file.source {
        ViewFileSource::Url { url } => Url::parse(url).ok().and_then(|url| {
            url.path_segments()
                .and_then(|mut parts| parts.next_back().map(str::to_string))
                .filter(|last| !last.is_empty())
        }),
        ViewFileSource::Text { .. } | ViewFileSource::Blob { .. } => None,
    });
    let raw = suggested.unwrap_or_default();
    let last = raw.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = last
        .chars()
        .filter(|c| !c.is_control() && !matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|'))
        .take(MAX_NAME_CHARS)
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').trim().to_string();
    if cleaned.is_empty() {
        "download".to_string()
    } else {
        cleaned
    }
}

/// Whether `ip` is one a view's download may not reach without the opt-in: loopback,
/// unspecified, private (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), link-local,
/// multicast, broadcast or documentation.
pub fn is_non_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..=127).contains(&b))
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_non_public(IpAddr::V4(v4)),
            None => {
                let first = v6.segments()[0];
                v6.is_loopback()
                    || v6.is_unspecified()
                    || v6.is_multicast()
                    || (first & 0xfe00) == 0xfc00
                    || (first & 0xffc0) == 0xfe80
            }
        },
    }
}

/// The addresses `url`'s host resolves to, refused when any is not public (and the rules do
/// not allow it).
async fn addresses(url: &Url, rules: DownloadRules) -> Result<Vec<SocketAddr>, String> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(443);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let found: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|_| {
                format!("{host} could not be found, so the view's file was not downloaded.")
            })?
            .collect(),
    };
    if found.is_empty() {
        return Err(format!(
            "{host} could not be found, so the view's file was not downloaded."
        ));
    }
    if !rules.allow_private_addresses && found.iter().any(|address| is_non_public(address.ip())) {
        return Err(format!(
            "{host} is on this computer or a private network, which a view's download does not reach; if the view's server is on your own network, allow it in mcp.json with \"oauth\": {{\"allow_private_addresses\": true}} in its entry."
        ));
    }
    Ok(found)
}

/// Whether `url`'s host resolves only to addresses a view's download may reach, asked before
/// the user chooses where to save it; the fetch checks again, hop by hop.
pub async fn reachable(url: &Url, rules: DownloadRules) -> Result<(), String> {
    tokio::time::timeout(DOWNLOAD_TIMEOUT, addresses(url, rules))
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "{} could not be found in time, so the view's file was not downloaded.",
                url.host_str().unwrap_or_default()
            ))
        })
        .map(|_| ())
}

/// Fetches `url` under the rules: each hop's host checked, at most [`MAX_DOWNLOAD_BYTES`],
/// within [`DOWNLOAD_TIMEOUT`].
pub async fn fetch(url: Url, rules: DownloadRules) -> Result<Vec<u8>, String> {
    tokio::time::timeout(
        DOWNLOAD_TIMEOUT,
        fetch_within(url, rules, MAX_DOWNLOAD_BYTES),
    )
    .await
    .unwrap_or_else(|_| {
        Err(format!(
            "The download took longer than {} seconds and was stopped.",
            DOWNLOAD_TIMEOUT.as_secs()
        ))
    })
}

async fn fetch_within(mut url: Url, rules: DownloadRules, cap: u64) -> Result<Vec<u8>, String> {
    for _ in 0..=MAX_REDIRECTS {
        let resolved = addresses(&url, rules).await?;
        let host = url.host_str().unwrap_or_default().to_string();
        // Connected to exactly the addresses checked above.
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .resolve_to_addrs(
                host.trim_start_matches('[').trim_end_matches(']'),
                &resolved,
            )
            .user_agent(concat!("Tooltrail/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|_| "The download could not be started.".to_string())?;
        let mut response = client.get(url.clone()).send().await.map_err(|error| {
            format!("The download from {host} failed: {}.", error.without_url())
        })?;
        let status = response.status();
        if status.is_redirection() {
            let next = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|location| url.join(location).ok())
                .ok_or_else(|| format!("{host} redirected the download nowhere."))?;
            url = web_address(next.as_str())?;
            continue;
        }
        if !status.is_success() {
            return Err(format!(
                "{host} answered the download with {status}, so nothing was saved."
            ));
        }
        let too_large = || {
            let most = if cap >= 1024 * 1024 {
                format!("{} MiB", cap / 1024 / 1024)
            } else {
                format!("{} KiB", cap / 1024)
            };
            format!(
                "The view's file is larger than {most}, the most a view may download, so nothing was saved."
            )
        };
        if response.content_length().is_some_and(|length| length > cap) {
            return Err(too_large());
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| format!("The download from {host} failed: {}.", error.without_url()))?
        {
            if bytes.len() as u64 + chunk.len() as u64 > cap {
                return Err(too_large());
            }
            bytes.extend_from_slice(&chunk);
        }
        return Ok(bytes);
    }
    Err(format!(
        "The download was redirected more than {MAX_REDIRECTS} times and was given up."
    ))
}

/// Writes a saved file's bytes where the user chose (the front end's own writer).
pub type Writer = Box<dyn FnOnce(&[u8]) -> std::io::Result<()> + Send>;

/// The save of a view's file as a call in the view's turn, so it is recorded like the view's
/// calls: its arguments say what was saved from where to where, its result how many bytes.
/// The user already said yes twice (the bar, the save dialog), so it runs without asking;
/// a standing rule that refuses it still does.
pub(crate) struct SaveTool {
    spec: tooltrail_protocol::ToolSpec,
    server: String,
    checked: Checked,
    rules: DownloadRules,
    path: String,
    write: std::sync::Mutex<Option<Writer>>,
}

/// The name a view's saves are recorded under: the message it sent.
pub const SAVE_TOOL: &str = "ui/download-file";

impl SaveTool {
    pub(crate) fn new(
        server: String,
        checked: Checked,
        rules: DownloadRules,
        path: String,
        write: Writer,
    ) -> Self {
        Self {
            spec: tooltrail_protocol::ToolSpec {
                name: SAVE_TOOL.to_string(),
                description: "A file the view asked to save, saved where the user chose."
                    .to_string(),
                parameters: serde_json::json!({ "type": "object" }),
                read_only: false,
            },
            server,
            checked,
            rules,
            path,
            write: std::sync::Mutex::new(Some(write)),
        }
    }

    /// What the record keeps as the call's arguments.
    pub(crate) fn arguments(&self, name: &str) -> serde_json::Value {
        let from = match &self.checked {
            Checked::Web(url) => serde_json::json!(url.as_str()),
            Checked::Inline(bytes) => {
                serde_json::json!(format!("{} bytes handed over by the view", bytes.len()))
            }
        };
        serde_json::json!({ "name": name, "from": from, "saved_to": self.path })
    }
}

#[async_trait::async_trait]
impl tooltrail_tools::Tool for SaveTool {
    fn spec(&self) -> &tooltrail_protocol::ToolSpec {
        &self.spec
    }

    fn source(&self) -> tooltrail_protocol::ToolSource {
        tooltrail_protocol::ToolSource::Mcp {
            server: self.server.clone(),
        }
    }

    fn gate(
        &self,
        _args: &serde_json::Value,
        _ctx: &tooltrail_tools::ToolContext,
    ) -> tooltrail_tools::Gate {
        tooltrail_tools::Gate::Allowed {
            reason: "the user chose to save the view's file and where".to_string(),
        }
    }

    async fn call(
        &self,
        _args: serde_json::Value,
        _ctx: &tooltrail_tools::ToolContext,
    ) -> Result<tooltrail_protocol::ToolOutput, tooltrail_protocol::ToolError> {
        use tooltrail_protocol::{ToolError, ToolErrorCode};
        let failed = |text: String| ToolError::new(ToolErrorCode::Failed, text);
        let bytes = match &self.checked {
            Checked::Inline(bytes) => bytes.clone(),
            Checked::Web(url) => fetch(url.clone(), self.rules).await.map_err(failed)?,
        };
        let write = self
            .write
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .ok_or_else(|| failed("The file was already saved.".to_string()))?;
        let path = self.path.clone();
        let length = bytes.len();
        tokio::task::spawn_blocking(move || write(&bytes))
            .await
            .map_err(|_| failed("Saving the file stopped unexpectedly.".to_string()))?
            .map_err(|error| {
                failed(format!("The file could not be written to {path}: {error}."))
            })?;
        Ok(tooltrail_protocol::ToolOutput::new(
            format!("Saved {length} bytes to {}.", self.path),
            serde_json::json!({ "path": self.path, "bytes": length }),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn url(url: &str) -> ViewFile {
        ViewFile {
            name: None,
            mime_type: None,
            source: ViewFileSource::Url {
                url: url.to_string(),
            },
        }
    }

    /// A view names a file by a web address or hands it over; nothing else is read or fetched.
    #[test]
    fn attack_views_a_download_of_a_local_file_or_script_address_is_refused() {
        for raw in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "/etc/passwd",
            "~/.ssh/id_ed25519",
            "ftp://example.com/a",
            "blob:http://127.0.0.1:4000/x",
            "https://bank.example@evil.example/a.csv",
            "https://user:pass@evil.example/a.csv",
        ] {
            assert!(check(&url(raw)).is_err(), "{raw} was taken");
        }
        let refused = check(&url("file:///etc/passwd")).unwrap_err();
        assert!(refused.contains("file:"), "{refused}");
        assert_eq!(
            check(&url("https://example.com/a.csv")).unwrap(),
            Checked::Web(Url::parse("https://example.com/a.csv").unwrap())
        );
    }

    /// Inline data is taken up to the cap, and refused past it before it is decoded.
    #[test]
    fn attack_views_inline_data_over_the_cap_is_refused() {
        let big = "a".repeat(MAX_INLINE_BYTES + 1);
        assert!(check(&url(&format!("data:text/plain,{big}"))).is_err());
        let blob =
            base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_INLINE_BYTES + 1]);
        assert!(
            check(&ViewFile {
                name: None,
                mime_type: None,
                source: ViewFileSource::Blob { blob }
            })
            .unwrap_err()
            .contains("KiB")
        );
        assert!(
            check(&ViewFile {
                name: None,
                mime_type: None,
                source: ViewFileSource::Text { text: big }
            })
            .is_err()
        );
        assert_eq!(
            check(&url("data:text/csv;base64,YSxiCjEsMgo=")).unwrap(),
            Checked::Inline(b"a,b\n1,2\n".to_vec())
        );
        assert_eq!(
            check(&url("data:,hello%20world")).unwrap(),
            Checked::Inline(b"hello world".to_vec())
        );
    }

    /// The name offered in the save dialog never leads into another folder.
    #[test]
    fn attack_views_a_suggested_name_cannot_lead_out_of_the_chosen_folder() {
        let named = |name: &str| ViewFile {
            name: Some(name.to_string()),
            mime_type: None,
            source: ViewFileSource::Text {
                text: String::new(),
            },
        };
        assert_eq!(file_name(&named("../../.bashrc")), "bashrc");
        assert_eq!(file_name(&named("C:\\Windows\\evil.dll")), "evil.dll");
        assert_eq!(file_name(&named("report\u{0}.csv")), "report.csv");
        assert_eq!(file_name(&named("..")), "download");
        assert_eq!(
            file_name(&url("https://example.com/data/export.csv?x=1")),
            "export.csv"
        );
        assert_eq!(file_name(&named(&"a".repeat(500))).len(), MAX_NAME_CHARS);
    }

    /// A view's download reaches neither this computer nor the private network, by address or
    /// by a name that resolves there, unless its server's entry allows private addresses.
    #[tokio::test]
    async fn attack_views_a_download_from_loopback_or_a_private_address_is_refused() {
        for raw in [
            "http://127.0.0.1:9/x",
            "http://localhost:9/x",
            "http://10.0.0.1/x",
            "http://192.168.1.1/x",
            "http://169.254.169.254/latest/meta-data/",
            "http://[::1]:9/x",
            "http://[::ffff:127.0.0.1]/x",
            "http://0.0.0.0/x",
        ] {
            let url = Url::parse(raw).unwrap();
            let refused = fetch(url, DownloadRules::default()).await.unwrap_err();
            assert!(refused.contains("private network"), "{raw}: {refused}");
        }
    }

    /// With the opt-in, a server on the user's own network is reached, and the size cap holds.
    #[tokio::test]
    async fn attack_views_a_download_over_the_cap_is_stopped() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(async move {
                    let mut buffer = [0u8; 2048];
                    let read = socket.read(&mut buffer).await.unwrap_or(0);
                    let request = String::from_utf8_lossy(&buffer[..read]).to_string();
                    let answer = if request.starts_with("GET /big") {
                        let body = "x".repeat(64 * 1024);
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    } else {
                        "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\na,b\n"
                            .to_string()
                    };
                    let _ = socket.write_all(answer.as_bytes()).await;
                });
            }
        });
        let allowed = DownloadRules {
            allow_private_addresses: true,
        };
        let base = format!("http://127.0.0.1:{port}");
        assert_eq!(
            fetch(Url::parse(&format!("{base}/a.csv")).unwrap(), allowed)
                .await
                .unwrap(),
            b"a,b\n".to_vec()
        );
        let over = fetch_within(Url::parse(&format!("{base}/big")).unwrap(), allowed, 1024)
            .await
            .unwrap_err();
        assert!(over.contains("larger than"), "{over}");
    }
}
