//! A finished evaluation read back from its folder, for the app's Evaluate
//! view: the summary, every question with each spec's answer, the runs
//! behind them (from the evaluation's own index), and the report as
//! markdown for export. Everything here only reads the folder.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::dataset;
use super::error::{EvalError, Result};
use super::manifest::Manifest;
use super::results::{read_rows, Row};
use super::summary::{self, Summary};
use super::OutDir;
use folio_llm::Backend;
use folio_store::{RunRecord, Store};

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export, rename = "EvalReport")]
pub struct Report {
    /// The evaluation's folder.
    pub out: String,
    pub summary: Summary,
    /// In the dataset's order.
    pub questions: Vec<QuestionResults>,
}

/// One question and each spec's answer to it, in the summary's spec order.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export, rename = "EvalQuestion")]
pub struct QuestionResults {
    pub id: String,
    /// `None` when the evaluation's dataset file cannot be read any more.
    pub question: Option<String>,
    pub golds: Vec<String>,
    pub rows: Vec<Row>,
}

/// Reads the evaluation in `out`: its `summary.json` (written when a run
/// ends, also an interrupted one), `eval.json` for the questions, and the
/// answers in `results.jsonl`.
pub fn load(out: &Path) -> Result<Report> {
    let dir = OutDir(out.to_path_buf());
    let manifest = Manifest::read(&dir.manifest())?
        .ok_or_else(|| EvalError::NotAnEvaluation(out.to_path_buf()))?;
    let summary = read_summary(&dir.summary_json())?;
    let specs: Vec<&str> = summary.methods.iter().map(|m| m.spec.as_str()).collect();
    let mut rows: HashMap<(String, String), Row> = read_rows::<Row>(&dir.results())?
        .rows
        .into_iter()
        .map(|r| ((r.question_id.clone(), r.spec.clone()), r))
        .collect();
    let texts = dataset::texts_by_id(&manifest.dataset.path);
    let questions = manifest
        .questions
        .iter()
        .take(summary.questions)
        .map(|id| {
            let text = texts.get(id);
            QuestionResults {
                id: id.clone(),
                question: text.map(|t| t.0.clone()),
                golds: text.map(|t| t.1.clone()).unwrap_or_default(),
                rows: specs
                    .iter()
                    .filter_map(|spec| rows.remove(&(id.clone(), spec.to_string())))
                    .collect(),
            }
        })
        .collect();
    Ok(Report {
        out: out.display().to_string(),
        summary,
        questions,
    })
}

fn read_summary(path: &Path) -> Result<Summary> {
    let text = std::fs::read_to_string(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => EvalError::NoSummary(path.to_path_buf()),
        _ => EvalError::Read {
            path: path.to_path_buf(),
            source,
        },
    })?;
    serde_json::from_str(&text).map_err(|e| EvalError::BadLine {
        path: path.to_path_buf(),
        line: e.line(),
        message: e.to_string(),
    })
}

/// One spec's stored run behind its answer to a question.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export, rename = "EvalRun")]
pub struct SpecRun {
    pub spec: String,
    pub run: RunRecord,
}

/// The stored runs behind each spec's answer to `question_id` in the
/// evaluation in `out`, read from its own index. A spec whose run the index
/// does not hold is left out, also when the index was rebuilt after the
/// answer was given and the row's run id now names another run
/// ([`Row::is_from`]).
pub async fn runs(out: &Path, question_id: &str) -> Result<Vec<SpecRun>> {
    let (dir, manifest, store) = with_runs(out).await?;
    // A later row for the same spec replaces an earlier one, as in `load`.
    let rows: HashMap<String, Row> = read_rows::<Row>(&dir.results())?
        .rows
        .into_iter()
        .filter(|r| r.question_id == question_id)
        .map(|r| (r.spec.clone(), r))
        .collect();
    let texts = dataset::texts_by_id(&manifest.dataset.path);
    let question = texts.get(question_id).map(|t| t.0.as_str());
    let mut runs = Vec::with_capacity(rows.len());
    for spec in &manifest.specs {
        let Some(row) = rows.get(spec) else { continue };
        let stored = row.stored_run(&store, question).await;
        if let Some(run) = stored.map_err(crate::Error::from)? {
            runs.push(SpecRun {
                spec: spec.clone(),
                run,
            });
        }
    }
    store.close().await;
    Ok(runs)
}

/// The evaluation in `out` with its own library opened, for reading the
/// runs its rows name.
pub(super) async fn with_runs(out: &Path) -> Result<(OutDir, Manifest, Store)> {
    let dir = OutDir(out.to_path_buf());
    let manifest = Manifest::read(&dir.manifest())?
        .ok_or_else(|| EvalError::NotAnEvaluation(out.to_path_buf()))?;
    let database = dir.index().join("folio.sqlite");
    if !database.exists() {
        return Err(EvalError::NotAnEvaluation(out.to_path_buf()));
    }
    let store = Store::open(&database).await.map_err(crate::Error::from)?;
    Ok((dir, manifest, store))
}

/// The report as markdown: what was evaluated and how, then `summary.md`.
pub fn markdown(report: &Report) -> String {
    let s = &report.summary;
    let model = s.model.as_ref().map_or("–".to_string(), |m| {
        let backend = match m.backend {
            Backend::Embedded => "embedded",
            Backend::Openai => "OpenAI-compatible server",
        };
        format!("{} ({backend}, context {})", m.model, m.context_size)
    });
    let mut text = format!(
        "# Evaluation: {}\n\n- dataset: `{}` ({} questions)\n- corpus: `{}`\n- model: {model}\n\
         - k {}, temperature {}, at most {} tokens a step, seed {}\n- results: `{}`\n",
        file_name(&s.dataset),
        s.dataset,
        s.questions,
        s.corpus,
        s.settings.k_shown(),
        s.settings.temperature_shown(),
        s.settings.max_tokens,
        s.settings.seed,
        report.out,
    );
    if !s.tags.is_empty() {
        text.push_str(&format!(
            "- retrieved only from notes tagged {}\n",
            super::manifest::tag_list(&s.tags)
        ));
    }
    if s.interrupted {
        text.push_str(
            "\n**Interrupted:** not every question was answered; the counts are over the answers given.\n",
        );
    }
    text.push('\n');
    text.push_str(&summary::summary_markdown(s));
    text
}

fn file_name(path: &str) -> String {
    PathBuf::from(path)
        .file_name()
        .map_or_else(|| path.to_string(), |f| f.to_string_lossy().into_owned())
}

/// Writes the report's markdown to exactly `path`, all at once, and
/// nowhere else (see [`crate::export::write_file`]).
pub fn export(report: &Report, path: &Path) -> Result<()> {
    crate::export::write_file(path, &markdown(report)).map_err(crate::Error::from)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::testing::{folder, row};
    use folio_index::pipeline::PassSummary;
    use folio_methods::runner::ResolvedSettings;

    /// What `Evaluation::finish` writes, over `rows` of specs `a` and `b`.
    fn finish(dir: &Path, rows: &[Row], questions: usize) {
        let out = OutDir(dir.to_path_buf());
        let specs = ["a".to_string(), "b".to_string()];
        let summary = Summary {
            dataset: dir.join("dev.jsonl").display().to_string(),
            corpus: "corpus.jsonl".into(),
            questions,
            settings: ResolvedSettings {
                k: Some(5),
                temperature: Some(0.0),
                configured_temperature: 0.0,
                max_tokens: 24,
                seed: 42,
            },
            tags: vec!["garden/fruit".into()],
            model: None,
            judge: None,
            corpus_files: None,
            ingest: PassSummary::default(),
            interrupted: true,
            graphs: Vec::new(),
            methods: summary::summarize(&specs, rows, &summary::NoEvidence, &|_| None),
            last_turns: Vec::new(),
        };
        summary::write(&summary, &out.summary_json(), &out.summary_md()).unwrap();
    }

    #[test]
    fn a_finished_folder_reads_back_with_each_question_and_its_answers_per_spec() {
        let rows = [
            row("q1", "b", false),
            row("q1", "a", true),
            row("q2", "a", false),
        ];
        let dir = folder(&rows);
        finish(dir.path(), &rows, 2);
        let report = load(dir.path()).unwrap();
        assert_eq!(report.summary.methods.len(), 2);
        assert!(report.summary.interrupted);
        let ids: Vec<&str> = report.questions.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["q1", "q2"], "the summary's questions, in order");
        let q1 = &report.questions[0];
        assert_eq!(q1.question.as_deref(), Some("Who?"));
        assert_eq!(q1.golds, ["Ann"]);
        let specs: Vec<&str> = q1.rows.iter().map(|r| r.spec.as_str()).collect();
        assert_eq!(specs, ["a", "b"], "in the summary's spec order");
        assert_eq!(report.questions[1].rows.len(), 1, "b never answered q2");

        let text = markdown(&report);
        assert!(text.starts_with("# Evaluation: dev.jsonl\n"), "{text}");
        assert!(text.contains("(2 questions)"), "{text}");
        assert!(text.contains("seed 42"), "{text}");
        assert!(
            text.contains("- retrieved only from notes tagged #garden/fruit\n"),
            "{text}"
        );
        assert!(text.contains("**Interrupted:**"), "{text}");
        assert!(text.contains("\n| a | 2 | 50.0% |"), "{text}");
        let exported = dir.path().join("report.md");
        export(&report, &exported).unwrap();
        assert_eq!(std::fs::read_to_string(exported).unwrap(), text);
    }

    #[test]
    fn export_writes_the_chosen_file_and_nothing_the_report_names() {
        use crate::export::tests::{tree, PATH_LIKE};
        let rows = [row("q1", "a", true)];
        let dir = folder(&rows);
        finish(dir.path(), &rows, 1);
        let mut report = load(dir.path()).unwrap();
        report.out = PATH_LIKE.into();
        report.summary.dataset = PATH_LIKE.into();
        report.summary.corpus = PATH_LIKE.into();
        report.questions[0].question = Some(PATH_LIKE.into());
        let out = tempfile::tempdir().unwrap();
        let before = (tree(dir.path()), tree(out.path()));
        let chosen = out.path().join("report.md");

        export(&report, &chosen).unwrap();

        assert_eq!(tree(dir.path()), before.0, "the evaluation is only read");
        let added: Vec<_> = tree(out.path()).difference(&before.1).cloned().collect();
        assert_eq!(
            added,
            std::slice::from_ref(&chosen),
            "only the chosen file is new"
        );
        assert!(matches!(
            export(&report, out.path()).unwrap_err(),
            EvalError::Engine(crate::Error::Export(_))
        ));
    }

    #[test]
    fn a_folder_without_a_summary_says_the_evaluation_has_not_finished() {
        let dir = folder(&[row("q1", "a", true)]);
        let err = load(dir.path()).unwrap_err();
        assert!(matches!(err, EvalError::NoSummary(_)), "{err}");
        assert!(err.to_string().contains("has not finished"), "{err}");
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            load(empty.path()).unwrap_err(),
            EvalError::NotAnEvaluation(_)
        ));
    }

    /// An index rebuilt under kept answers numbers its runs afresh: here its
    /// run 1 is `b`'s answer to q2, and `a`'s older answer to q1 names run 1
    /// too.
    #[tokio::test]
    async fn a_rows_run_is_read_only_when_the_index_holds_that_very_run() {
        use folio_store::{LlmCallRow, NewRun, RunOutcome, RunStatus};
        use serde_json::json;
        let (q1, q2) = (row("q1", "a", true), row("q2", "b", false));
        let dir = folder(&[q1, q2.clone()]);
        let index = OutDir(dir.path().to_path_buf()).index();
        std::fs::create_dir(&index).unwrap();
        let store = Store::open(&index.join("folio.sqlite")).await.unwrap();
        let (params, model) = (json!({}), json!({}));
        let id = store
            .start_run(&NewRun {
                placement: folio_store::Placement::NewThread,
                question: "When?",
                method: "b",
                scope: &Default::default(),
                params: &params,
                model: &model,
            })
            .await
            .unwrap()
            .unwrap()
            .run;
        let call = LlmCallRow {
            step: "answer".into(),
            prompt_tokens: 1,
            cached_tokens: 0,
            completion_tokens: 1,
            wall_ms: 1,
            finish: None,
            error: None,
            shaping: None,
        };
        let outcome = RunOutcome {
            status: RunStatus::Done,
            turn: None,
            answer: q2.answer.clone(),
            cut_off: None,
            citations: json!([]),
            trace: None,
            error: None,
            timings: json!({}),
            calls: vec![call],
        };
        store.finish_run(id, &outcome).await.unwrap();
        store.close().await;
        assert_eq!(id, 1);

        assert_eq!(runs(dir.path(), "q1").await.unwrap(), []);
        let read = runs(dir.path(), "q2").await.unwrap();
        let read: Vec<(&str, i64)> = read.iter().map(|r| (r.spec.as_str(), r.run.id)).collect();
        assert_eq!(read, [("b", 1)]);
    }

    #[tokio::test]
    async fn runs_need_the_evaluations_index() {
        let dir = folder(&[row("q1", "a", true)]);
        assert!(matches!(
            runs(dir.path(), "q1").await.unwrap_err(),
            EvalError::NotAnEvaluation(_)
        ));
    }
}
