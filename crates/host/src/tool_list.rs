//! The tools as listings show them: `tooltrail tools` (every tool with how it is gated), the
//! built-in tools' switches of Settings → Tools, and the part of every request they make up
//! (`tooltrail tools --tokens`, `tooltrail doctor`).

use std::path::Path;

use tooltrail_mcp::ServerFailure;
use tooltrail_protocol::{ToolSource, ToolSpec};
use tooltrail_settings::Settings;
use tooltrail_tools::ToolRegistry;
use tooltrail_tools::builtin::OFF_BY_DEFAULT;

use crate::host::Host;

/// How a tool is gated, as a listing says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolAccess {
    /// An MCP tool the model is not offered (`never` in mcp.json, or run only as a task).
    Never,
    /// An MCP tool its server marks read-only.
    Allowed,
    /// Each call waits for the person's yes.
    AsksFirst,
    /// A built-in tool that only reads.
    ReadOnly,
    /// A built-in tool that is off until turned on, and asks first then.
    OffAsks,
}

impl ToolAccess {
    /// The words of `tooltrail tools`.
    pub fn words(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::Allowed => "allowed",
            Self::AsksFirst => "asks first",
            Self::ReadOnly => "read-only",
            Self::OffAsks => "off; asks",
        }
    }
}

/// Every tool a question in `folder` may have, with how each is gated.
pub struct ToolListing {
    pub tools: Vec<(ToolSpec, ToolAccess)>,
    /// MCP servers that could not give their tools.
    pub failures: Vec<ServerFailure>,
    /// Why mcp.json could not be used, when it could not.
    pub problem: Option<String>,
}

impl Host {
    /// The built-in tools, then those of the MCP servers of mcp.json (started to list them, as
    /// a question in `folder` would start them).
    pub async fn list_tools(&self, folder: &Path) -> ToolListing {
        let found = self.toolbox().tools(folder, &[]).await;
        let registry = found.registry;
        let tools = registry
            .specs()
            .into_iter()
            .map(|spec| {
                let mcp = registry
                    .get(&spec.name)
                    .is_some_and(|tool| matches!(tool.source(), ToolSource::Mcp { .. }));
                let access = match (mcp, spec.read_only) {
                    (true, _) if !registry.is_offered(&spec.name) => ToolAccess::Never,
                    (true, true) => ToolAccess::Allowed,
                    (true, false) => ToolAccess::AsksFirst,
                    (false, true) => ToolAccess::ReadOnly,
                    (false, false) if is_off_by_default(&spec.name) => ToolAccess::OffAsks,
                    (false, false) => ToolAccess::AsksFirst,
                };
                (spec, access)
            })
            .collect();
        ToolListing {
            tools,
            failures: found.failures,
            problem: found.problem,
        }
    }
}

/// Whether `name` is a built-in tool.
pub fn is_builtin(name: &str) -> bool {
    ToolRegistry::with_builtins().get(name).is_some()
}

/// Whether the built-in tool `name` is off until config.toml's `enabled_tools` turns it on.
pub fn is_off_by_default(name: &str) -> bool {
    OFF_BY_DEFAULT.contains(&name)
}

/// A built-in tool, as Settings → Tools shows its switch.
pub struct BuiltinTool {
    pub spec: ToolSpec,
    pub off_by_default: bool,
    /// What offering it costs in every request, estimated; `None` when the model is not offered
    /// it by itself.
    pub offered_tokens: Option<u32>,
}

/// Every built-in tool, in the registry's order.
pub fn builtin_tools() -> Vec<BuiltinTool> {
    let registry = ToolRegistry::with_builtins();
    let offered: Vec<(String, u32)> = registry
        .offered_specs()
        .iter()
        .map(|spec| (spec.name.clone(), offered_tokens(spec)))
        .collect();
    registry
        .specs()
        .into_iter()
        .map(|spec| BuiltinTool {
            off_by_default: is_off_by_default(&spec.name),
            offered_tokens: offered
                .iter()
                .find(|(name, _)| *name == spec.name)
                .map(|(_, tokens)| *tokens),
            spec,
        })
        .collect()
}

/// The estimated tokens of one tool as the model is offered it.
fn offered_tokens(spec: &ToolSpec) -> u32 {
    tooltrail_llm::estimate_tokens(&tooltrail_llm::tool_json(spec).to_string())
}

/// The built-in tools that are on with `settings`.
fn builtin_registry(settings: &Settings) -> ToolRegistry {
    let mut registry = ToolRegistry::with_builtins();
    for name in crate::tools_off(settings) {
        registry.remove(&name);
    }
    registry
}

/// What every request begins with, part by part as `(name, text)`: the system prompt, then
/// each built-in tool that is on, as the model is offered it. The same for every folder.
pub fn fixed_prefix(settings: &Settings) -> Vec<(String, String)> {
    let registry = builtin_registry(settings);
    let mut parts = vec![(
        "(system prompt)".to_string(),
        tooltrail_agent::system_prompt(),
    )];
    for spec in registry.offered_specs() {
        let text = tooltrail_llm::tool_json(&spec).to_string();
        parts.push((spec.name, text));
    }
    parts
}

/// How many built-in tools are in [`fixed_prefix`], and its estimated tokens, without asking
/// the model server.
pub fn fixed_prefix_estimate(settings: &Settings) -> (usize, u32) {
    let parts = fixed_prefix(settings);
    let tokens = parts
        .iter()
        .map(|(_, text)| tooltrail_llm::estimate_tokens(text))
        .sum();
    (parts.len().saturating_sub(1), tokens)
}

/// [`fixed_prefix`] in tokens.
pub struct PrefixCount {
    /// `(name, tokens)`, part by part.
    pub parts: Vec<(String, u32)>,
    /// The model server counted them in its own tokens; otherwise they are estimated.
    pub counted_by_server: bool,
    /// The whole first request with an empty question, as the server's chat template renders
    /// it, where the server tells.
    pub rendered: Option<u32>,
}

/// [`fixed_prefix`] counted by the configured model server where it counts tokens, else
/// estimated.
pub async fn count_fixed_prefix(settings: &Settings) -> PrefixCount {
    let parts = fixed_prefix(settings);
    let texts: Vec<String> = parts.iter().map(|(_, text)| text.clone()).collect();
    let mut config = tooltrail_llm::LlmConfig::new(
        settings.base_url.clone(),
        settings.model.clone().unwrap_or_default(),
    );
    config.api_key = settings.api_key.clone();
    config.tool_mode = settings.tool_mode;
    let client = tooltrail_llm::LlmClient::new(config).ok();
    let (counted, rendered) = match &client {
        Some(client) => {
            let request = tooltrail_agent::first_request(&builtin_registry(settings), "");
            (
                client.count_tokens(&texts).await,
                client.count_rendered(&request).await,
            )
        }
        None => (None, None),
    };
    let counted_by_server = counted.is_some();
    let counts = counted.unwrap_or_else(|| {
        texts
            .iter()
            .map(|text| tooltrail_llm::estimate_tokens(text))
            .collect()
    });
    PrefixCount {
        parts: parts
            .into_iter()
            .map(|(name, _)| name)
            .zip(counts)
            .collect(),
        counted_by_server,
        rendered,
    }
}
