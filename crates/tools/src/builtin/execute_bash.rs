//! `execute_bash(command, timeout?, cwd?)`: one shell command, judged by the command policy and
//! run with process hygiene (see `tooltrail_sandbox::run_bash`) inside the OS sandbox: the
//! workspace read-only unless the call was approved, nothing else of the machine visible, no
//! network unless the call was approved and `config.toml`'s network rules cover it. Where no sandbox is enforced, every command needs approval, read-only or not.

use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};
use tooltrail_sandbox::policy::{Verdict, classify};
use tooltrail_sandbox::rules::network_rule;
use tooltrail_sandbox::{BashCommand, BashOutput, Confinement, ResolvedPath, run_bash};

use crate::args::{cancelled, parse};
use crate::tool::{Gate, Tool, ToolContext};

const NAME: &str = "execute_bash";
/// Characters of output quoted in a timeout error.
const TIMEOUT_EXCERPT: usize = 2000;
/// Why every command asks when there is no OS sandbox.
const UNSANDBOXED: &str =
    "no OS sandbox confines commands on this machine, so every command is approved first";

pub(crate) struct ExecuteBash {
    spec: ToolSpec,
}

#[derive(Deserialize)]
struct Args {
    command: String,
    timeout: Option<u64>,
    cwd: Option<String>,
}

impl ExecuteBash {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "Run a bash command in the workspace, without network. Commands that \
                    may change something ask the user first."
                    .to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "command": {
                            "type": "string",
                            "minLength": 1
                        },
                        "timeout": {
                            "type": "integer",
                            "minimum": 1,
                            "description": "seconds (default 30)"
                        },
                        "cwd": {
                            "type": "string"
                        }
                    },
                    "required": ["command"]
                }),
                read_only: false,
            },
        }
    }
}

#[async_trait]
impl Tool for ExecuteBash {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// `timeout` is named by the error of a command that ran out of time, `cwd` is what a
    /// `cd` in the command does.
    fn unoffered_parameters(&self) -> &'static [&'static str] {
        &["timeout", "cwd"]
    }

    fn gate(&self, args: &Value, ctx: &ToolContext) -> Gate {
        let args: Args = match parse(NAME, args.clone()) {
            Ok(args) => args,
            Err(error) => return Gate::Refuse(error),
        };
        let cwd = match working_folder(&args, ctx) {
            Ok(cwd) => cwd,
            Err(error) => return Gate::Refuse(error),
        };
        match classify(&args.command) {
            Verdict::ReadOnly if ctx.sandbox().is_enforced() => Gate::ReadOnly,
            Verdict::ReadOnly => Gate::Ask {
                summary: args.command,
                cwd: Some(cwd.relative().to_string()),
                reason: capitalise(UNSANDBOXED),
            },
            Verdict::Ask { reason } => {
                let reason =
                    match network_rule(&ctx.sandbox_settings.network_commands, &args.command) {
                        Some(rule) => format!(
                            "{}; the network is open for it: config.toml's network rule `{}`",
                            capitalise(&reason),
                            rule.join(" ")
                        ),
                        None => capitalise(&reason),
                    };
                Gate::Ask {
                    summary: args.command,
                    cwd: Some(cwd.relative().to_string()),
                    reason,
                }
            }
            Verdict::Deny { reason } => Gate::Refuse(denied(&reason)),
        }
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse(NAME, args)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::new(
                ToolErrorCode::InvalidArguments,
                "parameter `command`: the command is empty",
            ));
        }
        // Checked again here: approval never lifts a hard deny.
        if let Verdict::Deny { reason } = classify(&args.command) {
            return Err(denied(&reason));
        }
        // The network opens only for an approved command that asks (never for one that runs
        // without asking) and that network rules cover entirely.
        let network = ctx.approved
            && !classify(&args.command).is_read_only()
            && network_rule(&ctx.sandbox_settings.network_commands, &args.command).is_some();
        let confinement = match ctx.sandbox().helper() {
            Some(helper) => Some(Confinement {
                helper: helper.to_path_buf(),
                workspace: ctx.workspace.root().to_path_buf(),
                writable: ctx.approved,
                network,
            }),
            // Checked here too, so that no caller runs a command unconfined unasked.
            None if !ctx.approved => {
                return Err(ToolError::new(
                    ToolErrorCode::ApprovalRequired,
                    format!("{}; this call was not approved", capitalise(UNSANDBOXED)),
                ));
            }
            None => None,
        };
        let cwd = working_folder(&args, ctx)?;
        let requested = args
            .timeout
            .unwrap_or(ctx.limits.default_timeout_secs)
            .max(1);
        let timeout_secs = requested.min(ctx.limits.max_timeout_secs);
        let command = BashCommand {
            script: args.command.clone(),
            cwd: cwd.path().to_path_buf(),
            timeout: Duration::from_secs(timeout_secs),
            output_cap: ctx.limits.max_output_bytes,
            untrusted: vec![ctx.workspace.root().to_path_buf()],
            confinement,
            sandbox: ctx.sandbox_settings.clone(),
        };
        let output = run_bash(&command, &ctx.cancel)
            .await
            .map_err(|err| ToolError::new(ToolErrorCode::Failed, err.to_string()))?;
        if output.cancelled {
            return Err(cancelled());
        }
        if output.timed_out {
            return Err(timed_out(
                &output,
                timeout_secs,
                ctx.limits.max_timeout_secs,
            ));
        }

        let mut text = render(&output);
        if requested > timeout_secs {
            text.push_str(&format!("(the timeout was capped at {timeout_secs} s)\n"));
        }
        Ok(ToolOutput::new(
            text,
            json!({
                "command": args.command,
                "cwd": cwd.relative(),
                "stdout": output.stdout,
                "stderr": output.stderr,
                "exit_code": output.exit_code,
                "signal": output.signal,
                "duration_ms": output.duration.as_millis() as u64,
                "timed_out": false,
                "stdout_truncated": output.stdout_truncated,
                "stderr_truncated": output.stderr_truncated,
                "stdout_bytes": output.stdout_bytes,
                "stderr_bytes": output.stderr_bytes,
            }),
        ))
    }
}

fn working_folder(args: &Args, ctx: &ToolContext) -> Result<ResolvedPath, ToolError> {
    let cwd = ctx.workspace.resolve(args.cwd.as_deref().unwrap_or("."))?;
    if !cwd.path().is_dir() {
        return Err(ToolError::new(
            ToolErrorCode::NotADirectory,
            format!("parameter `cwd`: `{}` is not a folder", cwd.relative()),
        ));
    }
    Ok(cwd)
}

fn denied(reason: &str) -> ToolError {
    ToolError::new(
        ToolErrorCode::Denied,
        format!("{}; this command is never run", capitalise(reason)),
    )
}

fn capitalise(reason: &str) -> String {
    let mut chars = reason.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// What the model reads: the output streams, then how the command ended.
fn render(output: &BashOutput) -> String {
    let mut text = String::new();
    let both = !output.stdout.is_empty() && !output.stderr.is_empty();
    for (label, body, truncated, bytes) in [
        (
            "stdout",
            &output.stdout,
            output.stdout_truncated,
            output.stdout_bytes,
        ),
        (
            "stderr",
            &output.stderr,
            output.stderr_truncated,
            output.stderr_bytes,
        ),
    ] {
        if body.is_empty() {
            continue;
        }
        if both || label == "stderr" {
            text.push_str(&format!("{label}:\n"));
        }
        text.push_str(body);
        if !body.ends_with('\n') {
            text.push('\n');
        }
        if truncated {
            text.push_str(&format!(
                "[{label} cut: {} of {bytes} bytes not shown]\n",
                bytes - body.len().min(bytes as usize) as u64
            ));
        }
    }
    if output.stdout.is_empty() && output.stderr.is_empty() {
        text.push_str("(no output)\n");
    }
    let ended = match (output.exit_code, output.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "ended".to_string(),
    };
    text.push_str(&format!("[{ended}, {} ms]\n", output.duration.as_millis()));
    text
}

/// The error of a command stopped at `secs`; below the cap of `max` seconds it names the
/// parameter that gives it longer, which the model is not told of up front.
fn timed_out(output: &BashOutput, secs: u64, max: u64) -> ToolError {
    let mut message = format!("the command ran longer than {secs} s and was stopped");
    if secs < max {
        message.push_str(&format!(
            " (pass `timeout` in seconds, at most {max}, to give it longer)"
        ));
    }
    let so_far = format!("{}{}", output.stdout, output.stderr);
    let so_far = so_far.trim_end();
    if !so_far.is_empty() {
        let excerpt: String = so_far.chars().take(TIMEOUT_EXCERPT).collect();
        message.push_str("; its output so far:\n");
        message.push_str(&excerpt);
    }
    ToolError::new(ToolErrorCode::Timeout, message)
}
