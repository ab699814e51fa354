//! The model's context window: how many tokens a request and its answer may take together.
//!
//! Set by the user ([`LlmConfig::context_window`]), else asked of the server once per client:
//! the model list (vLLM's `max_model_len`, LM Studio's `loaded_context_length`, OpenRouter's
//! `context_length`), llama.cpp's `GET /props` (`default_generation_settings.n_ctx`, the window
//! of one slot), Ollama's `POST /api/show` (a `num_ctx` the model's Modelfile sets) and
//! `GET /api/ps` (the window a loaded model runs with), LM Studio's `GET /api/v0/models/{id}`.
//! A server that says nothing gets a default: 8,192 tokens on this machine or a private
//! network (what the small models such servers run are trained for at least; the servers that
//! give a model less, Ollama and LM Studio, say so and are asked first), and 32,768 for a
//! service elsewhere, all of which offer at least that. A default is a guess, so a caller
//! should not refuse a request for exceeding it.
//!
//! For Ollama, the window it runs the model with is read (a model given more with
//! `OLLAMA_CONTEXT_LENGTH` or a Modelfile's `num_ctx` is seen with it), and every request also
//! asks for the window (`options.num_ctx`, see the client), so that a configured window larger
//! than Ollama's default is the one the model is loaded with, where Ollama takes the field.

use std::net::IpAddr;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::config::LlmConfig;
use crate::transport::{read_body, send};

/// The window of a model on this machine or a private network that says nothing.
pub const LOCAL_DEFAULT_WINDOW: u32 = 8192;
/// The window of a model served elsewhere that says nothing.
pub const REMOTE_DEFAULT_WINDOW: u32 = 32_768;
/// Ollama's window for a model that sets none, on a machine with less than 24 GiB of VRAM.
const OLLAMA_DEFAULT_WINDOW: u32 = 4096;
/// LM Studio's window for a model loaded without one.
const LM_STUDIO_DEFAULT_WINDOW: u32 = 4096;
/// The longest wait for one of the questions about the window.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest answer read for them.
const MAX_PROBE_BODY: usize = 4 * 1024 * 1024;

/// A context window and where its size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextWindow {
    pub tokens: u32,
    pub source: WindowSource,
}

/// Where a context window's size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// The settings (`context_window`, `--context-window`).
    Configured,
    /// The server's model list.
    ModelList,
    /// llama.cpp's `/props`.
    LlamaCpp,
    /// Ollama's `/api/show` or `/api/ps`, or Ollama's own default.
    Ollama,
    /// LM Studio's `/api/v0/models`.
    LmStudio,
    /// Nothing said it: the default for where the server is.
    Default,
}

impl WindowSource {
    /// Where the size came from, as the end of a sentence ("the window … was …").
    pub fn describe(self) -> &'static str {
        match self {
            Self::Configured => "set in the settings",
            Self::ModelList => "read from the server's model list",
            Self::LlamaCpp => "read from llama.cpp's /props",
            Self::Ollama => "read from Ollama",
            Self::LmStudio => "read from LM Studio",
            Self::Default => "a default, since the server did not say (set context_window)",
        }
    }
}

/// The default window for a server at `base_url`.
pub fn default_window(base_url: &str) -> u32 {
    let local = reqwest::Url::parse(base_url)
        .ok()
        .and_then(|url| url.host_str().map(str::to_string))
        .is_some_and(|host| is_local(&host));
    if local {
        LOCAL_DEFAULT_WINDOW
    } else {
        REMOTE_DEFAULT_WINDOW
    }
}

fn is_local(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") || host.ends_with(".local") {
        return true;
    }
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(IpAddr::V6(ip)) => ip.is_loopback() || (ip.segments()[0] & 0xfe00) == 0xfc00,
        Err(_) => false,
    }
}

/// Whether `base_url` is on Ollama's port.
pub(crate) fn is_ollama_port(base_url: &str) -> bool {
    reqwest::Url::parse(base_url)
        .ok()
        .and_then(|url| url.port())
        == Some(11434)
}

/// Asks the server, most likely kind first; `None` when none of them says.
pub(crate) async fn discover(
    http: &reqwest::Client,
    config: &LlmConfig,
    cancel: &CancellationToken,
) -> Option<ContextWindow> {
    let probe = Probe::new(http, config, cancel);
    let ollama_port = is_ollama_port(&config.base_url);
    if ollama_port && let Some(window) = probe.ollama().await {
        return Some(window);
    }
    if let Some(window) = probe.model_list().await {
        return Some(window);
    }
    if let Some(window) = probe.llama_cpp().await {
        return Some(window);
    }
    if !ollama_port && let Some(window) = probe.ollama().await {
        return Some(window);
    }
    probe.lm_studio().await
}

/// Whether the model sees images, as the server says: Ollama's `/api/show` (`capabilities`
/// holding `vision`), llama.cpp's `/props` (`modalities.vision`, true when it runs with a
/// projector), LM Studio's `/api/v0/models/{id}` (`type` `vlm`). `None` when none says.
pub(crate) async fn discover_vision(
    http: &reqwest::Client,
    config: &LlmConfig,
    cancel: &CancellationToken,
) -> Option<bool> {
    let probe = Probe::new(http, config, cancel);
    let ollama_port = is_ollama_port(&config.base_url);
    if ollama_port && let Some(vision) = probe.ollama_vision().await {
        return Some(vision);
    }
    if let Some(vision) = probe.llama_cpp_vision().await {
        return Some(vision);
    }
    if let Some(vision) = probe.lm_studio_vision().await {
        return Some(vision);
    }
    if !ollama_port {
        return probe.ollama_vision().await;
    }
    None
}

/// The questions about the window, each one try with a short timeout.
struct Probe<'a> {
    http: &'a reqwest::Client,
    /// At the base URL (`…/v1`).
    api: LlmConfig,
    /// At the server's root, where llama.cpp, Ollama and LM Studio answer their own paths.
    root: LlmConfig,
    model: &'a str,
    cancel: &'a CancellationToken,
}

impl<'a> Probe<'a> {
    fn new(
        http: &'a reqwest::Client,
        config: &'a LlmConfig,
        cancel: &'a CancellationToken,
    ) -> Self {
        let mut api = config.clone();
        api.max_attempts = 1;
        api.idle_timeout = PROBE_TIMEOUT;
        let mut root = api.clone();
        root.base_url = server_root(&config.base_url);
        Self {
            http,
            api,
            root,
            model: &config.model,
            cancel,
        }
    }

    async fn get(
        &self,
        config: &LlmConfig,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Option<Value> {
        let response = send(self.http, config, method, path, body, self.cancel)
            .await
            .ok()?;
        let body = read_body(response, config, self.cancel, MAX_PROBE_BODY)
            .await
            .ok()?;
        serde_json::from_slice(&body).ok()
    }

    /// llama.cpp's `/props`.
    async fn props(&self) -> Option<Value> {
        self.get(&self.root, Method::GET, "props", None).await
    }

    /// Ollama's `/api/show` for the model.
    async fn ollama_show(&self) -> Option<Value> {
        self.get(
            &self.root,
            Method::POST,
            "api/show",
            Some(&json!({ "model": self.model })),
        )
        .await
    }

    /// LM Studio's `/api/v0/models/{id}` for the model.
    async fn lm_studio_model(&self) -> Option<Value> {
        let path = format!("api/v0/models/{}", self.model);
        self.get(&self.root, Method::GET, &path, None).await
    }

    async fn model_list(&self) -> Option<ContextWindow> {
        let list = self.get(&self.api, Method::GET, "models", None).await?;
        let models = list.get("data").and_then(Value::as_array)?;
        let model = models
            .iter()
            .find(|entry| entry.get("id").and_then(Value::as_str) == Some(self.model))
            .or_else(|| (models.len() == 1).then(|| &models[0]))?;
        let tokens = ["loaded_context_length", "max_model_len", "context_length"]
            .iter()
            .find_map(|field| positive(model.get(*field)))?;
        Some(ContextWindow {
            tokens,
            source: WindowSource::ModelList,
        })
    }

    async fn llama_cpp(&self) -> Option<ContextWindow> {
        let props = self.props().await?;
        let tokens = positive(props.pointer("/default_generation_settings/n_ctx"))
            .or_else(|| positive(props.get("n_ctx")))?;
        Some(ContextWindow {
            tokens,
            source: WindowSource::LlamaCpp,
        })
    }

    async fn ollama(&self) -> Option<ContextWindow> {
        let shown = self
            .ollama_show()
            .await
            // Ollama's answer describes the model; anything else is some other server's.
            .filter(|shown| {
                ["model_info", "details", "parameters"]
                    .iter()
                    .any(|key| shown.get(key).is_some())
            })?;
        let window = |tokens| ContextWindow {
            tokens,
            source: WindowSource::Ollama,
        };
        if let Some(tokens) = shown
            .get("parameters")
            .and_then(Value::as_str)
            .and_then(modelfile_num_ctx)
        {
            return Some(window(tokens));
        }
        let running = self.get(&self.root, Method::GET, "api/ps", None).await;
        if let Some(tokens) = running.as_ref().and_then(|ps| {
            ps.get("models")?
                .as_array()?
                .iter()
                .find(|entry| {
                    [entry.get("name"), entry.get("model")]
                        .iter()
                        .any(|name| name.and_then(Value::as_str) == Some(self.model))
                })
                .and_then(|entry| positive(entry.get("context_length")))
        }) {
            return Some(window(tokens));
        }
        // Not loaded, no window of its own: Ollama's default, unless the model is smaller.
        let trained = shown
            .get("model_info")
            .and_then(Value::as_object)
            .and_then(|info| {
                info.iter()
                    .find(|(key, _)| key.ends_with(".context_length"))
                    .and_then(|(_, value)| positive(Some(value)))
            });
        Some(window(trained.map_or(OLLAMA_DEFAULT_WINDOW, |trained| {
            trained.min(OLLAMA_DEFAULT_WINDOW)
        })))
    }

    async fn ollama_vision(&self) -> Option<bool> {
        let shown = self.ollama_show().await?;
        let capabilities = shown.get("capabilities")?.as_array()?;
        Some(
            capabilities
                .iter()
                .any(|capability| capability.as_str() == Some("vision")),
        )
    }

    async fn llama_cpp_vision(&self) -> Option<bool> {
        self.props()
            .await?
            .pointer("/modalities/vision")
            .and_then(Value::as_bool)
    }

    async fn lm_studio(&self) -> Option<ContextWindow> {
        let model = self.lm_studio_model().await?;
        let tokens = positive(model.get("loaded_context_length")).or_else(|| {
            positive(model.get("max_context_length")).map(|most| most.min(LM_STUDIO_DEFAULT_WINDOW))
        })?;
        Some(ContextWindow {
            tokens,
            source: WindowSource::LmStudio,
        })
    }

    async fn lm_studio_vision(&self) -> Option<bool> {
        let model = self.lm_studio_model().await?;
        let kind = model.get("type").and_then(Value::as_str)?;
        Some(kind == "vlm")
    }
}

/// The server's root: the base URL without its API version (`http://h:8080/v1` → `http://h:8080`).
pub(crate) fn server_root(base_url: &str) -> String {
    let trimmed = base_url.trim_end_matches('/');
    match trimmed.rsplit_once('/') {
        Some((root, last)) if last.eq_ignore_ascii_case("v1") && root.contains("://") => {
            root.to_string()
        }
        _ => trimmed.to_string(),
    }
}

/// `num_ctx` in an Ollama Modelfile's parameters (`num_ctx 8192` on a line of its own).
pub fn modelfile_num_ctx(parameters: &str) -> Option<u32> {
    parameters.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next() == Some("num_ctx"))
            .then(|| words.next()?.parse::<u32>().ok())
            .flatten()
            .filter(|tokens| *tokens > 0)
    })
}

/// A positive count of tokens, as a server's JSON gives it.
pub fn positive(value: Option<&Value>) -> Option<u32> {
    value
        .and_then(Value::as_u64)
        .filter(|tokens| *tokens > 0)
        .map(|tokens| u32::try_from(tokens).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_drops_the_api_version() {
        assert_eq!(server_root("http://h:8080/v1"), "http://h:8080");
        assert_eq!(server_root("http://h:8080/v1/"), "http://h:8080");
        assert_eq!(
            server_root("https://openrouter.ai/api/v1"),
            "https://openrouter.ai/api"
        );
        assert_eq!(server_root("http://h:8080"), "http://h:8080");
    }

    #[test]
    fn local_servers_get_the_small_default() {
        assert_eq!(default_window("http://localhost:11434/v1"), 8192);
        assert_eq!(default_window("http://127.0.0.1:8080/v1"), 8192);
        assert_eq!(default_window("http://192.168.1.20:1234/v1"), 8192);
        assert_eq!(default_window("http://[::1]:8080/v1"), 8192);
        assert_eq!(default_window("https://api.deepseek.com/v1"), 32_768);
    }

    #[test]
    fn a_modelfile_window_is_read_from_its_parameters() {
        assert_eq!(
            modelfile_num_ctx("stop \"<|im_end|>\"\nnum_ctx                        16384\n"),
            Some(16384)
        );
        assert_eq!(modelfile_num_ctx("temperature 0.7"), None);
    }
}
