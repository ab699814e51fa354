//! Errors of the models folder. Each displays as sentences a user can act on, saying what was
//! kept: a pull that fails never leaves a model listed, and says whether its unfinished
//! download was kept for the next try or removed.

use crate::gguf::GgufError;
use crate::models::human_bytes;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(transparent)]
    Settings(#[from] tooltrail_settings::SettingsError),
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Gguf(#[from] GgufError),
    #[error("{name:?} cannot name a model: {reason}")]
    BadName { name: String, reason: String },
    #[error("no model named {name} is installed (`tooltrail models list` shows what is)")]
    NotInstalled { name: String },
    #[error(
        "a model named {name} is already installed; remove it first (`tooltrail models rm \
         {name}`) or choose another name with --name"
    )]
    NameTaken { name: String },
    #[error("another pull, import or removal of {name} is running; wait for it to finish")]
    Busy { name: String },
    #[error(
        "{reference:?} is not a model to pull: {reason}. Give a name from `tooltrail models \
         list`, or a file on the hub as hf.co/OWNER/REPO/FILE.gguf"
    )]
    BadReference { reference: String, reason: String },
    #[error("the built-in model catalogue is not valid: {0}")]
    Catalogue(String),
    #[error(
        "the model hub {endpoint} could not be reached ({reason}); check the network, or set \
         HF_ENDPOINT to a mirror of the hub"
    )]
    HubUnreachable { endpoint: String, reason: String },
    #[error(
        "the hub has no file {file} in {repo} (at {revision}); check the file's name on the \
         repository's Files page"
    )]
    NoSuchFile {
        repo: String,
        revision: String,
        file: String,
    },
    #[error(
        "the hub has no repository {repo}, or it is private: check the name, or set HF_TOKEN \
         to a token that can read it"
    )]
    NoSuchRepo { repo: String },
    #[error(
        "{repo} is gated: accept its terms on the hub with your account, then set HF_TOKEN to \
         a token of that account"
    )]
    Gated { repo: String },
    #[error("the hub answered HTTP {status} for {url}")]
    HubStatus { status: u16, url: String },
    #[error(
        "the hub gave no SHA-256 for {url}, so a download of it could not be checked; nothing \
         was downloaded"
    )]
    NoChecksum { url: String },
    #[error(
        "the hub's file for {name} is not the one the catalogue names ({what}); nothing was \
         downloaded"
    )]
    HubChanged { name: String, what: String },
    #[error(
        "there is not enough free space in {dir} for {name}: it needs {} more and {} is free. \
         {}",
        human_bytes(*needed),
        human_bytes(*available),
        kept_sentence(*kept)
    )]
    NotEnoughSpace {
        name: String,
        dir: String,
        needed: u64,
        available: u64,
        /// Bytes of an earlier try that are kept for the next one.
        kept: u64,
    },
    #[error(
        "there is not enough free space in {dir} to copy {path}: it needs {} and {} is free; \
         import it with --link to use no space",
        human_bytes(*needed),
        human_bytes(*available)
    )]
    NoSpaceToCopy {
        path: String,
        dir: String,
        needed: u64,
        available: u64,
    },
    #[error(
        "the disk holding {dir} filled up while {path} was copied; the unfinished copy was \
         removed. Free some space, or import it with --link to use no space"
    )]
    DiskFullCopying { path: String, dir: String },
    #[error(
        "the disk holding {dir} filled up while {name} was downloading; the unfinished file was \
         removed. Free some space and pull again"
    )]
    DiskFull { name: String, dir: String },
    #[error(
        "the connection to the hub was lost ({reason}) after {} of {}; the {} downloaded are \
         kept, and pulling {name} again carries on from there",
        human_bytes(*have),
        total.map_or_else(|| "the file".to_string(), human_bytes),
        human_bytes(*have)
    )]
    Interrupted {
        name: String,
        reason: String,
        have: u64,
        total: Option<u64>,
    },
    #[error(
        "the pull of {name} was stopped after {} of {}; the {} downloaded are kept, and pulling \
         {name} again carries on from there",
        human_bytes(*have),
        total.map_or_else(|| "the file".to_string(), human_bytes),
        human_bytes(*have)
    )]
    Cancelled {
        name: String,
        have: u64,
        total: Option<u64>,
    },
    #[error(
        "the file downloaded for {name} is not the one expected: its SHA-256 is {actual}, not \
         {expected}. Nothing was kept; pull it again, and if this happens again the hub's copy \
         differs from the one expected"
    )]
    ChecksumMismatch {
        name: String,
        expected: String,
        actual: String,
    },
    #[error(
        "the hub sent more than the {} the file for {name} has; nothing was kept",
        human_bytes(*expected)
    )]
    TooLong { name: String, expected: u64 },
    #[error(
        "the file downloaded for {name} is not a model Tooltrail can run ({source}); nothing was kept"
    )]
    DownloadedNotGguf { name: String, source: GgufError },
    #[error(
        "could not link {path} into the models folder ({source}); import it without --link to \
         copy it instead"
    )]
    LinkFailed {
        path: String,
        source: std::io::Error,
    },
}

fn kept_sentence(kept: u64) -> String {
    if kept == 0 {
        "Nothing was downloaded.".to_string()
    } else {
        format!(
            "The {} downloaded before are kept for the next try.",
            human_bytes(kept)
        )
    }
}

impl ModelError {
    pub(crate) fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        ModelError::Io {
            action,
            path: path.display().to_string(),
            source,
        }
    }
}
