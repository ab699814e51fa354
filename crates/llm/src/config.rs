//! Where and how to reach the model.

use std::fmt;
use std::time::Duration;

use tooltrail_protocol::ToolMode;

/// Where and how to reach the model.
///
/// `Debug` never shows the API key, so a config can be logged or put in an error report.
#[derive(Clone)]
pub struct LlmConfig {
    /// Base URL including the version path, e.g. `http://localhost:11434/v1`.
    pub base_url: String,
    pub model: String,
    /// Sent as a bearer token when set. Never logged or shown.
    pub api_key: Option<String>,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Longest wait for the first byte of a response, and between two chunks of a stream.
    pub idle_timeout: Duration,
    /// Tries per request, counting the first (408, 429, 5xx and connection failures retry).
    pub max_attempts: u32,
    /// First back-off between two tries when the server gives no `Retry-After`; it doubles with
    /// every further try and is jittered, so that many clients do not come back all at once.
    pub retry_base_delay: Duration,
    /// Longest wait between two tries, whatever `Retry-After` asks for.
    pub max_retry_delay: Duration,
    /// How tools are offered to this model: natively, described in the prompt, or natively
    /// until the server refuses them (the default). Set it from the provider's setting, or
    /// from what an earlier answer's [`ChatResponse::tool_mode_used`](crate::ChatResponse)
    /// showed for this provider and model.
    pub tool_mode: ToolMode,
    /// The model's context window in tokens, when the user set it; `None` asks the server
    /// (see [`LlmClient::context_window`](crate::LlmClient::context_window)).
    pub context_window: Option<u32>,
}

impl LlmConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            max_attempts: 3,
            retry_base_delay: Duration::from_millis(500),
            max_retry_delay: Duration::from_secs(30),
            tool_mode: ToolMode::Auto,
            context_window: None,
        }
    }

    /// The same config with this tool mode.
    pub fn with_tool_mode(mut self, tool_mode: ToolMode) -> Self {
        self.tool_mode = tool_mode;
        self
    }

    /// The same config with a bearer key.
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// `base_url` joined with `path` (`chat/completions`, `models`), whatever trailing slashes
    /// the user typed.
    pub(crate) fn endpoint(&self, path: &str) -> String {
        format!("{}/{}", self.base_url.trim_end_matches('/'), path)
    }
}

impl fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("connect_timeout", &self.connect_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_attempts", &self.max_attempts)
            .field("retry_base_delay", &self.retry_base_delay)
            .field("max_retry_delay", &self.max_retry_delay)
            .field("tool_mode", &self.tool_mode)
            .field("context_window", &self.context_window)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_key() {
        let config = LlmConfig::new("http://localhost:1/v1", "m").with_api_key("sk-secret-123");
        let shown = format!("{config:?} {:#?}", config);
        assert!(!shown.contains("sk-secret-123"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }

    #[test]
    fn endpoint_ignores_trailing_slashes() {
        let config = LlmConfig::new("http://localhost:1/v1/", "m");
        assert_eq!(config.endpoint("models"), "http://localhost:1/v1/models");
    }
}
