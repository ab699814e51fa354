//! `tooltrail tool` and `tooltrail tools`.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use serde_json::json;
use tooltrail_host::StoreSnippets;
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolSource};
use tooltrail_tools::builtin::OFF_BY_DEFAULT;
use tooltrail_tools::{Gate, ToolContext, ToolRegistry};

use crate::answer::CommandLineAsker;
use crate::{ApproveMode, ToolArgs};

/// Whether `--enable` or config.toml's `enabled_tools` turns `name` on.
fn enabled(flags: &[String], name: &str) -> bool {
    flags.iter().any(|flag| flag == name)
        || tooltrail_settings::Settings::resolve(&tooltrail_settings::Overrides::default())
            .is_ok_and(|settings| settings.enabled_tools.iter().any(|on| on == name))
}

/// Exit status for usage errors (as clap uses).
const USAGE: u8 = 2;

pub async fn run(args: ToolArgs) -> anyhow::Result<ExitCode> {
    let mut registry = ToolRegistry::with_builtins();
    // MCP tools are named server__tool; built-in tools start no servers.
    let mcp = match registry.get(&args.name) {
        Some(_) => None,
        None => crate::mcp_cmd::add_tools_in(&mut registry, args.workspace.as_deref()).await,
    };
    let Some(tool) = registry.get(&args.name) else {
        let names: Vec<&str> = registry.names().collect();
        errln!(
            "error: there is no tool named {:?}; the tools are: {}",
            args.name,
            names.join(", ")
        );
        return Ok(ExitCode::from(USAGE));
    };
    if let Err(err) = serde_json::from_str::<serde_json::Value>(&args.args) {
        errln!("error: --args is not valid JSON: {err}");
        return Ok(ExitCode::from(USAGE));
    }
    let root = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("could not read the current folder")?,
    };
    if OFF_BY_DEFAULT.contains(&tool.spec().name.as_str())
        && !enabled(&args.enable, tool.spec().name.as_str())
    {
        errln!(
            "error: {0} is off until you turn it on: pass --enable {0}, or add it to \
             enabled_tools in config.toml",
            tool.spec().name
        );
        return Ok(ExitCode::from(USAGE));
    }
    let mut ctx = ToolContext::open(&root)?.with_user(Arc::new(CommandLineAsker::new(
        args.user_answers.clone(),
        false,
    )));
    // Commands see the toolchains and the extra folders of config.toml, as in `ask`.
    let config = tooltrail_settings::ConfigFile::read(&tooltrail_settings::config_path()?)?;
    let mut sandbox = tooltrail_host::sandbox_settings_from(&config.sandbox.read_only_folders);
    sandbox.network_commands = tooltrail_host::network_commands(&config.sandbox.network_commands);
    ctx = ctx.with_sandbox_settings(sandbox);
    // Only the snippet tools need the history database; the others run without opening it.
    if matches!(
        tool.spec().name.as_str(),
        "snippet_save" | "snippet_load" | "snippet_list"
    ) {
        let store = crate::history_cmd::open_store()?;
        let book = StoreSnippets::new(Arc::new(store), ctx.workspace.root());
        ctx = ctx.with_snippets(Arc::new(book));
    }
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            cancel.cancel();
        }
    });

    let result = match registry.prepare(tool.spec().name.as_str(), &args.args) {
        Err(error) => Err(error),
        Ok((tool, call_args)) => match tool.gate(&call_args, &ctx) {
            Gate::Refuse(error) => Err(error),
            Gate::Ask { reason, .. } if args.approve != ApproveMode::All => Err(ToolError::new(
                ToolErrorCode::ApprovalRequired,
                format!("{reason}; run it with --approve all to allow it"),
            )),
            Gate::Ask { .. } => tool.call(call_args, &ctx.clone().approved(true)).await,
            Gate::AskEachTime { change, reason, .. } => {
                if let Some(change) = &change {
                    let _ = crate::terminal::err().painted(&crate::render::diff(change));
                }
                if args.approve == ApproveMode::All {
                    tool.call(call_args, &ctx.clone().approved(true)).await
                } else {
                    Err(ToolError::new(
                        ToolErrorCode::ApprovalRequired,
                        format!("{reason}; run it with --approve all to allow it"),
                    ))
                }
            }
            Gate::ReadOnly | Gate::Allowed { .. } => tool.call(call_args, &ctx).await,
        },
    };
    if let Some(mcp) = mcp {
        mcp.shutdown().await;
    }
    let (value, code) = match result {
        Ok(output) => (
            json!({"ok": true, "text": output.text, "data": output.data}),
            0,
        ),
        Err(error) => (json!({"ok": false, "error": error}), 1),
    };
    jsonln!("{}", serde_json::to_string_pretty(&value)?)?;
    Ok(ExitCode::from(code))
}

/// `tooltrail tools --tokens`: the fixed prefix of every request, tool by tool, in the
/// configured model's own tokens where its server counts them, else Tooltrail's estimate.
pub async fn tokens(as_json: bool) -> anyhow::Result<ExitCode> {
    let settings = tooltrail_settings::Settings::resolve(&tooltrail_settings::Overrides::default())
        .context("the settings could not be read")?;
    let (names, texts) = fixed_prefix(&settings);
    let mut config = tooltrail_llm::LlmConfig::new(
        settings.base_url.clone(),
        settings.model.clone().unwrap_or_default(),
    );
    config.api_key = settings.api_key.clone();
    config.tool_mode = settings.tool_mode;
    let client = tooltrail_llm::LlmClient::new(config).ok();
    let counted = match &client {
        Some(client) => client.count_tokens(&texts).await,
        None => None,
    };
    // The whole first request with an empty question, as the server's template renders it.
    let rendered = match &client {
        Some(client) => {
            let request = tooltrail_agent::first_request(&builtin_registry(&settings), "");
            client.count_rendered(&request).await
        }
        None => None,
    };
    let (counts, how) = match counted {
        Some(counts) => (
            counts,
            format!("counted by the model server at {}", settings.base_url),
        ),
        None => (
            texts
                .iter()
                .map(|text| tooltrail_llm::estimate_tokens(text))
                .collect(),
            "estimated (the model server does not count tokens, or could not be reached)"
                .to_string(),
        ),
    };
    let total: u32 = counts.iter().sum();
    if as_json {
        let rows: Vec<_> = names
            .iter()
            .zip(&counts)
            .map(|(name, tokens)| json!({ "name": name, "tokens": tokens }))
            .collect();
        let counted = how.starts_with("counted");
        let value = json!({ "parts": rows, "total": total, "counted_by_server": counted,
            "rendered_by_server": rendered });
        jsonln!("{}", serde_json::to_string_pretty(&value)?)?;
    } else {
        for (name, tokens) in names.iter().zip(&counts) {
            outln!("{name:<16} {tokens:>5}")?;
        }
        outln!("{:<16} {total:>5} tokens in every request, {how}", "in all")?;
        if let Some(rendered) = rendered {
            outln!(
                "{:<16} {rendered:>5} tokens in a request with an empty question, as the server's \
                 chat template renders it",
                "rendered"
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What every request begins with, part by part: the system prompt, then each built-in tool
/// that is on, as the model is offered it. The same for every folder.
pub fn fixed_prefix(settings: &tooltrail_settings::Settings) -> (Vec<String>, Vec<String>) {
    let registry = builtin_registry(settings);
    let mut names = vec!["(system prompt)".to_string()];
    let mut texts = vec![tooltrail_agent::system_prompt()];
    for spec in registry.offered_specs() {
        texts.push(tooltrail_llm::tool_json(&spec).to_string());
        names.push(spec.name);
    }
    (names, texts)
}

/// The built-in tools that are on.
fn builtin_registry(settings: &tooltrail_settings::Settings) -> ToolRegistry {
    let mut registry = ToolRegistry::with_builtins();
    for name in tooltrail_host::tools_off(settings) {
        registry.remove(&name);
    }
    registry
}

/// Doctor's figure for it: how many tools, and the estimated tokens, without asking the
/// model server.
pub fn fixed_prefix_estimate(settings: &tooltrail_settings::Settings) -> (usize, u32) {
    let (names, texts) = fixed_prefix(settings);
    let tokens = texts
        .iter()
        .map(|text| tooltrail_llm::estimate_tokens(text))
        .sum();
    (names.len().saturating_sub(1), tokens)
}

/// `tooltrail tools`: the built-in tools, then those of the MCP servers of mcp.json (started
/// to list them, as `ask` would), with how each is gated.
pub async fn list(as_json: bool) -> anyhow::Result<ExitCode> {
    let mut registry = ToolRegistry::with_builtins();
    let mcp = crate::mcp_cmd::add_tools_in(&mut registry, None).await;
    let specs = registry.specs();
    if let Some(mcp) = mcp {
        mcp.shutdown().await;
    }
    if as_json {
        jsonln!("{}", serde_json::to_string_pretty(&specs)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let width = specs
        .iter()
        .map(|spec| spec.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(14);
    for spec in &specs {
        let mcp = registry
            .get(&spec.name)
            .is_some_and(|tool| matches!(tool.source(), ToolSource::Mcp { .. }));
        let access = match (mcp, spec.read_only) {
            // Set to "never" in mcp.json, or run only as a task: the model is not offered it.
            (true, _) if !registry.is_offered(&spec.name) => "never",
            (true, true) => "allowed",
            (true, false) => "asks first",
            (false, true) => "read-only",
            (false, false) if OFF_BY_DEFAULT.contains(&spec.name.as_str()) => "off; asks",
            (false, false) => "asks first",
        };
        let first_line = spec.description.lines().next().unwrap_or_default();
        outln!("{:<width$} {:<10} {}", spec.name, access, first_line)?;
    }
    Ok(ExitCode::SUCCESS)
}
