//! The user's side of a sign-in: the authorization page opened in their browser, and the
//! loopback redirect (RFC 8252) that brings the answer back to us on 127.0.0.1.
//!
//! Pages open through [`super::launcher`], http and https only, never through a shell. The
//! listener takes any free port and answers only `/callback` requests carrying the `state` of
//! the sign-in it waits for: any other local process that calls it gets an error page and the
//! wait goes on. The page the browser is left on is written once the code has been exchanged,
//! so it says "signed in" only when that is true.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::launcher::{self, LaunchError};

/// How the authorization page reaches the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Browser {
    /// The `BROWSER` environment variable when set (a command; `%s` is replaced by the URL,
    /// else the URL is appended), else the system's opener (`xdg-open`, `open`, the Windows
    /// URL handler).
    System,
    /// This command line instead, as `BROWSER` would give it.
    Command(String),
    /// No browser: the page is fetched and its redirects followed, for authorization servers
    /// that approve without a person (the conformance suite's).
    Fetch,
}

impl Browser {
    /// Shows `url` to the user. Only http and https addresses; errors are sentences.
    pub(crate) async fn open(&self, url: &str) -> Result<(), String> {
        let result = match self {
            Self::Fetch => {
                launcher::web_address(url).map_err(|err| err.to_string())?;
                return fetch(url).await;
            }
            Self::Command(command) => launcher::open_web_page_with(command, url),
            Self::System => launcher::open_web_page(url),
        };
        result.map_err(|err: LaunchError| err.to_string())
    }
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

    /// The callback that carries `state`, once the browser arrives with it; `None` when `wait`
    /// runs out. Requests to other paths get a 404, and callbacks without that state an error
    /// page; neither ends the wait.
    pub async fn wait(&self, wait: Duration, state: &str) -> Option<Arrival> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let accepted = tokio::time::timeout_at(deadline, self.listener.accept()).await;
            let Ok(Ok((mut stream, _))) = accepted else {
                if accepted.is_err() {
                    return None;
                }
                continue;
            };
            let target = read_target(&mut stream).await;
            if !target.starts_with("/callback?") {
                respond(&mut stream, "404 Not Found", None).await;
                continue;
            }
            let url = format!("http://127.0.0.1:{}{target}", self.port);
            if !carries_state(&url, state) {
                respond(
                    &mut stream,
                    "400 Bad Request",
                    Some(
                        "This is not the sign-in Tooltrail is waiting for, so it was ignored. \
                         If you are signing in, finish it in the page Tooltrail opened.",
                    ),
                )
                .await;
                continue;
            }
            return Some(Arrival { stream, url });
        }
    }
}

/// The browser's callback for the sign-in under way, waiting for its page.
pub(crate) struct Arrival {
    stream: TcpStream,
    /// The full callback URL.
    pub url: String,
}

impl Arrival {
    /// Leaves the browser on a page saying how the sign-in ended: `Ok` once the code has been
    /// exchanged, else why not.
    pub async fn answer(mut self, server: &str, outcome: Result<(), &str>) {
        let message = match outcome {
            Ok(()) => format!(
                "You are signed in to {server}. You can close this tab and go back to Tooltrail."
            ),
            Err(reason) => format!(
                "Signing in to {server} did not work: {reason}. You can close this tab and try again from Tooltrail."
            ),
        };
        let status = if outcome.is_ok() {
            "200 OK"
        } else {
            "400 Bad Request"
        };
        respond(&mut self.stream, status, Some(&message)).await;
    }
}

/// Whether the callback `url` carries exactly this `state`.
fn carries_state(url: &str, state: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else {
        return false;
    };
    let states: Vec<String> = url
        .query_pairs()
        .filter(|(key, _)| key == "state")
        .map(|(_, value)| value.into_owned())
        .collect();
    !state.is_empty() && states.len() == 1 && states[0] == state
}

/// The request target of a GET (the request line's second word), or nothing.
async fn read_target(stream: &mut TcpStream) -> String {
    let mut buffer = vec![0u8; 8192];
    let mut read = 0;
    // The request line and headers; the callback has no body.
    while read < buffer.len() {
        let n = match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer[read..]))
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
    head.lines()
        .next()
        .and_then(|line| line.strip_prefix("GET "))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_default()
        .to_string()
}

/// Answers with `status` and a page saying `message` (nothing without one), then closes.
async fn respond(stream: &mut TcpStream, status: &str, message: Option<&str>) {
    let body = message
        .map(|message| {
            format!(
                "<!doctype html><meta charset=\"utf-8\"><title>Tooltrail</title><p>{}</p>",
                html_escape(message)
            )
        })
        .unwrap_or_default();
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    async fn get(url: String) -> (u16, String) {
        let response = reqwest::get(url).await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    #[tokio::test]
    async fn the_loopback_returns_the_callback_and_ignores_other_paths() {
        let loopback = Loopback::bind().await.unwrap();
        let redirect = loopback.redirect_uri();
        assert!(redirect.starts_with("http://127.0.0.1:"));
        let base = redirect.trim_end_matches("/callback").to_string();
        let client = tokio::spawn(async move {
            assert_eq!(get(format!("{base}/favicon.ico")).await.0, 404);
            get(format!("{base}/callback?code=abc&state=xyz")).await
        });
        let arrival = loopback.wait(Duration::from_secs(10), "xyz").await.unwrap();
        assert_eq!(arrival.url, format!("{redirect}?code=abc&state=xyz"));
        arrival.answer("docs", Ok(())).await;
        let (status, page) = client.await.unwrap();
        assert_eq!(status, 200);
        assert!(page.contains("You are signed in to docs."), "{page}");
    }

    #[tokio::test]
    async fn attack_signin_stray_callbacks_without_the_state_do_not_end_the_sign_in() {
        let loopback = Loopback::bind().await.unwrap();
        let redirect = loopback.redirect_uri();
        let client = tokio::spawn(async move {
            // Another local process calls the callback first: no state, a wrong one, two.
            let mut strays = Vec::new();
            for query in [
                "code=stolen",
                "code=stolen&state=guess",
                "code=stolen&state=real-state-1&state=guess",
                "error=access_denied",
                "code=stolen&state=",
            ] {
                strays.push(get(format!("{redirect}?{query}")).await);
            }
            // Then the browser comes back with the real answer.
            let real = get(format!("{redirect}?code=good&state=real-state-1")).await;
            (strays, real)
        });
        let arrival = loopback
            .wait(Duration::from_secs(30), "real-state-1")
            .await
            .expect("the real callback ends the wait");
        assert!(arrival.url.ends_with("?code=good&state=real-state-1"));
        arrival.answer("docs", Ok(())).await;
        let (strays, real) = client.await.unwrap();
        for (status, page) in strays {
            assert_eq!(status, 400);
            assert!(
                page.contains("not the sign-in Tooltrail is waiting for"),
                "{page}"
            );
            assert!(!page.contains("signed in"), "{page}");
        }
        assert_eq!(real.0, 200);
        assert!(real.1.contains("You are signed in to docs."), "{}", real.1);
    }

    #[tokio::test]
    async fn attack_signin_page_after_a_failed_exchange_does_not_say_signed_in() {
        let loopback = Loopback::bind().await.unwrap();
        let redirect = loopback.redirect_uri();
        let client = tokio::spawn(get(format!("{redirect}?code=c&state=s")));
        let arrival = loopback.wait(Duration::from_secs(10), "s").await.unwrap();
        arrival
            .answer("docs", Err("token exchange failed: <invalid_client>"))
            .await;
        let (status, page) = client.await.unwrap();
        assert_eq!(status, 400);
        assert!(
            page.contains(
                "Signing in to docs did not work: token exchange failed: &lt;invalid_client&gt;."
            ),
            "{page}"
        );
        assert!(!page.to_lowercase().contains("signed in"), "{page}");
    }

    #[tokio::test]
    async fn the_wait_runs_out() {
        let loopback = Loopback::bind().await.unwrap();
        assert!(
            loopback
                .wait(Duration::from_millis(100), "s")
                .await
                .is_none()
        );
    }

    #[tokio::test]
    async fn attack_signin_fetch_refuses_what_is_not_a_web_page() {
        assert_eq!(
            Browser::Fetch.open("file:///etc/passwd").await,
            Err(LaunchError::NotWeb.to_string())
        );
        assert_eq!(
            Browser::Command("true".into())
                .open("javascript:alert(1)")
                .await,
            Err(LaunchError::NotWeb.to_string())
        );
    }
}
