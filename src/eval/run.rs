//! Answering every question with every method spec, questions outer, so an
//! interrupted evaluation has compared all specs on the questions it reached
//! rather than some specs on all questions. Each answer goes through
//! [`Library::ask`] exactly as `folio ask` does (stored as a run, with the
//! configured model); a failing question becomes a row and the rest go on.
//! A resumed evaluation keeps that order for the answers it still needs.
//! With a concurrency above 1, that many answers are in flight at once
//! (a server answering several requests in parallel gains from it; the
//! embedded model serves one at a time), and rows are written as they finish.

use std::collections::HashSet;
use std::time::Instant;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::dataset::Question;
use super::error::Result;
use super::results::{ResultsFile, Row};
use super::spec::MethodSpec;
use crate::library::Library;
use crate::methods::runner::AskSettings;
use crate::methods::EventSink;
use crate::store::RunStatus;

/// Where the answering is, for progress displays. `done` counts answers
/// given, earlier runs' included, out of `total` (questions × specs).
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    Asking {
        question: &'a Question,
        spec: &'a MethodSpec,
    },
    Answered {
        done: usize,
        total: usize,
        row: &'a Row,
    },
}

/// The answers an evaluation still needs, in order: every (question, spec)
/// pair without a row from an earlier run, as indices into the two lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remaining {
    pub pairs: Vec<(usize, usize)>,
    /// Answers of the whole evaluation, given or not: questions × specs.
    pub total: usize,
}

impl Remaining {
    pub fn new(questions: &[Question], specs: &[MethodSpec], earlier: &[Row]) -> Remaining {
        let answered: HashSet<(&str, &str)> = earlier
            .iter()
            .map(|r| (r.question_id.as_str(), r.spec.as_str()))
            .collect();
        let spec_texts: Vec<String> = specs.iter().map(ToString::to_string).collect();
        let pairs = (0..questions.len())
            .flat_map(|q| (0..specs.len()).map(move |s| (q, s)))
            .filter(|&(q, s)| {
                !answered.contains(&(questions[q].id.as_str(), spec_texts[s].as_str()))
            })
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
    /// This run's rows, in the order they finished.
    pub rows: Vec<Row>,
    /// Cancelled before every question was answered; answers in progress
    /// are not among the rows.
    pub interrupted: bool,
}

/// What to answer and how.
pub struct Batch<'a> {
    pub questions: &'a [Question],
    pub specs: &'a [MethodSpec],
    pub remaining: &'a Remaining,
    pub settings: AskSettings,
    /// Answers in flight at once; at least 1.
    pub concurrency: usize,
}

/// Gives the remaining answers, each row written to `results` as it comes.
pub async fn answer_all(
    library: &Library,
    batch: Batch<'_>,
    cancel: &CancellationToken,
    results: &mut ResultsFile,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Result<Answered> {
    let Batch {
        questions,
        specs,
        remaining,
        settings,
        concurrency,
    } = batch;
    let answer = |&(q, s): &(usize, usize)| {
        let (question, spec) = (&questions[q], &specs[s]);
        async move {
            if cancel.is_cancelled() {
                return None;
            }
            progress(Progress::Asking { question, spec });
            let request = spec.request(&question.question, settings);
            let started = Instant::now();
            let run = library.ask(&request, &EventSink::default(), cancel).await;
            let wall_ms = started.elapsed().as_millis() as u64;
            match run {
                Ok(run) if run.status == RunStatus::Cancelled => None,
                Ok(run) => Some(Row::answered(question, spec, &run, wall_ms)),
                Err(e) => Some(Row::failed(question, spec, &e, wall_ms)),
            }
        }
    };
    let mut answers = futures::stream::iter(&remaining.pairs)
        .map(answer)
        .buffer_unordered(concurrency.max(1));
    let mut rows = Vec::with_capacity(remaining.pairs.len());
    let mut interrupted = false;
    while let Some(row) = answers.next().await {
        let Some(row) = row else {
            interrupted = true;
            continue;
        };
        results.append(&row)?;
        progress(Progress::Answered {
            done: remaining.done() + rows.len() + 1,
            total: remaining.total,
            row: &row,
        });
        rows.push(row);
    }
    Ok(Answered { rows, interrupted })
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
        assert_eq!(
            remaining.pairs,
            [(0, 1), (1, 1)],
            "vanilla-rag for q1, then q2"
        );
        assert_eq!((remaining.done(), remaining.total), (2, 4));
    }
}
