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
    /// The name of the field that bounds the answer's length. `None` chooses from the base
    /// URL: OpenAI's own API wants `max_completion_tokens` (its newer models refuse
    /// `max_tokens`), every other server `max_tokens`.
    pub max_tokens_field: Option<MaxTokensField>,
    /// Whether the model sees images: the images tools return then go to it as image parts;
    /// otherwise it is told in words what came back and that it cannot see it.
    pub vision: bool,
    /// Ask for the prompt's reading progress while a streamed answer has not begun
    /// (llama.cpp's `return_progress`): for the runtime Tooltrail runs itself. A server whose
    /// `/props` told its window is asked too; no other, since OpenAI's API refuses fields it
    /// does not know.
    pub prompt_progress: bool,
}

/// The request field that bounds the answer's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxTokensField {
    MaxTokens,
    MaxCompletionTokens,
}

impl MaxTokensField {
    /// The field's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxTokens => "max_tokens",
            Self::MaxCompletionTokens => "max_completion_tokens",
        }
    }

    /// Reads `max_tokens` or `max_completion_tokens`.
    pub fn parse(word: &str) -> Option<Self> {
        match word.trim() {
            "max_tokens" => Some(Self::MaxTokens),
            "max_completion_tokens" => Some(Self::MaxCompletionTokens),
            _ => None,
        }
    }
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
            max_tokens_field: None,
            vision: false,
            prompt_progress: false,
        }
    }

    /// The field that bounds the answer's length for this endpoint (see
    /// [`LlmConfig::max_tokens_field`]).
    pub fn answer_limit_field(&self) -> MaxTokensField {
        self.max_tokens_field.unwrap_or_else(|| {
            let openai = reqwest::Url::parse(&self.base_url)
                .ok()
                .and_then(|url| url.host_str().map(|host| host == "api.openai.com"))
                .unwrap_or(false);
            if openai {
                MaxTokensField::MaxCompletionTokens
            } else {
                MaxTokensField::MaxTokens
            }
        })
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
            .field("max_tokens_field", &self.max_tokens_field)
            .field("vision", &self.vision)
            .field("prompt_progress", &self.prompt_progress)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_gets_max_completion_tokens_and_others_max_tokens() {
        let openai = LlmConfig::new("https://api.openai.com/v1", "gpt-5-mini");
        assert_eq!(
            openai.answer_limit_field(),
            MaxTokensField::MaxCompletionTokens
        );
        let local = LlmConfig::new("http://127.0.0.1:8080/v1", "m");
        assert_eq!(local.answer_limit_field(), MaxTokensField::MaxTokens);
        let chosen = LlmConfig {
            max_tokens_field: Some(MaxTokensField::MaxCompletionTokens),
            ..local
        };
        assert_eq!(
            chosen.answer_limit_field(),
            MaxTokensField::MaxCompletionTokens
        );
    }

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
