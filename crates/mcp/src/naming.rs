//! Names the model sees: `server__tool`, made of what OpenAI accepts (`^[a-zA-Z0-9_-]{1,64}$`),
//! unique across every server and every other tool.

use std::collections::BTreeSet;

/// The longest function name OpenAI accepts.
pub const MAX_NAME_LEN: usize = 64;

/// Replaces every character outside `[a-zA-Z0-9_-]` with `_` (so `file.read` is `file_read`).
pub fn sanitise(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "_".to_string()
    } else {
        cleaned
    }
}

/// Hands out unique model-facing names. Feed it tools in a stable order (servers by name, each
/// server's tools in its own order) and the same tools get the same names every time.
#[derive(Debug, Default)]
pub struct Namer {
    taken: BTreeSet<String>,
}

impl Namer {
    /// A namer that avoids `taken` (the built-in tools, for one).
    pub fn new<'a>(taken: impl IntoIterator<Item = &'a str>) -> Self {
        Self {
            taken: taken.into_iter().map(str::to_string).collect(),
        }
    }

    /// `server__tool`, shortened to fit, with `_2`, `_3`, ... added when the name is taken.
    pub fn name(&mut self, server: &str, tool: &str) -> String {
        let base = format!("{}__{}", sanitise(server), sanitise(tool));
        let mut candidate = truncate(&base, MAX_NAME_LEN);
        let mut n = 2;
        while self.taken.contains(&candidate) {
            let suffix = format!("_{n}");
            candidate = format!("{}{suffix}", truncate(&base, MAX_NAME_LEN - suffix.len()));
            n += 1;
        }
        self.taken.insert(candidate.clone());
        candidate
    }
}

/// The first `max` bytes; the text is ASCII after [`sanitise`].
fn truncate(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn names_are_sanitised_and_unique() {
        let mut namer = Namer::new(["fs__read"]);
        assert_eq!(namer.name("fs", "read"), "fs__read_2");
        assert_eq!(namer.name("fs", "read"), "fs__read_3");
        assert_eq!(
            namer.name("my server", "get.thing/ü"),
            "my_server__get_thing__"
        );
        assert_eq!(
            namer.name("my.server", "get_thing__"),
            "my_server__get_thing___2"
        );
        assert_eq!(sanitise(""), "_");
    }

    #[test]
    fn long_names_are_cut_to_64_and_stay_unique() {
        let mut namer = Namer::new([]);
        let tool = "t".repeat(100);
        let first = namer.name("server", &tool);
        let second = namer.name("server", &tool);
        assert_eq!(first.len(), MAX_NAME_LEN);
        assert_eq!(second.len(), MAX_NAME_LEN);
        assert!(second.ends_with("_2"), "{second}");
        assert_ne!(first, second);
        let valid = |name: &str| {
            !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        assert!(valid(&first) && valid(&second));
    }
}
