//! What llama-server says about itself: whether it is ready (`GET /health`), whether it is
//! the one the supervisor started (the key challenge on `GET /props`, see [`identify`]), and
//! whether its chat template can render tools (`/props` again).

use std::time::Duration;

use serde_json::Value;

use super::identity::{self, ListeningSocket, PortOwner};

/// A client for llama-server on loopback: no proxy (a proxy from the environment must not see
/// loopback requests or the key), short timeouts.
pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap_or_default()
}

/// Whether llama-server at `root` (`http://127.0.0.1:PORT`) has its model loaded and answers.
pub(crate) async fn healthy(client: &reqwest::Client, root: &str) -> bool {
    client
        .get(format!("{root}/health"))
        .send()
        .await
        .is_ok_and(|response| response.status().is_success())
}

/// Why the server on a port is not the llama-server the supervisor started, in a sentence's
/// middle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotOurs {
    /// It answered a request that carried no key: llama-server with `--api-key-file` refuses
    /// those.
    AnsweredWithoutKey(u16),
    /// The listening socket is another process's, or no socket the system shows listens there.
    OtherProcess,
    /// The system did not say whose the listening socket is.
    OwnerUnknown,
    /// It refused, or could not answer, the request with the key.
    RefusedKey(String),
}

impl NotOurs {
    pub(crate) fn describe(&self) -> String {
        match self {
            NotOurs::AnsweredWithoutKey(status) => format!(
                "it answered a request without the API key (HTTP {status}), which the llama-server Tooltrail starts refuses"
            ),
            NotOurs::OtherProcess => {
                "the socket listening there belongs to another process than the llama-server Tooltrail started".to_string()
            }
            NotOurs::OwnerUnknown => {
                "the system did not say which process holds the socket listening there, and the API key goes only to the llama-server Tooltrail started".to_string()
            }
            NotOurs::RefusedKey(why) => format!("it did not take the API key Tooltrail gave llama-server ({why})"),
        }
    }
}

/// Proves that the server at `root` (`http://127.0.0.1:PORT`) is the llama-server started as
/// `server_pid` with `api_key`, before any prompt or the key is sent there, and returns its
/// `/props`. `/props` is not one of llama-server's public paths, so: without the key it must
/// be refused (401); the listening socket must be the child's own, as the system's tables
/// show it (see `identity.rs`; where they do not tell, it is not trusted); only then is the
/// key sent, and it must be taken. A program that took the port after it was chosen and
/// released fails the first or the second check without ever seeing the key.
pub(crate) async fn identify(
    client: &reqwest::Client,
    root: &str,
    port: u16,
    server_pid: u32,
    api_key: &str,
) -> Result<Value, NotOurs> {
    identify_against(client, root, port, server_pid, api_key, || {
        identity::listening_sockets(server_pid)
    })
    .await
}

/// [`identify`], with the system's table of listening sockets read by `sockets`, after the
/// request without the key was refused.
async fn identify_against(
    client: &reqwest::Client,
    root: &str,
    port: u16,
    server_pid: u32,
    api_key: &str,
    sockets: impl FnOnce() -> Option<Vec<ListeningSocket>>,
) -> Result<Value, NotOurs> {
    let url = format!("{root}/props");
    match client.get(&url).send().await {
        Ok(response) if response.status() == reqwest::StatusCode::UNAUTHORIZED => {}
        Ok(response) => return Err(NotOurs::AnsweredWithoutKey(response.status().as_u16())),
        Err(error) => return Err(NotOurs::RefusedKey(error.to_string())),
    }
    match identity::port_owner(sockets().as_deref(), server_pid, port) {
        PortOwner::Child => {}
        PortOwner::Other => return Err(NotOurs::OtherProcess),
        PortOwner::Unknown => return Err(NotOurs::OwnerUnknown),
    }
    let response = client
        .get(&url)
        .bearer_auth(api_key)
        .send()
        .await
        .map_err(|error| NotOurs::RefusedKey(error.to_string()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(NotOurs::RefusedKey(format!("HTTP {}", status.as_u16())));
    }
    // A body that is not JSON says nothing about the template; the key was taken all the same.
    Ok(response.json().await.unwrap_or(Value::Null))
}

/// Newer builds say so (`chat_template_caps.supports_tools`); for older ones, a template that
/// renders tools mentions them. A template that cannot render them makes llama-server drop
/// the tools silently, which is why this is asked before the first question, not learned
/// from a refusal.
pub(crate) fn template_renders_tools(props: &Value) -> bool {
    if let Some(supports) = props
        .pointer("/chat_template_caps/supports_tools")
        .and_then(Value::as_bool)
    {
        return supports;
    }
    props
        .get("chat_template")
        .and_then(Value::as_str)
        .is_some_and(|template| template.contains("tools"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::{Arc, Mutex};

    /// A program on loopback that acts as llama-server does toward the checks that need no
    /// key: it refuses a request without one (401), then takes any key it is given. Its
    /// address, and the keys it was sent.
    async fn squatter() -> (String, u16, Arc<Mutex<Vec<String>>>) {
        let keys: Arc<Mutex<Vec<String>>> = Arc::default();
        let record = Arc::clone(&keys);
        let router = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let record = Arc::clone(&record);
            async move {
                match request.headers().get("authorization") {
                    Some(key) => {
                        record
                            .lock()
                            .unwrap()
                            .push(key.to_str().unwrap().to_string());
                        (axum::http::StatusCode::OK, "{}")
                    }
                    None => (axum::http::StatusCode::UNAUTHORIZED, ""),
                }
            }
        });
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, router).await });
        (format!("http://127.0.0.1:{port}"), port, keys)
    }

    fn held_by(port: u16, pid: u32) -> Option<Vec<ListeningSocket>> {
        Some(vec![ListeningSocket {
            addr: std::net::Ipv4Addr::LOCALHOST.into(),
            port,
            pids: vec![pid],
        }])
    }

    /// On a system that does not say whose the listening socket is, a program that answers
    /// 401 and then takes any key would pass the key's own check: it never gets the key.
    #[tokio::test]
    async fn attack_runtime_a_port_whose_owner_cannot_be_known_never_gets_the_key() {
        let (root, port, keys) = squatter().await;
        let child = 4242;

        let outcome = identify_against(&client(), &root, port, child, "the-key", || None).await;

        assert_eq!(outcome, Err(NotOurs::OwnerUnknown));
        assert_eq!(keys.lock().unwrap().clone(), Vec::<String>::new());
        // The same program, shown the child's, would have been sent the key: the table is what
        // kept it out.
        let shown_ours = identify_against(&client(), &root, port, child, "the-key", || {
            held_by(port, child)
        })
        .await;
        assert_eq!(shown_ours, Ok(json!({})));
        assert_eq!(keys.lock().unwrap().clone(), ["Bearer the-key"]);
    }

    #[tokio::test]
    async fn attack_runtime_a_port_another_process_holds_never_gets_the_key() {
        let (root, port, keys) = squatter().await;
        let child = 4242;

        // As a system's table would show it.
        let outcome = identify_against(&client(), &root, port, child, "the-key", || {
            held_by(port, 777)
        })
        .await;
        assert_eq!(outcome, Err(NotOurs::OtherProcess));

        // As this system's table shows it: the squatter is this test's process, and the child
        // a process id that no process has.
        let outcome = identify(&client(), &root, port, 0x3FFF_FFF0, "the-key").await;
        if cfg!(any(target_os = "linux", target_os = "macos", windows)) {
            assert_eq!(outcome, Err(NotOurs::OtherProcess));
        } else {
            assert_eq!(outcome, Err(NotOurs::OwnerUnknown));
        }

        assert_eq!(keys.lock().unwrap().clone(), Vec::<String>::new());
        assert_eq!(
            NotOurs::OwnerUnknown.describe(),
            "the system did not say which process holds the socket listening there, and the API key goes only to the llama-server Tooltrail started"
        );
    }

    #[test]
    fn the_template_caps_decide_and_else_the_template_itself() {
        assert!(!template_renders_tools(&json!({
            "chat_template": "{% for tools in x %}",
            "chat_template_caps": {"supports_tools": false}
        })));
        assert!(template_renders_tools(&json!({
            "chat_template": "",
            "chat_template_caps": {"supports_tools": true}
        })));
        assert!(template_renders_tools(&json!({
            "chat_template": "{% if tools %}<tools>{% endif %}"
        })));
        assert!(!template_renders_tools(&json!({
            "chat_template": "{% for message in messages %}{{ message.content }}{% endfor %}"
        })));
        assert!(!template_renders_tools(&json!({})));
    }
}
