//! The agent's configuration: limits and model settings that every turn of one agent shares.
//! Its own module so that the turn loop and the round's dispatcher both read it without
//! either depending on the other.

use std::collections::BTreeMap;

/// Limits and model settings for turns.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// Tool rounds per user message. At the limit the model answers once more without tools.
    pub max_rounds: u32,
    /// Largest tool result sent to the model, in bytes; longer ones are cut with a marker.
    pub max_result_bytes: usize,
    /// How often the same call (same tool, same arguments) runs in one turn before it is
    /// refused.
    pub max_identical_calls: u32,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
    /// Replaces the built-in system prompt when set.
    pub system_prompt: Option<String>,
    /// The project's instructions (AGENTS.md and the like) as a section of the folder's
    /// context, beginning with a blank line.
    pub project_instructions: Option<String>,
    /// How often each tool was called before (the record's counts, by name): when the tools'
    /// schemas would take more than a quarter of the window, the most used MCP tools are the
    /// ones still offered whole (see `many_tools`).
    pub tool_counts: BTreeMap<String, u64>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_rounds: 10,
            max_result_bytes: 32 * 1024,
            max_identical_calls: 2,
            temperature: None,
            max_tokens: None,
            system_prompt: None,
            project_instructions: None,
            tool_counts: BTreeMap::new(),
        }
    }
}
