//! `tooltrail providers`: where questions go. Lists the providers of `config.toml`, looks for
//! the model servers running on this machine (`detect`), and makes one the active provider
//! (`use`), through the same [`ConfigEditor`] the app's settings screen uses.

use std::io::Write;
use std::process::ExitCode;

use serde_json::json;
use tooltrail_host::choose::{UsedServer, suggested_model, use_url};
use tooltrail_runtime::detect::{FoundModel, FoundServer, ServerKind, Support, Target};
use tooltrail_settings::{
    ConfigEditor, ConfigFile, LOCAL_PROVIDER_ID, Provider, config_path, env as setting_env,
};

/// The model `tooltrail models pull` suggests to a new user: small enough for a laptop's CPU,
/// with native tool calling.
const STARTER_MODEL: &str = "qwen3-1.7b";

#[derive(clap::Args)]
pub struct ProvidersArgs {
    #[command(subcommand)]
    pub command: Option<ProvidersCommand>,
    /// Print the providers as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Subcommand)]
pub enum ProvidersCommand {
    /// Look for model servers running on this machine (and at config.toml's detect_urls).
    Detect {
        /// Print what was found as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Send questions to a provider: one of config.toml by its id, or a new one for a URL.
    Use {
        /// A provider's id (see `tooltrail providers`), `local` for Tooltrail's own model
        /// server, or an OpenAI-compatible base URL such as http://127.0.0.1:11434/v1.
        #[arg(value_name = "ID|URL")]
        target: String,
        /// The model to ask for [default: for a new URL, the first model found there that
        /// calls tools; else the endpoint's first model].
        #[arg(long, short = 'm')]
        model: Option<String>,
    },
}

pub async fn run(args: ProvidersArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        None => list(args.json),
        Some(ProvidersCommand::Detect { json }) => detect_cmd(json).await,
        Some(ProvidersCommand::Use { target, model }) => use_cmd(&target, model).await,
    }
}

fn list(as_json: bool) -> anyhow::Result<ExitCode> {
    let path = config_path()?;
    let file = ConfigFile::read(&path)?;
    let active = file.active_provider.as_deref();
    // Tooltrail's own server needs no [[providers]] entry; one of the user's with its id wins.
    let builtin_local = !file.providers.iter().any(|p| p.id == LOCAL_PROVIDER_ID);
    let mut out = crate::terminal::stdout_for(as_json);
    if as_json {
        let value = json!({
            "config": path,
            "active": active,
            "providers": file.providers,
            "local": builtin_local.then_some(&file.local),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let rows = provider_rows(&file, builtin_local);
    writeln!(
        out,
        "Providers of {} (* is where questions go):",
        path.display()
    )?;
    write_rows(&mut out, &rows, active)?;
    write_where_questions_go(&mut out, &file, &rows, active)?;
    writeln!(
        out,
        "Choose with `tooltrail providers use ID|URL`; find servers with `tooltrail providers detect`."
    )?;
    Ok(ExitCode::SUCCESS)
}

/// One row a provider: its id, name, address and model; Tooltrail's own server last, unless
/// the user's file has a provider of its id.
fn provider_rows(file: &ConfigFile, builtin_local: bool) -> Vec<[String; 4]> {
    let mut rows: Vec<[String; 4]> = file
        .providers
        .iter()
        .map(|p| {
            [
                p.id.clone(),
                p.name.clone(),
                p.base_url.clone(),
                p.model
                    .clone()
                    .unwrap_or_else(|| "(the endpoint's first model)".to_string()),
            ]
        })
        .collect();
    if builtin_local {
        rows.push([
            LOCAL_PROVIDER_ID.to_string(),
            "Tooltrail's own model server".to_string(),
            "(started when asked)".to_string(),
            file.local
                .model
                .clone()
                .unwrap_or_else(|| "(none chosen: see `tooltrail models`)".to_string()),
        ]);
    }
    rows
}

/// The rows in aligned columns, the active one marked with `*`.
fn write_rows(
    out: &mut impl Write,
    rows: &[[String; 4]],
    active: Option<&str>,
) -> anyhow::Result<()> {
    let widths: Vec<usize> = (0..3)
        .map(|i| {
            rows.iter()
                .map(|row| row[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mark = if Some(row[0].as_str()) == active {
            '*'
        } else {
            ' '
        };
        writeln!(
            out,
            "{mark} {:w0$}  {:w1$}  {:w2$}  {}",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
        )?;
    }
    Ok(())
}

/// Where questions go when no listed provider is marked: no provider active, one the file does
/// not have, or the environment's address over all.
fn write_where_questions_go(
    out: &mut impl Write,
    file: &ConfigFile,
    rows: &[[String; 4]],
    active: Option<&str>,
) -> anyhow::Result<()> {
    match active {
        None => writeln!(
            out,
            "No provider is active, so questions go to {}{}.",
            file.base_url
                .as_deref()
                .unwrap_or(tooltrail_settings::DEFAULT_BASE_URL),
            if file.base_url.is_some() {
                " (base_url of config.toml)"
            } else {
                " (the default)"
            }
        )?,
        Some(id) if !rows.iter().any(|row| row[0] == id) => writeln!(
            out,
            "The active provider {id:?} is not in the file, so questions go to the default endpoint."
        )?,
        Some(_) => {}
    }
    if let Some(url) = setting_env("TOOLTRAIL_BASE_URL") {
        writeln!(
            out,
            "TOOLTRAIL_BASE_URL is set, so questions go to {url} instead."
        )?;
    }
    Ok(())
}

/// What one look for servers found, and the look itself (shared with the app's guide).
pub use tooltrail_host::choose::{Looked, look};

async fn detect_cmd(as_json: bool) -> anyhow::Result<ExitCode> {
    let file = ConfigFile::read(&config_path()?)?;
    let looked = look(&file.detect_urls).await?;
    let mut out = crate::terminal::stdout_for(as_json);
    if as_json {
        let value = json!({
            "servers": looked.found,
            "looked_at": looked.targets.iter().map(Target::base_url).collect::<Vec<_>>(),
            // Tenths of a millisecond: a look where nothing listens takes a few.
            "took_ms": (looked.took.as_secs_f64() * 10_000.0).round() / 10.0,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if looked.found.is_empty() {
        writeln!(out, "No model server answered ({}).", where_looked(&looked))?;
        writeln!(out, "Ways forward:")?;
        for line in ways_forward(true) {
            writeln!(out, "{line}")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    for server in &looked.found {
        for line in server_block(server) {
            writeln!(out, "{line}")?;
        }
        writeln!(out)?;
    }
    let count = looked.found.len();
    writeln!(
        out,
        "Found {count} {} in {} ms. To send questions to one:",
        if count == 1 { "server" } else { "servers" },
        looked.took.as_millis()
    )?;
    for server in &looked.found {
        writeln!(out, "  {}", use_command(server))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Where a look went and how long it took, for a sentence: "looked for Ollama, … in 3 ms".
pub fn where_looked(looked: &Looked) -> String {
    let kinds: Vec<&str> = looked
        .targets
        .iter()
        .filter_map(Target::expected)
        .map(short_name)
        .collect();
    let urls: Vec<&str> = looked
        .targets
        .iter()
        .filter(|target| target.expected().is_none())
        .map(Target::base_url)
        .collect();
    let mut places = String::new();
    if !kinds.is_empty() {
        places = format!("looked for {} at their usual addresses", and_list(&kinds));
    }
    if !urls.is_empty() {
        if !places.is_empty() {
            places.push_str(" and ");
        } else {
            places.push_str("looked ");
        }
        places.push_str(&format!("at {}", and_list(&urls)));
    }
    format!("{places} in {} ms", looked.took.as_millis())
}

fn short_name(kind: ServerKind) -> &'static str {
    match kind {
        ServerKind::LlamaCpp => "llama.cpp",
        ServerKind::Ollama
        | ServerKind::LmStudio
        | ServerKind::Vllm
        | ServerKind::Jan
        | ServerKind::OpenAiCompatible => kind.name(),
    }
}

fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A found server as lines: its kind and URL, then a line per model.
fn server_block(server: &FoundServer) -> Vec<String> {
    let mut lines = vec![format!("{} at {}", server.kind.name(), server.base_url)];
    if server.needs_api_key {
        lines.push(
            "  It wants an API key to list its models (give it with TOOLTRAIL_API_KEY)."
                .to_string(),
        );
    } else if server.models.is_empty() {
        lines.push("  No models.".to_string());
    }
    let width = server
        .models
        .iter()
        .map(|model| model.id.chars().count())
        .max()
        .unwrap_or(0);
    for model in &server.models {
        lines.push(format!(
            "  {:width$}  tools: {:7}  vision: {:7}  context: {}",
            model.id,
            support_word(model.tools),
            support_word(model.vision),
            window_words(model),
        ));
    }
    lines
}

fn support_word(support: Support) -> &'static str {
    match support {
        Support::Yes => "yes",
        Support::No => "no",
        Support::Unknown => "unknown",
    }
}

fn window_words(model: &FoundModel) -> String {
    match (model.context_window, model.max_context_window) {
        (Some(window), Some(max)) if window != max => {
            format!("{window} tokens (the model takes up to {max})")
        }
        (Some(window), _) => format!("{window} tokens"),
        (None, Some(max)) => format!("the model takes up to {max} tokens"),
        (None, None) => "not said".to_string(),
    }
}

/// `tooltrail providers use URL --model M` for a found server.
pub fn use_command(server: &FoundServer) -> String {
    let mut command = format!("tooltrail providers use {}", server.base_url);
    if let Some(model) = suggested_model(server) {
        command.push_str(&format!(" --model {}", shell_word(&model.id)));
    }
    if server.needs_api_key {
        command.push_str("   (then set TOOLTRAIL_API_KEY to its key)");
    }
    command
}

/// A word as a shell takes it: quoted when it holds anything but plain characters.
fn shell_word(word: &str) -> String {
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.:/@+=".contains(c));
    if plain && !word.is_empty() {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The ways to a first answer besides a server already running, as indented lines.
/// `server_line` adds the way of starting a server of one's own.
pub fn ways_forward(server_line: bool) -> Vec<String> {
    let mut lines = vec![
        "  · a small model that Tooltrail runs itself:".to_string(),
        format!("      tooltrail models pull {STARTER_MODEL}"),
        // `models use` chooses the model and makes the local provider the active one.
        format!("      tooltrail models use {STARTER_MODEL}"),
        "  · a cloud model, with your key in TOOLTRAIL_API_KEY (or saved in the app's Settings → Providers, which keeps it in the OS keychain):".to_string(),
        "      tooltrail providers use https://api.openai.com/v1 --model gpt-4.1-mini".to_string(),
        "      export TOOLTRAIL_API_KEY=sk-...".to_string(),
    ];
    if server_line {
        lines.push(
            "  · or start Ollama, LM Studio or llama-server, then run `tooltrail providers detect`"
                .to_string(),
        );
    }
    lines
}

async fn use_cmd(target: &str, model: Option<String>) -> anyhow::Result<ExitCode> {
    let path = config_path()?;
    let file = ConfigFile::read(&path)?;
    let mut editor = ConfigEditor::open(&path)?;
    let mut out = crate::terminal::out();
    let target = target.trim();
    if !target.contains("://") {
        let id = target;
        let stored = match file.providers.iter().find(|p| p.id == id) {
            Some(provider) => {
                let mut provider = provider.clone();
                if model.is_some() {
                    provider.model = model;
                }
                Some(editor.upsert_provider(provider)?)
            }
            None => {
                if id == LOCAL_PROVIDER_ID
                    && let Some(model) = &model
                {
                    editor.set_local_model(model)?;
                } else if model.is_some() {
                    anyhow::bail!(
                        "there is no provider {id:?} in {} to set the model of (see `tooltrail providers`)",
                        path.display()
                    );
                }
                None
            }
        };
        editor.set_active(id)?;
        editor.save()?;
        match stored {
            Some(provider) => writeln!(out, "{}", now_going_to(&provider))?,
            None => writeln!(
                out,
                "Questions now go to Tooltrail's own model server{}.",
                ConfigFile::read(&path)?
                    .local
                    .model
                    .map(|model| format!(", model {model}"))
                    .unwrap_or_default()
            )?,
        }
        warn_if_overridden(&mut out)?;
        return Ok(ExitCode::SUCCESS);
    }

    // Written through the same service as the app's first-run guide.
    drop(editor);
    let UsedServer {
        provider: stored,
        found,
    } = use_url(&path, target, model).await?;
    let base_url = stored.base_url.clone();
    writeln!(out, "{}", now_going_to(&stored))?;
    match &found {
        None => writeln!(
            out,
            "Nothing answered at {base_url} just now; questions will go there once something does."
        )?,
        Some(server) if server.needs_api_key => writeln!(
            out,
            "It wants an API key: set TOOLTRAIL_API_KEY, or save the key in the app (Settings → Providers), which keeps it in the OS keychain."
        )?,
        Some(server) => {
            if let Some(model) = &stored.model
                && !server.models.is_empty()
                && !server.models.iter().any(|m| &m.id == model)
            {
                writeln!(
                    out,
                    "warning: the server does not list a model {model:?}; it has {}.",
                    server
                        .models
                        .iter()
                        .map(|m| m.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )?;
            } else if server.models.len() > 1 {
                writeln!(
                    out,
                    "It also has {}; choose another with --model.",
                    server
                        .models
                        .iter()
                        .filter(|m| Some(&m.id) != stored.model.as_ref())
                        .map(|m| m.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )?;
            }
        }
    }
    warn_if_overridden(&mut out)?;
    Ok(ExitCode::SUCCESS)
}

/// "Questions now go to …" for a provider just made active.
fn now_going_to(provider: &Provider) -> String {
    format!(
        "Questions now go to {} (provider {:?}) at {}, {}.",
        provider.name,
        provider.id,
        provider.base_url,
        match &provider.model {
            Some(model) => format!("model {model}"),
            None => "its first model".to_string(),
        }
    )
}

fn warn_if_overridden(out: &mut impl Write) -> anyhow::Result<()> {
    if let Some(url) = setting_env("TOOLTRAIL_BASE_URL") {
        writeln!(
            out,
            "Note: TOOLTRAIL_BASE_URL is set ({url}), and wins over the active provider while it is."
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn model_names_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(shell_word("qwen3:1.7b"), "qwen3:1.7b");
        assert_eq!(
            shell_word("Qwen/Qwen2.5-1.5B-Instruct"),
            "Qwen/Qwen2.5-1.5B-Instruct"
        );
        assert_eq!(shell_word("my model's"), r"'my model'\''s'");
    }

    #[test]
    fn lists_read_as_sentences() {
        assert_eq!(and_list(&["Ollama"]), "Ollama");
        assert_eq!(
            and_list(&["Ollama", "LM Studio", "Jan"]),
            "Ollama, LM Studio and Jan"
        );
    }
}
