//! A client for the official conformance suite (`@modelcontextprotocol/conformance client`):
//! connect to the scenario's server over Streamable HTTP, list its tools, and call each one with
//! arguments made from its schema. Elicitation requests are accepted with the schema's defaults.
//! The suite judges what the server saw; this only reports what happened.

use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::auth::grant::{Algorithm, ClientAuth, IdentityProvider, MachineGrant, Secret};
use crate::auth::{Browser, SignInOptions, SignInPolicy};
use crate::config::{McpConfig, OAuthConfig, ServerConfig};
use crate::connection::{RequestFailure, call_request};
use crate::error::McpError;
use crate::handler::ElicitationPolicy;
use crate::manager::{McpManager, McpOptions};
use crate::server::{McpServer, describe};

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
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    let manager = one_server_manager(url, &context, scenario);
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
    for (name, args) in planned_calls(&context, scenario, &tools) {
        let Some(tool) = tools.iter().find(|tool| tool.name == name) else {
            run.ok = false;
            run.lines
                .push(format!("the server has no tool named {name:?}"));
            continue;
        };
        call_one(server, tool, args, &mut run).await?;
    }
    skills(server, scenario, &mut run).await?;
    manager.shutdown().await;
    Ok(run)
}

/// A manager for the scenario's one server, signing in with the client the scenario's context
/// gives and accepting elicitations with their defaults.
fn one_server_manager(url: &str, context: &Value, scenario: Option<&str>) -> McpManager {
    let mut server = ServerConfig::http(SERVER, url);
    server.timeout = Duration::from_secs(20);
    server.oauth = Some(oauth_from_context(context, scenario));
    let mut config = McpConfig::default();
    config.servers.insert(SERVER.to_string(), server);
    McpManager::new(
        config,
        McpOptions {
            workspace: None,
            login_shell_path: false,
            elicitation: ElicitationPolicy::AcceptDefaults,
            sign_in: SignInOptions {
                policy: SignInPolicy::Interactive(Browser::Fetch),
                ..SignInOptions::default()
            },
        },
    )
}

/// The calls to make: those the scenario names (`toolCalls` in its context), else every tool
/// once with arguments made from its schema.
fn planned_calls(
    context: &Value,
    scenario: Option<&str>,
    tools: &[rmcp::model::Tool],
) -> Vec<(String, Map<String, Value>)> {
    match context_calls(context) {
        Some(calls) => calls,
        // The schema scenario asks for the other tool's input schema back, exactly as it was
        // listed, through its echo tool.
        None if scenario == Some("json-schema-2020-12-preservation") => tools
            .iter()
            .filter(|tool| tool.name != SCHEMA_ECHO)
            .map(|tool| {
                let mut args = Map::new();
                args.insert(
                    "schema".to_string(),
                    Value::Object((*tool.input_schema).clone()),
                );
                (SCHEMA_ECHO.to_string(), args)
            })
            .collect(),
        None => tools
            .iter()
            .map(|tool| {
                let schema = Value::Object((*tool.input_schema).clone());
                (tool.name.to_string(), sample_arguments(&schema))
            })
            .collect(),
    }
}

/// Calls `tool` and writes what it answered; only a call that got no answer fails the run.
async fn call_one(
    server: &McpServer,
    tool: &rmcp::model::Tool,
    args: Map<String, Value>,
    run: &mut ConformanceRun,
) -> Result<(), McpError> {
    let outcome = server
        .call_tool(
            call_request(&tool.name, args.clone(), None),
            &CancellationToken::new(),
            None,
        )
        .await?;
    match outcome.result {
        // A tool that reports an error is the server's answer, not a failure of the client.
        Ok(result) => {
            let value = serde_json::to_value(&result).unwrap_or(Value::Null);
            let text = crate::result::model_text(&value);
            let failed = result.is_error.unwrap_or(false);
            run.lines.push(format!(
                "called {} {} -> {}{}",
                tool.name,
                Value::Object(args),
                if failed { "error: " } else { "" },
                text
            ));
        }
        Err(failure) => {
            // The server refusing the call (a JSON-RPC error) is its answer too; a call
            // that got no answer is the client's failure.
            if !matches!(failure, RequestFailure::Rpc(_)) {
                run.ok = false;
            }
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
    Ok(())
}

/// Lists the server's skills, as registering its tools does (nothing of a skill is read then);
/// in the skills scenarios that check what a host does when it loads one, loads each as the
/// model's `load_skill` would, and each of its other files after a `SKILL.md` that passed.
async fn skills(
    server: &McpServer,
    scenario: Option<&str>,
    run: &mut ConformanceRun,
) -> Result<(), McpError> {
    let skills = server.skills().await?;
    if skills.is_empty() {
        return Ok(());
    }
    run.lines.push(format!("{} skills", skills.len()));
    if !scenario.is_some_and(|name| name.starts_with("sep-2640-client-verify")) {
        return Ok(());
    }
    for skill in &skills {
        let name = &skill.frontmatter.name;
        match server.load_skill(name, None).await {
            Ok(loaded) => {
                run.lines.push(format!("loaded skill {name}"));
                for file in &loaded.others {
                    let outcome = server.load_skill(name, Some(file)).await;
                    run.lines.push(match outcome {
                        Ok(_) => format!("loaded {file} of skill {name}"),
                        Err(why) => format!("refused {file} of skill {name}: {why}"),
                    });
                }
            }
            // Refusing a skill that does not match its listing is what the scenario wants.
            Err(why) => run.lines.push(format!("refused skill {name}: {why}")),
        }
    }
    Ok(())
}

/// The echo tool of the JSON Schema scenario.
const SCHEMA_ECHO: &str = "json_schema_echo";

/// The Client ID Metadata Document the suite's CIMD scenario expects a client to name (it is
/// never fetched: the suite's authorization server only compares the URL).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The scenario's pre-registered client, from `MCP_CONFORMANCE_CONTEXT`, as `mcp.json`'s
/// `oauth` field would give it; a metadata document URL for servers that take one. A context
/// with a key, an identity token or a workload's token, and the client-credentials scenarios,
/// sign in without a person.
fn oauth_from_context(context: &Value, scenario: Option<&str>) -> OAuthConfig {
    let text = |field: &str| {
        context
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    OAuthConfig {
        client_id: text("client_id"),
        client_secret: text("client_secret"),
        scopes: Vec::new(),
        client_metadata_url: Some(CLIENT_METADATA_URL.to_string()),
        // The suite's servers are on loopback, which a loopback MCP server may name anyway.
        allow_private_addresses: false,
        grant: machine_grant(context, scenario),
        authorization_server: None,
    }
}

/// The grant a scenario's context asks for, as `mcp.json` would name it.
fn machine_grant(context: &Value, scenario: Option<&str>) -> Option<MachineGrant> {
    let text = |field: &str| {
        context
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let secret = || text("client_secret").map(Secret::Value);
    let client = || match secret() {
        Some(secret) => ClientAuth::Secret {
            secret,
            method: None,
        },
        None => ClientAuth::None,
    };
    if let Some(key) = text("private_key_pem") {
        let algorithm = match text("signing_algorithm").as_deref() {
            Some("RS256") => Algorithm::RS256,
            _ => Algorithm::ES256,
        };
        return Some(MachineGrant::ClientCredentials {
            client: ClientAuth::PrivateKeyJwt {
                key: Secret::Value(key),
                algorithm,
            },
        });
    }
    if let (Some(id_token), Some(issuer), Some(token_endpoint), Some(client_id)) = (
        text("idp_id_token"),
        text("idp_issuer"),
        text("idp_token_endpoint"),
        text("idp_client_id"),
    ) {
        return Some(MachineGrant::Enterprise {
            identity_provider: IdentityProvider {
                issuer,
                token_endpoint,
                client_id,
                client_secret: None,
            },
            id_token: Secret::Value(id_token),
            client: client(),
        });
    }
    if let Some(assertion) = text("valid_jwt") {
        return Some(MachineGrant::JwtBearer {
            assertion: Secret::Value(assertion),
            client: client(),
        });
    }
    if scenario.is_some_and(|name| name.starts_with("auth/client-credentials")) {
        return Some(MachineGrant::ClientCredentials { client: client() });
    }
    None
}

/// The calls a scenario's context names: `{"toolCalls": [{"name", "arguments"}]}`.
fn context_calls(context: &Value) -> Option<Vec<(String, Map<String, Value>)>> {
    let calls = context.get("toolCalls")?.as_array()?;
    Some(
        calls
            .iter()
            .filter_map(|call| {
                let name = call.get("name")?.as_str()?.to_string();
                let args = call
                    .get("arguments")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                Some((name, args))
            })
            .collect(),
    )
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
