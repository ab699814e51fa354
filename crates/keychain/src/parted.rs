//! A secret longer than one keychain entry may hold, kept in parts. Windows' Credential Manager
//! holds at most 2,560 bytes an entry, which `keyring` fills with UTF-16: 1,280 units, less
//! than an MCP sign-in's record (a client, an access token and a refresh token) often takes.
//!
//! A secret that fits is kept as it is, so what other systems keep is unchanged. One that does
//! not is written in parts first, under names of a new generation, and then the entry itself is
//! replaced by a header naming them: a process stopped halfway leaves the old secret readable
//! (and at worst parts nobody names). The old generation's parts go last.

use crate::{KeychainError, SecretStore};

/// What a header begins with. A secret that happens to begin so is kept in parts too, so that a
/// value read back is never mistaken for one.
const HEADER: &str = "tooltrail-parts:";

/// How many UTF-16 units one entry holds on this system; `None` where there is no limit worth
/// splitting for.
pub(crate) fn platform_limit() -> Option<usize> {
    cfg!(windows).then_some(1280)
}

/// `raw`, with secrets longer than `max_units` UTF-16 units kept in parts.
pub(crate) struct Parted<'a> {
    pub raw: &'a dyn SecretStore,
    pub max_units: Option<usize>,
}

impl Parted<'_> {
    fn part_name(account: &str, generation: u64, index: usize) -> String {
        format!("{account}#{generation}.{index}")
    }

    /// The generation and part count a header names; `None` for a secret kept whole.
    fn header(text: &str) -> Option<(u64, usize)> {
        let (generation, count) = text.strip_prefix(HEADER)?.split_once(':')?;
        Some((generation.parse().ok()?, count.parse().ok()?))
    }

    fn delete_parts(&self, account: &str, generation: u64, count: usize) {
        for index in 0..count {
            // A part left behind holds no more than the entry named it to: nothing to undo.
            let _ = self
                .raw
                .delete(&Self::part_name(account, generation, index));
        }
    }
}

/// `secret` cut into pieces of at most `max_units` UTF-16 units, never inside a character.
fn split(secret: &str, max_units: usize) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut units) = (0, 0);
    for (at, ch) in secret.char_indices() {
        if units > 0 && units + ch.len_utf16() > max_units {
            parts.push(&secret[start..at]);
            (start, units) = (at, 0);
        }
        units += ch.len_utf16();
    }
    parts.push(&secret[start..]);
    parts
}

impl SecretStore for Parted<'_> {
    fn get(&self, account: &str) -> Result<Option<String>, KeychainError> {
        let Some(text) = self.raw.get(account)? else {
            return Ok(None);
        };
        let Some((generation, count)) = Self::header(&text) else {
            return Ok(Some(text));
        };
        let mut secret = String::new();
        for index in 0..count {
            match self.raw.get(&Self::part_name(account, generation, index))? {
                Some(part) => secret.push_str(&part),
                None => {
                    return Err(KeychainError::Failed(format!(
                        "part {} of {count} of the entry is missing",
                        index + 1
                    )));
                }
            }
        }
        Ok(Some(secret))
    }

    fn set(&self, account: &str, secret: &str) -> Result<(), KeychainError> {
        let old = self.raw.get(account)?.as_deref().and_then(Self::header);
        let fits = self
            .max_units
            .is_none_or(|max| secret.encode_utf16().count() <= max);
        if fits && !secret.starts_with(HEADER) {
            self.raw.set(account, secret)?;
        } else {
            let max_units = self.max_units.unwrap_or(usize::MAX).max(1);
            let generation = old.map_or(0, |(generation, _)| generation.wrapping_add(1));
            let parts = split(secret, max_units);
            for (index, part) in parts.iter().enumerate() {
                self.raw
                    .set(&Self::part_name(account, generation, index), part)?;
            }
            self.raw
                .set(account, &format!("{HEADER}{generation}:{}", parts.len()))?;
        }
        if let Some((generation, count)) = old {
            self.delete_parts(account, generation, count);
        }
        Ok(())
    }

    fn delete(&self, account: &str) -> Result<(), KeychainError> {
        let old = self.raw.get(account)?.as_deref().and_then(Self::header);
        self.raw.delete(account)?;
        if let Some((generation, count)) = old {
            self.delete_parts(account, generation, count);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::MemorySecrets;

    /// A store that refuses what Windows' Credential Manager refuses: more than `max` UTF-16
    /// units an entry.
    struct Limited {
        inner: MemorySecrets,
        max: usize,
    }

    impl SecretStore for Limited {
        fn get(&self, account: &str) -> Result<Option<String>, KeychainError> {
            self.inner.get(account)
        }
        fn set(&self, account: &str, secret: &str) -> Result<(), KeychainError> {
            if secret.encode_utf16().count() > self.max {
                return Err(KeychainError::Failed("too long".into()));
            }
            self.inner.set(account, secret)
        }
        fn delete(&self, account: &str) -> Result<(), KeychainError> {
            self.inner.delete(account)
        }
    }

    fn limited(max: usize) -> Limited {
        Limited {
            inner: MemorySecrets::default(),
            max,
        }
    }

    #[test]
    fn a_secret_longer_than_an_entry_holds_is_kept_and_read_back_whole() {
        let raw = limited(1280);
        let store = Parted {
            raw: &raw,
            max_units: Some(1280),
        };
        // A sign-in's record with two long tokens, and characters of two UTF-16 units each.
        let record = format!(
            "{{\"access\":\"{}\",\"refresh\":\"{}\",\"who\":\"😀é\"}}",
            "a".repeat(2000),
            "r😀".repeat(700)
        );
        assert!(raw.set("mcp-oauth:x", &record).is_err());
        store.set("mcp-oauth:x", &record).unwrap();
        assert_eq!(store.get("mcp-oauth:x").unwrap().as_deref(), Some(&*record));

        // Replaced by a shorter one, then by a long one again: each read is the last written,
        // and no part of an older one is left behind.
        store.set("mcp-oauth:x", "short").unwrap();
        assert_eq!(store.get("mcp-oauth:x").unwrap().as_deref(), Some("short"));
        assert_eq!(
            raw.inner.get("mcp-oauth:x").unwrap().as_deref(),
            Some("short")
        );
        store.set("mcp-oauth:x", &record).unwrap();
        store.set("mcp-oauth:x", &record.replace('a', "b")).unwrap();
        assert_eq!(
            store.get("mcp-oauth:x").unwrap(),
            Some(record.replace('a', "b"))
        );
        store.delete("mcp-oauth:x").unwrap();
        assert_eq!(store.get("mcp-oauth:x").unwrap(), None);
        for generation in 0..3 {
            for index in 0..4 {
                let name = Parted::part_name("mcp-oauth:x", generation, index);
                assert_eq!(raw.inner.get(&name).unwrap(), None, "{name}");
            }
        }
    }

    #[test]
    fn a_secret_that_fits_or_a_system_without_a_limit_keeps_one_entry() {
        let raw = MemorySecrets::default();
        for max_units in [Some(1280), None] {
            let store = Parted {
                raw: &raw,
                max_units,
            };
            let secret = "k".repeat(if max_units.is_some() { 1280 } else { 5000 });
            store.set("provider:p", &secret).unwrap();
            assert_eq!(raw.get("provider:p").unwrap(), Some(secret.clone()));
            assert_eq!(store.get("provider:p").unwrap(), Some(secret));
        }
        // A secret that looks like a header is kept in parts, so it is read back as it was.
        let store = Parted {
            raw: &raw,
            max_units: None,
        };
        store.set("provider:p", "tooltrail-parts:0:9").unwrap();
        assert_eq!(
            store.get("provider:p").unwrap().as_deref(),
            Some("tooltrail-parts:0:9")
        );
    }

    #[test]
    fn parts_are_cut_between_characters() {
        assert_eq!(split("ab😀c", 2), ["ab", "😀", "c"]);
        assert_eq!(split("", 3), [""]);
        assert_eq!(split("😀", 1), ["😀"]);
    }
}
