//! One row per question and method spec, appended to `results.jsonl` the
//! moment it is known, so a crash or Ctrl-C keeps every answer already
//! paid for. Rows hold what later tools need without opening the index:
//! the answer, the scores, the model usage and the run to look up for more.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::dataset::Question;
use super::error::{EvalError, Result};
use super::metrics::{score, Scores};
use super::spec::MethodSpec;
use crate::store::{RunRecord, RunStatus};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub question_id: String,
    pub spec: String,
    pub status: RunStatus,
    pub answer: Option<String>,
    pub error: Option<String>,
    /// Only a finished run is scored: a failed one scores 0 even when it
    /// left a partial answer (text cut off at `max_tokens`), so a method
    /// cannot gain from failing.
    #[serde(flatten)]
    pub scores: Scores,
    pub llm_calls: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    /// The whole question as the harness saw it: retrieval, every model
    /// call and storing the run.
    pub wall_ms: u64,
    /// `None` when the request failed before a run was recorded.
    pub run_id: Option<i64>,
    /// The files of the passages the method retrieved, each once, in the
    /// order its trace lists them; empty for methods that retrieve nothing.
    pub sources: Vec<String>,
}

impl Row {
    pub fn answered(question: &Question, spec: &MethodSpec, run: &RunRecord, wall_ms: u64) -> Row {
        let scores = match (&run.status, &run.answer) {
            (RunStatus::Done, Some(answer)) => score(answer, &question.answers),
            _ => Scores::default(),
        };
        Row {
            question_id: question.id.clone(),
            spec: spec.to_string(),
            status: run.status,
            answer: run.answer.clone(),
            error: run.error.clone(),
            scores,
            llm_calls: run.llm_calls,
            prompt_tokens: run.prompt_tokens,
            completion_tokens: run.completion_tokens,
            wall_ms,
            run_id: Some(run.id),
            sources: run.trace.as_ref().map(sources).unwrap_or_default(),
        }
    }

    /// A request the runner refused or could not record.
    pub fn failed(
        question: &Question,
        spec: &MethodSpec,
        error: &crate::Error,
        wall_ms: u64,
    ) -> Row {
        Row {
            question_id: question.id.clone(),
            spec: spec.to_string(),
            status: RunStatus::Failed,
            answer: None,
            error: Some(error.to_string()),
            scores: Scores::default(),
            llm_calls: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            wall_ms,
            run_id: None,
            sources: Vec::new(),
        }
    }
}

/// Every method that retrieves keeps the passages it showed the model as
/// `passages` at the top of its trace; reading just that field keeps the
/// harness independent of each method's own trace shape.
fn sources(trace: &serde_json::Value) -> Vec<String> {
    #[derive(Deserialize)]
    struct Retrieved {
        #[serde(default)]
        passages: Vec<Source>,
    }
    #[derive(Deserialize)]
    struct Source {
        path: String,
    }
    let passages = serde_json::from_value::<Retrieved>(trace.clone())
        .map(|r| r.passages)
        .unwrap_or_default();
    let mut paths: Vec<String> = Vec::new();
    for passage in passages {
        if !paths.contains(&passage.path) {
            paths.push(passage.path);
        }
    }
    paths
}

/// `results.jsonl`, one JSON row a line, each written through to the file
/// before the next question starts.
pub struct ResultsFile {
    path: PathBuf,
    file: File,
}

impl ResultsFile {
    /// Starts the file afresh: its rows are this run's.
    pub fn create(path: &Path) -> Result<ResultsFile> {
        let file = File::create(path).map_err(|source| EvalError::Write {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(ResultsFile {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn append(&mut self, row: &Row) -> Result<()> {
        let mut line = serde_json::to_string(row).map_err(|e| EvalError::Write {
            path: self.path.clone(),
            source: e.into(),
        })?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .map_err(|source| EvalError::Write {
                path: self.path.clone(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sources_come_from_the_traces_passages() {
        let trace = json!({
            "method": "vanilla-rag",
            "passages": [{"path": "/c/a.md", "number": 1}, {"path": "/c/b.md"}, {"path": "/c/a.md"}],
        });
        assert_eq!(sources(&trace), vec!["/c/a.md", "/c/b.md"]);
        assert!(sources(&json!({ "method": "llm-only" })).is_empty());
    }

    #[test]
    fn rows_are_appended_as_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let question = Question {
            id: "q1".into(),
            question: "Who?".into(),
            answers: vec!["Ann".into()],
            supporting: crate::eval::Supporting::Unknown,
        };
        let spec: MethodSpec = "llm-only".parse().unwrap();
        let row = Row::failed(&question, &spec, &crate::Error::Task("boom".into()), 12);
        let mut file = ResultsFile::create(&path).unwrap();
        file.append(&row).unwrap();
        file.append(&row).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["status"], "failed");
        assert_eq!(lines[0]["em"], false);
        assert_eq!(lines[0]["error"], "background task failed: boom");
        assert_eq!(
            serde_json::from_value::<Row>(lines[1].clone()).unwrap(),
            row
        );
    }
}
