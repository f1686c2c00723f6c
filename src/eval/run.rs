//! Answering every question with every method spec, questions outer, so an
//! interrupted evaluation has compared all specs on the questions it reached
//! rather than some specs on all questions. Each answer goes through
//! [`Library::ask`] exactly as `folio ask` does (stored as a run, with the
//! configured model); a failing question becomes a row and the rest go on.

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::dataset::Question;
use super::error::Result;
use super::results::{ResultsFile, Row};
use super::spec::{AskSettings, MethodSpec};
use crate::library::Library;
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

pub struct Answered {
    pub rows: Vec<Row>,
    /// Cancelled before every question was answered; the answer in progress
    /// is not among the rows.
    pub interrupted: bool,
}

pub async fn answer_all(
    library: &Library,
    questions: &[Question],
    specs: &[MethodSpec],
    settings: AskSettings,
    cancel: &CancellationToken,
    results: &mut ResultsFile,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<Answered> {
    let total = questions.len() * specs.len();
    let mut rows = Vec::with_capacity(total);
    let pairs = questions
        .iter()
        .flat_map(|q| specs.iter().map(move |s| (q, s)));
    for (index, (question, spec)) in pairs.enumerate() {
        if cancel.is_cancelled() {
            return Ok(Answered {
                rows,
                interrupted: true,
            });
        }
        let step = index + 1;
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
