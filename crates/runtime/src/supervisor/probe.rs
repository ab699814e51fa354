//! What llama-server says about itself: whether it is ready (`GET /health`), whether it is
//! the one the supervisor started (the key challenge on `GET /props`, see [`identify`]), and
//! whether its chat template can render tools (`/props` again).

use std::time::Duration;

use serde_json::Value;

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
    /// The listening socket is another process's (Linux).
    OtherProcess,
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
            NotOurs::RefusedKey(why) => format!("it did not take the API key Tooltrail gave llama-server ({why})"),
        }
    }
}

/// Proves that the server at `root` (`http://127.0.0.1:PORT`) is the llama-server started as
/// `server_pid` with `api_key`, before any prompt or the key is sent there, and returns its
/// `/props`. `/props` is not one of llama-server's public paths, so: without the key it must
/// be refused (401); on Linux the listening socket must be the child's own; only then is the
/// key sent, and it must be taken. A program that took the port after it was chosen and
/// released fails the first or the second check without ever seeing the key.
pub(crate) async fn identify(
    client: &reqwest::Client,
    root: &str,
    port: u16,
    server_pid: u32,
    api_key: &str,
) -> Result<Value, NotOurs> {
    let url = format!("{root}/props");
    match client.get(&url).send().await {
        Ok(response) if response.status() == reqwest::StatusCode::UNAUTHORIZED => {}
        Ok(response) => return Err(NotOurs::AnsweredWithoutKey(response.status().as_u16())),
        Err(error) => return Err(NotOurs::RefusedKey(error.to_string())),
    }
    if super::identity::listener_owned_by(server_pid, port) == Some(false) {
        return Err(NotOurs::OtherProcess);
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
