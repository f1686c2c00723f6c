//! How far the information-gain graph covers the library, per rubric, and
//! what building it has cost: `folio graph status` and the app's graph panel.

use serde::{Deserialize, Serialize};

use super::Rubric;
use crate::store::Job;

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct GraphStatus {
    /// Chunks with a vector from the active embedding model: the nodes a
    /// complete graph has.
    pub chunks: i64,
    /// One entry per rubric that has been built (or is being built).
    pub rubrics: Vec<RubricStatus>,
    /// Graph jobs, newest first.
    pub jobs: Vec<Job>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct RubricStatus {
    pub rubric: Rubric,
    /// Chunks whose neighbours were scored.
    pub scored: i64,
    /// Chunks whose scorer output could not be read, even on the retry.
    pub failed: i64,
    /// Chunks with a vector and no scoring yet.
    pub pending: i64,
    pub edges: i64,
    /// Edges per class: redundant, minor, significant, novel.
    pub edges_by_class: [i64; 4],
    /// The scoring models, as recorded with the edges.
    pub models: Vec<String>,
    pub cost: BuildCost,
    /// The most recent failures: chunk id and why.
    pub recent_failures: Vec<(i64, String)>,
}

/// What scoring has spent, summed over scored and failed nodes.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct BuildCost {
    pub nodes: i64,
    pub calls: i64,
    pub prompt_tokens: i64,
    /// Prompt tokens served from the model's cache of the previous prompt's
    /// prefix: counted in `prompt_tokens`, but not computed again.
    pub cached_tokens: i64,
    pub completion_tokens: i64,
}

impl BuildCost {
    /// Prompt plus completion tokens per node.
    pub fn tokens_per_node(&self) -> Option<f64> {
        (self.nodes > 0)
            .then(|| (self.prompt_tokens + self.completion_tokens) as f64 / self.nodes as f64)
    }
}
