//! The user's side of a sign-in: the authorization page opened in their browser, and the
//! loopback redirect (RFC 8252) that brings the answer back to us on 127.0.0.1.
//!
//! The listener takes any free port, answers only `/callback`, and shows the user a short page
//! saying whether it worked; it stops after the first callback or when the wait runs out.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How the authorization page reaches the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Browser {
    /// The `BROWSER` environment variable when set (a command; `%s` is replaced by the URL,
    /// else the URL is appended), else the system's opener (`xdg-open`, `open`, `start`).
    System,
    /// This command line instead, as `BROWSER` would give it.
    Command(String),
    /// No browser: the page is fetched and its redirects followed, for authorization servers
    /// that approve without a person (the conformance suite's).
    Fetch,
}

impl Browser {
    /// Shows `url` to the user. Errors are sentences.
    pub(crate) async fn open(&self, url: &str) -> Result<(), String> {
        match self {
            Self::Fetch => fetch(url).await,
            Self::Command(command) => run_command(command, url),
            Self::System => match std::env::var("BROWSER") {
                Ok(command) if !command.trim().is_empty() => {
                    // BROWSER may list several, separated by ':'; the first that starts wins.
                    let mut last = String::new();
                    for one in command.split(':').filter(|one| !one.trim().is_empty()) {
                        match run_command(one, url) {
                            Ok(()) => return Ok(()),
                            Err(err) => last = err,
                        }
                    }
                    Err(last)
                }
                _ => system_open(url),
            },
        }
    }
}

fn run_command(command: &str, url: &str) -> Result<(), String> {
    let mut parts: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    if parts.is_empty() {
        return Err("the browser command is empty".into());
    }
    if parts.iter().any(|part| part.contains("%s")) {
        for part in &mut parts {
            *part = part.replace("%s", url);
        }
    } else {
        parts.push(url.to_string());
    }
    let program = parts.remove(0);
    std::process::Command::new(&program)
        .args(&parts)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|err| format!("the browser ({program}) could not be started: {err}"))
}

fn system_open(url: &str) -> Result<(), String> {
    let (program, args): (&str, Vec<&str>) = if cfg!(target_os = "macos") {
        ("open", vec![url])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", url])
    } else {
        ("xdg-open", vec![url])
    };
    std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|err| format!("the browser could not be opened ({program}: {err})"))
}

/// Follows the authorization page's redirects without a person, up to the loopback callback.
async fn fetch(url: &str) -> Result<(), String> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::limited(10))
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|err| format!("no HTTP client: {err}"))?;
    client
        .get(url)
        .send()
        .await
        .map(|_| ())
        .map_err(|err| format!("the authorization page could not be fetched: {err}"))
}

/// A listener on 127.0.0.1 waiting for the authorization server to send the user back.
pub(crate) struct Loopback {
    listener: TcpListener,
    port: u16,
}

impl Loopback {
    pub async fn bind() -> Result<Self, String> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.map_err(|err| {
            format!("no port on 127.0.0.1 for the sign-in to come back to: {err}")
        })?;
        let port = listener
            .local_addr()
            .map_err(|err| format!("the sign-in listener has no address: {err}"))?
            .port();
        Ok(Self { listener, port })
    }

    /// Where the authorization server sends the user back.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// The full callback URL, once the browser arrives with one; `None` when `wait` runs out.
    /// `page` gives the page shown for a callback (whether it carries a code or an error).
    pub async fn wait(&self, wait: Duration, server: &str) -> Option<String> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let accepted = tokio::time::timeout_at(deadline, self.listener.accept()).await;
            let Ok(Ok((mut stream, _))) = accepted else {
                if accepted.is_err() {
                    return None;
                }
                continue;
            };
            let mut buffer = vec![0u8; 8192];
            let mut read = 0;
            // The request line and headers; the callback has no body.
            while read < buffer.len() {
                let n = match tokio::time::timeout(
                    Duration::from_secs(5),
                    stream.read(&mut buffer[read..]),
                )
                .await
                {
                    Ok(Ok(n)) if n > 0 => n,
                    _ => break,
                };
                read += n;
                if buffer[..read].windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            let head = String::from_utf8_lossy(&buffer[..read]);
            let target = head
                .lines()
                .next()
                .and_then(|line| line.strip_prefix("GET "))
                .and_then(|rest| rest.split(' ').next())
                .unwrap_or_default()
                .to_string();
            if !target.starts_with("/callback?") {
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let failed = target.contains("error=") && !target.contains("code=");
            let message = if failed {
                format!(
                    "Signing in to {server} did not work. You can close this tab and see why in Tooltrail."
                )
            } else {
                format!(
                    "You are signed in to {server}. You can close this tab and go back to Tooltrail."
                )
            };
            let body = format!(
                "<!doctype html><meta charset=\"utf-8\"><title>Tooltrail</title><p>{}</p>",
                html_escape(&message)
            );
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
            let _ = stream.shutdown().await;
            return Some(format!("http://127.0.0.1:{}{target}", self.port));
        }
    }
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[tokio::test]
    async fn the_loopback_returns_the_callback_and_ignores_other_paths() {
        let loopback = Loopback::bind().await.unwrap();
        let redirect = loopback.redirect_uri();
        assert!(redirect.starts_with("http://127.0.0.1:"));
        let base = redirect.trim_end_matches("/callback").to_string();
        let client = tokio::spawn(async move {
            let http = reqwest::Client::new();
            let missing = http
                .get(format!("{base}/favicon.ico"))
                .send()
                .await
                .unwrap();
            assert_eq!(missing.status(), 404);
            http.get(format!("{base}/callback?code=abc&state=xyz"))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        });
        let url = loopback.wait(Duration::from_secs(10), "docs").await;
        assert_eq!(url, Some(format!("{redirect}?code=abc&state=xyz")));
        assert!(client.await.unwrap().contains("You are signed in to docs."));
    }

    #[tokio::test]
    async fn the_wait_runs_out() {
        let loopback = Loopback::bind().await.unwrap();
        assert_eq!(
            loopback.wait(Duration::from_millis(100), "docs").await,
            None
        );
    }
}
