//! The registry: name → tool, with each tool's argument schema compiled once.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};

use crate::tool::{Tool, ToolContext};

struct Entry {
    tool: Arc<dyn Tool>,
    /// `None` when the tool's schema could not be compiled; its arguments are then only checked
    /// to be a JSON object.
    validator: Option<jsonschema::Validator>,
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
            registry.register(tool);
        }
        registry
    }

    /// Adds a tool, replacing any tool of the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let validator = jsonschema::validator_for(&tool.spec().parameters).ok();
        self.tools
            .insert(tool.spec().name.clone(), Entry { tool, validator });
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

    /// Every tool's spec, sorted by name: what the model is told.
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
    pub fn prepare(&self, name: &str, raw_arguments: &str) -> Result<(Arc<dyn Tool>, Value), ToolError> {
        let entry = self.tools.get(name).ok_or_else(|| {
            ToolError::new(ToolErrorCode::ToolNotFound, format!("tool not found: {name}"))
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

fn validate(entry: &Entry, args: &Value) -> Result<(), ToolError> {
    if !args.is_object() {
        return Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("arguments must be a JSON object, got {}", json_kind(args)),
        ));
    }
    let Some(validator) = &entry.validator else {
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
        Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("invalid arguments for {}: {}", entry.tool.spec().name, problems.join("; ")),
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
