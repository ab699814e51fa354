//! `tooltrail models [list|pull REF|import FILE|rm NAME|use NAME|ps|stop]`: the models
//! Tooltrail serves itself (the `local` provider), kept in the models folder of the data
//! folder.
//!
//! A pull shows a progress bar on a terminal (bytes, rate, time left) and a line every few
//! seconds otherwise; Ctrl-C stops it, keeping what arrived for the next pull of the same model.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tooltrail_host::{ModelsOverview, parameters_label};
use tooltrail_runtime::models::{
    Catalogue, CatalogueEntry, Hub, InstalledModel, ModelError, ModelRef, ModelStore, PullOptions,
    PullProgress, Pulled, human_bytes,
};
use tooltrail_settings::ConfigFile;

/// How often a pull that is not on a terminal prints a line.
const LINE_EVERY: Duration = Duration::from_secs(5);

#[derive(clap::Args)]
pub struct ModelsArgs {
    #[command(subcommand)]
    pub command: Option<ModelsCommand>,
}

#[derive(clap::Subcommand)]
pub enum ModelsCommand {
    /// The models installed, unfinished downloads, and the catalogue's models not pulled yet
    /// (the default command).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Download a model: a name from `tooltrail models list`, or a GGUF file on the hub as
    /// hf.co/OWNER/REPO/FILE.gguf (or its https://huggingface.co/…/resolve/main/… URL). The
    /// hub is HF_ENDPOINT (default https://huggingface.co); HF_TOKEN is sent for gated models.
    Pull {
        #[arg(value_name = "REF")]
        reference: String,
        /// Install it under this name [default: the catalogue's, or made from the file's name].
        #[arg(long)]
        name: Option<String>,
    },
    /// Add a GGUF file you have to the models folder (copied unless --link).
    Import {
        file: PathBuf,
        /// The name to give it [default: made from the file's name].
        #[arg(long)]
        name: Option<String>,
        /// Link to the file instead of copying it (a hard link, or a symbolic link when the
        /// file is on another disk; then the file must stay where it is).
        #[arg(long)]
        link: bool,
    },
    /// Remove a model, or the unfinished download of one.
    #[command(alias = "remove")]
    Rm { name: String },
    /// Serve this model for questions: sets `[local] model` in config.toml and makes `local`
    /// (Tooltrail's own llama-server) the active provider.
    Use { name: String },
    /// The local model running now: its process, port, context, memory and when it stops.
    Ps {
        /// Print it as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop the local model now, even in the middle of a question.
    Stop,
}

pub async fn run(args: ModelsArgs) -> anyhow::Result<ExitCode> {
    match args.command.unwrap_or(ModelsCommand::List { json: false }) {
        ModelsCommand::List { json } => list(json),
        ModelsCommand::Pull { reference, name } => pull(&reference, name).await,
        ModelsCommand::Import { file, name, link } => import(&file, name.as_deref(), link),
        ModelsCommand::Rm { name } => remove(&name),
        ModelsCommand::Use { name } => use_model(&name),
        ModelsCommand::Ps { json } => crate::runtime_cmd::ps(json),
        ModelsCommand::Stop => crate::runtime_cmd::stop().await,
    }
}

/// The model `[local] model` names, when config.toml can be read.
fn local_model() -> Option<String> {
    let path = tooltrail_settings::config_path().ok()?;
    ConfigFile::read(&path).ok()?.local.model
}

fn list(as_json: bool) -> anyhow::Result<ExitCode> {
    let overview = ModelsOverview::read(&tooltrail_settings::config_path()?)?;
    let available = overview.available();
    let mut out = crate::terminal::stdout_for(as_json);
    if as_json {
        let value = json!({
            "dir": overview.dir,
            "local_model": overview.local_model,
            "installed": overview.installed,
            "unfinished": overview.unfinished,
            "available": available,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    write_installed(&mut out, &overview)?;
    if !overview.unfinished.is_empty() {
        writeln!(out)?;
        writeln!(out, "Unfinished downloads (pull again to carry on):")?;
        for pull in &overview.unfinished {
            let total = pull.total.map_or_else(|| "?".to_string(), human_bytes);
            writeln!(
                out,
                "  {}  {} of {}",
                pull.name,
                human_bytes(pull.have),
                total
            )?;
        }
    }
    if !available.is_empty() {
        writeln!(out)?;
        writeln!(out, "Available to pull (tooltrail models pull NAME):")?;
        write_available(&mut out, &available)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The installed models as a table, the one `[local] model` names marked, or a sentence when
/// there are none or that one is not installed.
fn write_installed(out: &mut impl Write, overview: &ModelsOverview) -> anyhow::Result<()> {
    let installed = &overview.installed;
    let active = overview.local_model.as_deref();
    if installed.is_empty() {
        writeln!(
            out,
            "No models installed yet (the models folder is {}).",
            overview.dir.display()
        )?;
        return Ok(());
    }
    writeln!(out, "Installed in {}:", overview.dir.display())?;
    let rows: Vec<[String; 6]> = installed
        .iter()
        .map(|model| {
            let mark = if active == Some(model.name.as_str()) {
                "*"
            } else {
                " "
            };
            [
                format!("{mark} {}", model.name),
                human_bytes(model.size_bytes),
                parameters_label(model).unwrap_or_else(|| "-".into()),
                model
                    .metadata
                    .quantization
                    .clone()
                    .unwrap_or_else(|| "-".into()),
                model
                    .metadata
                    .context_length
                    .map_or_else(|| "-".into(), |n| n.to_string()),
                notes(model),
            ]
        })
        .collect();
    let header = ["  NAME", "SIZE", "PARAMS", "QUANT", "CONTEXT", "SOURCE"].map(String::from);
    write_table(out, &header, &rows)?;
    if let Some(active) = active {
        if installed.iter().any(|model| model.name == active) {
            writeln!(
                out,
                "(* is the model questions go to when the provider is local)"
            )?;
        } else {
            writeln!(
                out,
                "[local] model names {active}, which is not installed: pull it, or choose one with `tooltrail models use NAME`."
            )?;
        }
    }
    Ok(())
}

/// The catalogue's models not installed yet, as a table.
fn write_available(out: &mut impl Write, available: &[&CatalogueEntry]) -> anyhow::Result<()> {
    let rows: Vec<[String; 6]> = available
        .iter()
        .map(|entry| {
            [
                format!("  {}", entry.name),
                entry.size_bytes.map_or_else(|| "?".into(), human_bytes),
                format!("{:.1} GB", entry.memory_gb),
                entry.context_length.to_string(),
                entry.licence.clone(),
                format!("{}: {}", entry.title, entry.description),
            ]
        })
        .collect();
    let header = ["  NAME", "SIZE", "MEMORY", "CONTEXT", "LICENCE", "ABOUT"].map(String::from);
    write_table(out, &header, &rows)?;
    Ok(())
}

/// Where it came from, and what is worth knowing about it.
fn notes(model: &InstalledModel) -> String {
    let mut notes = model.source.describe();
    if model.missing {
        notes.push_str("; its file is missing");
    }
    if !model.metadata.has_chat_template {
        notes.push_str("; no chat template");
    }
    notes
}

/// Columns padded to their widest cell; the last one is not padded.
fn write_table<const N: usize>(
    out: &mut impl Write,
    header: &[String; N],
    rows: &[[String; N]],
) -> std::io::Result<()> {
    let mut widths = [0usize; N];
    for row in std::iter::once(header).chain(rows) {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    for row in std::iter::once(header).chain(rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// Said before a download on a system where Tooltrail cannot serve the model itself (one
/// neither Unix nor Windows): the file may still be wanted for another server, but not
/// unknowingly.
fn unsupported_note() -> Option<&'static str> {
    (!tooltrail_runtime::supervisor::runtime_supported()).then_some(
        "note: Tooltrail cannot run models itself on this system yet, so the `local` provider cannot serve this model here; the file can still be given to another llama.cpp server",
    )
}

async fn pull(reference: &str, name: Option<String>) -> anyhow::Result<ExitCode> {
    let store = ModelStore::open_default()?;
    let catalogue = Catalogue::builtin()?;
    let model_ref = ModelRef::parse(reference, &catalogue)?;
    let options = PullOptions {
        name,
        ..PullOptions::new(Hub::from_env()?)
    };
    if let Some(note) = unsupported_note() {
        errln!("{note}");
    }
    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let mut reporter = Reporter::new();
    let result = store
        .pull(
            &model_ref,
            &options,
            &mut |progress| reporter.show(progress),
            &cancel,
        )
        .await;
    watcher.abort();
    reporter.finish();
    match result {
        Ok(Pulled::AlreadyInstalled(model)) => {
            outln!(
                "{} is already installed ({}).",
                model.name,
                model.path.display()
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Ok(Pulled::Downloaded { model, stats }) => {
            let rate = if stats.download_secs > 0.0 {
                format!(
                    ", {}/s",
                    human_bytes((stats.received as f64 / stats.download_secs) as u64)
                )
            } else {
                String::new()
            };
            let resumed = if stats.resumed_from > 0 {
                format!(", carrying on after {}", human_bytes(stats.resumed_from))
            } else {
                String::new()
            };
            outln!(
                "Pulled {} ({}, SHA-256 checked) into {}.",
                model.name,
                human_bytes(model.size_bytes),
                model.path.display()
            )?;
            outln!(
                "Downloaded {} in {:.1} s{rate}{resumed}; verified in {:.1} s.",
                human_bytes(stats.received),
                stats.download_secs,
                stats.verify_secs
            )?;
            outln!("To ask it questions: tooltrail models use {}", model.name)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(error @ (ModelError::Cancelled { .. } | ModelError::Interrupted { .. })) => {
            errln!("error: {error}");
            errln!("To carry on: tooltrail models pull {reference}");
            // 130 is what a shell reports for a command Ctrl-C stopped.
            let code = if matches!(error, ModelError::Cancelled { .. }) {
                130
            } else {
                1
            };
            Ok(ExitCode::from(code))
        }
        Err(error) => Err(error.into()),
    }
}

/// Shows a pull's progress: a bar on a terminal, else a line every few seconds.
struct Reporter {
    bar: Option<ProgressBar>,
    terminal: bool,
    last_line: Option<Instant>,
    /// The bytes the last line said, so the end is not said twice.
    last_done: Option<u64>,
}

impl Reporter {
    fn new() -> Self {
        Self {
            bar: None,
            terminal: crate::terminal::stderr_is_terminal(),
            last_line: None,
            last_done: None,
        }
    }

    fn show(&mut self, progress: &PullProgress) {
        match progress {
            PullProgress::Checking { name, url } => {
                errln!("Pulling {name} from {url}");
            }
            PullProgress::Resuming { have, total } => {
                let total = total.map_or_else(|| "the file".to_string(), human_bytes);
                errln!(
                    "Carrying on after the {} of {total} downloaded before (checking them first).",
                    human_bytes(*have)
                );
            }
            PullProgress::Downloading {
                done,
                total,
                bytes_per_sec,
                ..
            } => {
                let left = progress
                    .seconds_left()
                    .map(|secs| format!(", {} left", duration(secs)))
                    .unwrap_or_default();
                let rate = if *bytes_per_sec > 0.0 {
                    format!("{}/s{left}", human_bytes(*bytes_per_sec as u64))
                } else {
                    String::new()
                };
                if self.terminal {
                    let bar = self.bar.get_or_insert_with(|| new_bar(*total));
                    bar.set_position(*done);
                    bar.set_message(rate);
                } else if self.last_done != Some(*done)
                    && (self
                        .last_line
                        .is_none_or(|last| last.elapsed() >= LINE_EVERY)
                        || total.is_some_and(|total| *done == total))
                {
                    self.last_line = Some(Instant::now());
                    self.last_done = Some(*done);
                    let of = match total {
                        Some(total) if *total > 0 => {
                            format!(" of {} ({}%)", human_bytes(*total), done * 100 / total)
                        }
                        _ => String::new(),
                    };
                    let rate = if rate.is_empty() {
                        String::new()
                    } else {
                        format!(", {rate}")
                    };
                    errln!("  {}{of}{rate}", human_bytes(*done));
                }
            }
            PullProgress::Retrying {
                attempt,
                of,
                reason,
                have,
            } => {
                self.suspend(|| {
                    errln!(
                        "The connection broke ({reason}) after {}; trying again ({attempt} of {of}).",
                        human_bytes(*have)
                    );
                });
            }
            PullProgress::Verifying => {
                if let Some(bar) = self.bar.take() {
                    bar.finish_and_clear();
                }
                errln!("Checking the SHA-256 and reading the model's header.");
            }
        }
    }

    fn suspend(&self, show: impl FnOnce()) {
        match &self.bar {
            Some(bar) => bar.suspend(show),
            None => show(),
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.abandon();
        }
    }
}

fn new_bar(total: Option<u64>) -> ProgressBar {
    let bar = match total {
        Some(total) => ProgressBar::new(total),
        None => ProgressBar::no_length(),
    };
    let style = ProgressStyle::with_template("  [{bar:30}] {bytes}/{total_bytes}  {msg}")
        .map(|style| style.progress_chars("=> "));
    if let Ok(style) = style {
        bar.set_style(style);
    }
    bar
}

/// `1h 02m`, `3m 20s`, `42s`.
fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    }
}

fn import(file: &std::path::Path, name: Option<&str>, link: bool) -> anyhow::Result<ExitCode> {
    let store = ModelStore::open_default()?;
    let terminal = crate::terminal::stderr_is_terminal();
    let mut bar: Option<ProgressBar> = None;
    let model = store.import(file, name, link, &mut |done, size| {
        // Only a large file is worth a bar.
        if terminal && size > 100_000_000 {
            bar.get_or_insert_with(|| new_bar(Some(size)))
                .set_position(done);
        }
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    outln!(
        "Imported {} as {} ({}, {}).",
        file.display(),
        model.name,
        human_bytes(model.size_bytes),
        model.source.describe()
    )?;
    let about = [
        model.metadata.architecture.clone(),
        model.metadata.size_label.clone(),
        model.metadata.quantization.clone(),
        model
            .metadata
            .context_length
            .map(|n| format!("trained for {n} tokens")),
    ];
    let about: Vec<String> = about.into_iter().flatten().collect();
    if !about.is_empty() {
        outln!("It is {}.", about.join(", "))?;
    }
    if !model.metadata.has_chat_template {
        outln!(
            "It has no chat template of its own, so the server's default one is used, which may not render tools."
        )?;
    }
    outln!("To ask it questions: tooltrail models use {}", model.name)?;
    Ok(ExitCode::SUCCESS)
}

fn remove(name: &str) -> anyhow::Result<ExitCode> {
    let store = ModelStore::open_default()?;
    let removed = store.remove(name)?;
    if let Some(model) = &removed.model {
        outln!(
            "Removed {} ({}).",
            model.name,
            human_bytes(model.size_bytes)
        )?;
        if local_model().as_deref() == Some(model.name.as_str()) {
            outln!(
                "It was the model of the local provider; choose another with `tooltrail models use NAME`."
            )?;
        }
    }
    if let Some(bytes) = removed.unfinished {
        outln!(
            "Removed the unfinished download of {} ({}).",
            name.trim().to_ascii_lowercase(),
            human_bytes(bytes)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn use_model(name: &str) -> anyhow::Result<ExitCode> {
    let store = ModelStore::open_default()?;
    let path = tooltrail_settings::config_path()?;
    // The same service as the app's Use button.
    let model = tooltrail_host::choose::use_local_model(&path, &store, name)?;
    outln!(
        "Questions now go to {}, which Tooltrail serves itself with llama-server (the provider \
         local; [local] model in {}).",
        model.name,
        path.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pull_says_before_downloading_where_the_runtime_cannot_serve_it() {
        assert_eq!(unsupported_note().is_some(), !cfg!(any(unix, windows)));
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(42), "42s");
        assert_eq!(duration(200), "3m 20s");
        assert_eq!(duration(3720), "1h 02m");
    }

    #[test]
    fn tables_line_up_their_columns() {
        let mut out = Vec::new();
        let header = ["NAME", "SIZE", "ABOUT"].map(String::from);
        let rows = [
            ["qwen3-1.7b", "1.1 GB", "small"].map(String::from),
            ["a", "253 MB", "tiny and quick"].map(String::from),
        ];
        write_table(&mut out, &header, &rows).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "NAME        SIZE    ABOUT\nqwen3-1.7b  1.1 GB  small\na           253 MB  tiny and quick\n"
        );
    }
}
