//! How tools are offered to the model: natively, in the prompt, or whichever the server takes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How tools are offered to the model and how its calls are read back.
///
/// It belongs to a provider and model (whether the server does function calling), not to one
/// request: the model client keeps it in its config, the settings per provider, and a turn's
/// `turn_started` event says which one it used. Whatever the mode, the client's caller sees
/// the same answers and deltas.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ToolMode {
    /// OpenAI function calling: the `tools` and `tool_choice` fields, calls in `tool_calls`.
    Native,
    /// For models without function calling: the tools are described in the system prompt and
    /// the model writes `<tool_use>` blocks in its text, which the client parses back into
    /// calls.
    Prompt,
    /// Native, until the server refuses tools as unsupported (an HTTP 400 such as Ollama's
    /// "… does not support tools"); then the same request is sent again at once in prompt
    /// mode, and the client keeps to prompt mode from then on.
    #[default]
    Auto,
}

impl ToolMode {
    /// The word used in settings, flags and serde: `native`, `prompt` or `auto`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Prompt => "prompt",
            Self::Auto => "auto",
        }
    }
}

/// A word that names no tool mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownToolMode(pub String);

impl fmt::Display for UnknownToolMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a tool mode; use native, prompt or auto",
            self.0
        )
    }
}

impl std::error::Error for UnknownToolMode {}

impl fmt::Display for ToolMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ToolMode {
    type Err = UnknownToolMode;

    /// Reads `native`, `prompt` or `auto`, in any case and with surrounding spaces.
    fn from_str(word: &str) -> Result<Self, Self::Err> {
        match word.trim().to_ascii_lowercase().as_str() {
            "native" => Ok(Self::Native),
            "prompt" => Ok(Self::Prompt),
            "auto" => Ok(Self::Auto),
            _ => Err(UnknownToolMode(word.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn words_round_trip() {
        for mode in [ToolMode::Native, ToolMode::Prompt, ToolMode::Auto] {
            assert_eq!(mode.as_str().parse::<ToolMode>().unwrap(), mode);
            assert_eq!(mode.to_string(), mode.as_str());
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{mode}\""));
            assert_eq!(serde_json::from_str::<ToolMode>(&json).unwrap(), mode);
        }
        assert_eq!(" Prompt ".parse::<ToolMode>().unwrap(), ToolMode::Prompt);
        assert_eq!(ToolMode::default(), ToolMode::Auto);
    }

    #[test]
    fn an_unknown_word_is_explained() {
        assert_eq!(
            "xml".parse::<ToolMode>().unwrap_err().to_string(),
            "`xml` is not a tool mode; use native, prompt or auto"
        );
    }
}
