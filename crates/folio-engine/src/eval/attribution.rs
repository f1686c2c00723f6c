//! `folio eval attribution`: how answers' sources would score against the
//! gold evidence if sentences were attributed at other thresholds. The
//! evaluation's answers are not asked again: each stored run's unmarked
//! sentences are matched to the passages it showed, once, and every
//! threshold is scored on those matches. This is how
//! [`folio_methods::attribution::THRESHOLD`] was chosen.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::corpus::{self, PassageTitles};
use super::dataset::{self, Question};
use super::error::Result;
use super::report;
use super::results::{read_rows, Row};
use folio_embed::{EmbedError, Embedder};
use folio_methods::attribution::{attributed, match_sentences, Match};
use folio_methods::{Citation, CitedBy, Passage, Trace};
use folio_store::RunStatus;

/// One spec's answers scored at each threshold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    pub spec: String,
    /// Finished answers that were shown passages.
    pub answers: usize,
    /// Their sentences without a citation marker.
    pub unmarked_sentences: usize,
    /// The model's own citations, the same at every threshold.
    pub cited: Scored,
    pub thresholds: Vec<AtThreshold>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AtThreshold {
    pub threshold: f32,
    /// Share of the answers naming at least one source, cited or
    /// attributed.
    pub sourced_percent: f64,
    /// Unmarked sentences attributed to a passage.
    pub sentences_attributed: usize,
    pub attributed: Scored,
    /// Cited and attributed sources together.
    pub all: Scored,
}

/// Precision and recall of named source files against the evidence, means
/// over the answers where each is defined.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scored {
    pub precision_percent: Option<f64>,
    pub recall_percent: Option<f64>,
}

/// An answer as the sweep reads it.
struct Answered<'a> {
    question: &'a Question,
    cited: Vec<Citation>,
    passages: Vec<Passage>,
    matches: Vec<Match>,
}

/// Scores every spec of the evaluation in `out` at each of `thresholds`,
/// embedding with `embedder` (the model the evaluation retrieved with).
pub async fn sweep(out: &Path, thresholds: &[f32], embedder: &Embedder) -> Result<Vec<Sweep>> {
    let (dir, manifest, store) = report::with_runs(out).await?;
    let questions = dataset::read(&manifest.dataset.path, None)?;
    let titles = corpus::prepare(&manifest.corpus.path, &dir.passages())?
        .written
        .map(|w| w.titles)
        .unwrap_or_default();
    // A later row for the same question and spec replaces an earlier one.
    let rows: HashMap<(String, String), Row> = read_rows::<Row>(&dir.results())?
        .rows
        .into_iter()
        .map(|r| ((r.spec.clone(), r.question_id.clone()), r))
        .collect();
    let mut sweeps = Vec::new();
    for spec in &manifest.specs {
        let mut answered = Vec::new();
        for question in &questions {
            let Some(row) = rows.get(&(spec.clone(), question.id.clone())) else {
                continue;
            };
            let run = row
                .stored_run(&store, Some(&question.question))
                .await
                .map_err(crate::Error::from)?;
            let Some(run) = run.filter(|r| r.status == RunStatus::Done) else {
                continue;
            };
            let trace: Option<Trace> = run.trace.and_then(|t| serde_json::from_value(t).ok());
            let Some(passages) = trace.as_ref().and_then(Trace::passages) else {
                continue;
            };
            let asked = run
                .turn
                .as_ref()
                .and_then(|t| t.rewrite.query())
                .unwrap_or(&run.question);
            let embed = |texts: Vec<String>| async move { embedder.embed(&texts) };
            let answer = run.answer.as_deref().unwrap_or_default();
            let matches = match_sentences::<EmbedError, _, _>(embed, asked, answer, passages)
                .await
                .map_err(crate::Error::from)?;
            let citations: Vec<Citation> =
                serde_json::from_value(run.citations).unwrap_or_default();
            answered.push(Answered {
                question,
                cited: citations
                    .into_iter()
                    .filter(|c| c.by == CitedBy::Model)
                    .collect(),
                passages: passages.to_vec(),
                matches,
            });
        }
        sweeps.push(score(spec, &answered, thresholds, &titles));
    }
    store.close().await;
    Ok(sweeps)
}

fn score(spec: &str, answered: &[Answered], thresholds: &[f32], titles: &PassageTitles) -> Sweep {
    let scored = |named: &dyn Fn(&Answered) -> Vec<String>| {
        let mean = |values: Vec<Option<f64>>| {
            let present: Vec<f64> = values.into_iter().flatten().collect();
            (!present.is_empty())
                .then(|| 100.0 * present.iter().sum::<f64>() / present.len() as f64)
        };
        Scored {
            precision_percent: mean(
                answered
                    .iter()
                    .map(|a| a.question.supporting.share_holding(&named(a), titles))
                    .collect(),
            ),
            recall_percent: mean(
                answered
                    .iter()
                    .map(|a| a.question.supporting.share_found(&named(a), titles))
                    .collect(),
            ),
        }
    };
    let cited_files = |a: &Answered| files(&a.cited);
    let thresholds = thresholds
        .iter()
        .map(|&threshold| {
            let at = |a: &Answered| attributed(&a.matches, &a.passages, &a.cited, threshold);
            let sourced = answered
                .iter()
                .filter(|a| !a.cited.is_empty() || !at(a).is_empty())
                .count();
            AtThreshold {
                threshold,
                sourced_percent: 100.0 * sourced as f64 / answered.len().max(1) as f64,
                sentences_attributed: answered
                    .iter()
                    .map(|a| at(a).iter().map(|c| c.supports.len()).sum::<usize>())
                    .sum(),
                attributed: scored(&|a| files(&at(a))),
                all: scored(&|a| {
                    let mut all = a.cited.clone();
                    all.extend(at(a));
                    files(&all)
                }),
            }
        })
        .collect();
    Sweep {
        spec: spec.to_string(),
        answers: answered.len(),
        unmarked_sentences: answered.iter().map(|a| a.matches.len()).sum(),
        cited: scored(&cited_files),
        thresholds,
    }
}

/// The files of `citations`, each once, in order.
fn files(citations: &[Citation]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for c in citations {
        if !files.contains(&c.path) {
            files.push(c.path.clone());
        }
    }
    files
}

/// The sweep as markdown: a table per spec.
pub fn markdown(sweeps: &[Sweep]) -> String {
    let pct = |p: Option<f64>| p.map_or("–".to_string(), |p| format!("{p:.1}%"));
    let mut text = String::new();
    for s in sweeps {
        let _ = writeln!(
            text,
            "## {}\n\n{} answers shown passages, {} unmarked sentences; the model's own citations: precision {}, recall {}.\n",
            s.spec,
            s.answers,
            s.unmarked_sentences,
            pct(s.cited.precision_percent),
            pct(s.cited.recall_percent)
        );
        text.push_str("| threshold | answers with a source | sentences attributed | attributed precision | attributed recall | all precision | all recall |\n");
        text.push_str("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for t in &s.thresholds {
            let _ = writeln!(
                text,
                "| {:.2} | {:.1}% | {} | {} | {} | {} | {} |",
                t.threshold,
                t.sourced_percent,
                t.sentences_attributed,
                pct(t.attributed.precision_percent),
                pct(t.attributed.recall_percent),
                pct(t.all.precision_percent),
                pct(t.all.recall_percent)
            );
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Supporting;

    fn passage(number: usize, file: &str) -> Passage {
        Passage::for_test(number, number as i64, &format!("/book/{file}"), "")
    }

    #[test]
    fn each_threshold_scores_the_same_matches() {
        let question = Question {
            id: "q".into(),
            question: "Q?".into(),
            answers: vec!["a".into()],
            supporting: Supporting::Files(vec!["gold.md".into()]),
            turn: None,
        };
        let passages = vec![passage(1, "gold.md"), passage(2, "other.md")];
        let matched = |passage, score| Match {
            sentence: format!("sentence {passage}"),
            passage,
            score,
        };
        let answered = [
            Answered {
                question: &question,
                cited: Vec::new(),
                passages: passages.clone(),
                matches: vec![matched(1, 0.8), matched(2, 0.4)],
            },
            Answered {
                question: &question,
                cited: vec![Citation::of(&passages[1])],
                passages,
                matches: Vec::new(),
            },
        ];
        let sweep = score(
            "rag",
            &answered,
            &[0.3, 0.5, 0.9],
            &PassageTitles::default(),
        );
        assert_eq!((sweep.answers, sweep.unmarked_sentences), (2, 2));
        assert_eq!(sweep.cited.precision_percent, Some(0.0));
        assert_eq!(sweep.cited.recall_percent, Some(0.0));
        let [low, mid, high] = &sweep.thresholds[..] else {
            panic!("three thresholds")
        };
        assert_eq!(low.sentences_attributed, 2);
        assert_eq!(low.attributed.precision_percent, Some(50.0));
        assert_eq!(mid.sentences_attributed, 1);
        assert_eq!(mid.attributed.precision_percent, Some(100.0));
        assert_eq!(mid.attributed.recall_percent, Some(50.0));
        assert_eq!(
            mid.all.precision_percent,
            Some(50.0),
            "the cited answer's source is wrong"
        );
        assert_eq!(mid.sourced_percent, 100.0);
        assert_eq!(high.sentences_attributed, 0);
        assert_eq!(high.sourced_percent, 50.0);
        assert!(
            markdown(&[sweep]).contains("| 0.50 | 100.0% | 1 | 100.0% | 50.0% | 50.0% | 50.0% |")
        );
    }
}
