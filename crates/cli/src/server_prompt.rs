//! The MCP servers' requests on the command line: a form is asked field by field, a page to
//! open is shown with its full address, and a use of the model waits for a yes — all on the
//! terminal (stderr, stdin). Without a terminal, or when a program reads the output (`--json`),
//! each request is declined with a sentence saying why.

use std::io::{BufRead, IsTerminal, Write};

use async_trait::async_trait;
use serde_json::{Map, Number, Value};
use tooltrail_host::server_requests::{check_form, reply};
use tooltrail_host::{RequestUser, ServerRequest};
use tooltrail_mcp::{ElicitationAsk, ElicitationReply, SamplingAsk};
use tooltrail_protocol::{ElicitationAction, ElicitationRequest, FieldKind, FormField};

const NO_TERMINAL: &str = "this run has no terminal to ask on";

pub struct TerminalRequests {
    terminal: bool,
}

impl TerminalRequests {
    /// Asks only when stdin and stderr are a terminal and `json` is off.
    pub fn new(json: bool) -> Self {
        Self {
            terminal: !json
                && std::io::stdin().is_terminal()
                && crate::terminal::stderr_is_terminal(),
        }
    }

    /// Runs `ask` on the terminal (stdin and stderr held for its questions) off the async
    /// threads, since it waits on a person; `unanswered` when it could not finish.
    async fn on_terminal<T: Send + 'static>(
        &self,
        ask: impl FnOnce(&mut dyn BufRead, &mut dyn Write) -> Result<T, String> + Send + 'static,
        unanswered: Result<T, String>,
    ) -> Result<T, String> {
        if !self.terminal {
            return Err(NO_TERMINAL.to_string());
        }
        tokio::task::spawn_blocking(move || {
            let mut input = std::io::stdin().lock();
            let mut err = crate::terminal::err();
            ask(&mut input, &mut err)
        })
        .await
        .unwrap_or(unanswered)
    }
}

#[async_trait]
impl RequestUser for TerminalRequests {
    async fn elicit(
        &self,
        request: &ServerRequest,
        ask: &ElicitationAsk,
    ) -> Result<ElicitationReply, String> {
        let server = request.server.clone();
        let ask = ask.clone();
        self.on_terminal(
            move |input, err| elicit_on(&server, &ask, input, err),
            Ok(reply(ElicitationAction::Cancel)),
        )
        .await
    }

    async fn allow_sampling(
        &self,
        request: &ServerRequest,
        ask: &SamplingAsk,
    ) -> Result<(), String> {
        let server = request.server.clone();
        let ask = ask.clone();
        self.on_terminal(
            move |input, err| allow_on(&server, &ask, input, err),
            Err("the question was not answered".to_string()),
        )
        .await
    }
}

fn read_line(input: &mut dyn BufRead) -> Option<String> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_string()),
    }
}

/// Asks for a form or a page on `err`, reading `input`.
fn elicit_on(
    server: &str,
    ask: &ElicitationAsk,
    input: &mut dyn BufRead,
    err: &mut dyn Write,
) -> Result<ElicitationReply, String> {
    let _ = writeln!(err, "\n? The MCP server {server} asks: {}", ask.message);
    match &ask.request {
        ElicitationRequest::Url { url } => {
            let _ = writeln!(err, "  It asks you to open this page:\n  {url}");
            let _ = write!(
                err,
                "  Open it yourself, then press Enter when done (d to decline, c to cancel) > "
            );
            let _ = err.flush();
            Ok(match read_line(input).as_deref() {
                None | Some("c") => reply(ElicitationAction::Cancel),
                Some("d") => reply(ElicitationAction::Decline),
                Some(_) => reply(ElicitationAction::Accept),
            })
        }
        ElicitationRequest::Form { fields } => {
            let _ = write!(err, "  Answer it? [y]es, [d]ecline, [c]ancel > ");
            let _ = err.flush();
            match read_line(input).as_deref() {
                Some("y" | "yes") => {}
                Some("d" | "decline") => return Ok(reply(ElicitationAction::Decline)),
                _ => return Ok(reply(ElicitationAction::Cancel)),
            }
            let mut content = Map::new();
            for field in fields {
                loop {
                    let _ = write!(err, "  {} > ", field_prompt(field));
                    let _ = err.flush();
                    let Some(line) = read_line(input) else {
                        return Ok(reply(ElicitationAction::Cancel));
                    };
                    match field_value(field, &line) {
                        Ok(Some(value)) => {
                            content.insert(field.name.clone(), value);
                            break;
                        }
                        Ok(None) if !field.required => break,
                        Ok(None) => {
                            let _ = writeln!(err, "    {} is required.", field.title);
                        }
                        Err(problem) => {
                            let _ = writeln!(err, "    {problem}");
                        }
                    }
                }
            }
            check_form(fields, &content)
                .map_err(|problem| tooltrail_protocol::sentence(&problem))?;
            Ok(ElicitationReply {
                action: ElicitationAction::Accept,
                content: Some(content),
            })
        }
    }
}

/// `Name* (text, your full name) [default]`: the label, required mark, kind and default.
fn field_prompt(field: &FormField) -> String {
    let mark = if field.required { "*" } else { "" };
    let kind = match &field.kind {
        FieldKind::Text {
            format: Some(format),
        } => format.clone(),
        FieldKind::Text { format: None } => "text".to_string(),
        FieldKind::Number { integer: true, .. } => "whole number".to_string(),
        FieldKind::Number { integer: false, .. } => "number".to_string(),
        FieldKind::Boolean => "y/n".to_string(),
        FieldKind::Choice { options, multiple } => {
            let list: Vec<String> = options
                .iter()
                .enumerate()
                .map(|(at, option)| format!("{} {}", at + 1, option.label))
                .collect();
            let how = if *multiple {
                "numbers, comma-separated"
            } else {
                "a number"
            };
            format!("{how}: {}", list.join(", "))
        }
    };
    let about = field
        .description
        .as_ref()
        .map(|text| format!("; {text}"))
        .unwrap_or_default();
    let default = field
        .default
        .as_ref()
        .map(|value| format!(" [{value}]"))
        .unwrap_or_default();
    format!("{}{mark} ({kind}{about}){default}", field.title)
}

/// The value a line gives a field: `None` for an empty line (the default, when there is one).
fn field_value(field: &FormField, line: &str) -> Result<Option<Value>, String> {
    if line.is_empty() {
        return Ok(field.default.clone());
    }
    let value = match &field.kind {
        FieldKind::Text { .. } => Value::String(line.to_string()),
        FieldKind::Number { integer: true, .. } => line
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "Write a whole number.".to_string())?,
        FieldKind::Number { integer: false, .. } => line
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| "Write a number.".to_string())?,
        FieldKind::Boolean => match line {
            "y" | "yes" | "true" => Value::Bool(true),
            "n" | "no" | "false" => Value::Bool(false),
            _ => return Err("Write y or n.".to_string()),
        },
        FieldKind::Choice { options, multiple } => {
            let pick = |part: &str| {
                part.trim()
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|at| options.get(at))
                    .map(|option| Value::String(option.value.clone()))
                    .ok_or_else(|| format!("Write a number from 1 to {}.", options.len()))
            };
            if *multiple {
                Value::Array(line.split(',').map(pick).collect::<Result<_, _>>()?)
            } else {
                pick(line)?
            }
        }
    };
    Ok(Some(value))
}

/// Shows what the server would send the model and asks for a yes.
fn allow_on(
    server: &str,
    ask: &SamplingAsk,
    input: &mut dyn BufRead,
    err: &mut dyn Write,
) -> Result<(), String> {
    let _ = writeln!(
        err,
        "\n? The MCP server {server} asks to use your model (at most {} tokens):",
        ask.max_tokens
    );
    if let Some(system) = &ask.system_prompt {
        let _ = writeln!(err, "  system: {system}");
    }
    for message in &ask.messages {
        let _ = writeln!(err, "  {}: {}", message.role, message.text);
    }
    let _ = write!(err, "  Let it? [y/N] > ");
    let _ = err.flush();
    match read_line(input).as_deref() {
        Some("y" | "yes") => Ok(()),
        _ => Err("the user said no".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tooltrail_protocol::SamplingMessage;

    use super::*;

    fn form() -> ElicitationAsk {
        ElicitationAsk {
            server: "everything".into(),
            message: "Please provide inputs".into(),
            request: ElicitationRequest::Form {
                fields: tooltrail_protocol::form_fields(&json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "title": "Name"},
                        "check": {"type": "boolean"},
                        "integer": {"type": "integer", "default": 42},
                        "pet": {"type": "string", "enum": ["cat", "dog"]}
                    },
                    "required": ["name"]
                })),
            },
        }
    }

    #[test]
    fn a_form_is_answered_field_by_field_with_defaults_and_retries() {
        // Fields come in the schema's order or by name: check, integer, name, pet.
        let ElicitationRequest::Form { fields } = &form().request else {
            unreachable!()
        };
        let mut lines: Vec<&str> = vec!["y"];
        for field in fields {
            lines.extend(match field.name.as_str() {
                "check" => vec!["maybe", "y"],
                "integer" => vec![""],
                "name" => vec!["", "Ada"],
                _ => vec!["2"],
            });
        }
        let text = lines.join("\n") + "\n";
        let mut shown = Vec::new();
        let answer = elicit_on("everything", &form(), &mut text.as_bytes(), &mut shown).unwrap();
        assert_eq!(answer.action, ElicitationAction::Accept);
        assert_eq!(
            Value::Object(answer.content.unwrap()),
            json!({"check": true, "integer": 42, "name": "Ada", "pet": "dog"})
        );
        let shown = String::from_utf8(shown).unwrap();
        assert!(shown.contains("The MCP server everything asks: Please provide inputs"));
        assert!(shown.contains("Name* (text)"));
        assert!(shown.contains("Name is required."));
        assert!(shown.contains("Write y or n."));
    }

    #[test]
    fn a_form_can_be_declined_and_a_page_is_shown_whole() {
        let mut shown = Vec::new();
        let answer = elicit_on("s", &form(), &mut "d\n".as_bytes(), &mut shown).unwrap();
        assert_eq!(answer.action, ElicitationAction::Decline);
        let page = ElicitationAsk {
            server: "s".into(),
            message: "Sign in".into(),
            request: ElicitationRequest::Url {
                url: "https://example.com/sign-in?state=abc".into(),
            },
        };
        let mut shown = Vec::new();
        let answer = elicit_on("s", &page, &mut "\n".as_bytes(), &mut shown).unwrap();
        assert_eq!(answer.action, ElicitationAction::Accept);
        assert!(
            String::from_utf8(shown)
                .unwrap()
                .contains("https://example.com/sign-in?state=abc")
        );
    }

    #[test]
    fn sampling_shows_the_messages_and_waits_for_a_yes() {
        let ask = SamplingAsk {
            server: "everything".into(),
            system_prompt: Some("You are a helpful test server.".into()),
            messages: vec![SamplingMessage {
                role: "user".into(),
                text: "Say hi".into(),
            }],
            max_tokens: 100,
            temperature: None,
        };
        let mut shown = Vec::new();
        assert_eq!(
            allow_on("everything", &ask, &mut "y\n".as_bytes(), &mut shown),
            Ok(())
        );
        let shown = String::from_utf8(shown).unwrap();
        assert!(shown.contains("at most 100 tokens"));
        assert!(shown.contains("user: Say hi"));
        assert_eq!(
            allow_on("everything", &ask, &mut "\n".as_bytes(), &mut Vec::new()),
            Err("the user said no".to_string())
        );
    }
}
