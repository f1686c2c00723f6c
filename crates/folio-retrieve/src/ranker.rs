//! The retriever seam: every way Folio ranks chunks for a query sits behind
//! one call, [`RetrievalService::rank`](super::RetrievalService::rank), with one
//! description of what to run, [`Ranker`]. A method gets its retriever
//! from its options and never names a ranking in code. A rerank stage, when
//! one comes, is a step of `RetrievalService::rank` between the candidates a
//! retriever ranks and the ranking it returns, so every method gains it at
//! once.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::gain_walk::WalkGraph;
use super::ppr::PprParams;
use super::SearchMode;
use folio_llm::rubric::Rubric;

/// What ranks chunks for a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ranker {
    /// Dense, BM25, or their fusion.
    Search(SearchMode),
    /// A walk of the information-gain graph (iG²RAG §3.2) from the chunks
    /// nearest to the query.
    GainWalk(GainWalk),
}

/// iG²RAG's walk: seeded with the `seeds` chunks nearest to the query by
/// embedding, over the graph `rubric` was built with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GainWalk {
    pub rubric: Rubric,
    pub seeds: usize,
    /// How the walk moves from the seeds.
    pub follow: Follow,
    /// Whether a notes vault's links are edges too, beside the rubric's.
    pub links: bool,
}

/// How a gain walk moves from its seeds: the paper's method and its two
/// ablations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Follow {
    /// Personalized PageRank over gain weights.
    Gain(PprParams),
    /// Personalized PageRank over the same pairs weighted by similarity.
    Similarity(PprParams),
    /// Repeatedly take the strongest gain edge out of what is chosen.
    StrongestEdge,
}

/// Chunk ids with scores, best first. A search ranks at most `k`; a
/// PageRank walk ranks every chunk it reached, so a caller can show what
/// came next.
pub struct Ranking {
    pub ranked: Vec<(i64, f64)>,
    /// How a gain walk got there; `None` for a search, or when the index
    /// holds no vector to seed from.
    pub walk: Option<WalkRecord>,
}

/// A finished gain walk, for the trace.
pub struct WalkRecord {
    pub seeds: Vec<Seed>,
    /// The graph walked, for the edges a trace draws.
    pub graph: Arc<WalkGraph>,
    /// The PageRank's convergence and cost; `None` for the greedy walk.
    pub stats: Option<WalkStats>,
}

/// A chunk the walk starts from: its similarity to the query and its share
/// of the restart mass.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct Seed {
    pub chunk_id: i64,
    pub similarity: f64,
    pub weight: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
pub struct WalkStats {
    pub iterations: usize,
    pub converged: bool,
    pub last_change: f64,
    /// The graph the walk ran on.
    pub graph_nodes: usize,
    pub graph_edges: usize,
    pub walk_ms: f64,
}

/// The personalization vector (iG²RAG eq. 5): the seeds' similarities,
/// negative ones as zero, normalised to sum to 1; equal shares if none is
/// positive.
pub fn seeds(nearest: &[(i64, f64)]) -> Vec<Seed> {
    let total: f64 = nearest.iter().map(|(_, s)| s.max(0.0)).sum();
    nearest
        .iter()
        .map(|&(chunk_id, similarity)| Seed {
            chunk_id,
            similarity,
            weight: if total > 0.0 {
                similarity.max(0.0) / total
            } else {
                1.0 / nearest.len() as f64
            },
        })
        .collect()
}
