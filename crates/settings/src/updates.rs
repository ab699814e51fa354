//! The `[updates]` table of `config.toml`: whether the desktop app looks for a new version of
//! itself when it starts. On unless turned off; an update is installed only on the user's yes.
//!
//! ```toml
//! [updates]
//! check = false   # never look for a new version at start ("Check now" in Settings still works)
//! ```

use serde::Deserialize;
use toml_edit::Value;

use crate::SettingsError;
use crate::edit::ConfigEditor;

/// The table as written.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct UpdatesSection {
    /// Look for a new version at start; unset means yes.
    pub check: Option<bool>,
}

impl UpdatesSection {
    /// Whether the app looks for a new version when it starts.
    pub fn check_at_start(&self) -> bool {
        self.check.unwrap_or(true)
    }
}

/// The table as `config.toml` has it now.
pub fn read() -> Result<UpdatesSection, SettingsError> {
    Ok(crate::read_config(&crate::config_path()?)?.updates)
}

impl ConfigEditor {
    /// Writes `[updates] check`. Turning it back on removes the line (on is the default), and
    /// the table with it when nothing else is left in it.
    pub fn set_update_check(&mut self, check: bool) -> Result<(), SettingsError> {
        let doc = self.doc_mut();
        let table = doc
            .entry("updates")
            .or_insert_with(toml_edit::table)
            .as_table_mut()
            .ok_or_else(|| {
                SettingsError::BadValue("`updates` in the config file is not a table".to_string())
            })?;
        if check {
            table.remove("check");
        } else {
            table.insert("check", toml_edit::value(Value::from(false)));
        }
        if table.is_empty() {
            doc.remove("updates");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn updates_are_looked_for_unless_turned_off() {
        let file = crate::read_config_text("", std::path::Path::new("config.toml")).unwrap();
        assert!(file.updates.check_at_start());
        let file = crate::read_config_text(
            "[updates]\ncheck = false\n",
            std::path::Path::new("config.toml"),
        )
        .unwrap();
        assert!(!file.updates.check_at_start());
    }

    #[test]
    fn turning_checks_off_and_on_again_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "model = \"m\"\n").unwrap();
        let mut editor = ConfigEditor::open(&path).unwrap();
        editor.set_update_check(false).unwrap();
        editor.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "model = \"m\"\n\n[updates]\ncheck = false\n");
        let mut editor = ConfigEditor::open(&path).unwrap();
        editor.set_update_check(true).unwrap();
        editor.save().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "model = \"m\"\n");
    }
}
