//! The prompt prefix every question begins with (the system prompt and the tools), kept on
//! disk as llama-server's saved slot so that a runtime that starts again does not read it
//! again.
//!
//! llama-server runs with `--slot-save-path <runtime>/prefixes` and `--swa-full` (a saved
//! slot of a sliding-window model such as Gemma 3 is of no use without the whole cache, and
//! the context was sized for a whole cache anyway, see `supervisor/context.rs`). When a
//! runtime has started, [`Prefixes::warm`]:
//! 1. renders the first request of a question through the server's own template
//!    (`POST /apply-template`), with a marker where the question goes: the text before it is
//!    the prefix, byte for byte what the question's request will begin with;
//! 2. restores the slot saved for it (`POST /slots/0?action=restore`), when there is one;
//! 3. else has the server read the prefix (`POST /completion` with nothing to predict) and
//!    saves the slot (`action=save`).
//!
//! The files are kept in a [`PrefixStore`] (`prefix_store.rs`: their names, the folder's size
//! bound, and [`PrefixStore::remove_model`], which drops a model's files with the model). A
//! file the server will not restore (damaged, from another build) is removed and the prefix
//! read again: a question never fails for it.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::prefix_store::PrefixStore;
use crate::supervisor::{Endpoint, RuntimeDir};

/// Stands where the question goes in the request rendered to find the prefix: a character
/// no question starts with and no template writes.
pub const QUESTION_MARK: &str = "\u{2063}tooltrail-question\u{2063}";

/// What [`Prefixes::warm`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warmed {
    /// The prefix came back from disk (else the server read it, and it was saved).
    pub restored: bool,
    /// Its tokens.
    pub tokens: u32,
    /// Those the server computed (the rest came from its cache); 0 when restored.
    pub computed: u32,
    /// How long it took.
    pub millis: u64,
}

/// The saved prefixes of a running runtime, and the llama-server they go in and out of.
#[derive(Debug, Clone)]
pub struct Prefixes {
    endpoint: Endpoint,
    store: PrefixStore,
    runtime: RuntimeDir,
    /// The served model's SHA-256, which names its files.
    model_sha256: String,
}

impl Prefixes {
    /// Those of the runtime in `runtime_dir` serving at `endpoint` the model whose file hashes
    /// to `model_sha256`.
    pub fn new(endpoint: Endpoint, runtime_dir: &Path, model_sha256: String) -> Self {
        Self {
            endpoint,
            store: PrefixStore::in_runtime_dir(runtime_dir),
            runtime: RuntimeDir::from_root(runtime_dir.to_path_buf()),
            model_sha256,
        }
    }

    /// Puts the prefix of `first_request` (a chat body whose question is [`QUESTION_MARK`]) in
    /// the runtime's slot: from disk when it was saved, else read by the server and saved.
    /// What happened goes to the runtime's log (`supervisor.log`); an error is a sentence
    /// there, and the question goes on without the warm-up.
    ///
    /// `shorter` is a request whose prefix begins this one's (every question's, before a
    /// folder's): when this one has to be read, that one is restored first (or read and
    /// saved), so the server reads only the rest. The slot's own text is no help there: a
    /// sliding-window model keeps too little of it to go back further than its window from
    /// where the last answer ended.
    pub async fn warm(
        &self,
        first_request: &Value,
        shorter: Option<&Value>,
    ) -> Result<Warmed, String> {
        let result = self.put_in_slot(first_request, shorter).await;
        let line = match &result {
            Ok(warmed) if warmed.restored => format!(
                "prefix: restored {} tokens from disk in {} ms",
                warmed.tokens, warmed.millis
            ),
            Ok(warmed) => format!(
                "prefix: read {} tokens ({} computed) and saved them in {} ms; saved prefixes take {} bytes",
                warmed.tokens,
                warmed.computed,
                warmed.millis,
                self.store.disk_used()
            ),
            Err(error) => format!("prefix: not warmed: {error}"),
        };
        if let Ok(mut log) = std::fs::File::options()
            .create(true)
            .append(true)
            .open(self.runtime.supervisor_log())
        {
            use std::io::Write as _;
            let _ = writeln!(log, "{}", crate::supervisor::stamped(&line));
        }
        result
    }

    async fn put_in_slot(
        &self,
        first_request: &Value,
        shorter: Option<&Value>,
    ) -> Result<Warmed, String> {
        let started = Instant::now();
        let store = &self.store;
        let server = Server::new(&self.endpoint)?;
        let rendered = server.post("apply-template", first_request).await?;
        let prompt = rendered
            .get("prompt")
            .and_then(Value::as_str)
            .ok_or("llama-server rendered no prompt")?;
        let prefix = prompt
            .find(QUESTION_MARK)
            .map(|at| &prompt[..at])
            .ok_or("the chat template left the question out of the prompt")?;
        let name = PrefixStore::file_name(&self.model_sha256, self.endpoint.context_size, prefix);
        let millis = |started: Instant| u64::try_from(started.elapsed().as_millis()).unwrap_or(0);
        if store.dir().join(&name).is_file() {
            match server
                .post("slots/0?action=restore", &json!({ "filename": name }))
                .await
            {
                Ok(answer) if count(&answer, "/n_restored") > 0 => {
                    store.touch(&name);
                    return Ok(Warmed {
                        restored: true,
                        tokens: count(&answer, "/n_restored"),
                        computed: 0,
                        millis: millis(started),
                    });
                }
                // Damaged, cut short, or from another build of llama-server: read again below.
                Ok(_) | Err(_) => {
                    let _ = std::fs::remove_file(store.dir().join(&name));
                }
            }
        }
        if let Some(shorter) = shorter {
            // Its own line in the log; a failure leaves this one to read the whole prefix.
            let _ = Box::pin(self.warm(shorter, None)).await;
        }
        let read = server
            .post(
                "completion",
                &json!({ "prompt": prefix, "n_predict": 0, "cache_prompt": true }),
            )
            .await?;
        std::fs::create_dir_all(store.dir()).map_err(|error| {
            format!(
                "the prefix could not be saved in {}: {error}",
                store.dir().display()
            )
        })?;
        let saved = server
            .post("slots/0?action=save", &json!({ "filename": name }))
            .await?;
        store.trim(&name);
        Ok(Warmed {
            restored: false,
            tokens: count(&saved, "/n_saved").max(count(&read, "/tokens_evaluated")),
            computed: count(&read, "/timings/prompt_n"),
            millis: millis(started),
        })
    }
}

/// The count at `pointer` in llama-server's answer; 0 where it says none.
fn count(answer: &Value, pointer: &str) -> u32 {
    answer
        .pointer(pointer)
        .and_then(Value::as_u64)
        .and_then(|count| u32::try_from(count).ok())
        .unwrap_or(0)
}

/// llama-server at the root of an endpoint, with its key.
struct Server<'a> {
    client: reqwest::Client,
    root: String,
    key: &'a str,
}

impl<'a> Server<'a> {
    fn new(endpoint: &'a Endpoint) -> Result<Self, String> {
        let root = endpoint
            .base_url
            .trim_end_matches('/')
            .trim_end_matches("/v1")
            .to_string();
        // Loopback only: no proxy. Reading a long prefix on a slow machine takes minutes.
        let client = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(600))
            .build()
            .map_err(|error| format!("no HTTP client for llama-server: {error}"))?;
        Ok(Self {
            client,
            root,
            key: &endpoint.api_key,
        })
    }

    async fn post(&self, path: &str, body: &Value) -> Result<Value, String> {
        let response = self
            .client
            .post(format!("{}/{path}", self.root))
            .bearer_auth(self.key)
            .json(body)
            .send()
            .await
            .map_err(|error| format!("llama-server did not answer /{path}: {error}"))?;
        let status = response.status();
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            let why = answer
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("no reason given");
            return Err(format!(
                "llama-server refused /{path} (HTTP {}): {why}",
                status.as_u16()
            ));
        }
        Ok(answer)
    }
}
