//! The models tried on a folder's questions, ranked: every replay made in the folder, grouped
//! by the model that answered it, with how closely its calls followed the original's. The
//! window shows the table; `tooltrail replay --table` prints it as Markdown or JSON.

use std::fmt::Write as _;

use serde::Serialize;
use ts_rs::TS;

use crate::error::HostError;
use crate::host::Host;
use crate::replay_compare::ReplayComparison;

/// One model's replays of the folder's questions.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ModelRow {
    pub model: String,
    /// How many replays it answered.
    pub replays: u32,
    /// The mean agreement of its calls with the original's (tool and arguments).
    pub calls_agreement: f64,
    /// The share of its replays whose calls never parted from the original's.
    pub same_calls: f64,
    /// The share of its replays whose answer was the original's.
    pub answer_same: f64,
    /// Its median time from question to end, in ms.
    #[ts(type = "number | null")]
    pub median_ms: Option<u64>,
    /// Tokens in and out, summed.
    #[ts(type = "number")]
    pub tokens_in: u64,
    #[ts(type = "number")]
    pub tokens_out: u64,
    /// Calls not run, errors and loops cut, summed.
    pub calls_not_run: u32,
    pub errors: u32,
    pub loops_cut: u32,
}

/// The rows of `comparisons`, best first: by agreement of calls, then same answers, then time.
pub fn rank(comparisons: &[ReplayComparison]) -> Vec<ModelRow> {
    let mut models: Vec<&str> = comparisons
        .iter()
        .map(|c| c.replay.model.as_str())
        .collect();
    models.sort_unstable();
    models.dedup();
    let mut rows: Vec<ModelRow> = models
        .into_iter()
        .map(|model| {
            row(
                model,
                comparisons.iter().filter(|c| c.replay.model == model),
            )
        })
        .collect();
    rows.sort_by(|a, b| {
        b.calls_agreement
            .total_cmp(&a.calls_agreement)
            .then(b.answer_same.total_cmp(&a.answer_same))
            .then(
                a.median_ms
                    .unwrap_or(u64::MAX)
                    .cmp(&b.median_ms.unwrap_or(u64::MAX)),
            )
    });
    rows
}

fn row<'a>(model: &str, of: impl Iterator<Item = &'a ReplayComparison>) -> ModelRow {
    let of: Vec<&ReplayComparison> = of.collect();
    let n = of.len().max(1) as f64;
    let share =
        |test: fn(&ReplayComparison) -> bool| of.iter().filter(|c| test(c)).count() as f64 / n;
    let mut times: Vec<u64> = of.iter().filter_map(|c| c.replay.total_ms).collect();
    times.sort_unstable();
    ModelRow {
        model: model.to_string(),
        replays: u32::try_from(of.len()).unwrap_or(u32::MAX),
        calls_agreement: of.iter().map(|c| c.calls_agreement).sum::<f64>() / n,
        same_calls: share(|c| c.first_divergence.is_none()),
        answer_same: share(|c| c.answer_same),
        median_ms: times.get(times.len() / 2).copied(),
        tokens_in: of.iter().map(|c| c.replay.tokens_in).sum(),
        tokens_out: of.iter().map(|c| c.replay.tokens_out).sum(),
        calls_not_run: of.iter().map(|c| c.calls_not_run).sum(),
        errors: of.iter().map(|c| c.replay.errors).sum(),
        loops_cut: of.iter().map(|c| c.replay.loops_cut).sum(),
    }
}

/// The table as Markdown.
pub fn markdown(rows: &[ModelRow]) -> String {
    let mut out = String::from(
        "| model | replays | calls agree | same calls | same answer | median time | tokens in / out | not run | errors | loops cut |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for row in rows {
        let time = row.median_ms.map_or_else(
            || "–".to_string(),
            |ms| format!("{:.1} s", ms as f64 / 1000.0),
        );
        let _ = writeln!(
            out,
            "| {} | {} | {:.2} | {:.0} % | {:.0} % | {time} | {} / {} | {} | {} | {} |",
            row.model.replace('|', "\\|"),
            row.replays,
            row.calls_agreement,
            row.same_calls * 100.0,
            row.answer_same * 100.0,
            row.tokens_in,
            row.tokens_out,
            row.calls_not_run,
            row.errors,
            row.loops_cut
        );
    }
    out
}

impl Host {
    /// Every replay of a question asked in `workspace` (every folder when `None`), set beside
    /// its original; a replay whose original was deleted is left out.
    pub fn replay_comparisons(
        &self,
        workspace: Option<&str>,
    ) -> Result<Vec<ReplayComparison>, HostError> {
        let pairs = self.store().replays(workspace)?;
        Ok(pairs
            .iter()
            .filter_map(|pair| self.replay_comparison(&pair.turn_id).ok().flatten())
            .collect())
    }

    /// The models tried on `workspace`'s questions, ranked (see [`rank`]).
    pub fn replay_table(&self, workspace: Option<&str>) -> Result<Vec<ModelRow>, HostError> {
        Ok(rank(&self.replay_comparisons(workspace)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay_compare::{ComparedCall, TurnFigures};
    use serde_json::json;
    use tooltrail_protocol::ToolStatus;

    fn turn(model: &str, tools: &[&str], answer: &str, total_ms: u64) -> TurnFigures {
        TurnFigures {
            turn_id: format!("turn_{model}"),
            conversation_id: "conv".into(),
            model: model.into(),
            workspace: "/w".into(),
            question: "q".into(),
            answer: answer.into(),
            end: None,
            total_ms: Some(total_ms),
            first_reply_ms: None,
            tokens_in: 10,
            tokens_out: 2,
            errors: 0,
            loops_cut: 0,
            calls: tools
                .iter()
                .map(|tool| ComparedCall {
                    call_id: "c".into(),
                    tool: (*tool).into(),
                    arguments: json!({}),
                    status: ToolStatus::Success,
                    from_record: false,
                    not_run: false,
                    ended_ms: 10,
                    duration_ms: 5,
                })
                .collect(),
            replay_of: None,
            before: Vec::new(),
            started_ms: 0,
        }
    }

    #[test]
    fn the_model_whose_calls_follow_the_original_ranks_first() {
        let original = turn("big", &["list_dir", "read_file"], "Three.", 9_000);
        let close = ReplayComparison::of(
            original.clone(),
            turn("close", &["list_dir", "read_file"], "three.", 4_000),
        );
        let far = ReplayComparison::of(
            original.clone(),
            turn("far", &["search_text"], "No idea", 1_000),
        );
        let rows = rank(&[far, close]);
        assert_eq!(rows[0].model, "close");
        assert!((rows[0].calls_agreement - 1.0).abs() < f64::EPSILON);
        assert!((rows[0].answer_same - 1.0).abs() < f64::EPSILON);
        assert_eq!(rows[1].model, "far");
        assert!(rows[1].calls_agreement.abs() < f64::EPSILON);
        let table = markdown(&rows);
        assert!(
            table.contains("| close | 1 | 1.00 | 100 % | 100 % | 4.0 s | 10 / 2 | 0 | 0 | 0 |"),
            "{table}"
        );
    }
}
