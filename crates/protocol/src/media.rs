//! Images and sounds a tool returns, kept whole beside the text the model reads.
//!
//! A tool's text goes to every model; its media go to a model only when the model sees them
//! (the provider's `vision`), as image parts of the request. A model that cannot see them is
//! told in words what came back. The user sees them on the call's card either way.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What kind of media a tool returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    Image,
    Audio,
}

impl MediaKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Audio => "audio",
        }
    }
}

/// One image or sound, base64 as the tool sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Media {
    pub kind: MediaKind,
    /// `image/png`, `audio/wav`, ...
    pub mime_type: String,
    /// The bytes, base64-encoded.
    pub data: String,
}

impl Media {
    /// How many bytes `data` decodes to.
    pub fn size(&self) -> usize {
        let trimmed = self.data.trim_end_matches('=');
        trimmed.len() * 3 / 4
    }

    /// `data:` URL of the bytes, as image parts of a request carry them.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.mime_type, self.data)
    }

    /// What came back, in words: "an image (image/png, 1.2 KiB)".
    pub fn describe(&self) -> String {
        let article = match self.kind {
            MediaKind::Image => "an image",
            MediaKind::Audio => "a sound",
        };
        format!(
            "{article} ({}, {})",
            self.mime_type,
            human_size(self.size())
        )
    }
}

/// `bytes` as people read sizes: `512 bytes`, `1.2 KiB`, `3.4 MiB`.
pub fn human_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// The sentence a model that cannot see `media` reads after the tool's text.
pub fn unseen_sentence(media: &[Media]) -> String {
    let what: Vec<String> = media.iter().map(Media::describe).collect();
    format!(
        "The tool also returned {}. You cannot see or hear it: this model is not set up to take \
         images or sound (the provider's vision setting is off). The user sees it on the \
         timeline; do not guess what it shows.",
        what.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_is_described_by_type_and_size() {
        let image = Media {
            kind: MediaKind::Image,
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        };
        assert_eq!(image.size(), 8);
        assert_eq!(image.describe(), "an image (image/png, 8 bytes)");
        assert_eq!(image.data_url(), "data:image/png;base64,iVBORw0KGgo=");
        assert_eq!(human_size(2048), "2.0 KiB");
        assert!(unseen_sentence(&[image]).starts_with(
            "The tool also returned an image (image/png, 8 bytes). You cannot see or hear it"
        ));
    }
}
