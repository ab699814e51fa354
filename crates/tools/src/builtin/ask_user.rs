//! `ask_user(question, choices?)`: asks the person at the other end and returns the answer.
//!
//! The question reaches them through the context's [`UserAsker`](crate::UserAsker): the app's
//! card, a terminal prompt, or answers given ahead (`--user-answer`). A dismissed question, or a
//! run with no one to ask, is an error result the model can act on.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tooltrail_protocol::{ToolError, ToolErrorCode, ToolOutput, ToolSpec};

use crate::args::parse;
use crate::tool::{Gate, Tool, ToolContext};
use crate::user_asker::{NoAnswer, Question};

const NAME: &str = "ask_user";

pub(crate) struct AskUser {
    spec: ToolSpec,
}

#[derive(Deserialize)]
struct Args {
    question: String,
    #[serde(default)]
    choices: Vec<String>,
}

impl AskUser {
    pub(crate) fn new() -> Self {
        Self {
            spec: ToolSpec {
                name: NAME.to_string(),
                description: "Ask the user a question, with choices if there are a few clear \
                    options."
                    .to_string(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "minLength": 1, "maxLength": 2000},
                        "choices": {
                            "type": "array",
                            "items": {"type": "string", "minLength": 1, "maxLength": 200},
                            "maxItems": 9
                        }
                    },
                    "required": ["question"]
                }),
                read_only: true,
            },
        }
    }
}

#[async_trait]
impl Tool for AskUser {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    // Rarely needed: its parameters are told when it is called, not in every request.
    fn described_on_demand(&self) -> bool {
        true
    }

    /// Asking changes nothing, and the user answers (or dismisses) the question itself.
    fn gate(&self, _args: &Value, _ctx: &ToolContext) -> Gate {
        Gate::ReadOnly
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse(NAME, args)?;
        let question = Question {
            call_id: ctx
                .call
                .as_ref()
                .map(|scope| scope.call_id.clone())
                .unwrap_or_default(),
            question: args.question.trim().to_string(),
            choices: args
                .choices
                .iter()
                .map(|choice| choice.trim().to_string())
                .filter(|choice| !choice.is_empty())
                .collect(),
        };
        let Some(asker) = &ctx.user else {
            return Err(no_one(
                "no one can answer questions in this run; answer from what you know or say \
                 what you need",
            ));
        };
        match asker.ask(&question).await {
            Ok(answer) => Ok(ToolOutput::new(
                format!("The user answered: {answer}"),
                json!({"question": question.question, "answer": answer}),
            )),
            Err(NoAnswer::Dismissed) => Err(ToolError::new(
                ToolErrorCode::Denied,
                "the user dismissed the question without answering",
            )),
            Err(NoAnswer::NoOneToAsk(why)) => Err(no_one(&why)),
        }
    }
}

fn no_one(why: &str) -> ToolError {
    ToolError::new(ToolErrorCode::Failed, why)
}
