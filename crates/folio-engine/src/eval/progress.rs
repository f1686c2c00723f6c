//! Where an evaluation is, as one stream of typed events: `folio eval`
//! prints them and the app's Evaluate view streams them to the window, so
//! both show the same stages in the order [`super::Evaluation::run`] takes
//! them.

use serde::Serialize;

use super::results::Row;
use folio_core::events::JobProgress;
use folio_index::graph::{BuildProgress, Rubric};
use folio_index::pipeline::PassSummary;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum EvalStage {
    Indexing,
    Preparing,
    Answering,
    Judging,
    Summarizing,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EvalEvent {
    /// Something worth telling: answers reused, a torn line dropped, the
    /// corpus written out, what a graph's scoring covered.
    Notice {
        text: String,
    },
    Stage {
        stage: EvalStage,
    },
    /// The corpus's ingestion job.
    Indexing {
        progress: JobProgress,
    },
    /// The corpus is indexed; all zeros when it was up to date.
    Indexed {
        summary: PassSummary,
    },
    /// iG²RAG's graph is scored over the chunks nearest the questions.
    GraphStarted {
        rubric: Rubric,
        chunks: usize,
    },
    /// Chunks scored of those pending, with the pass's cost so far.
    GraphScoring {
        progress: BuildProgress,
    },
    Answered {
        done: usize,
        total: usize,
        row: Row,
    },
    Judged {
        done: usize,
        total: usize,
    },
}
