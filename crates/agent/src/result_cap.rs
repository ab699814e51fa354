//! Capping tool results before they go to the model. The full result stays in the events (and
//! so in the audit log); the model gets the head and a marker that says how much was cut.

/// Returns the text to send and whether it was cut.
pub fn cap_for_model(text: &str, max_bytes: usize) -> (String, bool) {
    if text.len() <= max_bytes {
        return (text.to_string(), false);
    }
    let mut end = max_bytes;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    // Prefer to cut at a line break so the model never sees half a line.
    if let Some(newline) = text[..end].rfind('\n')
        && newline > end / 2
    {
        end = newline + 1;
    }
    let capped = format!(
        "{}\n[output cut: showing {} of {} bytes. Ask for less (a narrower pattern, an offset and limit) to see the rest.]",
        &text[..end],
        end,
        text.len()
    );
    (capped, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn short_text_is_untouched() {
        assert_eq!(cap_for_model("abc", 10), ("abc".to_string(), false));
    }

    #[test]
    fn long_text_is_cut_at_a_line_with_a_marker() {
        let text = "line one\nline two\nline three\n";
        let (capped, cut) = cap_for_model(text, 20);
        assert!(cut);
        assert_eq!(
            capped,
            "line one\nline two\n\n[output cut: showing 18 of 29 bytes. Ask for less (a narrower pattern, an offset and limit) to see the rest.]"
        );
    }

    #[test]
    fn never_splits_a_character() {
        let text = "好".repeat(100);
        let (capped, cut) = cap_for_model(&text, 10);
        assert!(cut);
        assert!(capped.starts_with("好好好\n[output cut: showing 9 of 300 bytes."));
    }
}
