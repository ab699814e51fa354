//! Answering `ask_user` from the command line: answers given ahead with `--user-answer`, used
//! in order, then a prompt on the terminal when there is one; otherwise the model is told that
//! no one can answer.

use std::collections::VecDeque;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Mutex;

use async_trait::async_trait;
use tooltrail_host::{NoAnswer, Question, UserAsker};

pub struct CommandLineAsker {
    given: Mutex<VecDeque<String>>,
    terminal: bool,
}

impl CommandLineAsker {
    /// `given`: the `--user-answer` values. The terminal is asked only when stdin and stderr
    /// are one and nothing else reads stdin (`json`: a program reads the output).
    pub fn new(given: Vec<String>, json: bool) -> Self {
        Self {
            given: Mutex::new(given.into()),
            terminal: !json
                && std::io::stdin().is_terminal()
                && crate::terminal::stderr_is_terminal(),
        }
    }
}

#[async_trait]
impl UserAsker for CommandLineAsker {
    async fn ask(&self, question: &Question) -> Result<String, NoAnswer> {
        let next = match self.given.lock() {
            Ok(mut given) => given.pop_front(),
            Err(poisoned) => poisoned.into_inner().pop_front(),
        };
        if let Some(answer) = next {
            errln!(
                "\n? {}\n  answered from --user-answer: {answer}",
                question.question
            );
            return Ok(answer);
        }
        if !self.terminal {
            return Err(NoAnswer::NoOneToAsk(
                "no one can answer questions in this run (it has no terminal and no more \
                 --user-answer values); answer from what you know or say what you need"
                    .to_string(),
            ));
        }
        let question = question.clone();
        tokio::task::spawn_blocking(move || prompt(&question))
            .await
            .unwrap_or(Err(NoAnswer::Dismissed))
    }
}

/// Asks on stderr, reads stdin. A number picks a choice; an empty line or end of input
/// dismisses the question.
fn prompt(question: &Question) -> Result<String, NoAnswer> {
    let mut err = crate::terminal::err();
    let _ = writeln!(err, "\n? {}", question.question);
    for (n, choice) in question.choices.iter().enumerate() {
        let _ = writeln!(err, "  [{}] {choice}", n + 1);
    }
    let hint = if question.choices.is_empty() {
        "your answer (empty to dismiss) > "
    } else {
        "a number or your own answer (empty to dismiss) > "
    };
    let _ = write!(err, "  {hint}");
    let _ = err.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => return Err(NoAnswer::Dismissed),
        Ok(_) => {}
    }
    Ok(pick(line.trim(), &question.choices)?.to_string())
}

/// The answer a line gives: a choice by its number, or the text itself.
fn pick<'a>(line: &'a str, choices: &'a [String]) -> Result<&'a str, NoAnswer> {
    if line.is_empty() {
        return Err(NoAnswer::Dismissed);
    }
    match line.parse::<usize>() {
        Ok(n) if (1..=choices.len()).contains(&n) => Ok(&choices[n - 1]),
        _ => Ok(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_picks_a_choice_and_other_text_is_the_answer() {
        let choices = vec!["main".to_string(), "dev".to_string()];
        assert_eq!(pick("2", &choices), Ok("dev"));
        assert_eq!(pick("3", &choices), Ok("3"));
        assert_eq!(pick("release", &choices), Ok("release"));
        assert_eq!(pick("", &choices), Err(NoAnswer::Dismissed));
    }

    #[tokio::test]
    async fn given_answers_are_used_in_order_then_no_one_answers() {
        let asker = CommandLineAsker {
            given: Mutex::new(vec!["yes".to_string()].into()),
            terminal: false,
        };
        let question = Question {
            call_id: "c".into(),
            question: "Go on?".into(),
            choices: vec![],
        };
        assert_eq!(asker.ask(&question).await, Ok("yes".to_string()));
        assert!(matches!(
            asker.ask(&question).await,
            Err(NoAnswer::NoOneToAsk(_))
        ));
    }
}
