//! Finding chunks for a query: dense (sqlite-vec nearest neighbours), BM25
//! (FTS5) and hybrid (reciprocal rank fusion of the two). Results carry what a
//! person needs to judge and open them: path, heading path, snippet, score.

mod bm25;
mod fusion;
pub mod ppr;
mod snippet;
mod vector_index;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::embed::Embedder;
use crate::error::Result;
use crate::store::{Store, StoredChunk};

pub use bm25::fts_query;
pub use fusion::reciprocal_rank_fusion;
pub use snippet::snippet;
pub(crate) use vector_index::dot;
pub use vector_index::VectorIndex;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    Dense,
    Bm25,
    Hybrid,
}

impl SearchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Dense => "dense",
            SearchMode::Bm25 => "bm25",
            SearchMode::Hybrid => "hybrid",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    pub chunk_id: i64,
    pub path: String,
    pub heading_path: String,
    pub snippet: String,
    pub score: f64,
    pub span_start: i64,
    pub span_end: i64,
    pub page: Option<i64>,
}

/// Candidates each ranker contributes before fusion: fusion needs more than
/// `k` from each side to reward chunks both rankers like.
fn fusion_depth(k: usize) -> usize {
    (k * 4).max(40)
}

/// Ranked chunk ids with scores, best first, for a query whose embedding the
/// caller supplies (ignored, and may be empty, in BM25 mode), so retrieval can
/// be timed apart from embedding and a caller holding the vector does not
/// embed twice.
pub async fn rank_with_vector(
    store: &Store,
    memory: Option<&VectorIndex>,
    query: &str,
    vector: &[f32],
    k: usize,
    mode: SearchMode,
) -> Result<Vec<(i64, f64)>> {
    Ok(match mode {
        SearchMode::Dense => dense(store, memory, vector, k).await?,
        SearchMode::Bm25 => bm25::search(store, query, k).await?,
        SearchMode::Hybrid => {
            let depth = fusion_depth(k);
            let d = dense(store, memory, vector, depth).await?;
            let b = bm25::search(store, query, depth).await?;
            let mut fused = reciprocal_rank_fusion(&[&d, &b]);
            fused.truncate(k);
            fused
        }
    })
}

/// Cosine similarity from the L2 distance of unit vectors. The in-memory
/// copy answers only while it matches the store; otherwise sqlite-vec does.
async fn dense(
    store: &Store,
    memory: Option<&VectorIndex>,
    vector: &[f32],
    k: usize,
) -> Result<Vec<(i64, f64)>> {
    let current = match memory {
        Some(m) if m.version() == store.vectors_version().await? => Some(m),
        _ => None,
    };
    let nearest = match current {
        Some(m) => m.nearest(vector, k),
        None => store.nearest_chunks(vector, k).await?,
    };
    Ok(nearest
        .into_iter()
        .map(|(id, d)| (id, 1.0 - (d as f64 * d as f64) / 2.0))
        .collect())
}

/// The `k` best chunks for `query`, whole, with their scores, best first.
pub async fn retrieve(
    store: &Store,
    memory: Option<&VectorIndex>,
    embedder: &Arc<Embedder>,
    query: &str,
    k: usize,
    mode: SearchMode,
) -> Result<Vec<(StoredChunk, f64)>> {
    // The query is embedded only for the modes that use its vector.
    let vector = match mode {
        SearchMode::Bm25 => Vec::new(),
        SearchMode::Dense | SearchMode::Hybrid => embedder.embed_one_off_executor(query).await?,
    };
    let ranked = rank_with_vector(store, memory, query, &vector, k, mode).await?;
    let ids: Vec<i64> = ranked.iter().map(|(id, _)| *id).collect();
    let scores: std::collections::HashMap<i64, f64> = ranked.into_iter().collect();
    // A chunk deleted since ranking is simply missing here.
    let chunks = store.chunks_by_id(&ids).await?;
    Ok(chunks
        .into_iter()
        .map(|c| {
            let score = scores.get(&c.id).copied().unwrap_or_default();
            (c, score)
        })
        .collect())
}

/// [`retrieve`], shown as search results with a snippet around the query.
pub async fn search(
    store: &Store,
    memory: Option<&VectorIndex>,
    embedder: &Arc<Embedder>,
    query: &str,
    k: usize,
    mode: SearchMode,
) -> Result<Vec<SearchHit>> {
    Ok(retrieve(store, memory, embedder, query, k, mode)
        .await?
        .into_iter()
        .map(|(c, score)| SearchHit {
            chunk_id: c.id,
            snippet: snippet(&c.text, query, 240),
            path: c.path,
            heading_path: c.heading_path,
            score,
            span_start: c.span_start,
            span_end: c.span_end,
            page: c.page,
        })
        .collect())
}
