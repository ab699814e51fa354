//! A client for the official conformance suite (`@modelcontextprotocol/conformance client`):
//! connect to the scenario's server over Streamable HTTP, list its tools, and call each one with
//! arguments made from its schema. Elicitation requests are accepted with the schema's defaults.
//! The suite judges what the server saw; this only reports what happened.

use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::config::{McpConfig, ServerConfig};
use crate::connection::RequestFailure;
use crate::error::McpError;
use crate::handler::ElicitationPolicy;
use crate::manager::{McpManager, McpOptions};
use crate::server::describe;

/// The server's name in the one-server config.
const SERVER: &str = "conformance";

/// What happened, one line per step.
#[derive(Debug, Default)]
pub struct ConformanceRun {
    pub lines: Vec<String>,
    /// Whether every step worked.
    pub ok: bool,
}

/// Runs the client side of a scenario against `url`.
pub async fn run_client(url: &str, scenario: Option<&str>) -> Result<ConformanceRun, McpError> {
    let mut server = ServerConfig::http(SERVER, url);
    server.timeout = Duration::from_secs(20);
    let mut config = McpConfig::default();
    config.servers.insert(SERVER.to_string(), server);
    let manager = McpManager::new(
        config,
        McpOptions {
            workspace: None,
            login_shell_path: false,
            elicitation: ElicitationPolicy::AcceptDefaults,
        },
    );
    let mut run = ConformanceRun {
        ok: true,
        ..ConformanceRun::default()
    };
    run.lines
        .push(format!("scenario: {}", scenario.unwrap_or("(not set)")));
    let server = manager.server(SERVER)?;
    let handshake = server.start().await?;
    let info = server.info().await;
    run.lines.push(format!(
        "connected in {} ms{}",
        handshake.as_millis(),
        info.map(|info| format!(
            " to {} {} (protocol {})",
            info.name, info.version, info.protocol_version
        ))
        .unwrap_or_default()
    ));
    let tools = server.list_tools().await?;
    run.lines.push(format!("{} tools", tools.len()));
    for tool in &tools {
        let schema = Value::Object((*tool.input_schema).clone());
        let args = sample_arguments(&schema);
        let outcome = server
            .call_tool(&tool.name, args.clone(), &CancellationToken::new(), None)
            .await?;
        match outcome.result {
            Ok(result) => {
                let value = serde_json::to_value(&result).unwrap_or(Value::Null);
                let text = crate::result::model_text(&value);
                let failed = result.is_error.unwrap_or(false);
                if failed {
                    run.ok = false;
                }
                run.lines.push(format!(
                    "called {} {} -> {}{}",
                    tool.name,
                    Value::Object(args),
                    if failed { "error: " } else { "" },
                    text
                ));
            }
            Err(failure) => {
                run.ok = false;
                let detail = match &failure {
                    RequestFailure::Rpc(_)
                    | RequestFailure::Timeout(_)
                    | RequestFailure::Cancelled
                    | RequestFailure::Closed
                    | RequestFailure::Other(_) => describe(&failure),
                };
                run.lines
                    .push(format!("called {} -> failed: {detail}", tool.name));
            }
        }
    }
    manager.shutdown().await;
    Ok(run)
}

/// Arguments for a tool from its input schema: each property's default, else a plain value of
/// its type.
pub fn sample_arguments(schema: &Value) -> Map<String, Value> {
    let mut args = Map::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return args;
    };
    for (name, property) in properties {
        args.insert(name.clone(), sample_value(property));
    }
    args
}

fn sample_value(property: &Value) -> Value {
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    if let Some(first) = property
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|v| v.first())
    {
        return first.clone();
    }
    let kind = match property.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => kinds.iter().find_map(Value::as_str).unwrap_or("string"),
        _ => "string",
    };
    match kind {
        "number" | "integer" => Value::from(1),
        "boolean" => Value::Bool(true),
        "array" => Value::Array(Vec::new()),
        "object" => Value::Object(sample_arguments(property)),
        "null" => Value::Null,
        _ => Value::String("test".into()),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn arguments_follow_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "number"}, "s": {"type": "string", "default": "x"},
            "e": {"enum": ["one", "two"]}, "o": {"type": "object", "properties": {"b": {"type": "boolean"}}}
        }});
        assert_eq!(
            Value::Object(sample_arguments(&schema)),
            json!({"a": 1, "s": "x", "e": "one", "o": {"b": true}})
        );
    }
}
