//! What can keep a question from starting, in sentences a user can act on.

use std::path::PathBuf;

use tooltrail_settings::SettingsError;
use tooltrail_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The model endpoint could not be reached or refused; the sentence is the client's.
    #[error("{0}")]
    Model(ModelFailure),
    #[error(
        "no model is set and {base_url} lists none; set `model` in {} or TOOLTRAIL_MODEL, or pass --model",
        config_path.display()
    )]
    NoModel {
        base_url: String,
        config_path: PathBuf,
    },
    /// The `local` provider's model could not be served; the sentence says why and what to do.
    #[error("{0}")]
    Local(String),
    #[error("that conversation no longer exists")]
    ConversationNotFound,
    #[error("this conversation is still answering; stop it or wait for the answer")]
    Busy,
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The folder preferences could not be saved; the sentence says why.
    #[error("the folder preferences could not be saved: {0}")]
    Preferences(String),
    /// An attachment or an MCP prompt of the question could not be used; the sentence says why.
    #[error("{0}")]
    Content(String),
    /// An MCP App view could not be shown, or asked for what it may not have; the sentence
    /// says why.
    #[error("{0}")]
    View(String),
}

impl HostError {
    /// A short code front ends map to their own errors (the app's `CommandError`, the HTTP
    /// API's error codes).
    pub fn code(&self) -> &'static str {
        match self {
            Self::Settings(_) => "settings",
            Self::Model(_) | Self::NoModel { .. } | Self::Local(_) => "model",
            Self::ConversationNotFound => "not_found",
            Self::Busy => "busy",
            Self::Store(_) => "store",
            Self::Preferences(_) => "settings",
            Self::Content(_) => "content",
            Self::View(_) => "view",
        }
    }
}

/// A failure of the model endpoint: the client's sentence, and its code, by which a front end
/// tells an endpoint that cannot be reached (and offers the servers it finds instead) from one
/// that refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFailure {
    pub code: tooltrail_protocol::ErrorCode,
    pub message: String,
}

impl std::fmt::Display for ModelFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Why a server or a model could not be made the one questions go to (see `choose.rs`).
#[derive(Debug, thiserror::Error)]
pub enum ChooseError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(transparent)]
    Detect(#[from] tooltrail_runtime::RuntimeError),
    #[error(transparent)]
    Models(#[from] tooltrail_runtime::models::ModelError),
    #[error("{name} is not installed yet; pull it first with `tooltrail models pull {name}`")]
    NotPulled { name: String },
    #[error(
        "the file of {name} is missing ({from}); import it again or remove it with \
         `tooltrail models rm {name}`"
    )]
    ModelFileMissing { name: String, from: String },
    #[error(
        "{} has a provider of its own with the id \"local\" ({own}); give that provider \
         another id there, so that `local` can mean the models Tooltrail serves itself",
        config.display()
    )]
    LocalIdTaken { config: PathBuf, own: String },
}
