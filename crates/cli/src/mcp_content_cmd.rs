//! `tooltrail mcp resources|read|prompts`, and what `tooltrail ask --attach/--prompt/--arg`
//! add to a question: a server's resources and prompts on the command line.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use serde::Serialize;
use tooltrail_host::Host;
use tooltrail_host::mcp_content::{parse_attachment, question_messages};
use tooltrail_mcp::{McpConfig, McpError, McpManager, McpServer, PromptText};
use tooltrail_protocol::{AttachedContent, Message, PromptRole};

use crate::AskArgs;

/// Description text shown per line, at most.
const DESCRIPTION_CHARS: usize = 100;

fn short(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(DESCRIPTION_CHARS).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Server `name`'s answer to `question`, with every server stopped after it: each of these
/// commands asks one thing. `None` when there is no `mcp.json` (already said).
async fn ask_server<T, Asked>(
    manager: Option<McpManager>,
    name: &str,
    question: impl FnOnce(Arc<McpServer>) -> Asked,
) -> anyhow::Result<Option<T>>
where
    Asked: Future<Output = Result<T, McpError>>,
{
    let Some(manager) = manager else {
        return Ok(None);
    };
    let asked = question(Arc::clone(manager.server(name)?)).await;
    manager.shutdown().await;
    Ok(Some(asked?))
}

/// Prints `items` as JSON for `--json`, or says that `name` offers no `what`; `true` when that
/// was all there is to print.
fn printed_whole<T: Serialize>(
    name: &str,
    what: &str,
    items: &[T],
    as_json: bool,
) -> anyhow::Result<bool> {
    if as_json {
        jsonln!("{}", serde_json::to_string_pretty(items)?)?;
        return Ok(true);
    }
    if items.is_empty() {
        outln!("{name} offers no {what}.")?;
        return Ok(true);
    }
    Ok(false)
}

pub async fn resources(
    name: &str,
    as_json: bool,
    manager: Option<McpManager>,
) -> anyhow::Result<ExitCode> {
    let Some(items) = ask_server(
        manager,
        name,
        |server| async move { server.resources().await },
    )
    .await?
    else {
        return Ok(ExitCode::from(1));
    };
    if printed_whole(name, "resources", &items, as_json)? {
        return Ok(ExitCode::SUCCESS);
    }
    let (templates, resources): (Vec<_>, Vec<_>) = items.iter().partition(|item| item.template);
    for (heading, group) in [("resources", resources), ("templates", templates)] {
        if group.is_empty() {
            continue;
        }
        outln!("{heading}:")?;
        for item in group {
            let mime = item
                .mime_type
                .as_deref()
                .map(|mime| format!(" ({mime})"))
                .unwrap_or_default();
            let about = item
                .description
                .as_deref()
                .map(|text| format!(" — {}", short(text)))
                .unwrap_or_default();
            outln!("  {}  {}{mime}{about}", item.uri, item.name)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `tooltrail mcp read`: the user asks for the resource by name, so it is read without the
/// approval the model's `read_resource` needs, and shown only on this terminal.
pub async fn read(name: &str, uri: &str, manager: Option<McpManager>) -> anyhow::Result<ExitCode> {
    let Some(read) = ask_server(manager, name, |server| async move {
        server.read_resource(uri).await
    })
    .await?
    else {
        return Ok(ExitCode::from(1));
    };
    for content in read {
        match content.content {
            AttachedContent::Text { text, .. } => {
                outln!("{}", text.trim_end_matches('\n'))?;
            }
            AttachedContent::Binary { bytes } => {
                let mime = content.mime_type.as_deref().unwrap_or("unknown type");
                outln!("[{} is {bytes} bytes of binary data ({mime})]", content.uri)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn prompts(
    name: &str,
    as_json: bool,
    manager: Option<McpManager>,
) -> anyhow::Result<ExitCode> {
    let Some(prompts) = ask_server(
        manager,
        name,
        |server| async move { server.prompts().await },
    )
    .await?
    else {
        return Ok(ExitCode::from(1));
    };
    if printed_whole(name, "prompts", &prompts, as_json)? {
        return Ok(ExitCode::SUCCESS);
    }
    for prompt in &prompts {
        let about = prompt
            .description
            .as_deref()
            .map(|text| format!(" — {}", short(text)))
            .unwrap_or_default();
        outln!("{name}/{}{about}", prompt.name)?;
        for argument in &prompt.arguments {
            let required = if argument.required { " (required)" } else { "" };
            let about = argument
                .description
                .as_deref()
                .map(|text| format!(": {}", short(text)))
                .unwrap_or_default();
            outln!("  --arg {}=…{required}{about}", argument.name)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `k=v` pairs of `--arg`.
fn prompt_arguments(pairs: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut arguments = BTreeMap::new();
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("--arg {pair:?} needs the form NAME=VALUE");
        };
        arguments.insert(key.trim().to_string(), value.to_string());
    }
    Ok(arguments)
}

/// The servers named in `mcp.json`, to tell `--attach SERVER:URI` from a file.
fn server_names() -> Vec<String> {
    tooltrail_settings::config_dir()
        .ok()
        .and_then(|dir| McpConfig::load(&McpConfig::path_in(&dir)).ok().flatten())
        .map(|config| config.servers.into_keys().collect())
        .unwrap_or_default()
}

/// What `ask` adds to its conversation for `question`, with `--attach`, `--prompt` and
/// `--arg`; prints a line per attachment and the prompt it used (unless `quiet`).
pub async fn question_input(
    host: &Host,
    workspace: &Path,
    window_tokens: u32,
    room: usize,
    question: &str,
    ask: &AskArgs,
) -> anyhow::Result<Vec<Message>> {
    let (attach, prompt, args, quiet) = (
        ask.attach.as_slice(),
        ask.prompt.as_deref(),
        ask.prompt_args.as_slice(),
        ask.json,
    );
    if !args.is_empty() && prompt.is_none() {
        bail!("--arg gives an argument to a prompt; name the prompt with --prompt SERVER/PROMPT");
    }
    let prompt_text: Option<PromptText> = match prompt {
        Some(spec) => {
            let Some((server, name)) = spec.split_once('/') else {
                bail!(
                    "--prompt {spec:?} needs the form SERVER/PROMPT (see `tooltrail mcp prompts SERVER`)"
                );
            };
            let arguments = prompt_arguments(args)?;
            let text = host
                .mcp_prompt(workspace, server, name, &arguments)
                .await
                .with_context(|| format!("could not use the prompt {spec}"))?;
            if !quiet {
                errln!("· prompt {spec}: {} message(s)", text.messages.len());
                for message in &text.messages {
                    let who = match message.role {
                        PromptRole::User => "user",
                        PromptRole::Assistant => "assistant",
                    };
                    errln!("  {who}: {}", short(&message.text));
                }
            }
            Some(text)
        }
        None => None,
    };
    let servers = if attach.is_empty() {
        Vec::new()
    } else {
        server_names()
    };
    let mut attachments = Vec::new();
    for spec in attach {
        let source = parse_attachment(spec, &servers);
        let attachment = host
            .attach(workspace, &source)
            .await
            .with_context(|| format!("could not attach {spec}"))?;
        if !quiet {
            let size = match &attachment.content {
                AttachedContent::Text { text, .. } => {
                    format!("{} characters", text.chars().count())
                }
                AttachedContent::Binary { bytes } => format!("{bytes} bytes, not text"),
            };
            errln!("· attached {} ({size})", source.label());
        }
        attachments.push(attachment);
    }
    let messages = question_messages(prompt_text.as_ref(), question, attachments, room)?;
    if !quiet
        && let Some(Message::User { content }) = messages.last()
        && content.contains("[… the rest is left out")
    {
        errln!("· an attachment was cut to fit the model's {window_tokens}-token window");
    }
    Ok(messages)
}
