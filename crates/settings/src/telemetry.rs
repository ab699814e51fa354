//! The `[telemetry]` table of `config.toml` ([`TelemetrySection`], which the protocol holds so
//! that the telemetry crate takes the same type): where OpenTelemetry traces of every question
//! go. Its fields mean what the standard `OTEL_*` variables of the same names mean (and those
//! variables win over them, in the telemetry crate). Headers often carry an API key, so the
//! app keeps them in the OS keychain ([`HEADERS_KEY`]) rather than in the file; a header
//! written in the file still counts, for machines without a keychain.
//!
//! ```toml
//! [telemetry]
//! endpoint = "http://localhost:4318"   # OTEL_EXPORTER_OTLP_ENDPOINT
//! protocol = "http/protobuf"           # or "http/json", "grpc"
//! capture_content = false              # prompts, arguments and results in spans
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use toml_edit::{Item, Value};
use tooltrail_protocol::TelemetrySection;

use crate::SettingsError;
use crate::edit::ConfigEditor;
use crate::keychain::ProviderKeys;

/// The keychain entry (as a provider id) that holds the OTLP headers, `key=value,key=value`.
pub const HEADERS_KEY: &str = "telemetry:headers";

/// The table as `config.toml` has it now.
pub fn read() -> Result<TelemetrySection, SettingsError> {
    Ok(crate::read_config(&crate::config_path()?)?.telemetry)
}

/// `section` with the keychain's headers after the file's (a keychain that cannot be read
/// leaves the file's alone). Asked only when telemetry is on, since the keychain is slow.
pub fn with_stored_headers(section: TelemetrySection) -> TelemetrySection {
    with_keychain_headers(section, ProviderKeys::os())
}

fn with_keychain_headers(
    mut section: TelemetrySection,
    keys: ProviderKeys<'_>,
) -> TelemetrySection {
    if let Ok(Some(kept)) = keys.get(HEADERS_KEY)
        && !kept.trim().is_empty()
    {
        section.headers = Some(match section.headers.take() {
            Some(file) if !file.trim().is_empty() => format!("{file},{kept}"),
            Some(_) | None => kept,
        });
    }
    section
}

impl ConfigEditor {
    /// Writes the `[telemetry]` table; unset fields are removed, and the table with them when
    /// none is left. Headers are not written here: the app keeps them in the keychain.
    pub fn set_telemetry(&mut self, section: &TelemetrySection) -> Result<(), SettingsError> {
        let table = self
            .doc_mut()
            .entry("telemetry")
            .or_insert_with(toml_edit::table)
            .as_table_mut()
            .ok_or_else(|| {
                SettingsError::BadValue("`telemetry` in the config file is not a table".to_string())
            })?;
        let text = |value: &Option<String>| {
            value
                .as_deref()
                .map(str::trim)
                .filter(|value| !value.is_empty())
                .map(Value::from)
        };
        let fields = [
            ("enabled", section.enabled.map(Value::from)),
            ("endpoint", text(&section.endpoint)),
            ("traces_endpoint", text(&section.traces_endpoint)),
            ("protocol", text(&section.protocol)),
            ("service_name", text(&section.service_name)),
            ("resource_attributes", text(&section.resource_attributes)),
            ("capture_content", section.capture_content.map(Value::from)),
        ];
        for (key, new) in fields {
            match new {
                Some(new) => {
                    table.insert(key, Item::Value(new));
                }
                None => {
                    table.remove(key);
                }
            }
        }
        if table.is_empty() {
            self.doc_mut().remove("telemetry");
        }
        Ok(())
    }
}

/// Counts this process's changes to the stored headers, so that a reader may keep what it read
/// from the (slow) keychain until they change.
static HEADERS_CHANGES: AtomicU64 = AtomicU64::new(0);

/// Keeps the OTLP headers in the keychain (an empty text removes them).
pub fn store_headers(headers: &str) -> Result<(), SettingsError> {
    let stored = if headers.trim().is_empty() {
        ProviderKeys::os().delete(HEADERS_KEY)
    } else {
        ProviderKeys::os().set(HEADERS_KEY, headers.trim())
    };
    HEADERS_CHANGES.fetch_add(1, Ordering::SeqCst);
    stored
}

/// How many times this process has changed the stored headers.
pub fn headers_changes() -> u64 {
    HEADERS_CHANGES.load(Ordering::SeqCst)
}

/// Whether OTLP headers are kept in the keychain (their values are never shown again).
pub fn has_stored_headers() -> bool {
    matches!(ProviderKeys::os().get(HEADERS_KEY), Ok(Some(headers)) if !headers.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tooltrail_keychain::MemorySecrets;

    #[test]
    fn the_table_reads_and_writes_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "model = \"m\"\n").unwrap();
        let section = TelemetrySection {
            endpoint: Some("http://collector:4318".into()),
            protocol: Some("http/json".into()),
            capture_content: Some(true),
            ..TelemetrySection::default()
        };
        let mut editor = ConfigEditor::open(&path).unwrap();
        editor.set_telemetry(&section).unwrap();
        editor.save().unwrap();
        let file = crate::read_config(&path).unwrap();
        assert_eq!(file.telemetry, section);
        assert_eq!(file.model.as_deref(), Some("m"));
        // Nothing set: the table goes.
        let mut editor = ConfigEditor::open(&path).unwrap();
        editor.set_telemetry(&TelemetrySection::default()).unwrap();
        editor.save().unwrap();
        assert!(
            !std::fs::read_to_string(&path)
                .unwrap()
                .contains("telemetry")
        );
    }

    #[test]
    fn keychain_headers_follow_the_files() {
        let keychain = MemorySecrets::default();
        let keys = ProviderKeys::new(&keychain);
        keys.set(HEADERS_KEY, "authorization=Bearer%20k").unwrap();
        let section = TelemetrySection {
            headers: Some("x-team=a".into()),
            ..TelemetrySection::default()
        };
        let merged = with_keychain_headers(section, keys);
        assert_eq!(
            merged.headers.as_deref(),
            Some("x-team=a,authorization=Bearer%20k")
        );
    }
}
