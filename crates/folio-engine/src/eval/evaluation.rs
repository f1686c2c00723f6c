//! One evaluation from its request to its summary. [`Evaluation::open`]
//! makes the checks that cost nothing, the output folder and the corpus on
//! disk; [`Evaluation::run`] takes the stages in order (index, prepare the
//! model, vectors and iG²RAG's graphs, answer, judge, summarise) and
//! reports each as [`EvalEvent`]s. `folio eval` and the app's Evaluate view
//! only start it and render its events, so an evaluation started in one
//! goes on in the other.

use std::collections::HashMap;
use std::path::PathBuf;

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::corpus::{self, PassageTitles, PreparedCorpus};
use super::dataset::{self, Question};
use super::error::{EvalError, Result};
use super::graph::{self as eval_graph, GraphScope};
use super::judge::{judge_all, Judge, Judgement};
use super::manifest::{self, Manifest};
use super::progress::{EvalEvent, EvalStage};
use super::results::{ResultsFile, Row};
use super::run::{answer_all, AnswerStep, Batch, Remaining};
use super::spec::{self, MethodSpec};
use super::summary::{self, Evidence, Summary};
use super::OutDir;
use crate::library::Library;
use crate::Config;
use folio_core::events::EngineEvent;
use folio_index::graph::{GraphBuildOptions, Rubric};
use folio_index::pipeline::PassSummary;
use folio_llm::ModelInfo;
use folio_methods::find;
use folio_methods::runner::{AskSettings, ResolvedSettings};
use folio_store::Scope;

/// What to evaluate, as `folio eval`'s flags say it; an evaluation job's
/// payload.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EvalRequest {
    pub dataset: PathBuf,
    pub corpus: PathBuf,
    pub methods: Vec<MethodSpec>,
    /// Only the first N questions.
    pub limit: Option<usize>,
    pub out: PathBuf,
    /// Replace the answers already in `out` instead of reusing them.
    pub fresh: bool,
    /// Chunks nearest each question scored into `ig2rag`'s graph.
    pub graph_reach: usize,
    /// Answers in flight at once.
    pub concurrency: usize,
    /// Also ask the judge model whether each answer means a gold one.
    pub judge: bool,
    pub settings: AskSettings,
    /// Only passages of notes with one of these tags (or one nested under
    /// one) are retrieved; none for the whole corpus. Missing from jobs
    /// queued before evaluations could be scoped.
    #[serde(default)]
    pub tags: Vec<String>,
}

impl EvalRequest {
    /// The checks that cost nothing (settings, specs, dataset lines), made
    /// before any work: the settings the runs will use, and the questions.
    pub fn check(&self, config: &Config) -> Result<(ResolvedSettings, Vec<Question>)> {
        if self.graph_reach == 0 {
            return Err(EvalError::BadSetting {
                name: "graph reach",
                message: "must be at least 1: ig2rag's graph is scored over that many chunks nearest each question".into(),
            });
        }
        if self.concurrency == 0 {
            return Err(EvalError::BadSetting {
                name: "concurrency",
                message: "must be at least 1: it is how many answers are in flight at once".into(),
            });
        }
        let resolved = self.settings.resolve(&config.llm);
        spec::check_all(&self.methods, resolved)?;
        let questions = dataset::read(&self.dataset, self.limit)?;
        Ok((resolved, questions))
    }
}

pub struct Evaluation {
    request: EvalRequest,
    resolved: ResolvedSettings,
    questions: Vec<Question>,
    manifest: Manifest,
    out: OutDir,
    results: ResultsFile,
    rows: Vec<Row>,
    prepared: PreparedCorpus,
    library: Library,
    notices: Vec<String>,
    ingest: PassSummary,
    model: Option<ModelInfo>,
    graphs: Vec<GraphScope>,
    interrupted: bool,
    judged: Option<Judged>,
    /// Cancels the whole evaluation; its index's library runs under a child.
    stop: CancellationToken,
}

struct Judged {
    judge: String,
    judgements: Vec<Judgement>,
}

impl Evaluation {
    /// Checks the request and everything that costs nothing (specs, dataset
    /// lines, whether `out` holds answers to reuse) before any work, then
    /// writes a JSONL corpus out and opens the evaluation's own index.
    /// `stop` cancels the whole evaluation, indexing included.
    pub async fn open(
        request: EvalRequest,
        mut config: Config,
        stop: &CancellationToken,
    ) -> Result<Evaluation> {
        let (resolved, questions) = request.check(&config)?;
        let manifest = Manifest::new(
            &request.dataset,
            &request.corpus,
            &questions,
            &request.methods,
            resolved,
            &request.tags,
            &config,
        )?;
        let out = OutDir::create(&request.out)?;
        let opened = manifest::open(&out, &manifest, request.fresh)?;
        let mut notices = vec![format!("indexing into {}", out.index().display())];
        if !request.tags.is_empty() {
            notices.push(format!(
                "retrieving only from notes tagged {}",
                manifest::tag_list(&request.tags)
            ));
        }
        if let Some(line) = opened.torn_line {
            notices.push(format!(
                "warning: line {line} of results.jsonl was cut off mid-write (the run was killed); \
                 dropped, that answer is asked again"
            ));
        }
        if !opened.rows.is_empty() {
            notices.push(format!(
                "resuming: {} of {} answers already in results.jsonl",
                opened.rows.len(),
                questions.len() * request.methods.len()
            ));
        }
        let prepared = corpus::prepare(&request.corpus, &out.passages())?;
        if let Some(w) = &prepared.written {
            notices.push(format!(
                "corpus: {} passages in {} ({} written, {} unchanged, {} removed)",
                w.passages,
                prepared.folder.display(),
                w.written,
                w.unchanged,
                w.removed
            ));
        }
        config.calibrations_file = Some(config.calibrations().path().to_path_buf());
        config.data_dir = out.index();
        let library = Library::open_with_stop(config, stop.child_token()).await?;
        Ok(Evaluation {
            request,
            resolved,
            questions,
            manifest,
            out,
            results: opened.file,
            rows: opened.rows,
            prepared,
            library,
            notices,
            ingest: PassSummary::default(),
            model: None,
            graphs: Vec::new(),
            interrupted: false,
            judged: None,
            stop: stop.clone(),
        })
    }

    /// The evaluation's own library, whose progress events show indexing.
    pub fn library(&self) -> &Library {
        &self.library
    }

    /// What `open` found worth telling: answers reused, a torn line dropped,
    /// the corpus written out.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    pub fn out(&self) -> &OutDir {
        &self.out
    }

    /// Runs every stage in order, reporting each through `on`, and returns
    /// the summary it wrote. A cancel through the token the evaluation was
    /// opened with keeps every answer given: indexing and graph scoring stop
    /// with [`EvalError::Interrupted`], answering and judging with a summary
    /// marked interrupted.
    pub async fn run(mut self, on: &(dyn Fn(EvalEvent) + Sync)) -> Result<Summary> {
        let cancel = &self.stop.clone();
        for text in &self.notices {
            on(EvalEvent::Notice { text: text.clone() });
        }
        let stage = |stage: EvalStage| on(EvalEvent::Stage { stage });
        stage(EvalStage::Indexing);
        let summary = self.index(on).await?;
        on(EvalEvent::Indexed { summary });
        stage(EvalStage::Preparing);
        self.prepare(cancel, on).await?;
        stage(EvalStage::Answering);
        self.answer(cancel, &|p| {
            if let AnswerStep::Answered { done, total, row } = p {
                on(EvalEvent::Answered {
                    done,
                    total,
                    row: row.clone(),
                });
            }
        })
        .await?;
        stage(EvalStage::Judging);
        self.judge(cancel, &|done, total| on(EvalEvent::Judged { done, total }))
            .await?;
        stage(EvalStage::Summarizing);
        self.finish()
    }

    /// Indexes the corpus through the normal pipeline; unchanged files cost
    /// nothing, so a re-run reuses the index. Cancelled by the token the
    /// evaluation was opened with.
    async fn index(&mut self, on: &(dyn Fn(EvalEvent) + Sync)) -> Result<PassSummary> {
        let mut events = self.library.subscribe();
        let ingest = {
            let indexing = corpus::ingest(&self.library, &self.prepared.folder);
            tokio::pin!(indexing);
            loop {
                tokio::select! {
                    done = &mut indexing => break done?,
                    event = events.recv() => match event {
                        Ok(EngineEvent::JobProgress(progress)) => on(EvalEvent::Indexing { progress }),
                        Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                        // The library holds the sender, so this cannot happen
                        // while it lives; wait for the pass alone if it does.
                        Err(broadcast::error::RecvError::Closed) => break (&mut indexing).await?,
                    },
                }
            }
        };
        if ingest.cancelled {
            return Err(EvalError::Interrupted("indexing"));
        }
        self.ingest = ingest;
        Ok(ingest)
    }

    /// Loads the model before the long answering loop, so a missing model
    /// fails at once, then the vectors and the graphs `ig2rag` specs walk.
    async fn prepare(
        &mut self,
        cancel: &CancellationToken,
        on: &(dyn Fn(EvalEvent) + Sync),
    ) -> Result<()> {
        self.model = Some(self.library.llm().await?.info());
        let retrieves = self
            .request
            .methods
            .iter()
            .any(|s| find(&s.method).is_ok_and(|m| m.info().retrieves));
        if retrieves {
            self.library.warm_vectors().await?;
        }
        for rubric in eval_graph::rubrics_walked(&self.request.methods) {
            let scope = self.score_graph(rubric, cancel, on).await?;
            on(EvalEvent::Notice {
                text: summary::graph_note(&scope).trim_end().to_string(),
            });
            self.graphs.push(scope);
            if cancel.is_cancelled() {
                return Err(EvalError::Interrupted("scoring the graph"));
            }
        }
        Ok(())
    }

    /// Scores the chunks the questions reach into `rubric`'s graph; a
    /// cancel stops after the chunk in flight, keeping what was scored.
    async fn score_graph(
        &self,
        rubric: Rubric,
        cancel: &CancellationToken,
        on: &(dyn Fn(EvalEvent) + Sync),
    ) -> Result<GraphScope> {
        let reach = self.request.graph_reach;
        let scope = eval_graph::reached_chunks(&self.library, &self.questions, reach).await?;
        on(EvalEvent::GraphStarted {
            rubric,
            chunks: scope.len(),
        });
        let options = GraphBuildOptions {
            rubric,
            ..GraphBuildOptions::default()
        };
        let this_run = self
            .library
            .jobs()
            .build_graph_within(options, &scope, cancel, &|p| {
                on(EvalEvent::GraphScoring { progress: *p })
            })
            .await?;
        let status = self
            .library
            .graph_status()
            .await?
            .rubrics
            .into_iter()
            .find(|r| r.rubric == rubric)
            .ok_or(EvalError::Interrupted("scoring the graph"))?;
        Ok(GraphScope {
            reach,
            chunks: scope.len(),
            status,
            this_run,
        })
    }

    /// Answers what earlier runs left unanswered; a cancel keeps every
    /// answer given and marks the evaluation interrupted.
    async fn answer(
        &mut self,
        cancel: &CancellationToken,
        progress: &(dyn Fn(AnswerStep<'_>) + Sync),
    ) -> Result<()> {
        let remaining = Remaining::new(&self.questions, &self.request.methods, &self.rows);
        let scope = Scope {
            tags: self.request.tags.clone(),
            ..Scope::default()
        };
        let batch = Batch {
            questions: &self.questions,
            specs: &self.request.methods,
            remaining: &remaining,
            settings: self.request.settings,
            scope: &scope,
            concurrency: self.request.concurrency,
        };
        let answered =
            answer_all(&self.library, batch, cancel, &mut self.results, progress).await?;
        self.rows.extend(answered.rows);
        self.interrupted = answered.interrupted;
        Ok(())
    }

    /// With `judge` asked for, judges every answer the judge has no verdict
    /// on yet; `progress` gets (judged, to judge).
    async fn judge(
        &mut self,
        cancel: &CancellationToken,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<()> {
        if !self.request.judge {
            return Ok(());
        }
        let judge = Judge::open(&self.library).await?;
        let mut opened = ResultsFile::<Judgement>::resume(&self.out.judgements())?;
        let new = judge_all(
            &judge,
            &self.questions,
            &self.rows,
            &opened.rows,
            &mut opened.file,
            cancel,
            progress,
        )
        .await?;
        let mut judgements = opened.rows;
        judgements.extend(new);
        judgements.retain(|j| j.judge == judge.name());
        self.interrupted |= cancel.is_cancelled();
        self.judged = Some(Judged {
            judge: judge.name().to_string(),
            judgements,
        });
        Ok(())
    }

    /// Summarises every spec over this evaluation's questions and writes
    /// `summary.json` and `summary.md`.
    fn finish(self) -> Result<Summary> {
        let no_titles = PassageTitles::default();
        let titles = self
            .prepared
            .written
            .as_ref()
            .map_or(&no_titles, |w| &w.titles);
        let by_id: HashMap<&str, &Question> =
            self.questions.iter().map(|q| (q.id.as_str(), q)).collect();
        let evidence = GoldEvidence { by_id, titles };
        let verdicts: HashMap<(&str, &str), bool> = self
            .judged
            .iter()
            .flat_map(|j| &j.judgements)
            .map(|j| {
                (
                    (j.question_id.as_str(), j.spec.as_str()),
                    j.verdict == Some(true),
                )
            })
            .collect();
        // An answer the judge has not reached (it was interrupted) counts as
        // a no, like an unclear verdict.
        let judged = |row: &Row| {
            self.judged.as_ref().map(|_| {
                verdicts
                    .get(&(row.question_id.as_str(), row.spec.as_str()))
                    .copied()
                    .unwrap_or(false)
            })
        };
        let methods = summary::summarize(&self.manifest.specs, &self.rows, &evidence, &judged);
        let last_turn_rows: Vec<Row> = self
            .rows
            .iter()
            .filter(|r| {
                evidence
                    .by_id
                    .get(r.question_id.as_str())
                    .is_some_and(|q| q.is_last_turn())
            })
            .cloned()
            .collect();
        let last_turns = if self.questions.iter().any(|q| q.turn.is_some()) {
            summary::summarize(&self.manifest.specs, &last_turn_rows, &evidence, &judged)
        } else {
            Vec::new()
        };
        let summary = Summary {
            dataset: self.request.dataset.display().to_string(),
            corpus: self.request.corpus.display().to_string(),
            questions: self.questions.len(),
            settings: self.resolved,
            tags: self.request.tags,
            model: self.model,
            judge: self.judged.map(|j| j.judge),
            corpus_files: self.prepared.written,
            ingest: self.ingest,
            interrupted: self.interrupted,
            graphs: self.graphs,
            methods,
            last_turns,
        };
        summary::write(&summary, &self.out.summary_json(), &self.out.summary_md())?;
        Ok(summary)
    }
}

/// The dataset's evidence for each row's question.
struct GoldEvidence<'a> {
    by_id: HashMap<&'a str, &'a Question>,
    titles: &'a PassageTitles,
}

impl Evidence for GoldEvidence<'_> {
    fn found(&self, row: &Row, sources: &[String]) -> Option<f64> {
        let question = self.by_id.get(row.question_id.as_str())?;
        question.supporting.share_found(sources, self.titles)
    }

    fn holding(&self, row: &Row, sources: &[String]) -> Option<f64> {
        let question = self.by_id.get(row.question_id.as_str())?;
        question.supporting.share_holding(sources, self.titles)
    }
}
