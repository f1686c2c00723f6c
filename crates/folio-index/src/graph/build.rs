//! The graph job (iG²RAG Algorithm 1, and Algorithm 3 for what changes
//! later): every chunk with a vector and no scoring under the rubric gets
//! its top-n neighbours graded by the model, giving edges from it to them.
//! A first build and an incremental update are the same pass; only the
//! number of pending chunks differs. Each node is committed with the job's
//! progress, so stopping (pause, cancel, kill -9) loses at most the node in
//! flight, and the next run continues with the chunks still pending.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::neighbours::Neighbourhoods;
use super::scorer::{ScoreError, Scorer};
use super::Rubric;
use crate::{IndexError, Result};
use folio_core::events::Progress;
use folio_llm::prompts::Prompts;
use folio_llm::{Llm, LlmError};
use folio_retrieve::ExactVectors;
use folio_store::{GainEdge, JobState, NodeScoring, Store};

/// The paper's top-n (Appendix B.2).
pub const DEFAULT_NEIGHBOURS: usize = 5;
/// More neighbours than this make one prompt too long for small contexts.
pub const MAX_NEIGHBOURS: usize = 20;

/// What a graph job builds; the job's payload.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
pub struct GraphBuildOptions {
    pub rubric: Rubric,
    /// Neighbours scored per chunk.
    pub n: usize,
}

impl Default for GraphBuildOptions {
    fn default() -> Self {
        GraphBuildOptions {
            rubric: Rubric::Coarse,
            n: DEFAULT_NEIGHBOURS,
        }
    }
}

impl GraphBuildOptions {
    pub fn check(&self) -> Result<()> {
        if (1..=MAX_NEIGHBOURS).contains(&self.n) {
            Ok(())
        } else {
            Err(IndexError::BadOption(format!(
                "n must be between 1 and {MAX_NEIGHBOURS} neighbours per chunk, not {}",
                self.n
            )))
        }
    }
}

/// A pass's running totals, reported after every node: chunks scored
/// (`failed` counts those whose grades could not be read) and what the
/// scoring found and cost.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Serialize,
    serde::Deserialize,
    ts_rs::TS,
    schemars::JsonSchema,
)]
#[ts(export)]
pub struct BuildProgress {
    #[serde(flatten)]
    #[ts(flatten)]
    pub progress: Progress,
    pub edges: u64,
    pub calls: u64,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub completion_tokens: u64,
    /// The pass stopped before the last pending chunk (paused, cancelled,
    /// shut down); what it did is kept.
    pub stopped: bool,
}

pub struct GraphBuild<'a> {
    pub store: &'a Store,
    pub llm: &'a dyn Llm,
    pub prompts: &'a Prompts,
    pub vectors: &'a ExactVectors,
    pub options: GraphBuildOptions,
    /// The job whose progress is committed with each node, and the active
    /// time it had before this pass.
    pub job: Option<(i64, i64)>,
    /// Only these chunks are scored (their neighbours may lie outside);
    /// `None` scores every pending chunk.
    pub scope: Option<&'a HashSet<i64>>,
    pub timeout: Duration,
    /// Stops the pass, the call in flight included (shutdown).
    pub cancel: &'a CancellationToken,
    /// See [`Scorer::reuse_prefix`]; off only for `folio bench graph`'s
    /// baseline.
    pub reuse_prefix: bool,
}

impl GraphBuild<'_> {
    /// Scores every pending chunk, or stops early when `cancel` fires (a
    /// shutdown, a pause, a cancel of the job in this process) or the job is
    /// cancelled by another.
    pub async fn run(
        &self,
        on_progress: &(dyn Fn(&BuildProgress) + Sync),
    ) -> Result<BuildProgress> {
        self.options.check()?;
        let mut pending = self.store.pending_gain_chunks(self.options.rubric).await?;
        if let Some(scope) = self.scope {
            pending.retain(|c| scope.contains(c));
        }
        let total = pending.len() as u64;
        let mut progress = BuildProgress {
            progress: Progress::after(0, total, 0, Duration::ZERO),
            ..BuildProgress::default()
        };
        if let Some((job_id, _)) = self.job {
            self.store.start_job(job_id, total).await?;
        }
        let (mut done, mut failed) = (0, 0);
        on_progress(&progress);
        let neighbourhoods = Neighbourhoods::new(self.vectors);
        let scorer = Scorer {
            llm: self.llm,
            prompts: self.prompts,
            rubric: self.options.rubric,
            timeout: self.timeout,
            cancel: self.cancel,
            reuse_prefix: self.reuse_prefix,
        };
        let model = self.llm.info().model;
        let started = Instant::now();
        for chunk in pending {
            if self.should_stop().await? {
                progress.stopped = true;
                break;
            }
            let near = neighbourhoods.of(chunk, self.options.n);
            let mut ids = vec![chunk];
            ids.extend(near.iter().map(|(id, _)| *id));
            // Chunks deleted since the vectors were read are simply missing.
            let found = self.store.chunks_by_id(&ids).await?;
            let Some((baseline, neighbours)) = found.split_first().filter(|(b, _)| b.id == chunk)
            else {
                done += 1;
                progress.progress.done = done;
                continue;
            };
            let scored = if neighbours.is_empty() {
                None
            } else {
                match scorer.score(baseline, neighbours).await {
                    Ok(s) => Some(s),
                    Err(ScoreError::Llm(LlmError::Cancelled)) => {
                        progress.stopped = true;
                        break;
                    }
                    Err(e) => return Err(e.into()),
                }
            };
            let similarity = |id: i64| near.iter().find(|(n, _)| *n == id).map_or(0.0, |(_, s)| *s);
            let outcome = match scored.as_ref().map(|s| &s.grades) {
                None => Ok(Vec::new()),
                Some(Ok(grades)) => Ok(neighbours
                    .iter()
                    .zip(grades)
                    .map(|(n, g)| GainEdge {
                        source: chunk,
                        target: n.id,
                        class: g.class,
                        score: g.weight,
                        similarity: similarity(n.id),
                    })
                    .collect()),
                Some(Err(reason)) => Err(reason.clone()),
            };
            let cost = scored.as_ref();
            let node = NodeScoring {
                chunk_id: chunk,
                rubric: self.options.rubric,
                model: model.clone(),
                outcome,
                calls: cost.map_or(0, |s| s.calls),
                prompt_tokens: cost.map_or(0, |s| s.prompt_tokens),
                cached_tokens: cost.map_or(0, |s| s.cached_tokens),
                completion_tokens: cost.map_or(0, |s| s.completion_tokens),
            };
            let active = self
                .job
                .map(|(id, before)| (id, before + started.elapsed().as_millis() as i64));
            let written = self.store.write_gain_node(&node, active).await?;
            done += 1;
            failed += u64::from(written.stored && node.outcome.is_err());
            progress.progress = Progress::after(done, total, failed, started.elapsed());
            progress.edges += written.edges;
            progress.calls += u64::from(node.calls);
            progress.prompt_tokens += node.prompt_tokens;
            progress.cached_tokens += node.cached_tokens;
            progress.completion_tokens += node.completion_tokens;
            on_progress(&progress);
        }
        Ok(progress)
    }

    async fn should_stop(&self) -> Result<bool> {
        if self.cancel.is_cancelled() {
            return Ok(true);
        }
        let Some((job_id, _)) = self.job else {
            return Ok(false);
        };
        Ok(self
            .store
            .job(job_id)
            .await?
            .is_none_or(|j| j.state == JobState::Cancelled))
    }
}

impl From<ScoreError> for IndexError {
    fn from(e: ScoreError) -> IndexError {
        match e {
            ScoreError::Llm(e) => IndexError::Llm(e),
            ScoreError::Prompt(e) => IndexError::Prompt(e),
        }
    }
}
