//! The one way the host tells the person at a terminal about a problem it works around (the
//! history not written, traces not sent, a learned setting not kept).
//!
//! Such a line can carry text from outside (a collector's answer, a model's name, a system
//! error), and stderr may be a terminal: every control character but newline and tab is
//! dropped first, so no text can set the clipboard (`ESC ] 52`) or clear the screen
//! (`ESC [ 2J`). The crate denies `eprintln!` everywhere else.

/// Prints `warning: {message}` on stderr, without any control character from `message`.
#[allow(clippy::print_stderr)]
pub(crate) fn warn(message: &str) {
    eprintln!("warning: {}", printable(message));
}

/// `text` without control characters other than newline and tab.
fn printable(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn attack_terminal_a_warning_carries_no_control_character() {
        let hostile =
            "collector said: \u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[2J\u{9b}31m done\r\nnext\tline";
        assert_eq!(
            printable(hostile),
            "collector said: ]52;c;cm0gLXJmIH4=[2J31m done\nnext\tline"
        );
    }
}
