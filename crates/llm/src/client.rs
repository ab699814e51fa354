//! The client: the public entry points, each one request with its retries, sent with tools
//! offered natively or in the prompt as the tool mode says.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use reqwest::Method;
use tokio_util::sync::CancellationToken;
use tooltrail_protocol::{Message, ToolSpec};

use crate::answer::read_answer;
use crate::config::{LlmConfig, MaxTokensField};
use crate::error::LlmError;
use crate::prompt_mode::{self, PromptAnswer};
use crate::request::ChatRequest;
use crate::response::{ChatResponse, StreamDelta};
use crate::tokens::{Calibration, estimate_body};
use crate::tools_refused::tools_refused;
use crate::transport::{read_body, send};
use crate::window::{ContextWindow, WindowSource, default_window, discover, is_ollama_port};
use crate::wire::WireModels;
use tooltrail_protocol::ToolMode;

/// The largest model list accepted.
const MAX_MODELS_BODY: usize = 8 * 1024 * 1024;

/// What auto mode has found out about the server, in [`LlmClient::detected`].
const UNKNOWN: u8 = 0;
const NATIVE: u8 = 1;
const PROMPT: u8 = 2;

/// The client. Cheap to clone: clones share one connection pool, and what auto mode found
/// out about the server.
#[derive(Debug, Clone)]
pub struct LlmClient {
    config: LlmConfig,
    http: reqwest::Client,
    /// In auto mode: whether the server took native tools or refused them. Once refused, every
    /// later request goes in prompt mode at once instead of being refused again.
    detected: Arc<AtomicU8>,
    /// The context window the server named, once asked (see [`LlmClient::context_window`]).
    window: Arc<Mutex<Option<ContextWindow>>>,
    /// How the server's token counts compare with the estimates.
    calibration: Arc<Calibration>,
}

impl LlmClient {
    /// A client for `config`. Fails when the base URL is not an http or https URL.
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let invalid = |detail: &str| LlmError::Unreachable {
            url: config.base_url.clone(),
            detail: detail.to_string(),
        };
        match reqwest::Url::parse(&config.base_url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => {}
            _ => return Err(invalid("it is not an http:// or https:// URL")),
        }
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|_| invalid("the HTTP client could not be set up"))?;
        Ok(Self {
            config,
            http,
            detected: Arc::new(AtomicU8::new(UNKNOWN)),
            window: Arc::new(Mutex::new(None)),
            calibration: Arc::new(Calibration::default()),
        })
    }

    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    pub(crate) fn learned_window(&self) -> Option<ContextWindow> {
        match self.window.lock() {
            Ok(window) => *window,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }

    pub(crate) fn learn_window(&self, window: ContextWindow) {
        match self.window.lock() {
            Ok(mut slot) => *slot = Some(window),
            Err(poisoned) => *poisoned.into_inner() = Some(window),
        }
    }

    /// The estimated number of tokens `request` puts before the model, in the tool mode it
    /// would be sent in (the larger of the two while auto mode has not found out), corrected
    /// by what the server reported for earlier requests. See [`crate::estimate_tokens`].
    pub fn estimate_request(&self, request: &ChatRequest) -> u32 {
        let model = &self.config.model;
        let vision = self.config.vision;
        let native = || estimate_body(&request.to_body_seeing(model, true, vision));
        let prompt = || estimate_body(&prompt_mode::request_body(request, model, true, vision));
        let raw = match (self.config.tool_mode, self.detected.load(Ordering::Relaxed)) {
            (ToolMode::Native, _) | (ToolMode::Auto, NATIVE) => native(),
            (ToolMode::Prompt, _) | (ToolMode::Auto, PROMPT) => prompt(),
            (ToolMode::Auto, _) => native().max(prompt()),
        };
        self.calibration.apply(raw)
    }

    /// The body `request` is sent as, in the tool mode it would go in (native while auto mode
    /// has not found out): for rendering it through the server's template, as the local
    /// runtime does to find the prefix it keeps (see `tooltrail_runtime::prefix`).
    pub fn body_for(&self, request: &ChatRequest) -> serde_json::Value {
        let model = &self.config.model;
        let vision = self.config.vision;
        match (self.config.tool_mode, self.detected.load(Ordering::Relaxed)) {
            (ToolMode::Prompt, _) | (ToolMode::Auto, PROMPT) => {
                prompt_mode::request_body(request, model, true, vision)
            }
            (ToolMode::Native | ToolMode::Auto, _) => request.to_body_seeing(model, true, vision),
        }
    }

    /// How many tokens `texts` take in the model's own tokenizer, each, as llama.cpp's server
    /// counts them (`POST /tokenize` at the server's root); `None` when the server has no such
    /// endpoint (Ollama, vLLM, the cloud), and the caller falls back to the estimate. One short
    /// try per text: this serves a listing, never a question.
    pub async fn count_tokens(&self, texts: &[String]) -> Option<Vec<u32>> {
        let mut counts = Vec::with_capacity(texts.len());
        for text in texts {
            let value = self
                .ask_root("tokenize", &serde_json::json!({ "content": text }))
                .await?;
            let tokens = value.get("tokens")?.as_array()?.len();
            counts.push(u32::try_from(tokens).unwrap_or(u32::MAX));
        }
        Some(counts)
    }

    /// How many tokens `request` takes as the server renders it through its chat template
    /// (llama.cpp's `POST /apply-template`, then `POST /tokenize` with the special tokens):
    /// what the model reads, template included. `None` where the server does not say.
    pub async fn count_rendered(&self, request: &ChatRequest) -> Option<u32> {
        let rendered = self
            .ask_root("apply-template", &self.body_for(request))
            .await?;
        let prompt = rendered.get("prompt")?.as_str()?;
        let body =
            serde_json::json!({ "content": prompt, "add_special": true, "parse_special": true });
        let tokens = self.ask_root("tokenize", &body).await?;
        u32::try_from(tokens.get("tokens")?.as_array()?.len()).ok()
    }

    /// One short try of a POST to the server's root (llama.cpp's own paths), read as JSON.
    async fn ask_root(&self, path: &str, body: &serde_json::Value) -> Option<serde_json::Value> {
        let mut config = self.config.clone();
        config.base_url = crate::window::server_root(&self.config.base_url);
        config.max_attempts = 1;
        config.idle_timeout = std::time::Duration::from_secs(5);
        let cancel = CancellationToken::new();
        let response = send(&self.http, &config, Method::POST, path, Some(body), &cancel)
            .await
            .ok()?;
        let body = read_body(response, &config, &cancel, MAX_MODELS_BODY)
            .await
            .ok()?;
        serde_json::from_slice(&body).ok()
    }

    /// Learns from the usage the server reported for `body`.
    fn calibrate(&self, body: &serde_json::Value, response: &ChatResponse) {
        if let Some(usage) = response.usage {
            self.calibration
                .observe(estimate_body(body), usage.prompt_tokens);
        }
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// In auto mode, what this client (and its clones) found out: `Some(Native)` once the
    /// server took a request with tools, `Some(Prompt)` once it refused tools (from then on
    /// every request is sent in prompt mode). `None` before either, and in native or prompt
    /// mode, which never switch.
    pub fn detected_tool_mode(&self) -> Option<ToolMode> {
        match self.detected.load(Ordering::Relaxed) {
            NATIVE => Some(ToolMode::Native),
            PROMPT => Some(ToolMode::Prompt),
            _ => None,
        }
    }

    /// The plain chat: messages in, answer text out, no tools.
    pub async fn chat(&self, messages: &[Message]) -> Result<String, LlmError> {
        let request = ChatRequest::new(messages.to_vec());
        let response = self.complete(&request, &CancellationToken::new()).await?;
        Ok(response.content)
    }

    /// Non-streaming chat with tools (docs/requirements.md): the tools are offered, and
    /// the server's default tool choice (`auto`) applies.
    pub async fn chat_with_tools(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
    ) -> Result<ChatResponse, LlmError> {
        let request = ChatRequest {
            messages: messages.to_vec(),
            tools: tools.to_vec(),
            ..ChatRequest::default()
        };
        self.complete(&request, &CancellationToken::new()).await
    }

    /// Non-streaming completion of any request.
    pub async fn complete(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, LlmError> {
        self.run(
            request,
            false,
            cancel,
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
    }

    /// Streaming completion. `on_delta` sees every piece as it arrives; the assembled response
    /// is returned when the stream finishes. A stream that ends without a finish reason or
    /// `[DONE]` is `LlmError::Incomplete`. Cancelling `cancel` aborts the HTTP stream at once
    /// and returns `LlmError::Cancelled`.
    pub async fn stream(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, LlmError> {
        self.run(request, true, cancel, &CancellationToken::new(), on_delta)
            .await
    }

    /// [`stream`](Self::stream) that can be stopped early: once `stop` is cancelled (from
    /// `on_delta`, say, on seeing the model repeat itself), no more of the answer is read, the
    /// connection is closed (the server then stops generating), and the answer so far is
    /// returned, finished [`FinishReason::Stopped`](crate::FinishReason::Stopped). Unlike
    /// `cancel`, this is no error: the pieces already seen are the answer.
    pub async fn stream_until(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        stop: &CancellationToken,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, LlmError> {
        self.run(request, true, cancel, stop, on_delta).await
    }

    /// The model ids the endpoint offers (`GET /models`), in the server's order.
    pub async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        let cancel = CancellationToken::new();
        let response = send(
            &self.http,
            &self.config,
            Method::GET,
            "models",
            None,
            &cancel,
        )
        .await?;
        let body = read_body(response, &self.config, &cancel, MAX_MODELS_BODY).await?;
        let models: WireModels = serde_json::from_slice(&body).map_err(|_| {
            LlmError::InvalidResponse("its model list is not the expected JSON".into())
        })?;
        let listed = models.data.or(models.models).ok_or_else(|| {
            LlmError::InvalidResponse("its model list has no `data` field".into())
        })?;
        Ok(listed
            .into_iter()
            .filter_map(|model| model.id.or(model.name))
            .collect())
    }

    /// Sends `request` in the mode the config asks for. In auto mode a request with tools that
    /// the server refuses as unsupported is sent again at once in prompt mode, once; what the
    /// server did is remembered for the requests after it.
    async fn run(
        &self,
        request: &ChatRequest,
        stream: bool,
        cancel: &CancellationToken,
        stop: &CancellationToken,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, LlmError> {
        let auto = self.config.tool_mode == ToolMode::Auto;
        let prompt = match self.config.tool_mode {
            ToolMode::Native => false,
            ToolMode::Prompt => true,
            ToolMode::Auto => self.detected.load(Ordering::Relaxed) == PROMPT,
        };
        if prompt {
            return self
                .run_prompt(request, stream, cancel, stop, on_delta)
                .await;
        }
        let offers_tools = !request.tools.is_empty() || request.tool_choice.is_some();
        match self
            .run_native(request, stream, cancel, stop, on_delta)
            .await
        {
            Err(LlmError::Http {
                status, message, ..
            }) if auto && offers_tools && tools_refused(status, &message) => {
                self.detected.store(PROMPT, Ordering::Relaxed);
                self.run_prompt(request, stream, cancel, stop, on_delta)
                    .await
            }
            Ok(response) => {
                if auto && offers_tools {
                    let _ = self.detected.compare_exchange(
                        UNKNOWN,
                        NATIVE,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                }
                Ok(response)
            }
            Err(error) => Err(error),
        }
    }

    /// Sends `body` to `/chat/completions`, with the retries of `send`.
    async fn post_chat(
        &self,
        body: &serde_json::Value,
        cancel: &CancellationToken,
    ) -> Result<reqwest::Response, LlmError> {
        let field = self.config.answer_limit_field();
        let window = self.ollama_window();
        // Asked of a server known to be llama.cpp's: the runtime's own, or one whose `/props`
        // gave the window.
        let llama_cpp = self
            .learned_window()
            .is_some_and(|window| window.source == WindowSource::LlamaCpp);
        let progress = (self.config.prompt_progress || llama_cpp) && body["stream"] == true;
        let changed = window.is_some() || field != MaxTokensField::MaxTokens || progress;
        let with_window = changed.then(|| {
            let mut body = body.clone();
            if let Some(fields) = body.as_object_mut() {
                if let Some(tokens) = window {
                    fields.insert("options".into(), serde_json::json!({ "num_ctx": tokens }));
                }
                if progress {
                    fields.insert("return_progress".into(), serde_json::json!(true));
                }
                if let Some(limit) = fields.remove("max_tokens") {
                    fields.insert(field.as_str().into(), limit);
                }
            }
            body
        });
        send(
            &self.http,
            &self.config,
            Method::POST,
            "chat/completions",
            Some(with_window.as_ref().unwrap_or(body)),
            cancel,
        )
        .await
    }

    /// The window to ask Ollama for in each request (`options.num_ctx`): Ollama loads a model
    /// with the window a request names and cuts a longer prompt without a word, so it is asked
    /// for the window Tooltrail fits requests to. Only Ollama gets the field (its port, or a
    /// window it reported); other servers are left as they are.
    fn ollama_window(&self) -> Option<u32> {
        let learned = self.learned_window();
        let ollama = learned.is_some_and(|window| window.source == WindowSource::Ollama)
            || is_ollama_port(&self.config.base_url);
        if !ollama {
            return None;
        }
        self.config
            .context_window
            .or(learned.map(|window| window.tokens))
    }

    async fn run_native(
        &self,
        request: &ChatRequest,
        stream: bool,
        cancel: &CancellationToken,
        stop: &CancellationToken,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, LlmError> {
        let body = request.to_body_seeing(&self.config.model, stream, self.config.vision);
        let response = self.post_chat(&body, cancel).await?;
        let answer = read_answer(response, &self.config, cancel, stop, on_delta).await?;
        self.calibrate(&body, &answer);
        Ok(answer)
    }

    async fn run_prompt(
        &self,
        request: &ChatRequest,
        stream: bool,
        cancel: &CancellationToken,
        stop: &CancellationToken,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<ChatResponse, LlmError> {
        let body =
            prompt_mode::request_body(request, &self.config.model, stream, self.config.vision);
        let response = self.post_chat(&body, cancel).await?;
        let mut answer = PromptAnswer::default();
        let assembled = read_answer(response, &self.config, cancel, stop, &mut |delta| {
            answer.delta(delta, &mut *on_delta);
        })
        .await?;
        self.calibrate(&body, &assembled);
        Ok(answer.finish(assembled, on_delta))
    }
}

// The window is asked of the server here, beside the cache it is kept in, so that the
// window module only knows how to ask and never the client.
impl LlmClient {
    /// Whether the model sees images: as configured when the caller set
    /// [`LlmConfig::vision`] from a setting, else as the server says (Ollama, llama.cpp, LM
    /// Studio), and `false` where it does not say. Each path is tried once, briefly; the caller
    /// asks when it builds a client and keeps the answer in that client's config, so a
    /// long-lived front end (the app, `serve`) asks once per endpoint and model.
    pub async fn detect_vision(&self, cancel: &CancellationToken) -> bool {
        crate::window::discover_vision(self.http(), self.config(), cancel)
            .await
            .unwrap_or(false)
    }

    /// The model's context window: as configured, else as the server says (asked once per
    /// client and its clones), else a default. Never fails: a server that cannot be asked
    /// gets the default.
    pub async fn context_window(&self, cancel: &CancellationToken) -> ContextWindow {
        if let Some(tokens) = self.config().context_window {
            return ContextWindow {
                tokens,
                source: WindowSource::Configured,
            };
        }
        if let Some(known) = self.learned_window() {
            return known;
        }
        let learned = discover(self.http(), self.config(), cancel)
            .await
            .unwrap_or_else(|| ContextWindow {
                tokens: default_window(&self.config().base_url),
                source: WindowSource::Default,
            });
        self.learn_window(learned);
        learned
    }
}
