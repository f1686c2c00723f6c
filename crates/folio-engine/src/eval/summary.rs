//! The per-spec numbers of an evaluation: answer quality, failures, model
//! usage and time per question, saved as `summary.json` (with what was
//! evaluated, for comparing runs later) and `summary.md` (a table to read or
//! paste into a PR).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::corpus::WrittenCorpus;
use super::error::{EvalError, Result};
use super::graph::GraphScope;
use super::results::Row;
use folio_core::choice::Choice;
use folio_core::stats::percentile;
use folio_index::pipeline::PassSummary;
use folio_llm::ModelInfo;
use folio_methods::runner::ResolvedSettings;
use folio_store::RunStatus;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export, rename = "EvalSummary")]
pub struct Summary {
    pub dataset: String,
    pub corpus: String,
    pub questions: usize,
    #[serde(flatten)]
    pub settings: ResolvedSettings,
    /// The tags every question was scoped to; empty for the whole corpus.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// `None` when the run stopped before the model was loaded.
    pub model: Option<ModelInfo>,
    /// The LLM judge, as its model is named, when one was asked for.
    pub judge: Option<String>,
    pub corpus_files: Option<WrittenCorpus>,
    pub ingest: PassSummary,
    /// Stopped before every question was answered.
    pub interrupted: bool,
    /// The information-gain graphs the `ig2rag` specs walked.
    pub graphs: Vec<GraphScope>,
    pub methods: Vec<SpecSummary>,
    /// For a dataset of conversations: each spec over the conversations'
    /// last turns alone, which lean on every turn before them. Empty for
    /// a dataset of single questions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub last_turns: Vec<SpecSummary>,
}

/// Means are over every question, failed ones included: a failure scores 0
/// and still cost the model calls it made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct SpecSummary {
    pub spec: String,
    pub n: usize,
    pub cover_em_percent: f64,
    pub em_percent: f64,
    pub f1_percent: f64,
    pub failures: usize,
    /// Answers that reached `max_tokens` before they finished (scored as
    /// written, not failures).
    #[serde(default)]
    pub cut_offs: usize,
    /// Share of the questions the method declined to answer.
    pub refused_percent: f64,
    /// Share of the questions whose shown passages held a gold answer, over
    /// the questions where passages were shown; `None` when none were.
    pub evidence_hit_percent: Option<f64>,
    /// Mean Recall@k of the supporting titles or files among the sources
    /// shown, over the questions where it is defined; `None` when nowhere.
    pub recall_percent: Option<f64>,
    /// How well the answers name their sources, against the gold evidence;
    /// `None` where no passages were shown or the dataset names no
    /// evidence, and in summaries made before answers had attributed
    /// sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sources: Option<SourceScores>,
    /// Share of the answers the LLM judge said give a gold answer; `None`
    /// without a judge. A model's opinion, not a string match.
    pub judge_percent: Option<f64>,
    pub llm_calls: Spread,
    /// Mean tokens per question; `None` where the model was called but its
    /// server reported no counts (llama-cpp-python's does not while
    /// streaming): not reported, which is not zero.
    pub prompt_tokens_mean: Option<f64>,
    /// The prompt tokens the model computed over those it was sent: below
    /// 1 where calls started from a prefix already in its cache. `None`
    /// where tokens were not reported, and in summaries made before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub computed_ratio: Option<f64>,
    pub completion_tokens_mean: Option<f64>,
    /// Nearest-rank percentiles (the same as `folio bench` reports).
    pub wall_ms_p50: f64,
    pub wall_ms_p95: f64,
}

/// The sources answers name, the model's citations and Folio's
/// attributions apart.
#[derive(
    Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct SourceScores {
    /// Share of the finished answers that name at least one source.
    pub sourced_percent: f64,
    pub cited: PrecisionRecall,
    pub attributed: PrecisionRecall,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct PrecisionRecall {
    /// The share of the named source files that are gold evidence, mean
    /// over the answers that name any.
    pub precision_percent: Option<f64>,
    /// The share of the gold evidence named, mean over the finished
    /// answers.
    pub recall_percent: Option<f64>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct Spread {
    pub mean: f64,
    pub min: i64,
    pub max: i64,
}

/// Each row's gold evidence, to score the sources it lists.
pub trait Evidence {
    /// Recall of the evidence among `sources`, or `None` where the row's
    /// question names none (see [`super::Supporting::share_found`]).
    fn found(&self, row: &Row, sources: &[String]) -> Option<f64>;
    /// The share of `sources` that are evidence; `None` without sources
    /// or evidence (see [`super::Supporting::share_holding`]).
    fn holding(&self, row: &Row, sources: &[String]) -> Option<f64>;
}

/// A dataset that names no evidence.
pub struct NoEvidence;

impl Evidence for NoEvidence {
    fn found(&self, _: &Row, _: &[String]) -> Option<f64> {
        None
    }

    fn holding(&self, _: &Row, _: &[String]) -> Option<f64> {
        None
    }
}

/// The judge's verdict on a row's answer; `None` when no judge was asked.
pub type VerdictOf<'a> = &'a dyn Fn(&Row) -> Option<bool>;

/// One summary per spec, in the order given, from the rows that are that
/// spec's; a spec without rows (an evaluation interrupted early) has n = 0.
pub fn summarize(
    specs: &[String],
    rows: &[Row],
    evidence: &dyn Evidence,
    verdict: VerdictOf<'_>,
) -> Vec<SpecSummary> {
    specs
        .iter()
        .map(|spec| {
            let mine: Vec<&Row> = rows.iter().filter(|r| &r.spec == spec).collect();
            summarize_spec(spec, &mine, evidence, verdict)
        })
        .collect()
}

/// The mean of the values that are there, `None` without any.
fn mean_of_some(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let present: Vec<f64> = values.flatten().collect();
    (!present.is_empty()).then(|| present.iter().sum::<f64>() / present.len() as f64)
}

fn summarize_spec(
    spec: &str,
    rows: &[&Row],
    evidence: &dyn Evidence,
    verdict: VerdictOf<'_>,
) -> SpecSummary {
    let mean = |value: &dyn Fn(&Row) -> f64| {
        if rows.is_empty() {
            0.0
        } else {
            rows.iter().map(|r| value(r)).sum::<f64>() / rows.len() as f64
        }
    };
    let percent = |hit: &dyn Fn(&Row) -> f64| 100.0 * mean(hit);
    let walls: Vec<f64> = rows.iter().map(|r| r.wall_ms as f64).collect();
    let or_zero = |x: f64| if x.is_nan() { 0.0 } else { x };
    let tokens_reported = rows.iter().all(|r| r.llm_calls == 0)
        || rows
            .iter()
            .any(|r| r.prompt_tokens + r.completion_tokens > 0);
    SpecSummary {
        spec: spec.to_string(),
        n: rows.len(),
        cover_em_percent: percent(&|r| f64::from(u8::from(r.scores.cover_em))),
        em_percent: percent(&|r| f64::from(u8::from(r.scores.em))),
        f1_percent: percent(&|r| r.scores.f1),
        failures: rows.iter().filter(|r| r.status != RunStatus::Done).count(),
        cut_offs: rows.iter().filter(|r| r.cut_off).count(),
        refused_percent: percent(&|r| f64::from(u8::from(r.refused))),
        evidence_hit_percent: mean_of_some(
            rows.iter()
                .map(|r| r.evidence_hit.map(|h| f64::from(u8::from(h)))),
        )
        .map(|m| 100.0 * m),
        recall_percent: mean_of_some(
            rows.iter()
                .filter(|r| !r.sources.is_empty())
                .map(|r| evidence.found(r, &r.sources)),
        )
        .map(|m| 100.0 * m),
        sources: source_scores(rows, evidence),
        judge_percent: mean_of_some(
            rows.iter()
                .map(|r| verdict(r).map(|v| f64::from(u8::from(v)))),
        )
        .map(|m| 100.0 * m),
        llm_calls: Spread {
            mean: mean(&|r| r.llm_calls as f64),
            min: rows.iter().map(|r| r.llm_calls).min().unwrap_or(0),
            max: rows.iter().map(|r| r.llm_calls).max().unwrap_or(0),
        },
        prompt_tokens_mean: tokens_reported.then(|| mean(&|r| r.prompt_tokens as f64)),
        computed_ratio: computed_ratio(rows).filter(|_| tokens_reported),
        completion_tokens_mean: tokens_reported.then(|| mean(&|r| r.completion_tokens as f64)),
        wall_ms_p50: or_zero(percentile(&walls, 50.0)),
        wall_ms_p95: or_zero(percentile(&walls, 95.0)),
    }
}

/// Prompt tokens computed over prompt tokens sent, over all `rows`.
fn computed_ratio(rows: &[&Row]) -> Option<f64> {
    let sent: i64 = rows.iter().map(|r| r.prompt_tokens).sum();
    let cached: i64 = rows.iter().map(|r| r.cached_tokens).sum();
    (sent > 0).then(|| (sent - cached) as f64 / sent as f64)
}

/// How the finished answers that were shown passages name their sources;
/// `None` where there are none, or no evidence to score them by.
fn source_scores(rows: &[&Row], evidence: &dyn Evidence) -> Option<SourceScores> {
    let answered: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| r.status == RunStatus::Done && !r.sources.is_empty())
        .collect();
    if answered.is_empty() {
        return None;
    }
    let scored = |named: &dyn Fn(&Row) -> &[String]| {
        let percent =
            |values: Vec<Option<f64>>| mean_of_some(values.into_iter()).map(|m| 100.0 * m);
        PrecisionRecall {
            precision_percent: percent(
                answered
                    .iter()
                    .map(|r| evidence.holding(r, named(r)))
                    .collect(),
            ),
            recall_percent: percent(
                answered
                    .iter()
                    .map(|r| evidence.found(r, named(r)))
                    .collect(),
            ),
        }
    };
    let cited = scored(&|r| &r.cited);
    let attributed = scored(&|r| &r.attributed);
    if cited.recall_percent.is_none() {
        return None;
    }
    let sourced = answered
        .iter()
        .filter(|r| !r.cited.is_empty() || !r.attributed.is_empty())
        .count();
    Some(SourceScores {
        sourced_percent: 100.0 * sourced as f64 / answered.len() as f64,
        cited,
        attributed,
    })
}

/// The table of `summary.md`, one row per spec. The LLM judge's column
/// comes only when a judge was asked, last and marked, so it is never read
/// as one of the string metrics.
pub fn markdown(methods: &[SpecSummary]) -> String {
    let judged = methods.iter().any(|m| m.judge_percent.is_some());
    let mut header = String::from(
        "| method | n | Cover-EM | EM | F1 | evidence hit | recall@k | answers with a source | cited P / R | attributed P / R | failures | cut off | refused | LLM calls mean (min–max) | prompt tokens / q | computed / sent | completion tokens / q | wall p50 | wall p95 |",
    );
    let mut rule = String::from(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    );
    if judged {
        header.push_str(" LLM judge* |");
        rule.push_str(" ---: |");
    }
    let mut table = format!("{header}\n{rule}\n");
    for m in methods {
        table.push_str(&format!(
            "| {} | {} | {:.1}% | {:.1}% | {:.1}% | {} | {} | {} | {} | {} | {} | {} | {:.1}% | {:.1} ({}–{}) | {} | {} | {} | {:.1} s | {:.1} s |",
            m.spec.replace('|', "\\|"),
            m.n,
            m.cover_em_percent,
            m.em_percent,
            m.f1_percent,
            percent_or_dash(m.evidence_hit_percent),
            percent_or_dash(m.recall_percent),
            percent_or_dash(m.sources.map(|s| s.sourced_percent)),
            precision_recall(m.sources.map(|s| s.cited)),
            precision_recall(m.sources.map(|s| s.attributed)),
            m.failures,
            m.cut_offs,
            m.refused_percent,
            m.llm_calls.mean,
            m.llm_calls.min,
            m.llm_calls.max,
            tokens_or_dash(m.prompt_tokens_mean),
            m.computed_ratio
                .map_or("–".to_string(), |r| format!("{r:.2}×")),
            tokens_or_dash(m.completion_tokens_mean),
            m.wall_ms_p50 / 1000.0,
            m.wall_ms_p95 / 1000.0,
        ));
        if judged {
            table.push_str(&format!(" {} |", percent_or_dash(m.judge_percent)));
        }
        table.push('\n');
    }
    table
}

/// The footnote to the judge's column: who judged, and what it is worth.
pub fn judge_note(judge: &str) -> String {
    format!(
        "\n\\* LLM judge: the share of answers that {judge} said give a gold answer. \
         A model's opinion, not a string match: it catches right answers worded \
         otherwise and makes mistakes of its own.\n"
    )
}

fn percent_or_dash(p: Option<f64>) -> String {
    p.map_or("–".to_string(), |p| format!("{p:.1}%"))
}

/// `80.0% / 50.0%`; a dash for a part not measured.
fn precision_recall(scores: Option<PrecisionRecall>) -> String {
    scores.map_or("–".to_string(), |s| {
        format!(
            "{} / {}",
            percent_or_dash(s.precision_percent),
            percent_or_dash(s.recall_percent)
        )
    })
}

fn tokens_or_dash(t: Option<f64>) -> String {
    t.map_or("–".to_string(), |t| format!("{t:.0}"))
}

/// Says what a dash in the token columns means, where there is one.
fn tokens_note(methods: &[SpecSummary]) -> Option<&'static str> {
    methods
        .iter()
        .any(|m| m.prompt_tokens_mean.is_none())
        .then_some("\n– tokens: the model's server reported no token counts.\n")
}

/// Writes `summary.json` and `summary.md`.
pub fn write(summary: &Summary, json_path: &Path, markdown_path: &Path) -> Result<()> {
    let write = |path: &Path, text: String| {
        std::fs::write(path, text).map_err(|source| EvalError::Write {
            path: path.to_path_buf(),
            source,
        })
    };
    let json = serde_json::to_string_pretty(summary).map_err(|e| EvalError::Write {
        path: json_path.to_path_buf(),
        source: e.into(),
    })?;
    write(json_path, json + "\n")?;
    write(markdown_path, summary_markdown(summary))
}

/// `summary.md`: the table (and the conversations' last turns' apart),
/// the judge's footnote, a line per graph walked.
pub fn summary_markdown(summary: &Summary) -> String {
    let mut text = markdown(&summary.methods);
    text.push_str(&last_turns_markdown(&summary.last_turns));
    if let Some(judge) = &summary.judge {
        text.push_str(&judge_note(judge));
    }
    text.extend(tokens_note(&summary.methods));
    for g in &summary.graphs {
        text.push('\n');
        text.push_str(&graph_note(g));
    }
    text
}

/// The table over the conversations' last turns, under a heading of its
/// own; nothing for a dataset without conversations.
pub fn last_turns_markdown(last_turns: &[SpecSummary]) -> String {
    if last_turns.is_empty() {
        return String::new();
    }
    format!(
        "\nLast turn of each conversation:\n\n{}",
        markdown(last_turns)
    )
}

/// One line on a graph an evaluation walked: how much of what the
/// questions reach it covers, and its cost.
pub fn graph_note(g: &GraphScope) -> String {
    let s = &g.status;
    let [redundant, minor, significant, novel] = s.edges_by_class;
    format!(
        "{} graph over the {} chunks nearest each question ({} in all): {} scored, {} failed, \
         {} edges (redundant {redundant}, minor {minor}, significant {significant}, novel {novel}); \
         {:.1} calls and {} per scored node, {:.0}% of prompt tokens from the prefix cache.\n",
        s.rubric.as_str(),
        g.reach,
        g.chunks,
        s.scored,
        s.failed,
        s.edges,
        s.cost.calls as f64 / s.cost.nodes.max(1) as f64,
        s.cost
            .tokens_per_node()
            .map_or("–".to_string(), |t| format!("{t:.0} tokens")),
        100.0 * s.cost.cached_tokens as f64 / s.cost.prompt_tokens.max(1) as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::metrics::Scores;

    fn row(spec: &str, status: RunStatus, scores: Scores, calls: i64, wall_ms: u64) -> Row {
        Row {
            question_id: format!("q{wall_ms}"),
            spec: spec.into(),
            status,
            answer: None,
            error: None,
            scores,
            llm_calls: calls,
            prompt_tokens: 100 * calls,
            cached_tokens: 40 * calls,
            completion_tokens: 10 * calls,
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

    /// Every question's evidence is these files.
    struct Wanted(&'static [&'static str]);

    impl Evidence for Wanted {
        fn found(&self, _: &Row, sources: &[String]) -> Option<f64> {
            let hits = self.0.iter().filter(|w| sources.iter().any(|s| s == *w));
            Some(hits.count() as f64 / self.0.len() as f64)
        }

        fn holding(&self, _: &Row, sources: &[String]) -> Option<f64> {
            let hits = sources.iter().filter(|s| self.0.contains(&s.as_str()));
            (!sources.is_empty()).then(|| hits.count() as f64 / sources.len() as f64)
        }
    }

    fn files(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn scores(em: bool, f1: f64, cover_em: bool) -> Scores {
        Scores { em, f1, cover_em }
    }

    #[test]
    fn each_spec_is_summarised_from_its_own_rows() {
        let done = RunStatus::Done;
        let shown = |r: Row| Row {
            sources: files(&["a.md", "c.md"]),
            ..r
        };
        let rows = vec![
            row("pager", done, scores(true, 1.0, true), 3, 400),
            shown(row("rag", done, scores(false, 0.5, true), 1, 100)),
            row("pager", done, scores(false, 0.5, true), 5, 100),
            row("rag", RunStatus::Failed, Scores::default(), 1, 300),
            row("pager", done, scores(false, 0.0, false), 4, 300),
            row("pager", RunStatus::Failed, Scores::default(), 0, 200),
        ];
        let specs = vec![
            "pager".to_string(),
            "rag".to_string(),
            "unreached".to_string(),
        ];
        let summaries = summarize(&specs, &rows, &Wanted(&["a.md", "b.md"]), &|_| None);
        let pager = &summaries[0];
        assert_eq!(pager.spec, "pager");
        assert_eq!(pager.n, 4);
        assert_eq!(pager.failures, 1);
        // Cover-EM 2 of 4, EM 1 of 4, F1 (1 + 0.5 + 0 + 0) / 4.
        assert_eq!(pager.cover_em_percent, 50.0);
        assert_eq!(pager.em_percent, 25.0);
        assert_eq!(pager.f1_percent, 37.5);
        // Calls 3, 5, 4, 0: mean 3, min 0, max 5; tokens 100 and 10 per call.
        assert_eq!(
            pager.llm_calls,
            Spread {
                mean: 3.0,
                min: 0,
                max: 5
            }
        );
        assert_eq!(pager.prompt_tokens_mean, Some(300.0));
        // 40 of every 100 prompt tokens from the cache.
        assert!((pager.computed_ratio.unwrap() - 0.6).abs() < 1e-9);
        assert_eq!(pager.completion_tokens_mean, Some(30.0));
        // Walls sorted 100, 200, 300, 400: nearest rank ceil(0.5·4) = 2nd,
        // ceil(0.95·4) = 4th.
        assert_eq!((pager.wall_ms_p50, pager.wall_ms_p95), (200.0, 400.0));

        let rag = &summaries[1];
        assert_eq!((rag.n, rag.failures), (2, 1));
        assert_eq!(rag.cover_em_percent, 50.0);
        assert_eq!(rag.f1_percent, 25.0);
        assert_eq!((rag.wall_ms_p50, rag.wall_ms_p95), (100.0, 300.0));

        assert_eq!(pager.evidence_hit_percent, None, "no row showed passages");
        assert_eq!(pager.recall_percent, None);
        assert_eq!(rag.recall_percent, Some(50.0));

        let unreached = &summaries[2];
        assert_eq!(unreached.n, 0);
        assert_eq!(unreached.f1_percent, 0.0);
        assert_eq!(unreached.wall_ms_p95, 0.0);
        assert_eq!(pager.judge_percent, None, "no judge was asked");
    }

    /// llama-cpp-python's server reports no token counts while streaming;
    /// zero would read as free.
    #[test]
    fn tokens_a_server_did_not_report_are_a_dash_not_zero() {
        let done = RunStatus::Done;
        let unreported = |r: Row| Row {
            prompt_tokens: 0,
            cached_tokens: 0,
            completion_tokens: 0,
            ..r
        };
        let rows = vec![
            unreported(row("served", done, scores(true, 1.0, true), 2, 100)),
            unreported(row("served", done, scores(false, 0.0, false), 1, 200)),
            row("embedded", done, scores(true, 1.0, true), 2, 100),
            row("no-calls", RunStatus::Failed, Scores::default(), 0, 10),
        ];
        let specs = ["served", "embedded", "no-calls"].map(String::from);
        let summaries = summarize(&specs, &rows, &NoEvidence, &|_| None);
        let tokens: Vec<_> = summaries
            .iter()
            .map(|m| (m.prompt_tokens_mean, m.completion_tokens_mean))
            .collect();
        assert_eq!(
            tokens,
            [
                (None, None),
                (Some(200.0), Some(20.0)),
                (Some(0.0), Some(0.0))
            ]
        );
        let table = markdown(&summaries);
        assert!(table.contains("| 1.5 (1–2) | – | – | – |"), "{table}");
        assert!(
            table.contains("| 2.0 (2–2) | 200 | 0.60× | 20 |"),
            "{table}"
        );
        assert!(tokens_note(&summaries)
            .unwrap()
            .contains("reported no token counts"));
        assert_eq!(tokens_note(&summaries[1..]), None);
    }

    #[test]
    fn the_judge_has_its_own_marked_column_only_when_asked() {
        let done = RunStatus::Done;
        let rows = vec![
            row("rag", done, scores(false, 0.2, false), 1, 100),
            row("rag", done, scores(false, 0.0, false), 1, 200),
            row("rag", RunStatus::Failed, Scores::default(), 1, 300),
            row("rag", done, scores(true, 1.0, true), 1, 400),
        ];
        // The judge accepts the first answer, which no string metric does.
        let verdict = |r: &Row| Some(r.wall_ms == 100 || r.wall_ms == 400);
        let summaries = summarize(&["rag".into()], &rows, &NoEvidence, &verdict);
        assert_eq!(summaries[0].judge_percent, Some(50.0));
        assert_eq!(summaries[0].cover_em_percent, 25.0);
        let table = markdown(&summaries);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].ends_with("| wall p95 | LLM judge* |"),
            "{}",
            lines[0]
        );
        assert!(lines[2].ends_with("| 50.0% |"), "{}", lines[2]);
        assert_eq!(lines[1].matches('|').count(), lines[2].matches('|').count());
        let note = judge_note("embedded smollm2.gguf");
        assert!(note.contains("* LLM judge: the share of answers that embedded smollm2.gguf said"));
        assert!(note.contains("not a string match"));
    }

    #[test]
    fn the_table_has_a_row_per_spec_with_one_decimal() {
        let rows = vec![
            row(
                "pager:variant=parallel",
                RunStatus::Done,
                scores(true, 1.0, true),
                2,
                1500,
            ),
            row(
                "pager:variant=parallel",
                RunStatus::Done,
                scores(false, 0.0, false),
                2,
                2500,
            ),
            row(
                "pager:variant=parallel",
                RunStatus::Done,
                scores(false, 0.0, true),
                2,
                3500,
            ),
        ];
        let mut rows = rows;
        rows[0].evidence_hit = Some(true);
        rows[1].evidence_hit = Some(false);
        rows[2].cut_off = true;
        rows[0].sources = files(&["a.md", "b.md"]);
        rows[0].cited = files(&["a.md"]);
        rows[0].attributed = files(&["c.md"]);
        rows[1].sources = files(&["a.md", "c.md"]);
        let table = markdown(&summarize(
            &["pager:variant=parallel".into()],
            &rows,
            &Wanted(&["a.md", "b.md"]),
            &|_| None,
        ));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("| method | n | Cover-EM | EM | F1 |"));
        assert_eq!(
            lines[2],
            "| pager:variant=parallel | 3 | 66.7% | 33.3% | 33.3% | 50.0% | 75.0% | 50.0% | 100.0% / 25.0% | 0.0% / 0.0% | 0 | 1 | 0.0% | 2.0 (2–2) | 200 | 0.60× | 20 | 2.5 s | 3.5 s |"
        );
    }
}
