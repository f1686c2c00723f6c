//! Answering every question with every method spec, questions outer, so an
//! interrupted evaluation has compared all specs on the questions it reached
//! rather than some specs on all questions. Each answer goes through
//! [`Library::ask`] exactly as `folio ask` does (stored as a run, with the
//! configured model); a failing question becomes a row and the rest go on.
//! A resumed evaluation keeps that order for the answers it still needs.

use std::collections::HashSet;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::dataset::Question;
use super::error::Result;
use super::results::{ResultsFile, Row};
use super::spec::MethodSpec;
use crate::library::Library;
use crate::methods::runner::AskSettings;
use crate::methods::EventSink;
use crate::store::RunStatus;

/// Where the evaluation is, for progress displays. `step` counts answers
/// from 1 to `total` (questions × specs).
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    Asking {
        step: usize,
        total: usize,
        question: &'a Question,
        spec: &'a MethodSpec,
    },
    Answered {
        step: usize,
        total: usize,
        row: &'a Row,
    },
}

/// The answers an evaluation still needs, in order: every (question, spec)
/// pair without a row from an earlier run.
pub struct Remaining<'a> {
    pub pairs: Vec<(&'a Question, &'a MethodSpec)>,
    /// Answers of the whole evaluation, given or not: questions × specs.
    pub total: usize,
}

impl<'a> Remaining<'a> {
    pub fn new(
        questions: &'a [Question],
        specs: &'a [MethodSpec],
        earlier: &[Row],
    ) -> Remaining<'a> {
        let answered: HashSet<(&str, &str)> = earlier
            .iter()
            .map(|r| (r.question_id.as_str(), r.spec.as_str()))
            .collect();
        let pairs = questions
            .iter()
            .flat_map(|q| specs.iter().map(move |s| (q, s)))
            .filter(|(q, s)| !answered.contains(&(q.id.as_str(), s.to_string().as_str())))
            .collect();
        Remaining {
            pairs,
            total: questions.len() * specs.len(),
        }
    }

    /// Answers earlier runs already gave.
    pub fn done(&self) -> usize {
        self.total - self.pairs.len()
    }
}

pub struct Answered {
    /// This run's rows.
    pub rows: Vec<Row>,
    /// Cancelled before every question was answered; the answer in progress
    /// is not among the rows.
    pub interrupted: bool,
}

/// Gives the remaining answers; progress steps count on from the answers
/// already given.
pub async fn answer_all(
    library: &Library,
    remaining: &Remaining<'_>,
    settings: AskSettings,
    cancel: &CancellationToken,
    results: &mut ResultsFile,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<Answered> {
    let total = remaining.total;
    let mut rows = Vec::with_capacity(remaining.pairs.len());
    for (index, &(question, spec)) in remaining.pairs.iter().enumerate() {
        if cancel.is_cancelled() {
            return Ok(Answered {
                rows,
                interrupted: true,
            });
        }
        let step = remaining.done() + index + 1;
        progress(Progress::Asking {
            step,
            total,
            question,
            spec,
        });
        let request = spec.request(&question.question, settings);
        let started = Instant::now();
        let run = library.ask(&request, &EventSink::default(), cancel).await;
        let wall_ms = started.elapsed().as_millis() as u64;
        let row = match run {
            Ok(run) if run.status == RunStatus::Cancelled => {
                return Ok(Answered {
                    rows,
                    interrupted: true,
                })
            }
            Ok(run) => Row::answered(question, spec, &run, wall_ms),
            Err(e) => Row::failed(question, spec, &e, wall_ms),
        };
        results.append(&row)?;
        progress(Progress::Answered {
            step,
            total,
            row: &row,
        });
        rows.push(row);
    }
    Ok(Answered {
        rows,
        interrupted: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Supporting;

    #[test]
    fn remaining_answers_keep_questions_outer_and_skip_earlier_rows() {
        let questions: Vec<Question> = ["q1", "q2"]
            .iter()
            .map(|id| Question {
                id: id.to_string(),
                question: "Who?".into(),
                answers: vec!["Ann".into()],
                supporting: Supporting::Unknown,
            })
            .collect();
        let specs: Vec<MethodSpec> = ["llm-only", "vanilla-rag"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let error = crate::Error::Task("boom".into());
        let earlier = [
            Row::failed(&questions[0], &specs[0], &error, 1),
            Row::failed(&questions[1], &specs[0], &error, 1),
        ];
        let remaining = Remaining::new(&questions, &specs, &earlier);
        let pairs: Vec<(&str, String)> = remaining
            .pairs
            .iter()
            .map(|(q, s)| (q.id.as_str(), s.to_string()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("q1", "vanilla-rag".to_string()),
                ("q2", "vanilla-rag".to_string())
            ]
        );
        assert_eq!((remaining.done(), remaining.total), (2, 4));
    }
}
