//! What llama-server says about itself: whether it is ready (`GET /health`) and whether its
//! chat template can render tools (`GET /props`).

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

/// Whether the chat template llama-server uses renders `tools`, from `/props`; `None` when it
/// could not be asked.
pub(crate) async fn tools_in_template(
    client: &reqwest::Client,
    root: &str,
    api_key: &str,
) -> Option<bool> {
    let props: Value = client
        .get(format!("{root}/props"))
        .bearer_auth(api_key)
        .send()
        .await
        .ok()?
        .error_for_status()
        .ok()?
        .json()
        .await
        .ok()?;
    Some(template_renders_tools(&props))
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
