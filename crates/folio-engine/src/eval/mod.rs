//! `folio eval`: answer a dataset's questions with several method specs over
//! a corpus indexed by the normal pipeline, score the answers (EM, F1,
//! Cover-EM, retrieval recall) and summarise quality, failures, model usage
//! and time per spec.
//! Everything an evaluation makes lives under one output folder ([`OutDir`]),
//! so re-running it reuses the index, goes on where an interrupted run
//! stopped ([`manifest`]), and results can be compared later.

pub mod attribution;
pub mod corpus;
pub mod dataset;
pub mod diff;
mod error;
mod evaluation;
pub mod graph;
pub mod job;
pub mod judge;
pub mod manifest;
pub mod metrics;
mod progress;
pub mod report;
pub mod results;
pub mod run;
pub mod spec;
pub mod summary;
#[cfg(test)]
mod testing;

use std::path::{Path, PathBuf};

pub use corpus::{PassageTitles, PreparedCorpus, WrittenCorpus};
pub use dataset::{Question, Supporting};
pub use error::{EvalError, Result};
pub use evaluation::{EvalRequest, Evaluation};
pub use graph::GraphScope;
pub use manifest::Manifest;
pub use progress::{EvalEvent, EvalStage};
pub use results::{Opened, ResultsFile, Row};
pub use run::{answer_all, AnswerStep, Answered, Batch, Remaining};
pub use spec::MethodSpec;
pub use summary::{SpecSummary, Summary};

/// The layout of an evaluation's output folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutDir(PathBuf);

impl OutDir {
    pub fn create(root: &Path) -> Result<OutDir> {
        std::fs::create_dir_all(root).map_err(|source| EvalError::Write {
            path: root.to_path_buf(),
            source,
        })?;
        Ok(OutDir(root.to_path_buf()))
    }

    pub fn root(&self) -> &Path {
        &self.0
    }

    /// A JSONL corpus's passages, one markdown file each.
    pub fn passages(&self) -> PathBuf {
        self.0.join("corpus")
    }

    /// The evaluation's own library's data directory: its chunks never mix
    /// with the user's index, where only its job's row lives.
    pub fn index(&self) -> PathBuf {
        self.0.join("index")
    }

    /// What the results answer: see [`Manifest`].
    pub fn manifest(&self) -> PathBuf {
        self.0.join("eval.json")
    }

    pub fn results(&self) -> PathBuf {
        self.0.join("results.jsonl")
    }

    /// The LLM judge's verdicts, when one was asked for.
    pub fn judgements(&self) -> PathBuf {
        self.0.join("judgements.jsonl")
    }

    pub fn summary_json(&self) -> PathBuf {
        self.0.join("summary.json")
    }

    pub fn summary_md(&self) -> PathBuf {
        self.0.join("summary.md")
    }
}
