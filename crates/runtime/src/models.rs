//! The models folder: the GGUF models Tooltrail can serve itself, in `<data>/models/`
//! (`TOOLTRAIL_DATA_DIR/models` when that is set).
//!
//! - [`ModelStore`]: list, find, remove and import models; each [`InstalledModel`] has its
//!   file, size, SHA-256, GGUF metadata ([`crate::gguf::GgufInfo`]) and where it came from.
//! - [`ModelStore::pull`]: fetch a model from a Hugging Face-style hub (`HF_ENDPOINT`),
//!   resumable, checked against free space first, verified by SHA-256 (the catalogue's, else
//!   the hub's), moved into place only when whole.
//! - [`Catalogue`]: the recommended models built into this release, pulled by short name.
//! - [`ModelRef`]: what a user names to pull: a catalogue name or a file on the hub.
//!
//! Which model the `local` provider serves is `config.toml`'s `[local] model` (see
//! `tooltrail_settings::LocalConfig`); the runtime that serves it finds its file with
//! [`ModelStore::find`].
//!
//! ```no_run
//! use tooltrail_runtime::models::{Catalogue, Hub, ModelRef, ModelStore, PullOptions};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn run() -> Result<(), tooltrail_runtime::models::ModelError> {
//! let store = ModelStore::open_default()?;
//! let reference = ModelRef::parse("qwen3-1.7b", &Catalogue::builtin()?)?;
//! let options = PullOptions::new(Hub::from_env()?);
//! let pulled = store
//!     .pull(&reference, &options, &mut |progress| println!("{progress:?}"), &CancellationToken::new())
//!     .await?;
//! println!("{} is at {}", pulled.model().name, pulled.model().path.display());
//! # Ok(())
//! # }
//! ```

mod catalogue;
mod disk;
mod error;
mod hub;
mod hub_path;
pub mod names;
mod pull;
mod store;

pub use catalogue::{Catalogue, CatalogueEntry};
pub use error::ModelError;
pub use hub::{DEFAULT_HUB, HF_ENDPOINT_ENV, HF_TOKEN_ENV, Hub, HubFileRef, ModelRef};
pub use pull::{PullOptions, PullProgress, PullStats, Pulled};
pub use store::{ImportMode, InstalledModel, ModelSource, ModelStore, PendingPull, Removed};

/// A size for people, in decimal units as disks are sold: `253 MB`, `1.1 GB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64;
    let mut unit = "";
    for next in UNITS {
        value /= 1000.0;
        unit = next;
        if value < 1000.0 {
            break;
        }
    }
    if value < 10.0 {
        format!("{value:.1} {unit}")
    } else {
        format!("{value:.0} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(human_bytes(900), "900 bytes");
        assert_eq!(human_bytes(253_000_000), "253 MB");
        assert_eq!(human_bytes(1_107_409_472), "1.1 GB");
        assert_eq!(human_bytes(2_497_281_312), "2.5 GB");
        assert_eq!(human_bytes(1_500), "1.5 KB");
    }
}
