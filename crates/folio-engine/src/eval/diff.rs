//! `folio eval diff`: where two evaluated methods part ways. For every
//! question both answered, whether each got it right, and for the questions
//! only one got right, both answers with the key parts of both traces (read
//! from the evaluation's index), so a reader sees why they differ. The
//! answers are only read; the index is opened, when it exists, for traces.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::dataset;
use super::error::{EvalError, Result};
use super::manifest::Manifest;
use super::results::{read_rows, Row};
use super::OutDir;
use folio_core::choice::Choice;
use folio_methods::Trace;
use folio_store::{RunStatus, Store};

/// What counts as right.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
#[serde(rename_all = "kebab-case")]
pub enum RightBy {
    /// A gold answer appears in the answer as whole words: the headline
    /// metric where models answer in sentences.
    CoverEm,
    /// The normalised answer is a gold answer.
    Em,
}

impl Choice for RightBy {
    const ALL: &'static [RightBy] = &[RightBy::CoverEm, RightBy::Em];

    fn as_str(self) -> &'static str {
        match self {
            RightBy::CoverEm => "cover-em",
            RightBy::Em => "em",
        }
    }
}

impl RightBy {
    fn of(self, row: &Row) -> bool {
        match self {
            RightBy::CoverEm => row.scores.cover_em,
            RightBy::Em => row.scores.em,
        }
    }
}

/// One side of a diff: an evaluation folder and one of its specs, written
/// `DIR` (when the folder evaluated one spec) or `DIR#SPEC`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRef {
    pub dir: PathBuf,
    pub spec: Option<String>,
}

impl std::str::FromStr for RunRef {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> std::result::Result<RunRef, Self::Err> {
        Ok(match text.split_once('#') {
            Some((dir, spec)) => RunRef {
                dir: dir.into(),
                spec: Some(spec.to_string()),
            },
            None => RunRef {
                dir: text.into(),
                spec: None,
            },
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export, rename = "EvalDiff")]
pub struct Diff {
    /// Each side as `DIR#SPEC`.
    pub a: String,
    pub b: String,
    pub right_by: RightBy,
    /// Questions both sides answered.
    pub compared: usize,
    pub both_right: usize,
    pub both_wrong: usize,
    pub only_a: Vec<Parting>,
    pub only_b: Vec<Parting>,
}

/// A question one side got right and the other wrong.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export, rename = "EvalParting")]
pub struct Parting {
    pub question_id: String,
    /// `None` when the evaluation's dataset file cannot be read any more.
    pub question: Option<String>,
    pub golds: Vec<String>,
    pub a: Side,
    pub b: Side,
}

/// One side's answer to a question the sides parted on.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export, rename = "EvalSide")]
pub struct Side {
    pub status: RunStatus,
    pub answer: Option<String>,
    pub error: Option<String>,
    /// The trace in a few lines ([`Trace::key_parts`]); empty when the run
    /// is not in the index.
    pub key_parts: Vec<String>,
}

/// An evaluation folder's answers with one spec.
struct Loaded {
    label: String,
    manifest: Manifest,
    rows: HashMap<String, Row>,
    store: Option<Store>,
}

impl Loaded {
    async fn open(run: &RunRef) -> Result<Loaded> {
        let out = OutDir(run.dir.clone());
        let manifest = Manifest::read(&out.manifest())?
            .ok_or_else(|| EvalError::NotAnEvaluation(run.dir.clone()))?;
        let spec = match (&run.spec, manifest.specs.as_slice()) {
            (Some(spec), specs) if specs.contains(spec) => spec.clone(),
            (None, [only]) => only.clone(),
            (given, specs) => {
                return Err(EvalError::NoSuchSpec {
                    dir: run.dir.clone(),
                    given: given.clone(),
                    specs: specs.join(", "),
                })
            }
        };
        let rows = read_rows::<Row>(&out.results())?
            .rows
            .into_iter()
            .filter(|r| r.spec == spec)
            .map(|r| (r.question_id.clone(), r))
            .collect();
        let database = out.index().join("folio.sqlite");
        let store = match database.exists() {
            true => Some(Store::open(&database).await.map_err(crate::Error::from)?),
            false => None,
        };
        Ok(Loaded {
            label: format!("{}#{spec}", run.dir.display()),
            manifest,
            rows,
            store,
        })
    }

    async fn side(&self, row: &Row, question: Option<&str>) -> Side {
        let trace = match &self.store {
            Some(store) => row
                .stored_run(store, question)
                .await
                .ok()
                .flatten()
                .and_then(|r| r.trace),
            None => None,
        };
        Side {
            status: row.status,
            answer: row.answer.clone(),
            error: row.error.clone(),
            key_parts: trace
                .and_then(|t| serde_json::from_value::<Trace>(t).ok())
                .map(|t| t.key_parts())
                .unwrap_or_default(),
        }
    }
}

/// Compares `a` and `b` on the questions both answered, in `a`'s order.
pub async fn diff(a: &RunRef, b: &RunRef, right_by: RightBy) -> Result<Diff> {
    let a = Loaded::open(a).await?;
    let b = Loaded::open(b).await?;
    let questions = dataset::texts_by_id(&a.manifest.dataset.path);
    let mut diff = Diff {
        a: a.label.clone(),
        b: b.label.clone(),
        right_by,
        compared: 0,
        both_right: 0,
        both_wrong: 0,
        only_a: Vec::new(),
        only_b: Vec::new(),
    };
    for id in &a.manifest.questions {
        let (Some(row_a), Some(row_b)) = (a.rows.get(id), b.rows.get(id)) else {
            continue;
        };
        diff.compared += 1;
        let (right_a, right_b) = (right_by.of(row_a), right_by.of(row_b));
        if right_a == right_b {
            if right_a {
                diff.both_right += 1;
            } else {
                diff.both_wrong += 1;
            }
            continue;
        }
        let question = questions.get(id);
        let text = question.map(|q| q.0.as_str());
        let parting = Parting {
            question_id: id.clone(),
            question: question.map(|q| q.0.clone()),
            golds: question.map(|q| q.1.clone()).unwrap_or_default(),
            a: a.side(row_a, text).await,
            b: b.side(row_b, text).await,
        };
        if right_a {
            diff.only_a.push(parting);
        } else {
            diff.only_b.push(parting);
        }
    }
    Ok(diff)
}

/// The diff as markdown: the counts, then each parting question.
pub fn markdown(diff: &Diff) -> String {
    let by = match diff.right_by {
        RightBy::CoverEm => "Cover-EM",
        RightBy::Em => "EM",
    };
    let mut text = format!(
        "# {} vs {}\n\nRight by {by}, over the {} questions both answered: both right {}, both wrong {}, only A {}, only B {}.\n",
        diff.a,
        diff.b,
        diff.compared,
        diff.both_right,
        diff.both_wrong,
        diff.only_a.len(),
        diff.only_b.len(),
    );
    for (title, partings) in [
        (format!("Only A ({}) got right", diff.a), &diff.only_a),
        (format!("Only B ({}) got right", diff.b), &diff.only_b),
    ] {
        if partings.is_empty() {
            continue;
        }
        let _ = write!(text, "\n## {title}\n");
        for p in partings {
            let _ = write!(
                text,
                "\n### {}\n\n{}\n\nGold: {}\n",
                p.question_id,
                p.question
                    .as_deref()
                    .unwrap_or("(the dataset file is not readable)"),
                p.golds.join(" | ")
            );
            side_markdown(&mut text, "A", &p.a);
            side_markdown(&mut text, "B", &p.b);
        }
    }
    text
}

fn side_markdown(text: &mut String, name: &str, side: &Side) {
    let answer = match (&side.answer, &side.error) {
        (Some(answer), _) => answer.split_whitespace().collect::<Vec<_>>().join(" "),
        (None, Some(error)) => format!("({} : {error})", side.status.as_str()),
        (None, None) => format!("({})", side.status.as_str()),
    };
    let _ = write!(text, "\n**{name}:** {answer}\n");
    for part in &side.key_parts {
        let _ = writeln!(text, "- {part}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::testing::{folder, row};
    use std::path::Path;

    fn run(dir: &Path, spec: Option<&str>) -> RunRef {
        RunRef {
            dir: dir.to_path_buf(),
            spec: spec.map(str::to_string),
        }
    }

    #[tokio::test]
    async fn questions_one_spec_got_right_are_listed_with_both_answers() {
        let dir = folder(&[
            row("q1", "a", true),
            row("q1", "b", false),
            row("q2", "a", false),
            row("q2", "b", true),
            row("q3", "a", true),
            row("q3", "b", true),
        ]);
        let diff = diff(
            &run(dir.path(), Some("a")),
            &run(dir.path(), Some("b")),
            RightBy::CoverEm,
        )
        .await
        .unwrap();
        assert_eq!((diff.compared, diff.both_right, diff.both_wrong), (3, 1, 0));
        assert_eq!(diff.only_a.len(), 1);
        let p = &diff.only_a[0];
        assert_eq!(p.question_id, "q1");
        assert_eq!(p.question.as_deref(), Some("Who?"));
        assert_eq!(p.golds, ["Ann"]);
        assert_eq!(p.a.answer.as_deref(), Some("a says q1"));
        assert_eq!(p.b.answer.as_deref(), Some("b says q1"));
        assert!(p.a.key_parts.is_empty(), "no index, no trace");
        assert_eq!(diff.only_b[0].question_id, "q2");

        let text = markdown(&diff);
        assert!(
            text.contains("both right 1, both wrong 0, only A 1, only B 1"),
            "{text}"
        );
        assert!(
            text.contains("### q1\n\nWho?\n\nGold: Ann\n\n**A:** a says q1\n"),
            "{text}"
        );

        let by_em = diff_of(&dir, RightBy::Em).await;
        assert_eq!((by_em.both_wrong, by_em.only_a.len()), (3, 0));
    }

    async fn diff_of(dir: &tempfile::TempDir, by: RightBy) -> Diff {
        diff(&run(dir.path(), Some("a")), &run(dir.path(), Some("b")), by)
            .await
            .unwrap()
    }

    async fn error_of(a: RunRef, b: RunRef) -> String {
        diff(&a, &b, RightBy::CoverEm)
            .await
            .unwrap_err()
            .to_string()
    }

    #[tokio::test]
    async fn a_folder_of_several_specs_needs_one_named() {
        let dir = folder(&[row("q1", "a", true)]);
        let a = run(dir.path(), Some("a"));
        let err = error_of(run(dir.path(), None), a.clone()).await;
        assert!(err.contains("it evaluated a, b (name one as"), "{err}");
        let err = error_of(run(dir.path(), Some("c")), a.clone()).await;
        assert!(err.contains("no method spec `c`"), "{err}");
        let empty = tempfile::tempdir().unwrap();
        let err = error_of(run(empty.path(), None), a).await;
        assert!(err.contains("has no eval.json"), "{err}");
        assert_eq!(
            "out/x#pager:variant=parallel".parse::<RunRef>().unwrap(),
            RunRef {
                dir: "out/x".into(),
                spec: Some("pager:variant=parallel".into())
            }
        );
    }
}
