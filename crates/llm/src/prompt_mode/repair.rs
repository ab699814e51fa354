//! Light repair of the arguments a model wrote in a `<tool_use>` block.
//!
//! Only repairs that cannot change what valid JSON means: a Markdown code fence around the
//! object (models fence JSON out of habit) and commas before a closing `}` or `]` (outside
//! strings). Arguments that already parse are kept byte for byte. Anything else is left as
//! written, so that running the call tells the model what is wrong with it, quoting the
//! parser's error, rather than guessing what it meant.

/// The arguments to use for `raw`, the text between `<arguments>` and `</arguments>`:
/// `{}` when empty, the text itself when it parses, a repaired text when a safe repair makes
/// it parse, and otherwise the trimmed text unchanged.
pub(crate) fn repair_arguments(raw: &str) -> String {
    let text = raw.trim();
    if text.is_empty() {
        return "{}".to_string();
    }
    if parses(text) {
        return text.to_string();
    }
    let unfenced = strip_fence(text).unwrap_or(text);
    if unfenced.is_empty() {
        return "{}".to_string();
    }
    if parses(unfenced) {
        return unfenced.to_string();
    }
    let without_commas = drop_trailing_commas(unfenced);
    if parses(&without_commas) {
        return without_commas;
    }
    unfenced.to_string()
}

/// Whether `text` is one JSON value.
pub(crate) fn parses(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// The inside of a fenced block that is the whole text: "```json\n{...}\n```" or "~~~ ... ~~~",
/// trimmed. `None` when the text is not one fenced block.
fn strip_fence(text: &str) -> Option<&str> {
    let marker = ["```", "~~~"]
        .into_iter()
        .find(|marker| text.starts_with(marker))?;
    let body = text.strip_prefix(marker)?;
    // The info string (`json`, say) runs to the end of the opening line; a fence written on
    // one line ("```{...}```") has none.
    let body = match body.find('\n') {
        Some(newline) if body[..newline].trim().chars().all(char::is_alphanumeric) => {
            &body[newline + 1..]
        }
        _ => body.trim_start_matches(char::is_alphabetic),
    };
    let body = body.trim_end();
    let body = body.strip_suffix(marker).unwrap_or(body);
    Some(body.trim())
}

/// `text` without the commas that stand right before a closing `}` or `]` (spaces between
/// allowed), leaving strings untouched.
fn drop_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            ',' => {
                let next = text[at + 1..].trim_start().chars().next();
                if !matches!(next, Some('}' | ']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;
    use serde_json::Value;

    use crate::prompt_mode::test_strategies::{json_value, proptest_config};

    #[test]
    fn valid_arguments_are_kept_byte_for_byte() {
        assert_eq!(
            repair_arguments(" {\"path\": \"a\" } \n"),
            "{\"path\": \"a\" }"
        );
        assert_eq!(repair_arguments(""), "{}");
        assert_eq!(repair_arguments(" \n "), "{}");
    }

    #[test]
    fn fences_are_removed() {
        assert_eq!(
            repair_arguments("```json\n{\"path\": \"a\"}\n```"),
            "{\"path\": \"a\"}"
        );
        assert_eq!(repair_arguments("```\n{\"a\": 1}\n```"), "{\"a\": 1}");
        assert_eq!(repair_arguments("~~~\n{\"a\": 1}\n~~~"), "{\"a\": 1}");
        assert_eq!(repair_arguments("```{\"a\": 1}```"), "{\"a\": 1}");
        assert_eq!(repair_arguments("```json {\"a\": 1}```"), "{\"a\": 1}");
    }

    #[test]
    fn trailing_commas_are_removed_outside_strings() {
        assert_eq!(
            repair_arguments("{\"a\": [1, 2,], \"b\": \",}\",\n}"),
            "{\"a\": [1, 2], \"b\": \",}\"\n}"
        );
        assert_eq!(repair_arguments("```json\n{\"a\": 1,}\n```"), "{\"a\": 1}");
    }

    #[test]
    fn what_cannot_be_repaired_safely_is_left_for_the_tool_to_report() {
        assert_eq!(repair_arguments("{path: 'a'}"), "{path: 'a'}");
        assert_eq!(repair_arguments("{\"a\": 1"), "{\"a\": 1");
        assert_eq!(repair_arguments("```json\n{\"a\": \n```"), "{\"a\":");
    }

    /// Adds a comma after the last item of every non-empty array and object.
    fn with_trailing_commas(value: &Value, out: &mut String) {
        match value {
            Value::Array(items) if !items.is_empty() => {
                out.push('[');
                for item in items {
                    with_trailing_commas(item, out);
                    out.push_str(", ");
                }
                out.push(']');
            }
            Value::Object(fields) if !fields.is_empty() => {
                out.push('{');
                for (key, item) in fields {
                    out.push_str(&Value::String(key.clone()).to_string());
                    out.push(':');
                    with_trailing_commas(item, out);
                    out.push_str(",\n");
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }

    proptest! {
        #![proptest_config(proptest_config())]

        #[test]
        fn prop_repair_keeps_valid_json(value in json_value(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                value.to_string()
            };
            prop_assert_eq!(repair_arguments(&format!(" {text}\n")), text);
        }

        #[test]
        fn prop_repair_undoes_fences_and_trailing_commas(
            value in json_value(),
            fence in prop::sample::select(vec!["", "```", "```json", "~~~"]),
            commas in any::<bool>(),
        ) {
            let mut text = String::new();
            if commas {
                with_trailing_commas(&value, &mut text);
            } else {
                text = value.to_string();
            }
            let wrapped = if fence.is_empty() {
                text
            } else {
                let close = &fence[..3];
                format!("{fence}\n{text}\n{close}")
            };
            let repaired = repair_arguments(&wrapped);
            let parsed: Value = serde_json::from_str(&repaired).unwrap();
            prop_assert_eq!(parsed, value);
        }

        #[test]
        fn prop_repair_never_panics_and_keeps_parsing_text(text in "\\PC{0,60}") {
            let repaired = repair_arguments(&text);
            if parses(text.trim()) {
                prop_assert_eq!(repaired, text.trim());
            }
        }
    }
}
