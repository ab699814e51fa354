//! What the agent's integration tests share: an agent on the built-in tools in a folder, with
//! a model client made from the test's own configuration.

#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use tooltrail_agent::{Agent, AgentConfig};
use tooltrail_llm::{LlmClient, LlmConfig};
use tooltrail_tools::{ToolContext, ToolRegistry};

/// An agent on the built-in tools in `root`, asking the model `llm` names, with the default
/// agent configuration.
pub fn builtins_agent(llm: LlmConfig, root: &Path) -> Agent {
    builtins_agent_with(llm, root, AgentConfig::default())
}

/// [`builtins_agent`] with an agent configuration of the test's own.
pub fn builtins_agent_with(llm: LlmConfig, root: &Path, config: AgentConfig) -> Agent {
    Agent::new(
        LlmClient::new(llm).unwrap(),
        Arc::new(ToolRegistry::with_builtins()),
        ToolContext::open(root).unwrap(),
        config,
    )
}
