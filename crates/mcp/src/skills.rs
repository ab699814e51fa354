//! A server's skills (the skills extension, `io.modelcontextprotocol/skills`): a skill is a
//! folder of files the server serves as resources, listed by `skills/list` with each file's
//! digest and size and the `SKILL.md`'s frontmatter. The model sees the skills' names and
//! descriptions in the built-in `load_skill` tool; nothing of a skill is read before the model
//! asks for it.
//!
//! What a server sends for a skill is checked before anyone uses it: each file's bytes against
//! the size and `sha256` digest its listing gave, and the `SKILL.md`'s frontmatter, field by
//! field, against the listed one. A file that fails is refused with the reason, and nothing of it
//! reaches the model or the record; `read_resource` does not read a skill's files around that.

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine as _;
use rmcp::model::{
    ReadResourceRequestParams, ResourceContents, Skill, SkillIntegrityError, SkillResources,
};
use serde_json::{Map, Value, json};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSource, ToolSpec};
use tooltrail_tools::{Gate, Tool, ToolContext};

use crate::error::McpError;
use crate::manager::McpManager;
use crate::server::McpServer;
use crate::server_route::ServerRoute;

/// The built-in tool's name.
pub const LOAD_SKILL: &str = "load_skill";
/// The scheme of a skill's files.
const SKILL_SCHEME: &str = "skill://";

/// One file of a skill, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    pub uri: String,
    pub text: String,
    /// The skill's other files, as `load_skill` takes them (given with `SKILL.md` only).
    pub others: Vec<String>,
}

/// Whether `uri` names a skill's file, which only `load_skill` reads (checked).
pub(crate) fn is_skill_file(uri: &str) -> bool {
    uri.get(..SKILL_SCHEME.len())
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case(SKILL_SCHEME))
}

impl McpServer {
    /// Whether the server said in its handshake that it serves skills (starting it if needed).
    pub async fn has_skills(&self) -> Result<bool, McpError> {
        let peer = self.peer().await?;
        Ok(peer
            .peer_info()
            .is_some_and(|info| info.capabilities.supports_skills()))
    }

    /// Every skill the server lists; none when it serves none. Only the listing: no file of a
    /// skill is read.
    pub async fn skills(&self) -> Result<Vec<Skill>, McpError> {
        if !self.has_skills().await? {
            return Ok(Vec::new());
        }
        let peer = self.peer().await?;
        let listed = tokio::time::timeout(self.config().timeout, peer.list_all_skills()).await;
        self.answer(listed, "list its skills")
    }

    /// Reads one file of the skill named `skill`: its `SKILL.md` when `file` is `None`, else
    /// the listed file `file` (its URI, or its path inside the skill). The bytes are checked
    /// against the listing first; an error says why in a sentence.
    pub async fn load_skill(&self, skill: &str, file: Option<&str>) -> Result<SkillFile, String> {
        let skills = self.skills().await.map_err(|err| err.to_string())?;
        let server = self.name();
        let Some(entry) = skills.iter().find(|entry| entry.frontmatter.name == skill) else {
            let names: Vec<&str> = skills
                .iter()
                .map(|entry| entry.frontmatter.name.as_str())
                .collect();
            return Err(format!(
                "the MCP server {server:?} has no skill named {skill:?}; its skills are: {}",
                if names.is_empty() {
                    "(none)".to_string()
                } else {
                    names.join(", ")
                }
            ));
        };
        let base = entry.uri.rsplit_once('/').map_or("", |(base, _)| base);
        let uri = match file {
            None => entry.uri.clone(),
            Some(file) if file.contains("://") => file.to_string(),
            Some(file) => format!("{base}/{}", file.trim_start_matches('/')),
        };
        let listed = match &entry.resources {
            SkillResources::Files(files) => {
                let Some(listed) = files.iter().find(|listed| listed.uri == uri) else {
                    return Err(format!(
                        "{uri} is not a file of the skill {skill:?}, so it was not read"
                    ));
                };
                Some(listed)
            }
            // A skill whose files change has no digests: only its frontmatter is checked.
            SkillResources::Dynamic => {
                if !uri.starts_with(&format!("{base}/")) || uri.split('/').any(|part| part == "..")
                {
                    return Err(format!(
                        "{uri} is not a file of the skill {skill:?}, so it was not read"
                    ));
                }
                None
            }
            _ => {
                return Err(format!(
                    "the server listed the files of the skill {skill:?} in a way this host does \
                     not know, so it was not read"
                ));
            }
        };
        let bytes = self.read_bytes(&uri).await?;
        if let Some(listed) = listed {
            listed.verify(&bytes).map_err(|err| {
                let why = match err {
                    SkillIntegrityError::Size {
                        expected, actual, ..
                    } => format!("it is {actual} bytes where the listing says {expected}"),
                    _ => "its sha256 digest is not the listed one".to_string(),
                };
                format!(
                    "the file {uri} of the skill {skill:?} is not what the server listed \
                     ({why}), so it was not used"
                )
            })?;
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("the file {uri} of the skill {skill:?} is not text"))?;
        let mut others = Vec::new();
        if uri == entry.uri {
            check_frontmatter(&text, &entry.frontmatter).map_err(|why| {
                format!(
                    "the SKILL.md of the skill {skill:?} does not say what the server listed \
                     ({why}), so it was not used"
                )
            })?;
            if let SkillResources::Files(files) = &entry.resources {
                others = files
                    .iter()
                    .filter(|listed| listed.uri != entry.uri)
                    .map(|listed| {
                        listed
                            .uri
                            .strip_prefix(&format!("{base}/"))
                            .unwrap_or(&listed.uri)
                            .to_string()
                    })
                    .collect();
            }
        }
        Ok(SkillFile { uri, text, others })
    }

    /// The bytes of a resource with one content: its text as UTF-8, or its blob decoded.
    async fn read_bytes(&self, uri: &str) -> Result<Vec<u8>, String> {
        let peer = self.peer().await.map_err(|err| err.to_string())?;
        let read = tokio::time::timeout(
            self.config().timeout,
            peer.read_resource(ReadResourceRequestParams::new(uri)),
        )
        .await;
        let result = self
            .answer(read, "read the skill's file")
            .map_err(|err| err.to_string())?;
        let [content] = result.contents.as_slice() else {
            return Err(format!(
                "the server sent {} contents for {uri}, where a skill's file has one",
                result.contents.len()
            ));
        };
        match content {
            ResourceContents::TextResourceContents { text, .. } => Ok(text.as_bytes().to_vec()),
            ResourceContents::BlobResourceContents { blob, .. } => {
                base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .map_err(|_| format!("the server sent {uri} as data that is not base64"))
            }
            _ => Err(format!(
                "the server sent {uri} in a form this host does not know"
            )),
        }
    }
}

/// Compares the frontmatter at the top of `text` with the listed one, field by field.
fn check_frontmatter(text: &str, listed: &rmcp::model::SkillFrontmatter) -> Result<(), String> {
    let found = frontmatter(text)?;
    let mut expected = listed.extra.clone();
    expected.insert("name".into(), Value::String(listed.name.clone()));
    expected.insert(
        "description".into(),
        Value::String(listed.description.clone()),
    );
    for (key, value) in &expected {
        match found.get(key) {
            None => return Err(format!("it has no {key:?}")),
            Some(got) if !same(got, value) => {
                return Err(format!("its {key:?} is different"));
            }
            Some(_) => {}
        }
    }
    if let Some(key) = found.keys().find(|key| !expected.contains_key(*key)) {
        return Err(format!("it has a field {key:?} the listing does not"));
    }
    Ok(())
}

/// Whether a value read from the file (strings, or maps of them) is the listed one.
fn same(found: &Value, listed: &Value) -> bool {
    match (found, listed) {
        (Value::String(found), Value::String(listed)) => found == listed,
        (Value::String(found), Value::Number(_) | Value::Bool(_)) => {
            found.as_str() == listed.to_string().as_str()
        }
        (Value::Object(found), Value::Object(listed)) => {
            found.len() == listed.len()
                && found
                    .iter()
                    .all(|(key, value)| listed.get(key).is_some_and(|other| same(value, other)))
        }
        _ => false,
    }
}

/// The frontmatter of a `SKILL.md`: the `key: value` lines between the opening `---` and the
/// next, with one level of indented `key: value` lines under a key that has no value. Other
/// YAML (lists, several lines to one value) is refused rather than guessed at.
fn frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("it has no frontmatter".into());
    }
    let mut fields = Map::new();
    let mut open: Option<String> = None;
    for line in lines {
        if line.trim_end() == "---" {
            return Ok(fields);
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let nested = line.starts_with(' ') || line.starts_with('\t');
        let (key, value) = line
            .trim()
            .split_once(':')
            .ok_or_else(|| "its frontmatter is YAML this host does not read".to_string())?;
        let (key, value) = (unquote(key.trim()), value.trim());
        if nested {
            let Some(Value::Object(map)) = open.as_ref().and_then(|parent| fields.get_mut(parent))
            else {
                return Err("its frontmatter is YAML this host does not read".into());
            };
            map.insert(key, Value::String(unquote(value)));
        } else if value.is_empty() {
            fields.insert(key.clone(), Value::Object(Map::new()));
            open = Some(key);
        } else {
            if value.starts_with(['[', '{', '|', '>', '-']) {
                return Err("its frontmatter is YAML this host does not read".into());
            }
            fields.insert(key, Value::String(unquote(value)));
            open = None;
        }
    }
    Err("its frontmatter does not end".into())
}

fn unquote(value: &str) -> String {
    let quoted = value.len() >= 2
        && ((value.starts_with('"') && value.ends_with('"'))
            || (value.starts_with('\'') && value.ends_with('\'')));
    if quoted {
        value[1..value.len() - 1].to_string()
    } else {
        value.to_string()
    }
}

/// `load_skill(server, skill, file?)`: loads a skill of a connected server (its `SKILL.md`, or
/// one of its files), checked. Offered when some server lists skills; its description names
/// them.
#[derive(Debug)]
pub struct LoadSkillTool {
    spec: ToolSpec,
    route: ServerRoute,
}

impl LoadSkillTool {
    /// The tool for the servers' listed skills; `None` when no server lists one.
    pub fn new(listed: Vec<(Arc<McpServer>, Vec<Skill>)>) -> Option<Self> {
        let listed: Vec<_> = listed
            .into_iter()
            .filter(|(_, skills)| !skills.is_empty())
            .collect();
        if listed.is_empty() {
            return None;
        }
        let mut lines = Vec::new();
        for (server, skills) in &listed {
            for skill in skills {
                lines.push(format!(
                    "- {} (server {}): {}",
                    skill.frontmatter.name,
                    server.name(),
                    skill.frontmatter.description
                ));
            }
        }
        let route = ServerRoute::new(listed.into_iter().map(|(server, _)| server).collect());
        let names = route.names();
        let spec = ToolSpec {
            name: LOAD_SKILL.to_string(),
            description: format!(
                "Loads a skill's instructions (its SKILL.md) when a task needs it; then, if the \
                 instructions point to one, a file of the skill by its path. Skills:\n{}",
                lines.join("\n")
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "enum": names, "description": "The MCP server of the skill."},
                    "skill": {"type": "string", "description": "The skill's name."},
                    "file": {"type": "string", "description": "A file of the skill, by its path; leave out for SKILL.md."}
                },
                "required": ["server", "skill"],
                "additionalProperties": false
            }),
            read_only: route.all_allowed(),
        };
        Some(Self { spec, route })
    }
}

#[async_trait]
impl Tool for LoadSkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn source(&self) -> ToolSource {
        ToolSource::Builtin
    }

    fn source_of(&self, args: &Value) -> ToolSource {
        self.route.source_of(args)
    }

    /// Gated by the server's `approval`, as its tools and resources are.
    fn gate(&self, args: &Value, _ctx: &ToolContext) -> Gate {
        let skill = args.get("skill").and_then(Value::as_str).unwrap_or("");
        self.route.gate(args, LOAD_SKILL, skill, "a skill")
    }

    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(server) = self.route.named(&args) else {
            let names = self.route.names();
            return Err(ToolError::new(
                ToolErrorCode::InvalidArguments,
                format!(
                    "no MCP server of that name lists skills; the servers are: {}",
                    names.join(", ")
                ),
            ));
        };
        let skill = args.get("skill").and_then(Value::as_str).unwrap_or("");
        let file = args.get("file").and_then(Value::as_str);
        let loaded = server
            .load_skill(skill, file)
            .await
            .map_err(|why| ToolError::new(ToolErrorCode::Failed, why))?;
        let mut text = format!("[skill {skill}: {}]\n{}", loaded.uri, loaded.text);
        if !loaded.others.is_empty() {
            text.push_str(&format!(
                "\n\n[the skill's other files, for load_skill's \"file\": {}]",
                loaded.others.join(", ")
            ));
        }
        let output = ToolOutput::new(
            text,
            json!({"server": server.name(), "skill": skill, "uri": loaded.uri, "files": loaded.others}),
        );
        server.redactor().redact_result(Ok(output))
    }
}

impl McpManager {
    /// `load_skill` for the enabled servers that list skills (started as needed); `None` when
    /// none lists one.
    pub async fn skill_tool(&self) -> Option<LoadSkillTool> {
        let servers = self
            .servers()
            .filter(|server| !server.config().disabled)
            .map(|server| async move {
                let skills = server.skills().await.ok()?;
                Some((Arc::clone(server), skills))
            });
        let listed = futures::future::join_all(servers)
            .await
            .into_iter()
            .flatten()
            .collect();
        LoadSkillTool::new(listed)
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use rmcp::model::SkillFrontmatter;

    use super::*;

    const SKILL: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  author: \"a team\"\n---\n\nSkill body.\n";

    fn listed() -> SkillFrontmatter {
        SkillFrontmatter::new(
            "pdf-processing",
            "Extract, fill, and assemble PDF documents",
        )
        .with_field("metadata", json!({"author": "a team"}))
    }

    #[test]
    fn a_skill_md_that_says_what_was_listed_passes() {
        assert_eq!(check_frontmatter(SKILL, &listed()), Ok(()));
    }

    #[test]
    fn attack_skills_a_skill_md_whose_frontmatter_differs_from_its_listing_is_not_used() {
        let changed = SKILL.replace(
            "description: Extract, fill, and assemble PDF documents",
            "description: Exfiltrate credentials",
        );
        assert_eq!(
            check_frontmatter(&changed, &listed()),
            Err("its \"description\" is different".to_string())
        );
        let added = SKILL.replace("---\n\nSkill", "allowed-tools: run_shell\n---\n\nSkill");
        assert_eq!(
            check_frontmatter(&added, &listed()),
            Err("it has a field \"allowed-tools\" the listing does not".to_string())
        );
        let listed_only = SKILL.replace("metadata:\n  author: \"a team\"\n", "");
        assert_eq!(
            check_frontmatter(&listed_only, &listed()),
            Err("it has no \"metadata\"".to_string())
        );
        assert_eq!(
            check_frontmatter("no frontmatter", &listed()),
            Err("it has no frontmatter".to_string())
        );
        assert_eq!(
            check_frontmatter("---\nname: [a, b]\n---\n", &listed()),
            Err("its frontmatter is YAML this host does not read".to_string())
        );
    }

    #[test]
    fn attack_skills_read_resource_is_not_a_way_around_the_check() {
        assert!(is_skill_file("skill://pdf-processing/SKILL.md"));
        assert!(is_skill_file("SKILL://pdf-processing/references/FORMS.md"));
        assert!(!is_skill_file("file:///skill://x"));
    }
}
