//! The `local` provider: questions answered by a model of the models folder that Tooltrail
//! serves itself with llama.cpp's `llama-server`, so that nothing else needs installing.
//!
//! When the settings say `local` is active ([`Settings::local`]), the host asks the runtime
//! for an endpoint before it builds the model client: the runtime already up is reused,
//! otherwise one is started (see `tooltrail_runtime::supervisor`). The settings then point at
//! it — its port, its key, the model's name — and, when the model's chat template cannot
//! render tools, auto tool mode becomes prompt mode from the first request: llama-server would
//! otherwise drop the tools without a word, so there would be no refusal to learn from.
//!
//! The question holds the runtime (its [`Lease`](tooltrail_runtime::supervisor::Lease)) for as
//! long as its engine lives, so the runtime does not stop for being idle in the middle of it.

use std::time::{Duration, Instant};

use tooltrail_llm::{ChatRequest, LlmClient};
use tooltrail_protocol::{LocalModelStatus, ToolMode};
use tooltrail_runtime::models::{ModelError, ModelStore};
use tooltrail_runtime::prefix::{self, Prefixes};
use tooltrail_runtime::supervisor::{LocalModel, Running, Runtime, RuntimeOptions};
use tooltrail_settings::{LocalConfig, Settings};
use tooltrail_tools::ToolRegistry;

use crate::error::HostError;

/// Overrides `[local] idle_minutes` in seconds, for tests that watch the runtime stop.
pub const IDLE_SECS_ENV: &str = "TOOLTRAIL_LOCAL_IDLE_SECS";

/// The runtime a question holds, and what its prefix is kept under.
pub(crate) struct Prepared {
    pub running: Running,
    pub prefix: LocalPrefix,
    model: String,
    since: Instant,
}

/// The saved prefixes of the runtime a question holds.
#[derive(Clone)]
pub(crate) struct LocalPrefix(Prefixes);

impl LocalPrefix {
    /// Puts the part of `request` before [`prefix::QUESTION_MARK`] in the runtime's cache:
    /// from disk where it was saved, else read by the server (after `shorter`'s, which begins
    /// it, is put there) and saved. An error is in the runtime's log; the question then reads
    /// the prefix itself.
    pub(crate) async fn warm(
        &self,
        llm: &LlmClient,
        request: &ChatRequest,
        shorter: Option<&ChatRequest>,
    ) {
        let shorter = shorter.map(|request| llm.body_for(request));
        let _ = self.0.warm(&llm.body_for(request), shorter.as_ref()).await;
    }
}

/// When the `local` provider is active: a runtime serving its model, with `settings` pointed
/// at it. `None` for every other provider. `status` hears that the runtime is starting, when
/// it was not running.
pub(crate) async fn prepare(
    settings: &mut Settings,
    status: &(dyn Fn(LocalModelStatus) + Send + Sync),
) -> Result<Option<Prepared>, HostError> {
    let Some(local) = settings.local.clone() else {
        return Ok(None);
    };
    let name = settings.model.clone().ok_or_else(|| {
        HostError::Local(
            "the local provider has no model chosen; pull one with `tooltrail models pull \
             qwen3-1.7b`, or import a GGUF with `tooltrail models import FILE`, then choose it \
             with `tooltrail models use NAME`"
                .to_string(),
        )
    })?;
    let data_dir = tooltrail_settings::data_dir()?;
    let (model, model_sha256) = installed(&name)?;
    let runtime = Runtime::new(&data_dir);
    let since = Instant::now();
    let serving = runtime
        .status()
        .is_some_and(|running| running.state.model == model.name);
    if !serving {
        status(LocalModelStatus::Starting {
            model: name.clone(),
        });
    }
    let running = runtime
        .ensure_running(&model, &options(&local))
        .await
        .map_err(|error| {
            HostError::Local(format!(
                "the local model {name:?} could not be served: {error}"
            ))
        })?;
    let endpoint = &running.endpoint;
    settings.base_url = endpoint.base_url.clone();
    settings.api_key = Some(endpoint.api_key.clone());
    settings.model = Some(endpoint.model.clone());
    if settings.tool_mode == ToolMode::Auto && !endpoint.tools_in_template {
        settings.tool_mode = ToolMode::Prompt;
    }
    let prefix = LocalPrefix(Prefixes::new(
        running.endpoint.clone(),
        runtime.dir().root(),
        model_sha256,
    ));
    Ok(Some(Prepared {
        running,
        prefix,
        model: name,
        since,
    }))
}

impl Prepared {
    /// Puts the prefix every question begins with (the system prompt and `registry`'s tools)
    /// in the runtime's cache when this start brought the runtime up; `status` hears of it,
    /// and that the model is ready. A runtime that was running holds it from its last question.
    pub(crate) async fn warm(
        &self,
        llm: &LlmClient,
        registry: &ToolRegistry,
        status: &(dyn Fn(LocalModelStatus) + Send + Sync),
    ) {
        if !self.running.started {
            return;
        }
        status(LocalModelStatus::Warming {
            model: self.model.clone(),
        });
        let request = tooltrail_agent::first_request(registry, prefix::QUESTION_MARK);
        self.prefix.warm(llm, &request, None).await;
        status(LocalModelStatus::Ready {
            model: self.model.clone(),
            seconds: self.since.elapsed().as_secs_f64(),
        });
    }
}

/// The runtime's options from `[local]` (and the test override of the idle time).
fn options(local: &LocalConfig) -> RuntimeOptions {
    let defaults = RuntimeOptions::default();
    let idle = tooltrail_settings::env(IDLE_SECS_ENV)
        .and_then(|secs| secs.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
        .or_else(|| {
            local
                .idle_minutes
                .map(|minutes| Duration::from_secs(u64::from(minutes) * 60))
        })
        .unwrap_or(defaults.idle);
    RuntimeOptions {
        context_size: local.context_size,
        idle,
        ..defaults
    }
}

/// The installed model called `name`, with what its metadata says, and its SHA-256.
fn installed(name: &str) -> Result<(LocalModel, String), HostError> {
    let failed = |error: ModelError| HostError::Local(error.to_string());
    let store = ModelStore::open_default().map_err(failed)?;
    let model = store.find(name).map_err(failed)?.ok_or_else(|| {
        HostError::Local(format!(
            "there is no model {name:?} in the models folder ({}); `tooltrail models list` \
             shows the models there, and `tooltrail models pull` or `tooltrail models import` \
             adds one",
            store.dir().display()
        ))
    })?;
    let local = LocalModel {
        name: model.name,
        path: model.path,
        trained_context: model
            .metadata
            .context_length
            .and_then(|tokens| u32::try_from(tokens).ok()),
        has_chat_template: model.metadata.has_chat_template,
        kv_bytes_per_token: None,
    };
    Ok((local, model.sha256))
}
