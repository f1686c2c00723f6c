//! One row per question and method spec, appended to `results.jsonl` the
//! moment it is known, so a crash or Ctrl-C keeps every answer already
//! paid for. Rows hold what later tools need without opening the index:
//! the answer, the scores, the model usage and the run to look up for more.
//! The rows are also what lets a re-run go on where an interrupted one
//! stopped ([`ResultsFile::resume`]).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::dataset::Question;
use super::error::{EvalError, Result};
use super::metrics::{cover_em, score, Scores};
use super::spec::MethodSpec;
use folio_methods::{Citation, CitedBy};
use folio_store::{RunRecord, RunStatus, Store};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export, rename = "EvalRow")]
pub struct Row {
    pub question_id: String,
    pub spec: String,
    pub status: RunStatus,
    pub answer: Option<String>,
    pub error: Option<String>,
    /// Only a finished run is scored: a failed one scores 0, so a method
    /// cannot gain from failing. An answer cut off at `max_tokens` is a
    /// finished run, scored as written (see `cut_off`).
    #[serde(flatten)]
    pub scores: Scores,
    pub llm_calls: i64,
    pub prompt_tokens: i64,
    /// Of `prompt_tokens`, those the model took from its cache rather
    /// than computing them.
    #[serde(default)]
    pub cached_tokens: i64,
    pub completion_tokens: i64,
    /// The whole question as the harness saw it: retrieval, every model
    /// call and storing the run.
    pub wall_ms: u64,
    /// `None` when the request failed before a run was recorded.
    pub run_id: Option<i64>,
    /// The files of the passages the method retrieved, each once, in the
    /// order its trace lists them; empty for methods that retrieve nothing.
    pub sources: Vec<String>,
    /// The files of the sources the model cited with `[n]`, each once.
    #[serde(default)]
    pub cited: Vec<String>,
    /// The files of the sources matched to sentences the model left
    /// unmarked (`methods::attribution`), each once.
    #[serde(default)]
    pub attributed: Vec<String>,
    /// Whether a passage the answer was built from holds a gold answer
    /// (Cover-EM over passage text); `None` when the run showed the model
    /// no passages.
    #[serde(default)]
    pub evidence_hit: Option<bool>,
    /// The method declined to answer (its trace says `refused`), as
    /// CRP-RAG does when no reasoning path has enough knowledge.
    #[serde(default)]
    pub refused: bool,
    /// The answer reached `max_tokens` before it finished; it is scored as
    /// written and counted apart.
    #[serde(default)]
    pub cut_off: bool,
}

impl Row {
    pub fn answered(question: &Question, spec: &MethodSpec, run: &RunRecord, wall_ms: u64) -> Row {
        let shown = run.trace.as_ref().map(shown_passages).unwrap_or_default();
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
            cached_tokens: run.cached_tokens,
            completion_tokens: run.completion_tokens,
            wall_ms,
            run_id: Some(run.id),
            sources: sources(&shown),
            cited: named_files(run, CitedBy::Model),
            attributed: named_files(run, CitedBy::Attribution),
            evidence_hit: evidence_hit(&shown, &question.answers),
            refused: run
                .trace
                .as_ref()
                .and_then(|t| t.get("refused"))
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
            cut_off: run.cut_off.is_some(),
        }
    }

    /// Whether `run` is the run this row was made from. A row names its run
    /// only by id, and an index rebuilt under kept answers (a deleted index,
    /// a folder copied to another machine) numbers its runs afresh, so the
    /// id alone may name another question's run. `question` is the
    /// question's text, `None` when the dataset can no longer be read.
    pub fn is_from(&self, run: &RunRecord, question: Option<&str>) -> bool {
        self.run_id == Some(run.id)
            && question.is_none_or(|q| q == run.question)
            && self
                .spec
                .parse::<MethodSpec>()
                .is_ok_and(|spec| spec.method == run.method)
            && self.status == run.status
            && self.answer == run.answer
            && self.error == run.error
            && (self.llm_calls, self.prompt_tokens, self.completion_tokens)
                == (run.llm_calls, run.prompt_tokens, run.completion_tokens)
    }

    /// The run this row was made from, read from `store`; `None` when the
    /// index does not hold it (see [`Row::is_from`]).
    pub async fn stored_run(
        &self,
        store: &Store,
        question: Option<&str>,
    ) -> folio_store::Result<Option<RunRecord>> {
        let Some(id) = self.run_id else {
            return Ok(None);
        };
        Ok(store
            .run(id)
            .await?
            .filter(|run| self.is_from(run, question)))
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
            cached_tokens: 0,
            completion_tokens: 0,
            wall_ms,
            run_id: None,
            sources: Vec::new(),
            cited: Vec::new(),
            attributed: Vec::new(),
            evidence_hit: None,
            refused: false,
            cut_off: false,
        }
    }
}

/// Every method that retrieves keeps the passages it showed the model as
/// `passages` at the top of its trace; reading just that field keeps the
/// harness independent of each method's own trace shape.
#[derive(Deserialize)]
struct Shown {
    path: String,
    text: String,
}

/// The files of `shown`, each once, in order.
fn sources(shown: &[Shown]) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for p in shown {
        if !paths.contains(&p.path) {
            paths.push(p.path.clone());
        }
    }
    paths
}

/// The files of `run`'s sources that `by` named, each once, in order.
fn named_files(run: &RunRecord, by: CitedBy) -> Vec<String> {
    let citations: Vec<Citation> =
        serde_json::from_value(run.citations.clone()).unwrap_or_default();
    let mut files: Vec<String> = Vec::new();
    for c in citations.into_iter().filter(|c| c.by == by) {
        if !files.contains(&c.path) {
            files.push(c.path);
        }
    }
    files
}

fn evidence_hit(shown: &[Shown], answers: &[String]) -> Option<bool> {
    (!shown.is_empty()).then(|| {
        shown
            .iter()
            .any(|p| answers.iter().any(|gold| cover_em(&p.text, gold)))
    })
}

fn shown_passages(trace: &serde_json::Value) -> Vec<Shown> {
    #[derive(Deserialize)]
    struct Passages {
        #[serde(default)]
        passages: Vec<Shown>,
    }
    serde_json::from_value::<Passages>(trace.clone())
        .map(|r| r.passages)
        .unwrap_or_default()
}

/// `results.jsonl` (or another of the folder's JSON-lines files, such as the
/// judge's verdicts): one JSON row a line, each written through to the file
/// before the next one is worked on.
#[derive(Debug)]
pub struct ResultsFile<R = Row> {
    path: PathBuf,
    file: File,
    rows: PhantomData<fn(R)>,
}

/// A JSON-lines file opened for appending, with the rows already in it.
#[derive(Debug)]
pub struct Opened<R = Row> {
    pub file: ResultsFile<R>,
    pub rows: Vec<R>,
    /// The number of a last line that was not a whole row, cut off the file:
    /// the process was killed while writing it, so its answer is asked again.
    pub torn_line: Option<usize>,
}

impl<R: Serialize + DeserializeOwned> ResultsFile<R> {
    /// Starts the file afresh: its rows are this run's.
    pub fn create(path: &Path) -> Result<Opened<R>> {
        let file = File::create(path).map_err(|source| EvalError::Write {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Opened {
            file: ResultsFile {
                path: path.to_path_buf(),
                file,
                rows: PhantomData,
            },
            rows: Vec::new(),
            torn_line: None,
        })
    }

    /// Reads the rows an earlier run wrote (none when there is no file) and
    /// opens the file to append after them, cutting off a torn last line
    /// (see [`read_rows`]) so the next row starts a line of its own.
    pub fn resume(path: &Path) -> Result<Opened<R>> {
        let read = read_rows(path)?;
        let write_error = |source| EvalError::Write {
            path: path.to_path_buf(),
            source,
        };
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(write_error)?;
        file.set_len(read.whole_bytes).map_err(write_error)?;
        let mut file = ResultsFile {
            path: path.to_path_buf(),
            file,
            rows: PhantomData,
        };
        if read.unterminated {
            file.write(b"\n")?;
        }
        Ok(Opened {
            file,
            rows: read.rows,
            torn_line: read.torn_line,
        })
    }

    pub fn append(&mut self, row: &R) -> Result<()> {
        let mut line = serde_json::to_string(row).map_err(|e| EvalError::Write {
            path: self.path.clone(),
            source: e.into(),
        })?;
        line.push('\n');
        self.write(line.as_bytes())
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.file
            .write_all(bytes)
            .map_err(|source| EvalError::Write {
                path: self.path.clone(),
                source,
            })
    }
}

/// A JSON-lines file's rows, read without changing it.
pub struct ReadRows<R> {
    pub rows: Vec<R>,
    /// The number of a last line that is not a whole row.
    pub torn_line: Option<usize>,
    /// Bytes up to the end of the last whole row.
    whole_bytes: u64,
    /// The last whole row has no newline after it.
    unterminated: bool,
}

/// Reads the rows of a JSON-lines file (none when there is no file). Only
/// the last line can be torn, since rows are appended one at a time; a bad
/// line before it was not written by a killed run, and is an error rather
/// than an answer silently lost.
pub fn read_rows<R: DeserializeOwned>(path: &Path) -> Result<ReadRows<R>> {
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(EvalError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let mut rows = Vec::new();
    let mut torn_line = None;
    let mut kept = 0;
    for (index, line) in text.split_inclusive(|&b| b == b'\n').enumerate() {
        if !line.trim_ascii().is_empty() {
            match serde_json::from_slice::<R>(line) {
                Ok(row) => rows.push(row),
                Err(_) if !line.ends_with(b"\n") => {
                    torn_line = Some(index + 1);
                    break;
                }
                Err(e) => {
                    return Err(EvalError::BadLine {
                        path: path.to_path_buf(),
                        line: index + 1,
                        message: e.to_string(),
                    })
                }
            }
        }
        kept += line.len();
    }
    Ok(ReadRows {
        rows,
        torn_line,
        whole_bytes: kept as u64,
        unterminated: text[..kept].last().is_some_and(|&b| b != b'\n'),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sources_come_from_the_traces_passages() {
        let trace = json!({
            "method": "vanilla-rag",
            "passages": [
                {"path": "/c/a.md", "number": 1, "text": "Ann was born in 1984."},
                {"path": "/c/b.md", "text": "It is 4 bytes."},
                {"path": "/c/a.md", "text": "x"},
            ],
        });
        let shown = shown_passages(&trace);
        assert_eq!(sources(&shown), vec!["/c/a.md", "/c/b.md"]);
        assert!(shown_passages(&json!({ "method": "llm-only" })).is_empty());
        // Whole words after normalising, as Cover-EM: "4" is not in "1984".
        assert_eq!(
            evidence_hit(&shown, &["four".into(), "4".into()]),
            Some(true)
        );
        assert_eq!(evidence_hit(&shown[..1], &["4".into()]), Some(false));
        assert_eq!(evidence_hit(&[], &["4".into()]), None);
    }

    fn who() -> Question {
        Question {
            id: "q1".into(),
            question: "Who?".into(),
            answers: vec!["Ann".into()],
            supporting: crate::eval::Supporting::Unknown,
            turn: None,
        }
    }

    #[test]
    fn a_row_is_from_its_own_run_only() {
        let question = who();
        let spec: MethodSpec = "pager:variant=parallel".parse().unwrap();
        let run = RunRecord {
            id: 7,
            thread_id: 7,
            turn: None,
            question: "Who?".into(),
            method: "pager".into(),
            scope: Default::default(),
            params: json!({}),
            model: json!({}),
            status: RunStatus::Done,
            answer: Some("Ann did.".into()),
            cut_off: None,
            citations: json!([]),
            trace: None,
            error: None,
            timings: json!({}),
            llm_calls: 4,
            prompt_tokens: 900,
            cached_tokens: 300,
            completion_tokens: 40,
            created_at: 1,
            finished_at: Some(2),
        };
        let row = Row::answered(&question, &spec, &run, 10);
        assert!(row.is_from(&run, Some("Who?")));
        assert!(
            row.is_from(&run, None),
            "without the dataset the rest decides"
        );
        let others = [
            RunRecord {
                id: 8,
                ..run.clone()
            },
            RunRecord {
                question: "When?".into(),
                ..run.clone()
            },
            RunRecord {
                method: "vanilla-rag".into(),
                ..run.clone()
            },
            RunRecord {
                status: RunStatus::Failed,
                ..run.clone()
            },
            RunRecord {
                answer: Some("Bob did.".into()),
                ..run.clone()
            },
            RunRecord {
                error: Some("cut off".into()),
                ..run.clone()
            },
            RunRecord {
                prompt_tokens: 901,
                ..run.clone()
            },
        ];
        for other in &others {
            assert!(!row.is_from(other, Some("Who?")), "{other:?}");
        }
        let failed = Row::failed(&question, &spec, &crate::Error::Task("boom".into()), 1);
        assert!(!failed.is_from(&run, Some("Who?")), "it has no run");
    }

    #[test]
    fn rows_are_appended_as_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let question = who();
        let spec: MethodSpec = "llm-only".parse().unwrap();
        let row = Row::failed(&question, &spec, &crate::Error::Task("boom".into()), 12);
        let mut file = ResultsFile::create(&path).unwrap().file;
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

    fn row(id: &str) -> Row {
        let question = Question {
            id: id.into(),
            question: "Who?".into(),
            answers: vec!["Ann".into()],
            supporting: crate::eval::Supporting::Unknown,
            turn: None,
        };
        let spec: MethodSpec = "llm-only".parse().unwrap();
        Row::failed(&question, &spec, &crate::Error::Task("boom".into()), 12)
    }

    fn line(row: &Row) -> String {
        serde_json::to_string(row).unwrap() + "\n"
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_appending_goes_on_after_the_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let whole = line(&row("q1"));
        let torn = &line(&row("q2"))[..40];
        std::fs::write(&path, format!("{whole}{torn}")).unwrap();
        let mut opened = ResultsFile::resume(&path).unwrap();
        assert_eq!(opened.rows, [row("q1")]);
        assert_eq!(opened.torn_line, Some(2));
        opened.file.append(&row("q3")).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{whole}{}", line(&row("q3")))
        );
    }

    #[test]
    fn a_whole_last_row_without_its_newline_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let whole = line(&row("q1"));
        std::fs::write(&path, whole.trim_end()).unwrap();
        let mut opened = ResultsFile::resume(&path).unwrap();
        assert_eq!((opened.rows.len(), opened.torn_line), (1, None));
        opened.file.append(&row("q2")).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{whole}{}", line(&row("q2")))
        );
    }

    #[test]
    fn a_bad_line_before_the_last_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let text = format!("{}not a row\n{}", line(&row("q1")), line(&row("q2")));
        std::fs::write(&path, &text).unwrap();
        let err = ResultsFile::<Row>::resume(&path).unwrap_err();
        assert!(matches!(err, EvalError::BadLine { line: 2, .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "untouched");
    }

    #[test]
    fn resuming_without_a_file_starts_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.jsonl");
        let opened = ResultsFile::<Row>::resume(&path).unwrap();
        assert!(opened.rows.is_empty() && path.exists());
    }
}
