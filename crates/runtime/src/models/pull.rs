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

use crate::gguf::read_gguf;
use crate::models::hub::error_reason;
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
        let _lock = self.lock(&name)?;
        if let Some(model) = self.find(&name)? {
            let same = model.source == source || expected_sha.as_deref() == Some(&model.sha256);
            return if same {
                Ok(Pulled::AlreadyInstalled(model))
            } else {
                Err(ModelError::NameTaken { name })
            };
        }

        let url = options.hub.file_url(&file);
        progress(&PullProgress::Checking {
            name: name.clone(),
            url: url.clone(),
        });
        let metadata = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                return Err(ModelError::Cancelled { name, have: 0, total: expected_size });
            }
            metadata = options.hub.metadata(&file) => metadata?,
        };
        let sha256 = match (expected_sha, metadata.sha256) {
            (Some(ours), Some(hubs)) if ours != hubs => {
                return Err(ModelError::HubChanged {
                    name,
                    what: format!("the hub's SHA-256 is {hubs}, the catalogue's {ours}"),
                });
            }
            (Some(ours), _) => ours,
            (None, Some(hubs)) => hubs,
            (None, None) => return Err(ModelError::NoChecksum { url }),
        };
        let size = match (expected_size, metadata.size) {
            (Some(ours), Some(hubs)) if ours != hubs => {
                return Err(ModelError::HubChanged {
                    name,
                    what: format!("the hub's file is {hubs} bytes, the catalogue's {ours}"),
                });
            }
            (ours, hubs) => ours.or(hubs),
        };

        // Bytes of an earlier try at the same file are kept; anything else there goes.
        let part = self.part_path(&name);
        let part_state = self.part_state_path(&name);
        let mut have = match self.read_part_state(&name) {
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
            let available = disk::available_space(self.dir())?;
            let needed = size - have;
            if available < needed {
                return Err(ModelError::NotEnoughSpace {
                    name,
                    dir: self.dir().display().to_string(),
                    needed,
                    available,
                    kept: have,
                });
            }
        }
        self.write_part_state(
            &name,
            &PartState {
                sha256: sha256.clone(),
                size,
                url: url.clone(),
            },
        )?;

        let mut verify_secs = 0.0;
        let hasher = if have > 0 {
            progress(&PullProgress::Resuming { have, total: size });
            let started = Instant::now();
            let kept = part.clone();
            let hasher = tokio::task::spawn_blocking(move || hash_prefix(&kept, have))
                .await
                .map_err(|error| ModelError::io("read", &part, std::io::Error::other(error)))??;
            verify_secs += started.elapsed().as_secs_f64();
            hasher
        } else {
            Sha256::new()
        };

        let now = Instant::now();
        let mut transfer = Transfer {
            name: name.clone(),
            dir: self.dir().to_path_buf(),
            part: part.clone(),
            part_state,
            size,
            have,
            hasher,
            received: 0,
            resumed_from: have,
            last_report: now,
            window_start: now,
            window_bytes: 0,
            bytes_per_sec: 0.0,
        };
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            match fetch(
                &options.hub,
                &metadata.download_url,
                &mut transfer,
                progress,
                cancel,
            )
            .await
            {
                Ok(()) => break,
                Err(Step::Failed(error)) => return Err(error),
                Err(Step::Broken(reason)) => {
                    if attempt >= options.retries {
                        if transfer.have == 0 {
                            transfer.discard();
                        }
                        return Err(ModelError::Interrupted {
                            name,
                            reason,
                            have: transfer.have,
                            total: size,
                        });
                    }
                    attempt += 1;
                    progress(&PullProgress::Retrying {
                        attempt,
                        of: options.retries,
                        reason,
                        have: transfer.have,
                    });
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => return Err(transfer.cancelled()),
                        () = tokio::time::sleep(options.retry_delay * attempt) => {}
                    }
                }
            }
        }
        let download_secs = started.elapsed().as_secs_f64();

        progress(&PullProgress::Verifying);
        let started = Instant::now();
        let actual = hex(&transfer.hasher.clone().finalize());
        if actual != sha256 {
            transfer.discard();
            return Err(ModelError::ChecksumMismatch {
                name,
                expected: sha256,
                actual,
            });
        }
        let whole = part.clone();
        let header = tokio::task::spawn_blocking(move || {
            // On disk before it is renamed into place: a crash then leaves the old state or
            // the whole file, never a listed model with a torn end.
            let synced = std::fs::File::open(&whole).and_then(|file| file.sync_all());
            (read_gguf(&whole), synced)
        })
        .await
        .map_err(|error| ModelError::io("read", &part, std::io::Error::other(error)))?;
        let metadata = match header {
            (Ok(metadata), Ok(())) => metadata,
            (Err(source), _) => {
                transfer.discard();
                return Err(ModelError::DownloadedNotGguf { name, source });
            }
            (Ok(_), Err(source)) => return Err(ModelError::io("write", &part, source)),
        };
        verify_secs += started.elapsed().as_secs_f64();
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
}

/// One attempt at the rest of the file, from `transfer.have`.
async fn fetch(
    hub: &Hub,
    url: &str,
    transfer: &mut Transfer,
    progress: &mut (dyn FnMut(&PullProgress) + Send),
    cancel: &CancellationToken,
) -> Result<(), Step> {
    let from = transfer.have;
    let response = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(Step::Failed(transfer.cancelled())),
        response = hub.get(url, from) => response.map_err(Step::Broken)?,
    };
    let status = response.status();
    match status {
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
                return Ok(());
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

    let part = transfer.part.clone();
    let file = tokio::fs::OpenOptions::new()
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
        let len = chunk.len() as u64;
        if let Some(size) = transfer.size
            && transfer.have + len > size
        {
            drop(writer);
            transfer.discard();
            return Err(Step::Failed(ModelError::TooLong {
                name: transfer.name.clone(),
                expected: size,
            }));
        }
        if let Err(error) = writer.write_all(&chunk).await {
            drop(writer);
            return Err(Step::Failed(write_failed(transfer, error)));
        }
        transfer.hasher.update(&chunk);
        transfer.have += len;
        transfer.received += len;
        transfer.window_bytes += len;
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
