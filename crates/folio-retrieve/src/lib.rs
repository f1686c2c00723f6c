//! Finding chunks for a query. The [`RetrievalService`] owns what retrieval
//! needs (embedding model, in-memory vectors, gain graphs, look-ups) and
//! ranks with a [`Ranker`]: a [`SearchMode`] (dense nearest neighbours,
//! BM25 over FTS5, or hybrid, the reciprocal rank fusion of the two) or a
//! walk of the information-gain graph (`gain_walk`). Results carry what a
//! person needs to judge and open them: path, heading path, snippet, score.

mod ann;
mod ann_mapping;
mod bm25;
mod error;
mod exact_vectors;
mod fusion;
pub mod gain_walk;
mod memory_vectors;
pub mod ppr;
mod ranker;
mod service;
mod snippet;
mod vector_copy;

use serde::{Deserialize, Serialize};

use folio_core::choice::Choice;
use folio_documents::loaders::ocr::OcrMark;
use folio_documents::table::TableRows;
use folio_store::{DocumentSet, Store, StoredChunk};

pub use ann::{AnnError, AnnIndex, Provenance, CONNECTIVITY, EXPANSION_ADD, EXPANSION_SEARCH};
pub use bm25::{common_threshold, fts_query, search_narrowed as bm25_narrowed, Narrowing};
pub use error::{Result, RetrieveError};
pub use exact_vectors::dot;
pub use exact_vectors::ExactVectors;
pub use fusion::reciprocal_rank_fusion;
pub use gain_walk::{Walk, WalkGraph, Weights, LINK_WEIGHT};
pub use memory_vectors::{CopyLimits, CopySettings, CopyStatus};
pub use ranker::{Follow, GainWalk, Ranker, Ranking, Seed, WalkRecord, WalkStats};
pub use service::{DocumentParts, RetrievalService};
pub use snippet::snippet;
pub use vector_copy::{VectorCopy, APPROXIMATE_FROM, MERGE_FROM, SCOPE_SCAN_UP_TO};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, schemars::JsonSchema,
)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    Dense,
    Bm25,
    Hybrid,
}

impl Choice for SearchMode {
    const ALL: &'static [SearchMode] = &[SearchMode::Hybrid, SearchMode::Dense, SearchMode::Bm25];

    fn as_str(self) -> &'static str {
        match self {
            SearchMode::Dense => "dense",
            SearchMode::Bm25 => "bm25",
            SearchMode::Hybrid => "hybrid",
        }
    }
}

/// A found chunk as search lists it: where it is, and a snippet around
/// the query.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS, schemars::JsonSchema)]
#[ts(export)]
pub struct SearchHit {
    pub chunk_id: i64,
    pub path: String,
    pub heading_path: String,
    pub snippet: String,
    pub score: f64,
    pub span_start: i64,
    pub span_end: i64,
    pub page: Option<i64>,
    /// Set when OCR read the chunk's page.
    pub ocr: Option<OcrMark>,
    /// The table rows it holds, when it is (a piece of) one table.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rows: Option<TableRows>,
}

impl SearchHit {
    /// A found chunk as a person sees it: a snippet around `query`.
    pub fn new(chunk: StoredChunk, score: f64, query: &str) -> SearchHit {
        SearchHit {
            rows: chunk.rows(),
            chunk_id: chunk.id,
            snippet: snippet(&chunk.text, query, 240),
            path: chunk.path,
            heading_path: chunk.heading_path,
            score,
            span_start: chunk.span_start,
            span_end: chunk.span_end,
            page: chunk.page,
            ocr: chunk.ocr_confidence.map(OcrMark::new),
        }
    }
}

/// Candidates each ranker contributes before fusion: fusion needs more than
/// `k` from each side to reward chunks both rankers like.
fn fusion_depth(k: usize) -> usize {
    (k * 4).max(40)
}

impl SearchMode {
    /// Whether ranking needs the query's embedding.
    pub fn uses_vectors(self) -> bool {
        self != SearchMode::Bm25
    }

    /// Ranked chunk ids with scores, best first, for a query whose embedding
    /// the caller supplies (ignored, and may be empty, when
    /// [`SearchMode::uses_vectors`] is false), so ranking can be timed apart
    /// from embedding and a caller holding the vector does not embed twice.
    /// With `scope`, only its documents' chunks are ranked, inside each
    /// ranker, so the `k` are the scope's best.
    pub async fn rank(
        self,
        store: &Store,
        memory: Option<&VectorCopy>,
        query: &str,
        vector: &[f32],
        k: usize,
        scope: Option<&DocumentSet>,
    ) -> Result<Vec<(i64, f64)>> {
        Ok(match self {
            SearchMode::Dense => dense(store, memory, vector, k, scope).await?,
            SearchMode::Bm25 => bm25::search(store, query, k, scope).await?,
            SearchMode::Hybrid => {
                let depth = fusion_depth(k);
                let d = dense(store, memory, vector, depth, scope).await?;
                let b = bm25::search(store, query, depth, scope).await?;
                let mut fused = reciprocal_rank_fusion(&[&d, &b]);
                fused.truncate(k);
                fused
            }
        })
    }
}

/// Cosine similarity from the L2 distance of unit vectors. The in-memory
/// copy answers only while it matches the store; otherwise sqlite-vec does.
async fn dense(
    store: &Store,
    memory: Option<&VectorCopy>,
    vector: &[f32],
    k: usize,
    scope: Option<&DocumentSet>,
) -> Result<Vec<(i64, f64)>> {
    let current = match memory {
        Some(m) if m.version() == store.vectors_version().await? => Some(m),
        _ => None,
    };
    let nearest = match current {
        Some(m) => m.nearest(vector, k, scope),
        None => store.nearest_chunks(vector, k, scope).await?,
    };
    Ok(nearest
        .into_iter()
        .map(|(id, d)| (id, 1.0 - (d as f64 * d as f64) / 2.0))
        .collect())
}
