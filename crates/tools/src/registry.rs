//! The registry: name → tool, with each tool's argument schema compiled once.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};

use crate::error::{DuplicateTool, origin};
use crate::tool::{Tool, ToolContext};

struct Entry {
    tool: Arc<dyn Tool>,
    /// Compiled on the tool's first call, so that starting up (and a one-tool run from the
    /// command line) pays only for the schemas it uses. `None` when the schema could not be
    /// compiled; the arguments are then only checked to be a JSON object.
    validator: OnceLock<Option<jsonschema::Validator>>,
}

impl Entry {
    fn validator(&self) -> Option<&jsonschema::Validator> {
        self.validator
            .get_or_init(|| compile(&self.tool.spec().parameters))
            .as_ref()
    }
}

/// A validator for an argument schema. Schemas that name no `$schema` are read as draft 7:
/// every keyword tools use means the same there, and checking a schema against draft 7's
/// meta-schema costs a fraction of checking it against 2020-12's (a one-tool run from the
/// command line pays for it on every start).
fn compile(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .build(schema)
        .ok()
}

/// Tools by name. Lookups, validation and calls all go through here.
#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Entry>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry holding every built-in tool.
    pub fn with_builtins() -> Self {
        let mut registry = Self::new();
        for tool in crate::builtin::all() {
            // The built-in tools have names of their own (the test
            // `builtins_have_valid_schemas_and_unique_names` holds them to it), so none is
            // refused here.
            let _ = registry.register(tool);
        }
        registry
    }

    /// Adds a tool. A name already taken is refused, and the tool holding it stays: two tools
    /// never share a name, and none silently replaces another.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), DuplicateTool> {
        let name = tool.spec().name.clone();
        match self.tools.entry(name) {
            std::collections::btree_map::Entry::Occupied(taken) => Err(DuplicateTool {
                name: taken.key().clone(),
                kept: origin(&taken.get().tool.source()),
                refused: origin(&tool.source()),
            }),
            std::collections::btree_map::Entry::Vacant(free) => {
                free.insert(Entry {
                    tool,
                    validator: OnceLock::new(),
                });
                Ok(())
            }
        }
    }

    /// A registry with the same tools and `extra` besides (refused when its name is taken):
    /// a turn's own tools, such as [`FindTools`](crate::FindTools), without changing the
    /// registry other turns share. Argument schemas are compiled again on first use.
    pub fn with_extra(&self, extra: Arc<dyn Tool>) -> Result<Self, DuplicateTool> {
        let mut copy = Self::new();
        for entry in self.tools.values() {
            // The names are this registry's own, so none is taken twice.
            let _ = copy.register(Arc::clone(&entry.tool));
        }
        copy.register(extra)?;
        Ok(copy)
    }

    /// Whether the tool of that name is offered to the model (see [`Tool::offered`]).
    pub fn is_offered(&self, name: &str) -> bool {
        self.tools
            .get(name)
            .is_some_and(|entry| entry.tool.offered())
    }

    /// Removes a tool by name; returns whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        self.tools.remove(name).is_some()
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.get(name).map(|entry| Arc::clone(&entry.tool))
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// Every tool's spec as the model is offered it (tools that are [not offered](Tool::offered)
    /// left out), sorted by name, and the same bytes every
    /// time, so that a server's prompt cache serves them across questions: schemas without the
    /// keywords only validation needs (lengths, bounds; the full schema still checks every
    /// call), and tools [described on demand](Tool::described_on_demand) with an open object
    /// for parameters and a sentence that says how to learn them.
    pub fn offered_specs(&self) -> Vec<ToolSpec> {
        self.tools
            .values()
            .filter(|entry| entry.tool.offered())
            .map(|entry| {
                let spec = entry.tool.spec();
                if entry.tool.described_on_demand() {
                    ToolSpec {
                        name: spec.name.clone(),
                        description: format!("{} {ON_DEMAND_NOTE}", spec.description.trim_end()),
                        parameters: serde_json::json!({ "type": "object" }),
                        read_only: spec.read_only,
                    }
                } else {
                    ToolSpec {
                        parameters: offered_schema(
                            &spec.parameters,
                            entry.tool.unoffered_parameters(),
                        ),
                        ..spec.clone()
                    }
                }
            })
            .collect()
    }

    /// Every tool's spec, sorted by name: the tools as they are, for listings.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .values()
            .map(|entry| entry.tool.spec().clone())
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Finds the tool and checks `raw_arguments` (JSON text) against its schema. An empty string
    /// counts as `{}`, as some servers send it for tools without parameters.
    pub fn prepare(
        &self,
        name: &str,
        raw_arguments: &str,
    ) -> Result<(Arc<dyn Tool>, Value), ToolError> {
        let entry = self.tools.get(name).ok_or_else(|| {
            ToolError::new(
                ToolErrorCode::ToolNotFound,
                format!("tool not found: {name}"),
            )
        })?;
        let args = parse_arguments(raw_arguments)?;
        validate(entry, &args)?;
        Ok((Arc::clone(&entry.tool), args))
    }

    /// Validates and runs one call.
    pub async fn call(
        &self,
        name: &str,
        raw_arguments: &str,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let (tool, args) = self.prepare(name, raw_arguments)?;
        tool.call(args, ctx).await
    }
}

/// Parses the argument text the model sent.
pub fn parse_arguments(raw: &str) -> Result<Value, ToolError> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    serde_json::from_str(trimmed).map_err(|err| {
        ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("arguments are not valid JSON ({err}); send one JSON object"),
        )
    })
}

/// `schema` as the model is offered it: [compact](compact_schema), without the top-level
/// properties of `unoffered` (and without them among the required ones).
fn offered_schema(schema: &Value, unoffered: &[&str]) -> Value {
    let mut offered = compact_schema(schema);
    if unoffered.is_empty() {
        return offered;
    }
    if let Some(properties) = offered.get_mut("properties").and_then(Value::as_object_mut) {
        properties.retain(|name, _| !unoffered.contains(&name.as_str()));
    }
    if let Some(required) = offered.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| name.as_str().is_none_or(|name| !unoffered.contains(&name)));
    }
    offered
}

/// How the description of a tool described on demand ends.
const ON_DEMAND_NOTE: &str = "(Call with {} for its parameters.)";

/// Keywords that only validation needs: the model writes good arguments without them, and
/// every request would carry them.
const VALIDATION_ONLY: [&str; 10] = [
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "$schema",
    "additionalProperties",
    "title",
    "examples",
];

/// `schema` without the keywords of [`VALIDATION_ONLY`], at every depth. Property names are
/// left alone, whatever they are called.
pub fn compact_schema(schema: &Value) -> Value {
    fn strip(value: &Value, in_properties: bool) -> Value {
        match value {
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .filter(|(key, _)| in_properties || !VALIDATION_ONLY.contains(&key.as_str()))
                    .map(|(key, inner)| {
                        (
                            key.clone(),
                            strip(inner, !in_properties && key == "properties"),
                        )
                    })
                    .collect(),
            ),
            Value::Array(items) => {
                Value::Array(items.iter().map(|item| strip(item, false)).collect())
            }
            other => other.clone(),
        }
    }
    strip(schema, false)
}

fn validate(entry: &Entry, args: &Value) -> Result<(), ToolError> {
    if !args.is_object() {
        return Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("arguments must be a JSON object, got {}", json_kind(args)),
        ));
    }
    let Some(validator) = entry.validator() else {
        return Ok(());
    };
    let problems: Vec<String> = validator
        .iter_errors(args)
        .map(|error| {
            let path = error.instance_path().to_string();
            if path.is_empty() {
                error.to_string()
            } else {
                format!("parameter `{}`: {error}", path.trim_start_matches('/'))
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        // A tool offered without its parameters tells them now.
        let parameters = if entry.tool.described_on_demand() {
            format!(
                ". Its parameters (JSON Schema): {}",
                compact_schema(&entry.tool.spec().parameters)
            )
        } else {
            String::new()
        };
        Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!(
                "invalid arguments for {}: {}{parameters}",
                entry.tool.spec().name,
                problems.join("; ")
            ),
        ))
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use tooltrail_protocol::ToolSource;

    struct Echo {
        spec: ToolSpec,
    }

    #[async_trait]
    impl Tool for Echo {
        fn spec(&self) -> &ToolSpec {
            &self.spec
        }

        async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::new(args.to_string(), args))
        }
    }

    /// A tool of an MCP server called "fs".
    struct Served(ToolSpec);

    #[async_trait]
    impl Tool for Served {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }

        fn source(&self) -> ToolSource {
            ToolSource::Mcp {
                server: "fs".into(),
            }
        }

        async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::new("served", args))
        }
    }

    fn registry() -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        registry
            .register(Arc::new(Echo {
                spec: ToolSpec {
                    name: "echo".into(),
                    description: "Echoes its arguments.".into(),
                    parameters: json!({
                        "type": "object",
                        "properties": {
                            "text": {"type": "string"},
                            "count": {"type": "integer", "minimum": 1, "maximum": 5},
                            "mode": {"type": "string", "enum": ["loud", "quiet"]}
                        },
                        "required": ["text"]
                    }),
                    read_only: true,
                },
            }))
            .unwrap();
        registry
    }

    fn prepare_error(raw: &str) -> ToolError {
        match registry().prepare("echo", raw) {
            Ok(_) => panic!("{raw} was accepted"),
            Err(error) => error,
        }
    }

    #[test]
    fn unknown_tool_is_named() {
        let error = registry().prepare("nope", "{}").err().unwrap();
        assert_eq!(
            error,
            ToolError::new(ToolErrorCode::ToolNotFound, "tool not found: nope")
        );
    }

    #[test]
    fn invalid_json_quotes_the_parse_error() {
        let error = prepare_error(r#"{"text": "#);
        assert_eq!(error.code, ToolErrorCode::InvalidArguments);
        assert!(
            error.message.starts_with("arguments are not valid JSON ("),
            "{}",
            error.message
        );
        assert!(
            error.message.contains("EOF while parsing"),
            "{}",
            error.message
        );
    }

    #[test]
    fn schema_failures_name_the_parameter() {
        let cases = [
            (r#"{}"#, "text"),
            (r#"{"text": 3}"#, "parameter `text`"),
            (r#"{"text": "a", "count": "two"}"#, "parameter `count`"),
            (r#"{"text": "a", "count": 9}"#, "parameter `count`"),
            (r#"{"text": "a", "mode": "shout"}"#, "parameter `mode`"),
        ];
        for (raw, needle) in cases {
            let error = prepare_error(raw);
            assert_eq!(error.code, ToolErrorCode::InvalidArguments, "{raw}");
            assert!(
                error.message.starts_with("invalid arguments for echo: "),
                "{}",
                error.message
            );
            assert!(error.message.contains(needle), "{raw}: {}", error.message);
        }
    }

    #[test]
    fn non_object_arguments_are_refused() {
        let error = prepare_error("[1, 2]");
        assert_eq!(
            error.message,
            "arguments must be a JSON object, got an array"
        );
    }

    #[test]
    fn valid_and_empty_arguments_pass() {
        let (tool, args) = registry()
            .prepare("echo", r#"{"text": "hi", "mode": "quiet"}"#)
            .unwrap();
        assert_eq!(tool.spec().name, "echo");
        assert_eq!(args, json!({"text": "hi", "mode": "quiet"}));
        // Empty text counts as `{}`, which then fails only on the required parameter.
        let error = prepare_error("  ");
        assert!(
            error.message.contains("\"text\" is a required property"),
            "{}",
            error.message
        );
    }

    #[test]
    fn a_second_tool_of_the_same_name_is_refused_and_the_first_one_stays() {
        let mut registry = registry();
        let other = Arc::new(Served(ToolSpec {
            name: "echo".into(),
            description: "Another echo.".into(),
            parameters: json!({"type": "object"}),
            read_only: false,
        }));
        let error = registry.register(other).unwrap_err();
        assert_eq!(
            error.to_string(),
            "two tools are named \"echo\" (the built-in tool and the tool of the MCP server \
             \"fs\"); the second was left out, since a name can belong to one tool only"
        );
        assert_eq!(registry.len(), 1);
        assert_eq!(
            registry.get("echo").unwrap().spec().description,
            "Echoes its arguments."
        );
    }

    #[test]
    fn builtins_have_valid_schemas_and_unique_names() {
        let registry = ToolRegistry::with_builtins();
        let tools = crate::builtin::all();
        let mut fresh = ToolRegistry::new();
        for tool in crate::builtin::all() {
            let name = tool.spec().name.clone();
            assert_eq!(fresh.register(tool), Ok(()), "{name} is registered twice");
        }
        assert_eq!(registry.len(), tools.len());
        for name in registry.names() {
            let entry = &registry.tools[name];
            assert!(entry.validator().is_some(), "{name} has an invalid schema");
        }
    }

    #[test]
    fn offered_specs_leave_out_what_only_validation_needs_and_on_demand_parameters() {
        let registry = ToolRegistry::with_builtins();
        let offered = registry.offered_specs();
        let read = offered
            .iter()
            .find(|spec| spec.name == "read_file")
            .unwrap();
        assert_eq!(
            read.parameters["properties"]["limit"],
            json!({ "type": "integer" }),
            "no minimum or maximum"
        );
        let ask = offered.iter().find(|spec| spec.name == "ask_user").unwrap();
        assert_eq!(ask.parameters, json!({ "type": "object" }));
        assert!(
            ask.description.ends_with(ON_DEMAND_NOTE),
            "{}",
            ask.description
        );
        // The full schema still checks the call, and says what the parameters are.
        let Err(error) = registry.prepare("ask_user", "{}") else {
            panic!("a question is required");
        };
        assert_eq!(error.code, ToolErrorCode::InvalidArguments);
        assert!(
            error.message.contains("Its parameters (JSON Schema): ")
                && error.message.contains("\"question\""),
            "{}",
            error.message
        );
        // A property may be named like a keyword.
        assert_eq!(
            compact_schema(&json!({"properties": {"title": {"type": "string", "maxLength": 3}}})),
            json!({"properties": {"title": {"type": "string"}}})
        );
        // The same bytes every time, for the prompt cache.
        assert_eq!(registry.offered_specs(), offered);
    }

    /// A parameter a tool does not offer up front is missing from what every request carries,
    /// yet a call that uses it is accepted, and checked by the whole schema.
    #[test]
    fn parameters_not_offered_are_left_out_of_the_offer_but_still_taken_and_checked() {
        let registry = ToolRegistry::with_builtins();
        let offered = registry.offered_specs();
        let search = offered
            .iter()
            .find(|spec| spec.name == "search_text")
            .unwrap();
        assert_eq!(
            search.parameters,
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string"},
                    "path": {"type": "string"},
                    "glob": {"type": "string"},
                    "ignore_case": {"type": "boolean"}
                },
                "required": ["pattern"]
            })
        );
        let bash = offered
            .iter()
            .find(|spec| spec.name == "execute_bash")
            .unwrap();
        assert_eq!(
            bash.parameters["properties"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["command"]
        );
        // Still in the tool's own spec, still accepted, still checked.
        assert!(
            registry.get("search_text").unwrap().spec().parameters["properties"]["include_ignored"]
                .is_object()
        );
        assert!(
            registry
                .prepare("search_text", r#"{"pattern":"x","include_ignored":true}"#)
                .is_ok()
        );
        let Err(error) = registry.prepare("execute_bash", r#"{"command":"ls","timeout":0}"#) else {
            panic!("a timeout of 0 s is below the schema's minimum");
        };
        assert_eq!(error.code, ToolErrorCode::InvalidArguments);
        // A parameter left out of the offer leaves its `required` entry too.
        assert_eq!(
            offered_schema(
                &json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"]}),
                &["b"]
            ),
            json!({"type": "object", "properties": {"a": {}}, "required": ["a"]})
        );
    }
}
