//! Pulling a model from the hub into the models folder: resumable, checked against free space
//! first, verified by SHA-256, and moved into place only when whole and verified.
//!
//! Why a small downloader on `reqwest` rather than the `hf-hub` crate: `hf-hub` (1.0) follows
//! `HF_ENDPOINT` and reports progress, but it downloads into its own cache layout
//! (`~/.cache/huggingface/hub/…/blobs`, with snapshot links), restarts an interrupted HTTP
//! download from the first byte (it writes `.incomplete` files without a `Range` request),
//! does not check a file's SHA-256 against an expected one, and does not look at free space;
//! and it brings the Xet storage client and some 350 crates with it. What a pull needs is one
//! `HEAD` (the hub's headers give the SHA-256 and size) and one ranged `GET` to a file of our
//! own, which `reqwest`, already used for the model client, does in a few hundred lines.
//!
//! A download goes to `<name>.gguf.part`, beside a small state file naming the SHA-256 and
//! size it is of. A later pull of the same file finds both, hashes the bytes kept (the hash
//! then continues over the new ones, so the end needs no second reading), and asks for the
//! rest with `Range: bytes=N-`. A broken connection is retried a few times with a pause, then
//! reported with what was kept. Ctrl-C (the cancellation token) flushes what arrived and stops.
//! A wrong SHA-256, a file that is not GGUF, or a full disk removes the unfinished file.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::StatusCode;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use crate::gguf::{GgufInfo, read_gguf};
use crate::models::hub::{HubFileRef, error_reason};
use crate::models::store::{PartState, hex, remove_if_there};
use crate::models::{
    Hub, InstalledModel, ModelError, ModelRef, ModelSource, ModelStore, disk, hub_path, names,
};

/// How often progress is reported while bytes arrive.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// The span over which the download rate is measured.
const RATE_WINDOW: Duration = Duration::from_millis(500);
/// Bytes gathered before a write to disk.
const WRITE_BUFFER: usize = 1024 * 1024;

/// How to pull.
#[derive(Debug, Clone)]
pub struct PullOptions {
    pub hub: Hub,
    /// The name to install under, instead of the catalogue's or one made from the file name.
    pub name: Option<String>,
    /// Times a broken connection is tried again before the pull gives up (keeping its bytes).
    pub retries: u32,
    /// The pause before the first retry; each next one waits that much longer.
    pub retry_delay: Duration,
}

impl PullOptions {
    pub fn new(hub: Hub) -> Self {
        Self {
            hub,
            name: None,
            retries: 3,
            retry_delay: Duration::from_secs(2),
        }
    }
}

/// What a pull is doing, for a progress bar.
#[derive(Debug, Clone, PartialEq)]
pub enum PullProgress {
    /// Asking the hub about the file.
    Checking { name: String, url: String },
    /// Hashing the bytes an earlier try kept, before asking for the rest.
    Resuming { have: u64, total: Option<u64> },
    /// Bytes arriving.
    Downloading {
        done: u64,
        total: Option<u64>,
        /// Bytes that were there before this pull started.
        resumed_from: u64,
        /// Over the last half second or so, smoothed.
        bytes_per_sec: f64,
    },
    /// The connection broke; trying again after a pause.
    Retrying {
        attempt: u32,
        of: u32,
        reason: String,
        have: u64,
    },
    /// All bytes are there; checking the SHA-256 and reading the GGUF header.
    Verifying,
}

impl PullProgress {
    /// The time left at the current rate, when it can be known.
    pub fn seconds_left(&self) -> Option<u64> {
        match self {
            PullProgress::Downloading {
                done,
                total: Some(total),
                bytes_per_sec,
                ..
            } if *bytes_per_sec > 0.0 => {
                let left = total.saturating_sub(*done) as f64;
                Some((left / bytes_per_sec).ceil() as u64)
            }
            _ => None,
        }
    }
}

/// Figures of a finished download.
#[derive(Debug, Clone, PartialEq)]
pub struct PullStats {
    /// Bytes received over the network by this pull.
    pub received: u64,
    /// Bytes an earlier try had kept.
    pub resumed_from: u64,
    pub download_secs: f64,
    /// Hashing the kept bytes, checking the SHA-256 and reading the header.
    pub verify_secs: f64,
}

/// What a pull did.
#[derive(Debug, Clone, PartialEq)]
pub enum Pulled {
    Downloaded {
        model: InstalledModel,
        stats: PullStats,
    },
    /// The model was there already, from the same source or with the same SHA-256.
    AlreadyInstalled(InstalledModel),
}

impl Pulled {
    pub fn model(&self) -> &InstalledModel {
        match self {
            Pulled::Downloaded { model, .. } | Pulled::AlreadyInstalled(model) => model,
        }
    }
}

/// Why one attempt at the bytes ended.
enum Step {
    /// The connection broke or the hub failed for now: worth another try.
    Broken(String),
    Failed(ModelError),
}

/// The state of one download across its attempts.
struct Transfer {
    name: String,
    dir: PathBuf,
    part: PathBuf,
    part_state: PathBuf,
    size: Option<u64>,
    have: u64,
    hasher: Sha256,
    received: u64,
    resumed_from: u64,
    last_report: Instant,
    window_start: Instant,
    window_bytes: u64,
    bytes_per_sec: f64,
}

impl Transfer {
    fn new(store: &ModelStore, name: &str, size: Option<u64>, have: u64, hasher: Sha256) -> Self {
        let now = Instant::now();
        Self {
            name: name.to_string(),
            dir: store.dir().to_path_buf(),
            part: store.part_path(name),
            part_state: store.part_state_path(name),
            size,
            have,
            hasher,
            received: 0,
            resumed_from: have,
            last_report: now,
            window_start: now,
            window_bytes: 0,
            bytes_per_sec: 0.0,
        }
    }

    /// Fetches the rest of the file, trying a broken connection again after a pause that
    /// grows each time, up to `options.retries` times.
    async fn download(
        &mut self,
        options: &PullOptions,
        url: &str,
        progress: &mut (dyn FnMut(&PullProgress) + Send),
        cancel: &CancellationToken,
    ) -> Result<(), ModelError> {
        let mut attempt = 0;
        loop {
            let reason = match fetch(&options.hub, url, self, progress, cancel).await {
                Ok(()) => return Ok(()),
                Err(Step::Failed(error)) => return Err(error),
                Err(Step::Broken(reason)) => reason,
            };
            if attempt >= options.retries {
                return Err(self.interrupted(reason));
            }
            attempt += 1;
            progress(&PullProgress::Retrying {
                attempt,
                of: options.retries,
                reason,
                have: self.have,
            });
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(self.cancelled()),
                () = tokio::time::sleep(options.retry_delay * attempt) => {}
            }
        }
    }

    /// The retries are spent: the bytes are kept for the next pull, if there are any.
    fn interrupted(&self, reason: String) -> ModelError {
        if self.have == 0 {
            self.discard();
        }
        ModelError::Interrupted {
            name: self.name.clone(),
            reason,
            have: self.have,
            total: self.size,
        }
    }

    /// Checks the SHA-256 of the whole file and reads its GGUF header, after putting it on
    /// disk. A wrong SHA-256 or a file that is not GGUF removes it.
    async fn verify(&self, sha256: &str) -> Result<GgufInfo, ModelError> {
        let actual = hex(&self.hasher.clone().finalize());
        if actual != sha256 {
            self.discard();
            return Err(ModelError::ChecksumMismatch {
                name: self.name.clone(),
                expected: sha256.to_string(),
                actual,
            });
        }
        let whole = self.part.clone();
        let header = tokio::task::spawn_blocking(move || {
            // On disk before it is renamed into place: a crash then leaves the old state or
            // the whole file, never a listed model with a torn end.
            let synced = std::fs::File::open(&whole).and_then(|file| file.sync_all());
            (read_gguf(&whole), synced)
        })
        .await
        .map_err(|error| ModelError::io("read", &self.part, std::io::Error::other(error)))?;
        match header {
            (Ok(metadata), Ok(())) => Ok(metadata),
            (Err(source), _) => {
                self.discard();
                Err(ModelError::DownloadedNotGguf {
                    name: self.name.clone(),
                    source,
                })
            }
            (Ok(_), Err(source)) => Err(ModelError::io("write", &self.part, source)),
        }
    }

    /// Drops the kept bytes: the hub would not send the rest of them.
    fn restart(&mut self) -> Result<(), Step> {
        std::fs::File::create(&self.part)
            .map_err(|source| Step::Failed(ModelError::io("write", &self.part, source)))?;
        self.have = 0;
        self.resumed_from = 0;
        self.hasher = Sha256::new();
        Ok(())
    }

    /// Removes the unfinished download and its state file.
    fn discard(&self) {
        let _ = remove_if_there(&self.part);
        let _ = remove_if_there(&self.part_state);
    }

    fn cancelled(&self) -> ModelError {
        if self.have == 0 {
            self.discard();
        }
        ModelError::Cancelled {
            name: self.name.clone(),
            have: self.have,
            total: self.size,
        }
    }

    /// The error for `len` more bytes than the file's size, if they are.
    fn overrun(&self, len: u64) -> Option<ModelError> {
        let size = self.size?;
        (self.have + len > size).then(|| ModelError::TooLong {
            name: self.name.clone(),
            expected: size,
        })
    }

    /// Counts bytes written to the part file into the hash, the totals and the rate.
    fn took(&mut self, chunk: &[u8]) {
        let len = chunk.len() as u64;
        self.hasher.update(chunk);
        self.have += len;
        self.received += len;
        self.window_bytes += len;
    }

    fn report(&mut self, progress: &mut (dyn FnMut(&PullProgress) + Send), force: bool) {
        let now = Instant::now();
        if !force && now.duration_since(self.last_report) < PROGRESS_EVERY {
            return;
        }
        let window = now.duration_since(self.window_start);
        if window >= RATE_WINDOW {
            let rate = self.window_bytes as f64 / window.as_secs_f64();
            self.bytes_per_sec = if self.bytes_per_sec == 0.0 {
                rate
            } else {
                0.3 * rate + 0.7 * self.bytes_per_sec
            };
            self.window_start = now;
            self.window_bytes = 0;
        }
        self.last_report = now;
        progress(&PullProgress::Downloading {
            done: self.have,
            total: self.size,
            resumed_from: self.resumed_from,
            bytes_per_sec: self.bytes_per_sec,
        });
    }
}

impl ModelStore {
    /// Pulls `reference` into the models folder and returns the installed model.
    ///
    /// `progress` is told what happens, at most ten times a second while bytes arrive.
    /// Cancelling `cancel` stops the pull, keeping the bytes that arrived for the next one.
    pub async fn pull(
        &self,
        reference: &ModelRef,
        options: &PullOptions,
        progress: &mut (dyn FnMut(&PullProgress) + Send),
        cancel: &CancellationToken,
    ) -> Result<Pulled, ModelError> {
        let wanted = Wanted::of(reference, options)?;
        let _lock = self.lock(&wanted.name)?;
        if let Some(model) = self.find(&wanted.name)? {
            return wanted.already_there(model);
        }
        let hub = wanted.ask_hub(&options.hub, progress, cancel).await?;
        let (sha256, size) = (hub.sha256, hub.size);
        let have = self.prepare_part(&wanted.name, &sha256, size, &hub.url)?;
        let (hasher, mut verify_secs) = self.hash_kept(&wanted.name, have, size, progress).await?;
        let mut transfer = Transfer::new(self, &wanted.name, size, have, hasher);
        let started = Instant::now();
        transfer
            .download(options, &hub.download_url, progress, cancel)
            .await?;
        let download_secs = started.elapsed().as_secs_f64();

        progress(&PullProgress::Verifying);
        let started = Instant::now();
        let metadata = transfer.verify(&sha256).await?;
        verify_secs += started.elapsed().as_secs_f64();
        let Wanted { name, source, .. } = wanted;
        let model = self.install(&name, transfer.have, sha256, metadata, source)?;
        Ok(Pulled::Downloaded {
            model,
            stats: PullStats {
                received: transfer.received,
                resumed_from: transfer.resumed_from,
                download_secs,
                verify_secs,
            },
        })
    }

    /// Keeps the bytes of an earlier try at the same file (and drops anything else there),
    /// checks the rest fits on the disk, and notes what the part file is of. Returns the
    /// bytes kept.
    fn prepare_part(
        &self,
        name: &str,
        sha256: &str,
        size: Option<u64>,
        url: &str,
    ) -> Result<u64, ModelError> {
        let part = self.part_path(name);
        let part_state = self.part_state_path(name);
        let mut have = match self.read_part_state(name) {
            Some(state) if state.sha256 == sha256 => {
                std::fs::metadata(&part).map_or(0, |m| m.len())
            }
            _ => 0,
        };
        if have == 0 || size.is_some_and(|size| have > size) {
            remove_if_there(&part)?;
            remove_if_there(&part_state)?;
            have = 0;
        }
        if let Some(size) = size {
            self.check_space(name, size - have, have)?;
        }
        self.write_part_state(
            name,
            &PartState {
                sha256: sha256.to_string(),
                size,
                url: url.to_string(),
            },
        )?;
        Ok(have)
    }

    fn check_space(&self, name: &str, needed: u64, kept: u64) -> Result<(), ModelError> {
        let available = disk::available_space(self.dir())?;
        if available < needed {
            return Err(ModelError::NotEnoughSpace {
                name: name.to_string(),
                dir: self.dir().display().to_string(),
                needed,
                available,
                kept,
            });
        }
        Ok(())
    }

    /// A hasher that has seen the `have` bytes kept, and the seconds that took (they count
    /// as verifying).
    async fn hash_kept(
        &self,
        name: &str,
        have: u64,
        size: Option<u64>,
        progress: &mut (dyn FnMut(&PullProgress) + Send),
    ) -> Result<(Sha256, f64), ModelError> {
        if have == 0 {
            return Ok((Sha256::new(), 0.0));
        }
        progress(&PullProgress::Resuming { have, total: size });
        let started = Instant::now();
        let part = self.part_path(name);
        let kept = part.clone();
        let hasher = tokio::task::spawn_blocking(move || hash_prefix(&kept, have))
            .await
            .map_err(|error| ModelError::io("read", &part, std::io::Error::other(error)))??;
        Ok((hasher, started.elapsed().as_secs_f64()))
    }
}

/// What the hub said of the file, agreed with the catalogue.
struct HubAnswer {
    /// The file's URL on the hub.
    url: String,
    /// Where the bytes are.
    download_url: String,
    sha256: String,
    size: Option<u64>,
}

/// What a pull is to install: the name, the file on the hub, what the catalogue expects of
/// it, and where the model comes from.
struct Wanted {
    name: String,
    file: HubFileRef,
    expected_sha: Option<String>,
    expected_size: Option<u64>,
    source: ModelSource,
}

impl Wanted {
    fn of(reference: &ModelRef, options: &PullOptions) -> Result<Self, ModelError> {
        let name = match &options.name {
            Some(name) => names::normalize(name)?,
            None => reference.default_name()?,
        };
        let file = reference.file();
        // A reference made in code rather than parsed is held to the same rules.
        hub_path::check_revision(&file.revision)
            .and_then(|_| hub_path::check_file(&file.file))
            .map_err(|reason| ModelError::BadReference {
                reference: file.display(),
                reason,
            })?;
        let (expected_sha, expected_size, source) = match reference {
            ModelRef::Catalogue(entry) => (
                entry.sha256.clone(),
                entry.size_bytes,
                ModelSource::Catalogue {
                    entry: entry.name.clone(),
                    repo: file.repo.clone(),
                    revision: file.revision.clone(),
                    file: file.file.clone(),
                },
            ),
            ModelRef::Hub(_) => (
                None,
                None,
                ModelSource::Hub {
                    repo: file.repo.clone(),
                    revision: file.revision.clone(),
                    file: file.file.clone(),
                },
            ),
        };
        Ok(Self {
            name,
            file,
            expected_sha,
            expected_size,
            source,
        })
    }

    /// A model installed under the name already: the same one (same source or SHA-256) is
    /// done, another is refused.
    fn already_there(self, model: InstalledModel) -> Result<Pulled, ModelError> {
        let same =
            model.source == self.source || self.expected_sha.as_deref() == Some(&model.sha256);
        if same {
            Ok(Pulled::AlreadyInstalled(model))
        } else {
            Err(ModelError::NameTaken { name: self.name })
        }
    }

    /// Asks the hub where the bytes are, their SHA-256 and size, held to what the catalogue
    /// says.
    async fn ask_hub(
        &self,
        hub: &Hub,
        progress: &mut (dyn FnMut(&PullProgress) + Send),
        cancel: &CancellationToken,
    ) -> Result<HubAnswer, ModelError> {
        let url = hub.file_url(&self.file);
        progress(&PullProgress::Checking {
            name: self.name.clone(),
            url: url.clone(),
        });
        let metadata = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                return Err(ModelError::Cancelled {
                    name: self.name.clone(),
                    have: 0,
                    total: self.expected_size,
                });
            }
            metadata = hub.metadata(&self.file) => metadata?,
        };
        Ok(HubAnswer {
            sha256: self.agreed_sha256(metadata.sha256, url.clone())?,
            size: self.agreed_size(metadata.size)?,
            url,
            download_url: metadata.download_url,
        })
    }

    fn agreed_sha256(&self, hubs: Option<String>, url: String) -> Result<String, ModelError> {
        match (self.expected_sha.clone(), hubs) {
            (Some(ours), Some(hubs)) if ours != hubs => Err(ModelError::HubChanged {
                name: self.name.clone(),
                what: format!("the hub's SHA-256 is {hubs}, the catalogue's {ours}"),
            }),
            (Some(ours), _) => Ok(ours),
            (None, Some(hubs)) => Ok(hubs),
            (None, None) => Err(ModelError::NoChecksum { url }),
        }
    }

    fn agreed_size(&self, hubs: Option<u64>) -> Result<Option<u64>, ModelError> {
        match (self.expected_size, hubs) {
            (Some(ours), Some(hubs)) if ours != hubs => Err(ModelError::HubChanged {
                name: self.name.clone(),
                what: format!("the hub's file is {hubs} bytes, the catalogue's {ours}"),
            }),
            (ours, hubs) => Ok(ours.or(hubs)),
        }
    }
}

/// One attempt at the rest of the file, from `transfer.have`.
async fn fetch(
    hub: &Hub,
    url: &str,
    transfer: &mut Transfer,
    progress: &mut (dyn FnMut(&PullProgress) + Send),
    cancel: &CancellationToken,
) -> Result<(), Step> {
    match ask_for_rest(hub, url, transfer, cancel).await? {
        Some(response) => receive(response, transfer, progress, cancel).await,
        None => Ok(()),
    }
}

/// Asks for the bytes from `transfer.have` on; `None` when the file is already whole.
async fn ask_for_rest(
    hub: &Hub,
    url: &str,
    transfer: &mut Transfer,
    cancel: &CancellationToken,
) -> Result<Option<reqwest::Response>, Step> {
    let from = transfer.have;
    let response = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(Step::Failed(transfer.cancelled())),
        response = hub.get(url, from) => response.map_err(Step::Broken)?,
    };
    match response.status() {
        StatusCode::PARTIAL_CONTENT => {
            if content_range_start(response.headers()) != Some(from) {
                transfer.restart()?;
                return Err(Step::Broken(
                    "the hub sent another part of the file than the one asked for".to_string(),
                ));
            }
        }
        // A server that ignores ranges sends the whole file: take it from the start.
        StatusCode::OK => {
            if from > 0 {
                transfer.restart()?;
            }
        }
        StatusCode::RANGE_NOT_SATISFIABLE => {
            if transfer.size == Some(from) {
                return Ok(None);
            }
            transfer.restart()?;
            return Err(Step::Broken(
                "the hub would not send the rest of the file".to_string(),
            ));
        }
        status if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS => {
            return Err(Step::Broken(format!(
                "the hub answered HTTP {}",
                status.as_u16()
            )));
        }
        status => {
            return Err(Step::Failed(ModelError::HubStatus {
                status: status.as_u16(),
                url: url.to_string(),
            }));
        }
    }
    Ok(Some(response))
}

/// Appends the answer's bytes to the part file, hashing and counting them as they come.
async fn receive(
    response: reqwest::Response,
    transfer: &mut Transfer,
    progress: &mut (dyn FnMut(&PullProgress) + Send),
    cancel: &CancellationToken,
) -> Result<(), Step> {
    let part = transfer.part.clone();
    // A link standing at the part's name is refused, not followed.
    let file = tokio::fs::OpenOptions::from(tooltrail_atomic_write::in_place())
        .create(true)
        .append(true)
        .open(&part)
        .await
        .map_err(|source| Step::Failed(ModelError::io("write", &part, source)))?;
    let mut writer = tokio::io::BufWriter::with_capacity(WRITE_BUFFER, file);
    let mut stream = response.bytes_stream();
    transfer.report(progress, true);
    loop {
        let next = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                flush(&mut writer, transfer).await?;
                return Err(Step::Failed(transfer.cancelled()));
            }
            next = stream.next() => next,
        };
        let chunk = match next {
            Some(Ok(chunk)) => chunk,
            Some(Err(error)) => {
                flush(&mut writer, transfer).await?;
                return Err(Step::Broken(error_reason(&error)));
            }
            None => break,
        };
        // The writer is dropped first so that the file is closed before it is removed.
        if let Some(error) = transfer.overrun(chunk.len() as u64) {
            drop(writer);
            transfer.discard();
            return Err(Step::Failed(error));
        }
        if let Err(error) = writer.write_all(&chunk).await {
            drop(writer);
            return Err(Step::Failed(write_failed(transfer, error)));
        }
        transfer.took(&chunk);
        transfer.report(progress, false);
    }
    flush(&mut writer, transfer).await?;
    transfer.report(progress, true);
    match transfer.size {
        Some(size) if transfer.have < size => {
            Err(Step::Broken("the hub ended the download early".to_string()))
        }
        _ => Ok(()),
    }
}

/// Puts what arrived on disk, so that the kept bytes are the hashed bytes.
async fn flush(
    writer: &mut tokio::io::BufWriter<tokio::fs::File>,
    transfer: &Transfer,
) -> Result<(), Step> {
    writer
        .flush()
        .await
        .map_err(|error| Step::Failed(write_failed(transfer, error)))
}

/// A write that failed: a full disk removes the unfinished file (it cannot be finished there).
fn write_failed(transfer: &Transfer, error: std::io::Error) -> ModelError {
    if disk::is_full(&error) {
        transfer.discard();
        ModelError::DiskFull {
            name: transfer.name.clone(),
            dir: transfer.dir.display().to_string(),
        }
    } else {
        ModelError::io("write", &transfer.part, error)
    }
}

/// The first byte of a `206` answer: `Content-Range: bytes START-END/SIZE`.
fn content_range_start(headers: &reqwest::header::HeaderMap) -> Option<u64> {
    let value = headers.get(reqwest::header::CONTENT_RANGE)?.to_str().ok()?;
    let range = value.trim().strip_prefix("bytes ")?;
    range.split('-').next()?.trim().parse().ok()
}

/// A hasher that has seen the first `len` bytes of `path`.
fn hash_prefix(path: &Path, len: u64) -> Result<Sha256, ModelError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|source| ModelError::io("read", path, source))?;
    let mut reader = file.take(len);
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1024 * 1024];
    loop {
        let n = reader
            .read(&mut buffer)
            .map_err(|source| ModelError::io("read", path, source))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher)
}
