//! The model servers already running: Ollama, LM Studio, llama.cpp's `llama-server`, vLLM,
//! Jan, and any server at a URL the user lists (`detect_urls` in `config.toml`).
//!
//! A [`Target`] is one address to look at. [`default_targets`] gives the usual ones: each
//! server's default port on 127.0.0.1 (Ollama's address from `OLLAMA_HOST` when it is set),
//! then the user's URLs. [`detect`] looks at every target at once and returns the servers that
//! answered, in target order, each with its kind, the OpenAI-compatible base URL to put in a
//! provider, and its models with what each can do ([`FoundModel`]). It never fails: a target
//! where nothing answers, or something that is no model server, is left out.
//!
//! ```no_run
//! # async fn run() -> Result<(), tooltrail_runtime::RuntimeError> {
//! use tooltrail_runtime::detect::{default_targets, detect};
//!
//! let found = detect(&default_targets(&["http://192.168.1.20:8080/v1".to_string()])?).await;
//! for server in &found {
//!     println!("{} at {}", server.kind.name(), server.base_url);
//!     for model in &server.models {
//!         println!("  {} (tools: {:?})", model.id, model.tools);
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! **What a server is** comes from its answers, not its port (llama-server is as often on 8000
//! as vLLM is on 8080). Four questions go to every target together: the OpenAI model list
//! (`GET /v1/models`), llama.cpp's `GET /props`, Ollama's `GET /api/tags` and LM Studio's
//! `GET /api/v0/models`. The first that answers in its server's own shape names the server, in
//! this order: llama.cpp (`/props` with `default_generation_settings`; checked first because
//! some llama-server builds also answer `/api/tags` for Ollama's clients), LM Studio, Ollama,
//! then the model list alone: vLLM when its models say `owned_by: "vllm"`, llama.cpp when they
//! say `"llamacpp"`. A list that cannot tell (it needs a key, or is empty, or the port's usual
//! server has no API of its own, as Jan) is taken to be the port's usual server; anything else
//! that lists models is an OpenAI-compatible server.
//!
//! **What a model can do** is said where the server says it, else `unknown`: Ollama's
//! `POST /api/show` (`capabilities`: `tools`, `vision`; the window from a Modelfile's `num_ctx`
//! or, for a loaded model, `GET /api/ps`; the trained window from `model_info`'s
//! `*.context_length`), LM Studio's list (`capabilities: ["tool_use"]`, `type: "vlm"`,
//! `loaded_context_length`, `max_context_length`), llama.cpp's `/props`
//! (`chat_template_caps.supports_tools`, `modalities.vision`, the slot's `n_ctx`) and model
//! list (`meta.n_ctx_train`), vLLM's `max_model_len`. Embedding-only models are left out: they
//! cannot answer a question.
//!
//! **Time.** Nothing listening refuses a connection at once, so looking at every default port
//! of an idle machine takes a few milliseconds (`scripts/bench-detect`). Connecting may take
//! 250 ms, an answer 500 ms, Ollama's details of one model 2 s; what does not come in time is
//! taken as not there. Plain-HTTP servers on this machine are asked directly, never through a
//! proxy; the others as the model client asks them (proxy settings, verified certificates).

use std::net::IpAddr;
use std::time::Duration;
use tooltrail_llm::{modelfile_num_ctx, positive_tokens};

use futures::future::join_all;
use reqwest::{Client, StatusCode, Url};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::RuntimeError;

/// The longest wait for a connection. A port where nothing listens refuses at once; this only
/// bounds an address that drops packets.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(250);
/// The longest wait for a whole answer to one of the questions that name the server: a server
/// on this machine answers them in milliseconds.
const ANSWER_TIMEOUT: Duration = Duration::from_millis(500);
/// The longest wait for Ollama's details of one model, which it reads from the model's file.
const DETAILS_TIMEOUT: Duration = Duration::from_secs(2);
/// The largest answer read; a model list is a few kilobytes.
const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;
/// Ollama's port unless `OLLAMA_HOST` says otherwise.
const OLLAMA_PORT: u16 = 11434;

/// A kind of model server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    Ollama,
    LmStudio,
    /// llama.cpp's `llama-server`.
    LlamaCpp,
    Vllm,
    Jan,
    /// A server that lists models the OpenAI way and says nothing more about itself.
    #[serde(rename = "openai_compatible")]
    OpenAiCompatible,
}

impl ServerKind {
    /// The server's name as people write it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ollama => "Ollama",
            Self::LmStudio => "LM Studio",
            Self::LlamaCpp => "llama.cpp server",
            Self::Vllm => "vLLM",
            Self::Jan => "Jan",
            Self::OpenAiCompatible => "OpenAI-compatible server",
        }
    }

    /// The port the server listens on unless told otherwise; `None` for a server of no
    /// particular kind.
    pub fn default_port(self) -> Option<u16> {
        match self {
            Self::Ollama => Some(OLLAMA_PORT),
            Self::LmStudio => Some(1234),
            Self::LlamaCpp => Some(8080),
            Self::Vllm => Some(8000),
            Self::Jan => Some(1337),
            Self::OpenAiCompatible => None,
        }
    }
}

/// Whether a server says a model can do something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    Yes,
    No,
    /// The server does not say.
    Unknown,
}

impl Support {
    fn from_flag(flag: Option<bool>) -> Self {
        match flag {
            Some(true) => Self::Yes,
            Some(false) => Self::No,
            None => Self::Unknown,
        }
    }
}

/// A model a server offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct FoundModel {
    /// The name to ask for it by (the `model` of a request).
    pub id: String,
    /// Native tool calling (OpenAI function calling); models without it work in prompt mode.
    pub tools: Support,
    /// Whether it reads images.
    pub vision: Support,
    /// The context window the server runs it with, in tokens, when the server says.
    pub context_window: Option<u32>,
    /// The longest window the model takes (what it was trained for), in tokens, when the
    /// server says; a server may run it with less.
    pub max_context_window: Option<u32>,
}

/// A model server that answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct FoundServer {
    pub kind: ServerKind,
    /// Its OpenAI-compatible base URL, as a provider's `base_url` takes it
    /// (`http://127.0.0.1:11434/v1`).
    pub base_url: String,
    /// The server refused to list its models without an API key; `models` is then empty.
    pub needs_api_key: bool,
    /// Its models, in the server's order.
    pub models: Vec<FoundModel>,
}

/// An address to look for a model server at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Where the OpenAI-compatible API would be (`http://127.0.0.1:11434/v1`).
    api: String,
    /// The server's own root, where llama.cpp, Ollama and LM Studio answer their own paths.
    root: String,
    /// The kind of server usually found here, believed only when the answers cannot tell.
    expect: Option<ServerKind>,
}

impl Target {
    /// A URL the user gave, where any kind of server may answer: an OpenAI-compatible base URL
    /// (`http://192.168.1.20:8080/v1`), or a server's address without a path
    /// (`http://192.168.1.20:8080`, whose API is then taken to be under `/v1`).
    pub fn url(url: &str) -> Result<Self, RuntimeError> {
        let url = url.trim().trim_end_matches('/');
        let parsed = Url::parse(url).map_err(|_| RuntimeError::BadTargetUrl(url.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(RuntimeError::BadTargetUrl(url.to_string()));
        }
        let path = parsed.path().trim_matches('/');
        let (api, root) = if path.is_empty() {
            (format!("{url}/v1"), url.to_string())
        } else {
            match url.rsplit_once('/') {
                Some((root, last)) if last.eq_ignore_ascii_case("v1") => {
                    (url.to_string(), root.to_string())
                }
                _ => (url.to_string(), url.to_string()),
            }
        };
        Ok(Self {
            api,
            root,
            expect: None,
        })
    }

    /// The server of `kind` at `port` on this machine (`http://127.0.0.1:PORT/v1`).
    pub fn local(kind: ServerKind, port: u16) -> Self {
        Self {
            api: format!("http://127.0.0.1:{port}/v1"),
            root: format!("http://127.0.0.1:{port}"),
            expect: Some(kind),
        }
    }

    /// `url` (as [`Target::url`] takes it), where a server of `kind` is usually found.
    pub fn expecting(kind: ServerKind, url: &str) -> Result<Self, RuntimeError> {
        Ok(Self {
            expect: Some(kind),
            ..Self::url(url)?
        })
    }

    /// Where the OpenAI-compatible API would be.
    pub fn base_url(&self) -> &str {
        &self.api
    }

    /// The kind of server usually found here, if any.
    pub fn expected(&self) -> Option<ServerKind> {
        self.expect
    }

    /// Whether it is plain HTTP on this machine.
    fn is_plain_local(&self) -> bool {
        self.api.starts_with("http://") && is_loopback(&self.api)
    }

    /// The same place, whatever the spelling of this machine's name.
    fn same_place(&self, other: &Self) -> bool {
        same_url(&self.api, &other.api)
    }
}

/// Where to look by default: Ollama (at `OLLAMA_HOST` when set), LM Studio, llama.cpp, vLLM
/// and Jan on their default ports of this machine, then `config_urls` (`detect_urls` of
/// `config.toml`) as any kind of server. A URL that is already in the list is not repeated.
pub fn default_targets(config_urls: &[String]) -> Result<Vec<Target>, RuntimeError> {
    let ollama_host = std::env::var("OLLAMA_HOST").ok();
    targets_with(ollama_host.as_deref(), config_urls)
}

fn targets_with(
    ollama_host: Option<&str>,
    config_urls: &[String],
) -> Result<Vec<Target>, RuntimeError> {
    let ollama = ollama_host
        .and_then(ollama_url)
        .and_then(|url| Target::expecting(ServerKind::Ollama, &url).ok())
        .unwrap_or_else(|| Target::local(ServerKind::Ollama, OLLAMA_PORT));
    let mut targets = vec![ollama];
    for kind in [
        ServerKind::LmStudio,
        ServerKind::LlamaCpp,
        ServerKind::Vllm,
        ServerKind::Jan,
    ] {
        if let Some(port) = kind.default_port() {
            targets.push(Target::local(kind, port));
        }
    }
    for url in config_urls {
        let target = Target::url(url)?;
        if !targets.iter().any(|known| known.same_place(&target)) {
            targets.push(target);
        }
    }
    Ok(targets)
}

/// Ollama's address from `OLLAMA_HOST`, read as Ollama reads it: `host`, `host:port`,
/// `scheme://host:port` or `:port`, the port 11434 unless a scheme names another default;
/// a server listening on every interface (`0.0.0.0`) is asked on this machine's loopback.
fn ollama_url(value: &str) -> Option<String> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    let (scheme, rest, default_port) = match value.split_once("://") {
        None => ("http", value, OLLAMA_PORT),
        Some(("http", rest)) => ("http", rest, 80),
        Some(("https", rest)) => ("https", rest, 443),
        Some(_) => return None,
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (host, port) = match authority.rsplit_once(':') {
        // `[::1]:11434`, `host:11434`, `:11434`; a bare IPv6 address has colons but no port.
        Some((host, port))
            if !port.is_empty()
                && port.chars().all(|c| c.is_ascii_digit())
                && (host.is_empty() || !host.contains(':') || host.ends_with(']')) =>
        {
            (host, port.parse::<u16>().unwrap_or(default_port))
        }
        _ => (authority, default_port),
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let host = match bare.parse::<IpAddr>() {
        Ok(ip) if ip.is_unspecified() => "127.0.0.1".to_string(),
        Ok(IpAddr::V6(ip)) => format!("[{ip}]"),
        Ok(IpAddr::V4(ip)) => ip.to_string(),
        Err(_) if bare.is_empty() => "127.0.0.1".to_string(),
        Err(_) => bare.to_string(),
    };
    let path = path.trim_matches('/');
    let path = if path.is_empty() {
        String::new()
    } else {
        format!("/{path}")
    };
    Some(format!("{scheme}://{host}:{port}{path}/v1"))
}

/// Looks at every target at once; the servers that answered, in target order. A server
/// reached through two targets is listed once.
pub async fn detect(targets: &[Target]) -> Vec<FoundServer> {
    let Some(clients) = Clients::new(targets) else {
        return Vec::new();
    };
    let found = join_all(
        targets
            .iter()
            .map(|target| probe(clients.for_target(target), target)),
    )
    .await;
    let mut servers: Vec<FoundServer> = Vec::new();
    for server in found.into_iter().flatten() {
        if !servers
            .iter()
            .any(|known| same_url(&known.base_url, &server.base_url))
        {
            servers.push(server);
        }
    }
    servers
}

/// HTTP clients: one for `http://` servers on this machine, which goes straight to them and
/// holds no certificates (loading the system's takes longer than looking at every port), and
/// one, made only when a target needs it, that honours the proxy settings and verifies
/// certificates as the model client does.
struct Clients {
    local: Client,
    other: Option<Client>,
}

impl Clients {
    fn new(targets: &[Target]) -> Option<Self> {
        let local = Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .no_proxy()
            .tls_certs_only([])
            .build()
            .ok()?;
        let other = if targets.iter().all(Target::is_plain_local) {
            None
        } else {
            Some(
                Client::builder()
                    .connect_timeout(CONNECT_TIMEOUT)
                    .build()
                    .ok()?,
            )
        };
        Some(Self { local, other })
    }

    fn for_target(&self, target: &Target) -> &Client {
        match &self.other {
            Some(other) if !target.is_plain_local() => other,
            _ => &self.local,
        }
    }
}

/// What one question got.
enum Answer {
    Json(Value),
    /// 401 or 403: the server is there and wants a key.
    NeedsKey,
    /// No connection, no answer in time, an error status, or not JSON.
    Nothing,
}

impl Answer {
    fn json(&self) -> Option<&Value> {
        match self {
            Self::Json(value) => Some(value),
            Self::NeedsKey | Self::Nothing => None,
        }
    }
}

async fn ask(request: reqwest::RequestBuilder, timeout: Duration) -> Answer {
    let Ok(mut response) = request.timeout(timeout).send().await else {
        return Answer::Nothing;
    };
    match response.status() {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => return Answer::NeedsKey,
        status if !status.is_success() => return Answer::Nothing,
        _ => {}
    }
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) if body.len() + chunk.len() <= MAX_ANSWER_BYTES => {
                body.extend_from_slice(&chunk);
            }
            Ok(Some(_)) | Err(_) => return Answer::Nothing,
            Ok(None) => break,
        }
    }
    serde_json::from_slice(&body).map_or(Answer::Nothing, Answer::Json)
}

async fn probe(client: &Client, target: &Target) -> Option<FoundServer> {
    let (list, props, tags, lm_studio) = tokio::join!(
        ask(client.get(format!("{}/models", target.api)), ANSWER_TIMEOUT),
        ask(client.get(format!("{}/props", target.root)), ANSWER_TIMEOUT),
        ask(
            client.get(format!("{}/api/tags", target.root)),
            ANSWER_TIMEOUT
        ),
        ask(
            client.get(format!("{}/api/v0/models", target.root)),
            ANSWER_TIMEOUT
        ),
    );
    let entries = list
        .json()
        .and_then(|list| list.get("data"))
        .and_then(Value::as_array);
    let server_api = format!("{}/v1", target.root);
    if let Some(props) = props
        .json()
        .filter(|props| props.get("default_generation_settings").is_some())
    {
        return Some(FoundServer {
            kind: ServerKind::LlamaCpp,
            base_url: server_api,
            needs_api_key: matches!(list, Answer::NeedsKey),
            models: llama_cpp_models(entries.map(Vec::as_slice), Some(props)),
        });
    }
    if let Some(models) = lm_studio.json().and_then(lm_studio_models) {
        return Some(FoundServer {
            kind: ServerKind::LmStudio,
            base_url: server_api,
            needs_api_key: false,
            models,
        });
    }
    if let Some(names) = tags.json().and_then(ollama_names) {
        return Some(FoundServer {
            kind: ServerKind::Ollama,
            base_url: server_api,
            needs_api_key: false,
            models: ollama_models(client, &target.root, names).await,
        });
    }
    let kind = match (&list, entries) {
        (Answer::Nothing, _) => return None,
        // A JSON answer without a model list is some other API.
        (Answer::Json(_), None) => return None,
        (_, Some(entries)) if entries.iter().any(|e| owned_by(e, "vllm")) => ServerKind::Vllm,
        (_, Some(entries)) if entries.iter().any(|e| owned_by(e, "llamacpp")) => {
            ServerKind::LlamaCpp
        }
        (_, Some(entries)) if !entries.is_empty() => match target.expect {
            Some(ServerKind::Jan) => ServerKind::Jan,
            _ => ServerKind::OpenAiCompatible,
        },
        (Answer::NeedsKey | Answer::Json(_), _) => {
            target.expect.unwrap_or(ServerKind::OpenAiCompatible)
        }
    };
    let models = match kind {
        ServerKind::LlamaCpp => llama_cpp_models(entries.map(Vec::as_slice), None),
        _ => entries
            .map(|entries| entries.iter().filter_map(listed_model).collect())
            .unwrap_or_default(),
    };
    Some(FoundServer {
        kind,
        base_url: target.api.clone(),
        needs_api_key: matches!(list, Answer::NeedsKey),
        models,
    })
}

fn owned_by(entry: &Value, owner: &str) -> bool {
    entry.get("owned_by").and_then(Value::as_str) == Some(owner)
}

/// A model of an OpenAI model list, with what the list says of it: the window (vLLM's
/// `max_model_len`, LM Studio's `loaded_context_length`, OpenRouter's `context_length`),
/// tools (`supported_parameters`) and images (`architecture.input_modalities`).
fn listed_model(entry: &Value) -> Option<FoundModel> {
    let id = entry.get("id").and_then(Value::as_str)?.to_string();
    let window = ["loaded_context_length", "max_model_len", "context_length"]
        .iter()
        .find_map(|field| positive_tokens(entry.get(*field)));
    Some(FoundModel {
        id,
        tools: listed(entry.get("supported_parameters"), "tools"),
        vision: listed(entry.pointer("/architecture/input_modalities"), "image"),
        context_window: window.or_else(|| positive_tokens(entry.pointer("/meta/n_ctx"))),
        max_context_window: positive_tokens(entry.pointer("/meta/n_ctx_train")),
    })
}

/// Whether a list the server gives holds `word`; unknown when it gives no such list.
fn listed(list: Option<&Value>, word: &str) -> Support {
    Support::from_flag(
        list.and_then(Value::as_array)
            .map(|items| items.iter().any(|item| item.as_str() == Some(word))),
    )
}

/// llama-server's models: its list (`meta.n_ctx_train`), with what `/props` says of the model
/// it serves (the slot's window, the template's tool support, vision).
fn llama_cpp_models(entries: Option<&[Value]>, props: Option<&Value>) -> Vec<FoundModel> {
    let mut models: Vec<FoundModel> = entries
        .unwrap_or_default()
        .iter()
        .filter_map(listed_model)
        .collect();
    let Some(props) = props else {
        return models;
    };
    let alias = props.get("model_alias").and_then(Value::as_str);
    if models.is_empty()
        && let Some(alias) = alias.filter(|alias| !alias.is_empty())
    {
        models.push(FoundModel {
            id: alias.to_string(),
            tools: Support::Unknown,
            vision: Support::Unknown,
            context_window: None,
            max_context_window: None,
        });
    }
    let single = models.len() == 1;
    for model in &mut models {
        if !single && alias != Some(model.id.as_str()) {
            continue;
        }
        if let Some(window) = positive_tokens(props.pointer("/default_generation_settings/n_ctx")) {
            model.context_window = Some(window);
        }
        let supports_tools = props
            .pointer("/chat_template_caps/supports_tools")
            .and_then(Value::as_bool);
        if supports_tools.is_some() {
            model.tools = Support::from_flag(supports_tools);
        }
        let vision = props.pointer("/modalities/vision").and_then(Value::as_bool);
        if vision.is_some() {
            model.vision = Support::from_flag(vision);
        }
    }
    models
}

/// LM Studio's models from `/api/v0/models`, when the answer is LM Studio's: its entries say
/// their `type` (`llm`, `vlm`, `embeddings`).
fn lm_studio_models(answer: &Value) -> Option<Vec<FoundModel>> {
    let entries = answer.get("data")?.as_array()?;
    if !entries.iter().all(|entry| entry.get("type").is_some()) {
        return None;
    }
    Some(
        entries
            .iter()
            .filter(|entry| entry.get("type").and_then(Value::as_str) != Some("embeddings"))
            .filter_map(|entry| {
                Some(FoundModel {
                    id: entry.get("id")?.as_str()?.to_string(),
                    tools: listed(entry.get("capabilities"), "tool_use"),
                    vision: match entry.get("type").and_then(Value::as_str) {
                        Some("vlm") => Support::Yes,
                        Some("llm") => Support::No,
                        _ => Support::Unknown,
                    },
                    context_window: positive_tokens(entry.get("loaded_context_length")),
                    max_context_window: positive_tokens(entry.get("max_context_length")),
                })
            })
            .collect(),
    )
}

/// The model names of Ollama's `/api/tags`, when the answer is Ollama's.
fn ollama_names(answer: &Value) -> Option<Vec<String>> {
    let models = answer.get("models")?.as_array()?;
    Some(
        models
            .iter()
            .filter_map(|model| {
                model
                    .get("name")
                    .or_else(|| model.get("model"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect(),
    )
}

/// Ollama's models with their details: each model's `/api/show`, and `/api/ps` for the
/// window of the loaded ones, all asked at once.
async fn ollama_models(client: &Client, root: &str, names: Vec<String>) -> Vec<FoundModel> {
    let shows = join_all(names.iter().map(|name| {
        ask(
            client
                .post(format!("{root}/api/show"))
                .json(&json!({ "model": name })),
            DETAILS_TIMEOUT,
        )
    }));
    let (shows, running) = tokio::join!(
        shows,
        ask(client.get(format!("{root}/api/ps")), ANSWER_TIMEOUT)
    );
    let running: &[Value] = running
        .json()
        .and_then(|ps| ps.get("models"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    names
        .into_iter()
        .zip(shows)
        .filter_map(|(name, show)| ollama_model(name, show.json(), running))
        .collect()
}

fn ollama_model(name: String, show: Option<&Value>, running: &[Value]) -> Option<FoundModel> {
    let capabilities = show
        .and_then(|show| show.get("capabilities"))
        .and_then(Value::as_array);
    if let Some(capabilities) = capabilities {
        let has = |word: &str| capabilities.iter().any(|c| c.as_str() == Some(word));
        if has("embedding") && !has("completion") {
            return None;
        }
    }
    let capability = |word: &str| listed(show.and_then(|show| show.get("capabilities")), word);
    let modelfile_window = show
        .and_then(|show| show.get("parameters"))
        .and_then(Value::as_str)
        .and_then(modelfile_num_ctx);
    let loaded_window = running
        .iter()
        .find(|entry| {
            [entry.get("name"), entry.get("model")]
                .iter()
                .any(|n| n.and_then(Value::as_str) == Some(name.as_str()))
        })
        .and_then(|entry| positive_tokens(entry.get("context_length")));
    let trained = show
        .and_then(|show| show.get("model_info"))
        .and_then(Value::as_object)
        .and_then(|info| {
            info.iter()
                .find(|(key, _)| key.ends_with(".context_length"))
                .and_then(|(_, value)| positive_tokens(Some(value)))
        });
    Some(FoundModel {
        tools: capability("tools"),
        vision: capability("vision"),
        // A loaded model runs with what `/api/ps` says, which already counts a Modelfile's.
        context_window: loaded_window.or(modelfile_window),
        max_context_window: trained,
        id: name,
    })
}

fn is_loopback(url: &str) -> bool {
    Url::parse(url)
        .ok()
        .and_then(|url| url.host_str().map(str::to_string))
        .is_some_and(|host| {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            host.eq_ignore_ascii_case("localhost")
                || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
        })
}

/// Whether two URLs name the same place, `localhost` and `127.0.0.1` being one.
fn same_url(a: &str, b: &str) -> bool {
    let normal = |url: &str| {
        url.trim_end_matches('/')
            .to_ascii_lowercase()
            .replacen("://localhost", "://127.0.0.1", 1)
    };
    normal(a) == normal(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn apis(targets: &[Target]) -> Vec<(&str, Option<ServerKind>)> {
        targets
            .iter()
            .map(|target| (target.base_url(), target.expected()))
            .collect()
    }

    #[test]
    fn the_default_targets_are_each_servers_port_then_the_users_urls() {
        let targets = targets_with(
            None,
            &[
                "http://192.168.1.20:8080/v1/".to_string(),
                "http://localhost:1234/v1".to_string(),
                "http://box:9000".to_string(),
            ],
        )
        .unwrap();
        assert_eq!(
            apis(&targets),
            [
                ("http://127.0.0.1:11434/v1", Some(ServerKind::Ollama)),
                ("http://127.0.0.1:1234/v1", Some(ServerKind::LmStudio)),
                ("http://127.0.0.1:8080/v1", Some(ServerKind::LlamaCpp)),
                ("http://127.0.0.1:8000/v1", Some(ServerKind::Vllm)),
                ("http://127.0.0.1:1337/v1", Some(ServerKind::Jan)),
                ("http://192.168.1.20:8080/v1", None),
                ("http://box:9000/v1", None),
            ]
        );
        let error = targets_with(None, &["localhost:8080".to_string()]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the address \"localhost:8080\" to look for a model server at must be an http:// or https:// URL"
        );
    }

    #[test]
    fn ollama_host_is_read_as_ollama_reads_it() {
        let cases = [
            ("0.0.0.0", "http://127.0.0.1:11434/v1"),
            ("0.0.0.0:9999", "http://127.0.0.1:9999/v1"),
            (":9999", "http://127.0.0.1:9999/v1"),
            ("box.local", "http://box.local:11434/v1"),
            ("http://box:8000", "http://box:8000/v1"),
            ("http://box", "http://box:80/v1"),
            ("https://box/ollama/", "https://box:443/ollama/v1"),
            ("[::1]:11500", "http://[::1]:11500/v1"),
            ("::", "http://127.0.0.1:11434/v1"),
        ];
        for (value, url) in cases {
            assert_eq!(ollama_url(value).as_deref(), Some(url), "{value}");
        }
        assert_eq!(ollama_url(" "), None);
        let targets = targets_with(Some("127.0.0.1:11500"), &[]).unwrap();
        assert_eq!(
            apis(&targets)[0],
            ("http://127.0.0.1:11500/v1", Some(ServerKind::Ollama))
        );
    }

    #[test]
    fn a_url_without_a_path_is_a_servers_address_with_its_api_under_v1() {
        let target = Target::url("http://h:8080").unwrap();
        assert_eq!(
            (target.api.as_str(), target.root.as_str()),
            ("http://h:8080/v1", "http://h:8080")
        );
        let target = Target::url("https://openrouter.ai/api/v1").unwrap();
        assert_eq!(
            (target.api.as_str(), target.root.as_str()),
            ("https://openrouter.ai/api/v1", "https://openrouter.ai/api")
        );
        let target = Target::url("http://h/openai").unwrap();
        assert_eq!(
            (target.api.as_str(), target.root.as_str()),
            ("http://h/openai", "http://h/openai")
        );
        assert!(Target::url("ftp://h/v1").is_err());
    }
}
