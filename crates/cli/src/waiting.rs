//! What `ask` says on a terminal while the question waits before the model's first word: the
//! local model starting, and the model server reading a long prompt, with seconds. Nothing
//! is printed where stderr is not a terminal (scripts, `--json` readers), and it goes to
//! stderr, apart from the answer on stdout.

use std::io::Write;

use tooltrail_protocol::LocalModelStatus;

/// A prompt is long enough to say how far its reading got when this many tokens are left to
/// read: less is read in well under a second.
const LONG_PROMPT_TOKENS: u32 = 256;

fn on_terminal() -> bool {
    crate::terminal::stderr_is_terminal()
}

/// The line for a step of the local model's start.
pub fn status_line(status: &LocalModelStatus) -> String {
    match status {
        LocalModelStatus::Starting { model } => format!("· starting the local model {model}…"),
        LocalModelStatus::Warming { .. } => "· preparing the model…".to_string(),
        LocalModelStatus::Ready { seconds, .. } => {
            format!("· the local model is ready ({seconds:.1} s)")
        }
    }
}

/// Prints a step of the local model's start, on a terminal.
pub fn status(status: LocalModelStatus) {
    if on_terminal() {
        errln!("{}", status_line(&status));
    }
}

/// The line for the reading of a prompt, or `None` when it is short or done.
pub fn progress_line(processed: u32, total: u32, cached: u32, elapsed_ms: u64) -> Option<String> {
    if total.saturating_sub(cached) < LONG_PROMPT_TOKENS || processed >= total {
        return None;
    }
    let cache = if cached > 0 {
        format!(" ({cached} from the cache)")
    } else {
        String::new()
    };
    Some(format!(
        "· reading the prompt: {processed} of {total} tokens{cache}, {:.1} s",
        elapsed_ms as f64 / 1000.0
    ))
}

/// Shows how far the prompt's reading got on one line that the next report replaces, and
/// clears it when the reading is done.
pub fn progress(processed: u32, total: u32, cached: u32, elapsed_ms: u64) {
    if !on_terminal() {
        return;
    }
    let mut err = crate::terminal::err();
    // The line is replaced with escape sequences: shown only where they are read.
    if let Ok(true) = err.clear_line()
        && let Some(line) = progress_line(processed, total, cached, elapsed_ms)
    {
        let _ = write!(err, "{line}");
    }
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_said_in_words_and_seconds() {
        let starting = LocalModelStatus::Starting {
            model: "gemma".into(),
        };
        assert_eq!(status_line(&starting), "· starting the local model gemma…");
        let ready = LocalModelStatus::Ready {
            model: "gemma".into(),
            seconds: 1.26,
        };
        assert_eq!(status_line(&ready), "· the local model is ready (1.3 s)");
        assert_eq!(
            progress_line(700, 1200, 300, 2450).as_deref(),
            Some("· reading the prompt: 700 of 1200 tokens (300 from the cache), 2.5 s")
        );
        // A prompt mostly in the cache, or read whole, says nothing.
        assert_eq!(progress_line(1100, 1200, 1100, 90), None);
        assert_eq!(progress_line(1200, 1200, 0, 3000), None);
    }
}
