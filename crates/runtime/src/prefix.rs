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
//! A file is named after the model's SHA-256, the context size and the prefix's own hash, so
//! another model, window, tool list or instruction never restores the wrong cache. A file the
//! server will not restore (damaged, from another build) is removed and the prefix read
//! again: a question never fails for it. The folder is kept under a size bound (oldest used
//! first out), and [`PrefixStore::remove_model`] drops a model's files with the model.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::supervisor::{Endpoint, RuntimeDir};

/// What the prefixes may take on disk. One entry is the prefix's key-value cache: about 11 MB
/// for a 270M model's 1,000 tokens, 150 MB for a 4B model's.
pub const DEFAULT_LIMIT_BYTES: u64 = 1024 * 1024 * 1024;

/// Stands where the question goes in the request rendered to find the prefix: a character
/// no question starts with and no template writes.
pub const QUESTION_MARK: &str = "\u{2063}tooltrail-question\u{2063}";

/// The saved prefixes of one runtime folder.
#[derive(Debug, Clone)]
pub struct PrefixStore {
    dir: PathBuf,
    limit_bytes: u64,
}

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

impl PrefixStore {
    /// The store of the runtime folder `runtime_dir` (`<data>/runtime`).
    pub fn in_runtime_dir(runtime_dir: &Path) -> Self {
        Self {
            dir: runtime_dir.join("prefixes"),
            limit_bytes: DEFAULT_LIMIT_BYTES,
        }
    }

    /// The same with another bound on its size.
    pub fn with_limit(mut self, limit_bytes: u64) -> Self {
        self.limit_bytes = limit_bytes;
        self
    }

    /// The folder llama-server saves to (`--slot-save-path`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file name of the prefix `prefix` of the model whose file hashes to `model_sha256`,
    /// in a window of `context` tokens.
    pub fn file_name(model_sha256: &str, context: u32, prefix: &str) -> String {
        let prefix_hash = hex(&Sha256::digest(prefix.as_bytes()));
        format!(
            "{}-{context}-{}.bin",
            model_key(model_sha256),
            &prefix_hash[..16]
        )
    }

    /// Bytes the saved prefixes take.
    pub fn disk_used(&self) -> u64 {
        self.entries().iter().map(|entry| entry.bytes).sum()
    }

    /// Removes the prefixes saved for the model whose file hashes to `model_sha256`.
    pub fn remove_model(&self, model_sha256: &str) {
        let start = format!("{}-", model_key(model_sha256));
        for entry in self.entries() {
            if entry.name.starts_with(&start) {
                let _ = std::fs::remove_file(self.dir.join(&entry.name));
            }
        }
    }

    /// Removes the least recently used files until the rest fit the bound; `keep` stays.
    fn trim(&self, keep: &str) {
        let mut entries = self.entries();
        entries.sort_by_key(|entry| (entry.name != keep, std::cmp::Reverse(entry.used)));
        let mut total = 0;
        for entry in entries {
            total += entry.bytes;
            // The one just saved counts first, and always stays.
            if total > self.limit_bytes && entry.name != keep {
                let _ = std::fs::remove_file(self.dir.join(&entry.name));
                total -= entry.bytes;
            }
        }
    }

    fn entries(&self) -> Vec<Entry> {
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        read.flatten()
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let meta = entry.metadata().ok()?;
                (meta.is_file() && name.ends_with(".bin")).then(|| Entry {
                    name,
                    bytes: meta.len(),
                    used: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                })
            })
            .collect()
    }

    /// Marks `name` as used now, so that trimming keeps it over older ones.
    fn touch(&self, name: &str) {
        if let Ok(file) = std::fs::File::options()
            .append(true)
            .open(self.dir.join(name))
        {
            let _ = file.set_modified(SystemTime::now());
        }
    }
}

struct Entry {
    name: String,
    bytes: u64,
    used: SystemTime,
}

/// The model's part of a file name: enough of its hash to tell models apart.
fn model_key(model_sha256: &str) -> String {
    let clean: String = model_sha256
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(16)
        .collect();
    if clean.is_empty() {
        "model".to_string()
    } else {
        clean.to_ascii_lowercase()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
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
        if store.dir.join(&name).is_file() {
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
                    let _ = std::fs::remove_file(store.dir.join(&name));
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
        std::fs::create_dir_all(&store.dir).map_err(|error| {
            format!(
                "the prefix could not be saved in {}: {error}",
                store.dir.display()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_changes_with_the_model_the_window_and_the_prefix() {
        let one = PrefixStore::file_name("AB12cd", 8192, "prefix");
        assert_eq!(
            one,
            format!("ab12cd-8192-{}.bin", &hex(&Sha256::digest(b"prefix"))[..16])
        );
        assert_ne!(one, PrefixStore::file_name("ab12ce", 8192, "prefix"));
        assert_ne!(one, PrefixStore::file_name("ab12cd", 4096, "prefix"));
        assert_ne!(one, PrefixStore::file_name("ab12cd", 8192, "prefix "));
    }

    #[test]
    fn attack_runtime_a_prefix_file_name_never_leaves_its_folder() {
        // A model record's hash is read from the models folder: whatever it holds, the name is
        // hex digits, the window and the prefix's hash, inside the prefixes folder.
        for hash in [
            "../../etc/passwd",
            "a/b\\c",
            "",
            "ab\0cd",
            "deadbeef/../../x",
        ] {
            let name = PrefixStore::file_name(hash, 8192, "p");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'),
                "{name}"
            );
            assert!(!name.starts_with('.') && name.ends_with(".bin"), "{name}");
        }
        // A model whose hash is nothing but odd characters removes no other model's files.
        let dir = tempfile::tempdir().unwrap();
        let store = PrefixStore::in_runtime_dir(dir.path());
        std::fs::create_dir_all(store.dir()).unwrap();
        std::fs::write(store.dir().join("ab12-8192-x.bin"), "kept").unwrap();
        store.remove_model("../..");
        assert!(store.dir().join("ab12-8192-x.bin").is_file());
    }

    #[test]
    fn the_folder_is_trimmed_oldest_first_and_a_model_takes_its_files_along() {
        let dir = tempfile::tempdir().unwrap();
        let store = PrefixStore::in_runtime_dir(dir.path()).with_limit(25);
        std::fs::create_dir_all(store.dir()).unwrap();
        let at = |secs: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
        for (name, used) in [
            ("aa-1-old.bin", 1),
            ("aa-1-mid.bin", 2),
            ("bb-1-new.bin", 3),
        ] {
            std::fs::write(store.dir().join(name), [0u8; 10]).unwrap();
            let file = std::fs::File::options()
                .append(true)
                .open(store.dir().join(name))
                .unwrap();
            file.set_modified(at(used)).unwrap();
        }
        std::fs::write(store.dir().join("notes.txt"), "not a prefix").unwrap();
        assert_eq!(store.disk_used(), 30);
        store.trim("aa-1-old.bin");
        // The newest two would fit, but the one just used stays: the middle one goes.
        let mut left: Vec<String> = store.entries().into_iter().map(|e| e.name).collect();
        left.sort();
        assert_eq!(left, vec!["aa-1-old.bin", "bb-1-new.bin"]);
        store.remove_model("AA");
        let left: Vec<String> = store.entries().into_iter().map(|e| e.name).collect();
        assert_eq!(left, vec!["bb-1-new.bin"]);
        assert!(store.dir().join("notes.txt").is_file());
    }
}
