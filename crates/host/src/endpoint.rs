//! A model endpoint asked, once and quickly, which models it serves: Settings' "Test
//! connection" and the first-run guide's look at the configured endpoint.

use std::time::Duration;

/// How long to wait for the endpoint, and who may ask it.
pub struct EndpointProbe {
    pub base_url: String,
    pub api_key: Option<String>,
    /// How long it may take to accept a connection.
    pub connect: Duration,
    /// How long it may take to answer.
    pub answer: Duration,
}

impl EndpointProbe {
    /// The models the endpoint lists, asked once (no retry); `Err` is the reason in a sentence
    /// a person reads.
    pub async fn models(self) -> Result<Vec<String>, String> {
        let mut config = tooltrail_llm::LlmConfig::new(self.base_url, String::new());
        config.api_key = self.api_key;
        config.connect_timeout = self.connect;
        config.idle_timeout = self.answer;
        config.max_attempts = 1;
        let client = tooltrail_llm::LlmClient::new(config).map_err(|error| error.to_string())?;
        client
            .list_models()
            .await
            .map_err(|error| error.to_string())
    }
}
