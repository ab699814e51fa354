//! Changing `config.toml` from the app: providers, the active one, limits and tools. Edits keep
//! the file's comments, order and fields this version does not know, and land atomically (a
//! crash leaves the old file or the new one, never half of one).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml_edit::{Array, ArrayOfTables, DocumentMut, Item, Table, Value, value};
use tooltrail_protocol::ToolMode;

/// Characters of shell syntax a network rule cannot hold: it is plain words of one command.
const SHELL_SYNTAX: &[char] = &[
    ';', '&', '|', '<', '>', '$', '`', '(', ')', '\'', '"', '\\', '*', '?', '[', '{', '#', '~',
];

use crate::{
    DEFAULT_COMMAND_TIMEOUT_SECS, DEFAULT_MAX_RESULT_BYTES, DEFAULT_MAX_ROUNDS,
    DEFAULT_REQUEST_TIMEOUT_SECS, LOCAL_PROVIDER_ID, LocalConfig, SettingsError, check_base_url,
    check_context_window,
};

/// A model endpoint the user set up. Its API key, if any, is in the OS keychain under its id.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provider {
    pub id: String,
    pub name: String,
    pub base_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// How tools are offered to its models; `None` follows the file's `tool_mode` (auto by
    /// default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_mode: Option<ToolMode>,
    /// The context window of its models in tokens; `None` asks the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
    /// What a million prompt tokens cost at this provider, in US dollars: the stats screen
    /// turns the tokens it counts into a cost with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_input_per_mtok: Option<f64>,
    /// What a million answer (completion) tokens cost, in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_output_per_mtok: Option<f64>,
    /// The most tokens one answer of the model may take (every request asks for no more);
    /// `None` keeps a quarter of the context window for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The request field that carries that limit: `max_tokens`, or `max_completion_tokens`
    /// (which OpenAI's newer models want); `None` chooses by the endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens_field: Option<String>,
    /// Whether its models see images (tools' images then go to them as image parts); `None`
    /// asks the server where it says (Ollama, LM Studio, llama.cpp), and is off elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
}

/// The limits a user may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Limits {
    /// Tool rounds per question.
    pub max_rounds: u32,
    /// Largest tool result the model gets, in bytes.
    pub max_result_bytes: usize,
    /// Longest wait for the model's next byte, in seconds.
    pub request_timeout_secs: u64,
    /// Default time limit of a shell command, in seconds.
    pub command_timeout_secs: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_rounds: DEFAULT_MAX_ROUNDS,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            request_timeout_secs: DEFAULT_REQUEST_TIMEOUT_SECS,
            command_timeout_secs: DEFAULT_COMMAND_TIMEOUT_SECS,
        }
    }
}

impl Limits {
    /// Refuses values the engine cannot honour, in a sentence.
    pub fn check(&self) -> Result<(), SettingsError> {
        let bad = |message: &str| Err(SettingsError::BadValue(message.to_string()));
        if !(1..=100).contains(&self.max_rounds) {
            return bad("the round limit must be between 1 and 100");
        }
        if !(1024..=1024 * 1024).contains(&self.max_result_bytes) {
            return bad("the result size limit must be between 1 KB and 1 MB");
        }
        if !(5..=3600).contains(&self.request_timeout_secs) {
            return bad("the model wait limit must be between 5 and 3600 seconds");
        }
        if !(1..=120).contains(&self.command_timeout_secs) {
            return bad("the command time limit must be between 1 and 120 seconds");
        }
        Ok(())
    }
}

/// `config.toml`, open for changes.
pub struct ConfigEditor {
    path: PathBuf,
    doc: DocumentMut,
}

impl ConfigEditor {
    /// Opens the file; a missing file is an empty one.
    pub fn open(path: &Path) -> Result<Self, SettingsError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => {
                return Err(SettingsError::Read {
                    path: path.display().to_string(),
                    source,
                });
            }
        };
        let doc = text
            .parse::<DocumentMut>()
            .map_err(|err| SettingsError::Invalid {
                path: path.display().to_string(),
                message: err.message().to_string(),
            })?;
        // The typed reading must accept it too, or saving would keep a file nobody can use.
        crate::read_config_text(&text, path)?;
        Ok(Self {
            path: path.to_path_buf(),
            doc,
        })
    }

    /// Adds `provider`, or replaces the one with its id. A new provider without an id gets one
    /// made from its name. Returns the provider as stored.
    pub fn upsert_provider(&mut self, mut provider: Provider) -> Result<Provider, SettingsError> {
        provider.name = provider.name.trim().to_string();
        provider.base_url = provider.base_url.trim().trim_end_matches('/').to_string();
        provider.model = provider
            .model
            .map(|model| model.trim().to_string())
            .filter(|model| !model.is_empty());
        if provider.name.is_empty() {
            return Err(SettingsError::BadValue(
                "a provider needs a name".to_string(),
            ));
        }
        check_base_url(&provider.base_url)?;
        if let Some(tokens) = provider.context_window {
            check_context_window(tokens)?;
        }
        for price in [
            provider.price_input_per_mtok,
            provider.price_output_per_mtok,
        ]
        .into_iter()
        .flatten()
        {
            if !price.is_finite() || price < 0.0 {
                return Err(SettingsError::BadValue(
                    "a price per million tokens must be a number of dollars, 0 or more".to_string(),
                ));
            }
        }
        let providers = self.providers_mut()?;
        if provider.id.is_empty() {
            // `local` is Tooltrail's own server: a new provider named "Local" gets `local-2`.
            let taken: Vec<String> = providers
                .iter()
                .filter_map(table_id)
                .chain([LOCAL_PROVIDER_ID.to_string()])
                .collect();
            provider.id = unique_id(&provider.name, &taken);
        }
        let index = providers
            .iter()
            .position(|table| table_id(table).as_deref() == Some(provider.id.as_str()));
        let mut table = index
            .and_then(|i| providers.get(i))
            .cloned()
            .unwrap_or_else(Table::new);
        table.insert("id", value(provider.id.as_str()));
        table.insert("name", value(provider.name.as_str()));
        table.insert("base_url", value(provider.base_url.as_str()));
        match &provider.model {
            Some(model) => table.insert("model", value(model.as_str())),
            None => table.remove("model"),
        };
        match provider.tool_mode {
            Some(mode) => table.insert("tool_mode", value(mode.as_str())),
            None => table.remove("tool_mode"),
        };
        match provider.context_window {
            Some(tokens) => table.insert("context_window", value(i64::from(tokens))),
            None => table.remove("context_window"),
        };
        match provider.vision {
            Some(vision) => table.insert("vision", value(vision)),
            None => table.remove("vision"),
        };
        for (key, price) in [
            ("price_input_per_mtok", provider.price_input_per_mtok),
            ("price_output_per_mtok", provider.price_output_per_mtok),
        ] {
            match price {
                Some(price) => table.insert(key, value(price)),
                None => table.remove(key),
            };
        }
        match index.and_then(|i| providers.get_mut(i)) {
            Some(slot) => *slot = table,
            None => providers.push(table),
        }
        Ok(provider)
    }

    /// Removes a provider (and makes none active if it was); false when there was none.
    pub fn remove_provider(&mut self, id: &str) -> bool {
        let Ok(providers) = self.providers_mut() else {
            return false;
        };
        let before = providers.len();
        providers.retain(|table| table_id(table).as_deref() != Some(id));
        let removed = providers.len() != before;
        if self.active_provider() == Some(id) {
            self.doc.remove("active_provider");
        }
        removed
    }

    /// Makes `id` the provider questions go to: one of `[[providers]]`, or
    /// [`LOCAL_PROVIDER_ID`], Tooltrail's own model server.
    pub fn set_active(&mut self, id: &str) -> Result<(), SettingsError> {
        let known = id == LOCAL_PROVIDER_ID
            || self
                .doc
                .get("providers")
                .and_then(Item::as_array_of_tables)
                .is_some_and(|list| list.iter().any(|t| table_id(t).as_deref() == Some(id)));
        if !known {
            return Err(SettingsError::BadValue(format!(
                "there is no provider {id:?}"
            )));
        }
        self.doc.insert("active_provider", value(id));
        Ok(())
    }

    /// The user's own provider with this id, when `[[providers]]` has one.
    pub fn provider_name(&self, id: &str) -> Option<String> {
        self.doc
            .get("providers")
            .and_then(Item::as_array_of_tables)?
            .iter()
            .find(|t| table_id(t).as_deref() == Some(id))
            .map(|t| {
                t.get("name")
                    .and_then(Item::as_str)
                    .unwrap_or(id)
                    .to_string()
            })
    }

    /// Sets the `[local]` table (Tooltrail's own model server); unset fields are removed, and
    /// the table with them when none is left. Other keys in the table are kept.
    pub fn set_local(&mut self, local: &LocalConfig) -> Result<(), SettingsError> {
        local.check()?;
        let table = self
            .doc
            .entry("local")
            .or_insert_with(toml_edit::table)
            .as_table_mut()
            .ok_or_else(|| {
                SettingsError::BadValue("`local` in the config file is not a table".to_string())
            })?;
        let model = local
            .model
            .as_deref()
            .map(|model| Value::from(model.trim()));
        set_or_remove(table, "model", model);
        for (key, number) in [
            ("context_size", local.context_size),
            ("idle_minutes", local.idle_minutes),
        ] {
            set_or_remove(table, key, number.map(|n| Value::from(i64::from(n))));
        }
        if table.is_empty() {
            self.doc.remove("local");
        }
        Ok(())
    }

    /// Sets `[local] model` alone, keeping the table's other settings.
    pub fn set_local_model(&mut self, model: &str) -> Result<(), SettingsError> {
        let mut local = self.local()?;
        local.model = Some(model.trim().to_string());
        self.set_local(&local)
    }

    /// The `[local]` table as the file stands now.
    pub fn local(&self) -> Result<LocalConfig, SettingsError> {
        crate::read_config_text(&self.doc.to_string(), &self.path).map(|file| file.local)
    }

    /// The id of the provider questions go to, as the file stands now.
    pub fn active_provider(&self) -> Option<&str> {
        self.doc.get("active_provider").and_then(Item::as_str)
    }

    pub fn set_limits(&mut self, limits: &Limits) -> Result<(), SettingsError> {
        limits.check()?;
        self.doc
            .insert("max_rounds", value(i64::from(limits.max_rounds)));
        self.doc.insert(
            "max_result_bytes",
            value(i64::try_from(limits.max_result_bytes).unwrap_or(i64::MAX)),
        );
        self.doc.insert(
            "request_timeout_secs",
            value(i64::try_from(limits.request_timeout_secs).unwrap_or(i64::MAX)),
        );
        self.doc.insert(
            "command_timeout_secs",
            value(i64::try_from(limits.command_timeout_secs).unwrap_or(i64::MAX)),
        );
        Ok(())
    }

    /// Turns a tool off (it is then not offered to the model) or back on.
    pub fn set_tool_enabled(&mut self, tool: &str, enabled: bool) {
        self.set_listed("disabled_tools", tool, !enabled);
    }

    /// Turns on (or off again) a tool that is off until turned on (`enabled_tools`).
    pub fn set_tool_turned_on(&mut self, tool: &str, on: bool) {
        self.set_listed("enabled_tools", tool, on);
    }

    /// Puts `tool` in the list `key` or takes it out; an empty list leaves the file.
    fn set_listed(&mut self, key: &str, tool: &str, listed: bool) {
        let mut names: Vec<String> = self
            .doc
            .get(key)
            .and_then(Item::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        names.retain(|name| name != tool);
        if listed {
            names.push(tool.to_string());
            names.sort();
        }
        if names.is_empty() {
            self.doc.remove(key);
        } else {
            self.doc.insert(key, value(names.iter().collect::<Array>()));
        }
    }

    /// Sets the extra folders commands may read (`[sandbox] read_only_folders`). Each must be
    /// absolute or start with `~` (the home folder); an empty list removes the setting.
    pub fn set_read_only_folders(&mut self, folders: &[String]) -> Result<(), SettingsError> {
        let folders: Vec<&str> = folders
            .iter()
            .map(|folder| folder.trim())
            .filter(|folder| !folder.is_empty())
            .collect();
        for folder in &folders {
            // Component-wise, as the sandbox expands it: `~/notes`, and `~\notes` on Windows.
            let home_relative = Path::new(folder).starts_with("~");
            if !home_relative && !Path::new(folder).is_absolute() {
                return Err(SettingsError::BadValue(format!(
                    "the read-only folder \"{folder}\" must be a full path or start with ~/"
                )));
            }
        }
        self.set_sandbox_list(
            "read_only_folders",
            folders.into_iter().map(str::to_string).collect(),
        )
    }

    /// Sets the network rules (`[sandbox] network_commands`): the words an approved command
    /// must start with to run with the network open. Each must be plain words of one command
    /// (no `;`, `&&`, `|`, redirections, quotes or `$`); an empty list removes the setting.
    pub fn set_network_commands(&mut self, commands: &[String]) -> Result<(), SettingsError> {
        let commands: Vec<String> = commands
            .iter()
            .map(|command| command.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|command| !command.is_empty())
            .collect();
        for command in &commands {
            if let Some(bad) = command.chars().find(|ch| SHELL_SYNTAX.contains(ch)) {
                return Err(SettingsError::BadValue(format!(
                    "the network rule {command:?} must be plain words of one command, without `{bad}`"
                )));
            }
        }
        self.set_sandbox_list("network_commands", commands)
    }

    /// Sets `[sandbox] key` to `items`; an empty list removes it (and an empty table).
    fn set_sandbox_list(&mut self, key: &str, items: Vec<String>) -> Result<(), SettingsError> {
        if items.is_empty() {
            if let Some(table) = self.doc.get_mut("sandbox").and_then(Item::as_table_mut) {
                table.remove(key);
                if table.is_empty() {
                    self.doc.remove("sandbox");
                }
            }
            return Ok(());
        }
        let table = self
            .doc
            .entry("sandbox")
            .or_insert_with(toml_edit::table)
            .as_table_mut()
            .ok_or_else(|| {
                SettingsError::BadValue("`sandbox` in the config file is not a table".to_string())
            })?;
        table.insert(key, value(items.into_iter().collect::<Array>()));
        Ok(())
    }

    /// The document, for the tables other modules write (`[telemetry]`).
    pub(crate) fn doc_mut(&mut self) -> &mut DocumentMut {
        &mut self.doc
    }

    /// Writes the file: a temporary file beside it, then a rename.
    pub fn save(&self) -> Result<(), SettingsError> {
        let write_error = |source| SettingsError::Write {
            path: self.path.display().to_string(),
            source,
        };
        // A temporary file with a random name, made exclusively, then renamed: a link planted
        // beside the config file cannot lead the write elsewhere.
        tooltrail_atomic_write::write_atomically(&self.path, self.doc.to_string().as_bytes())
            .map_err(write_error)
    }

    fn providers_mut(&mut self) -> Result<&mut ArrayOfTables, SettingsError> {
        self.doc
            .entry("providers")
            .or_insert(Item::ArrayOfTables(ArrayOfTables::new()))
            .as_array_of_tables_mut()
            .ok_or_else(|| {
                SettingsError::BadValue(
                    "`providers` in the config file must be a list of [[providers]] tables"
                        .to_string(),
                )
            })
    }
}

/// Sets `key` to `new` keeping the comments around the old value, or removes it.
fn set_or_remove(table: &mut Table, key: &str, new: Option<Value>) {
    let Some(mut new) = new else {
        table.remove(key);
        return;
    };
    match table.get_mut(key).and_then(Item::as_value_mut) {
        Some(old) => {
            *new.decor_mut() = old.decor().clone();
            *old = new;
        }
        None => {
            table.insert(key, Item::Value(new));
        }
    }
}

fn table_id(table: &Table) -> Option<String> {
    table.get("id").and_then(Item::as_str).map(str::to_string)
}

/// A short lower-case id from a name, not among `taken`: "LM Studio" becomes `lm-studio`.
fn unique_id(name: &str, taken: &[String]) -> String {
    let mut base = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            base.push(c.to_ascii_lowercase());
        } else if !base.ends_with('-') && !base.is_empty() {
            base.push('-');
        }
    }
    let base = base.trim_end_matches('-');
    let base = if base.is_empty() { "provider" } else { base };
    let mut id = base.to_string();
    let mut n = 2;
    while taken.contains(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn provider(name: &str, url: &str) -> Provider {
        Provider {
            name: name.to_string(),
            base_url: url.to_string(),
            ..Provider::default()
        }
    }

    #[test]
    fn prices_are_written_read_back_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let mut editor = ConfigEditor::open(&path).unwrap();
        let stored = editor
            .upsert_provider(Provider {
                price_input_per_mtok: Some(0.15),
                price_output_per_mtok: Some(0.6),
                ..provider("OpenAI", "https://api.openai.com/v1")
            })
            .unwrap();
        editor.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let config = crate::read_config_text(&text, &path).unwrap();
        assert_eq!(config.providers[0].price_input_per_mtok, Some(0.15));
        assert_eq!(config.providers[0].price_output_per_mtok, Some(0.6));

        let mut editor = ConfigEditor::open(&path).unwrap();
        editor
            .upsert_provider(Provider {
                price_output_per_mtok: None,
                ..stored.clone()
            })
            .unwrap();
        editor.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("price_output_per_mtok"), "{text}");

        let mut editor = ConfigEditor::open(&path).unwrap();
        let refused = editor.upsert_provider(Provider {
            price_input_per_mtok: Some(-1.0),
            ..stored
        });
        assert!(
            matches!(refused, Err(SettingsError::BadValue(ref m)) if m.contains("0 or more")),
            "{refused:?}"
        );
    }

    #[test]
    fn edits_keep_comments_and_unknown_fields_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "# my settings\nfuture_setting = 1 # keep\nmodel = \"m\"\n",
        )
        .unwrap();
        let mut editor = ConfigEditor::open(&path).unwrap();
        let first = editor
            .upsert_provider(provider(" LM Studio ", "http://localhost:1234/v1/"))
            .unwrap();
        let second = editor
            .upsert_provider(provider("LM Studio", "http://other:1234/v1"))
            .unwrap();
        assert_eq!(
            (first.id.as_str(), second.id.as_str()),
            ("lm-studio", "lm-studio-2")
        );
        editor.set_active("lm-studio-2").unwrap();
        assert_eq!(editor.active_provider(), Some("lm-studio-2"));
        editor.set_tool_enabled("execute_bash", false);
        editor
            .set_limits(&Limits {
                max_rounds: 4,
                ..Limits::default()
            })
            .unwrap();
        editor.save().unwrap();

        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# my settings\nfuture_setting = 1 # keep\n"),
            "{text}"
        );
        let config = crate::read_config_text(&text, &path).unwrap();
        assert_eq!(config.active_provider.as_deref(), Some("lm-studio-2"));
        assert_eq!(config.providers.len(), 2);
        assert_eq!(config.providers[0].base_url, "http://localhost:1234/v1");
        assert_eq!(config.disabled_tools, vec!["execute_bash".to_string()]);
        assert_eq!(config.max_rounds, Some(4));

        // Editing by id replaces; removing the active one leaves none active.
        let mut editor = ConfigEditor::open(&path).unwrap();
        let mut changed = second.clone();
        changed.model = Some("qwen".into());
        editor.upsert_provider(changed).unwrap();
        editor.set_tool_enabled("execute_bash", true);
        assert!(editor.remove_provider("lm-studio-2"));
        assert!(!editor.remove_provider("lm-studio-2"));
        editor.save().unwrap();
        let config =
            crate::read_config_text(&std::fs::read_to_string(&path).unwrap(), &path).unwrap();
        assert_eq!(config.active_provider, None);
        assert_eq!(
            config
                .providers
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>(),
            ["lm-studio"]
        );
        assert!(config.disabled_tools.is_empty());
    }

    #[test]
    fn read_only_folders_are_written_to_the_sandbox_table_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "# mine\nmodel = \"m\"\n").unwrap();
        let mut editor = ConfigEditor::open(&path).unwrap();
        editor
            .set_read_only_folders(&["~/notes".to_string(), " /opt/sdk ".to_string()])
            .unwrap();
        editor.save().unwrap();
        let file = crate::ConfigFile::read(&path).unwrap();
        assert_eq!(file.sandbox.read_only_folders, ["~/notes", "/opt/sdk"]);
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .starts_with("# mine\n")
        );
        let error = editor
            .set_read_only_folders(&["notes".to_string()])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the read-only folder \"notes\" must be a full path or start with ~/"
        );
        editor.set_read_only_folders(&[]).unwrap();
        editor.save().unwrap();
        assert!(!std::fs::read_to_string(&path).unwrap().contains("sandbox"));
    }

    #[test]
    fn read_only_folders_under_home_are_told_by_their_first_component() {
        let dir = tempfile::tempdir().unwrap();
        let mut editor = ConfigEditor::open(&dir.path().join("config.toml")).unwrap();
        for folder in ["~", "~/notes", "~//notes/"] {
            assert!(
                editor.set_read_only_folders(&[folder.into()]).is_ok(),
                "{folder}"
            );
        }
        // Another user's home is not expanded, so it is no folder.
        assert!(
            editor
                .set_read_only_folders(&["~bob/notes".into()])
                .is_err()
        );
        #[cfg(windows)]
        {
            for folder in [r"~\notes", r"C:\sdk", r"\\host\share\docs"] {
                assert!(
                    editor.set_read_only_folders(&[folder.into()]).is_ok(),
                    "{folder}"
                );
            }
            // Rooted but with no drive: which drive it is on depends on the current folder.
            let error = editor.set_read_only_folders(&[r"\sdk".into()]).unwrap_err();
            assert_eq!(
                error.to_string(),
                r#"the read-only folder "\sdk" must be a full path or start with ~/"#
            );
        }
    }

    #[test]
    fn network_commands_are_plain_words_in_the_sandbox_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let mut editor = ConfigEditor::open(&path).unwrap();
        editor
            .set_read_only_folders(&["~/notes".to_string()])
            .unwrap();
        editor
            .set_network_commands(&[" npm   install ".to_string(), "cargo fetch".to_string()])
            .unwrap();
        editor.save().unwrap();
        let file = crate::ConfigFile::read(&path).unwrap();
        assert_eq!(
            file.sandbox.network_commands,
            ["npm install", "cargo fetch"]
        );
        let error = editor
            .set_network_commands(&["npm install && curl x".to_string()])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the network rule \"npm install && curl x\" must be plain words of one command, without `&`"
        );
        editor.set_network_commands(&[]).unwrap();
        editor.save().unwrap();
        let file = crate::ConfigFile::read(&path).unwrap();
        assert!(file.sandbox.network_commands.is_empty());
        assert_eq!(file.sandbox.read_only_folders, ["~/notes"]);
    }

    #[test]
    fn bad_values_are_refused_with_a_sentence_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let mut editor = ConfigEditor::open(&path).unwrap();
        let error = editor
            .upsert_provider(provider("x", "localhost:1234"))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the base URL \"localhost:1234\" must start with http:// or https://"
        );
        let error = editor
            .upsert_provider(provider("  ", "http://a/v1"))
            .unwrap_err();
        assert_eq!(error.to_string(), "a provider needs a name");
        let error = editor.set_active("nope").unwrap_err();
        assert_eq!(error.to_string(), "there is no provider \"nope\"");
        let error = editor
            .set_limits(&Limits {
                command_timeout_secs: 500,
                ..Limits::default()
            })
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the command time limit must be between 1 and 120 seconds"
        );
        assert!(!path.exists());

        std::fs::write(&path, "max_rounds = \"many\"").unwrap();
        assert!(
            ConfigEditor::open(&path).is_err(),
            "a file of the wrong shape is not edited"
        );
    }

    #[test]
    fn the_local_table_and_provider_are_written_keeping_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "# my settings\nmax_rounds = 4\n\n[local]\n# the server stops sooner\nidle_minutes = 3\n",
        )
        .unwrap();
        let mut editor = ConfigEditor::open(&path).unwrap();
        editor.set_local_model(" qwen3-1.7b ").unwrap();
        editor.set_active(LOCAL_PROVIDER_ID).unwrap();
        editor.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("# my settings"), "{text}");
        assert!(text.contains("# the server stops sooner"), "{text}");
        let file = crate::ConfigFile::read(&path).unwrap();
        assert_eq!(file.active_provider.as_deref(), Some("local"));
        assert_eq!(
            file.local,
            LocalConfig {
                model: Some("qwen3-1.7b".into()),
                context_size: None,
                idle_minutes: Some(3),
            }
        );
        assert_eq!(file.max_rounds, Some(4));

        // Every field unset takes the table away.
        let mut editor = ConfigEditor::open(&path).unwrap();
        editor.set_local(&LocalConfig::default()).unwrap();
        editor.save().unwrap();
        assert!(!std::fs::read_to_string(&path).unwrap().contains("[local]"));

        let mut editor = ConfigEditor::open(&path).unwrap();
        let error = editor
            .set_local(&LocalConfig {
                idle_minutes: Some(0),
                ..LocalConfig::default()
            })
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the local model server's idle time must be at least 1 minute"
        );
    }

    #[test]
    fn a_new_provider_named_local_does_not_take_the_built_in_id() {
        let dir = tempfile::tempdir().unwrap();
        let mut editor = ConfigEditor::open(&dir.path().join("config.toml")).unwrap();
        let stored = editor
            .upsert_provider(provider("Local", "http://localhost:11434/v1"))
            .unwrap();
        assert_eq!(stored.id, "local-2");
        assert_eq!(editor.provider_name("local-2").as_deref(), Some("Local"));
        assert_eq!(editor.provider_name(LOCAL_PROVIDER_ID), None);
    }
}
