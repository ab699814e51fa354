//! Errors of the local model runtime. Each displays as one sentence a user can act on.

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// An address to look for a model server at (a `detect_urls` entry) that is not a URL
    /// detection can use.
    #[error("the address {0:?} to look for a model server at must be an http:// or https:// URL")]
    BadTargetUrl(String),
}
