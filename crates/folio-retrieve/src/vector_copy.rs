//! The vector copy a long-lived process searches instead of sqlite-vec:
//! exact below a size ([`APPROXIMATE_FROM`]), approximate above it.
//!
//! The approximate copy is the saved HNSW index ([`AnnIndex`],
//! memory-mapped) plus what changed since it was saved, read from the
//! store's vector log: the changed chunks' vectors now, searched exactly
//! beside it, and the list of changed chunks, whose rows in the saved index
//! are stale and skipped. Catching up reads only the log, so a write during
//! indexing costs a query a small read, not a reload; once the changes
//! grow past [`MERGE_FROM`] they are merged into the saved index.
//!
//! A scoped search runs on the graph, skipping other chunks, unless the
//! scope has at most [`SCOPE_SCAN_UP_TO`] chunks: then its rows are scanned
//! exactly. A graph walk that must skip most nodes stops before it finds
//! the few it may keep, so small scopes would lose recall.

use std::sync::Arc;

use super::ann::{AnnIndex, Provenance};
use super::ExactVectors;
use folio_store::{DocumentSet, LogPosition, VectorChanges};

/// Libraries with fewer vectors are searched exactly. Measured on two cores
/// (2026-11-28, the same set as `ann::EXPANSION_SEARCH`): the exact int8
/// scan of 200,000 vectors takes 6.4 ms p50, the graph 0.86 ms, and the
/// graph takes 47 s to build; at 50,000, 1.7 ms against 0.96 ms. Below
/// this size a scan is fast enough, never misses, and needs no build.
pub const APPROXIMATE_FROM: u64 = 200_000;

/// Changes after which the saved index is brought up to date.
pub const MERGE_FROM: usize = 20_000;

/// Scopes with at most this many chunks are scanned exactly.
pub const SCOPE_SCAN_UP_TO: usize = 20_000;

pub enum VectorCopy {
    Exact(ExactVectors),
    Approximate(Approximate),
}

impl VectorCopy {
    /// The store's vector version the copy answers for.
    pub fn version(&self) -> i64 {
        match self {
            VectorCopy::Exact(index) => index.version(),
            VectorCopy::Approximate(a) => a.version,
        }
    }

    /// The `k` nearest chunks by L2 distance, nearest first, in `scope` if given.
    pub fn nearest(&self, query: &[f32], k: usize, scope: Option<&DocumentSet>) -> Vec<(i64, f32)> {
        match self {
            VectorCopy::Exact(index) => index.nearest(query, k, scope),
            VectorCopy::Approximate(a) => a.nearest(query, k, scope),
        }
    }
}

pub struct Approximate {
    saved: Arc<AnnIndex>,
    /// What `saved` holds.
    provenance: Provenance,
    /// The vectors of chunks changed since, exactly.
    changes: ExactVectors,
    /// Every chunk changed since, sorted: `saved`'s rows for them are stale.
    changed: Vec<i64>,
    version: i64,
}

impl Approximate {
    /// `saved` (holding `provenance`) brought up to date with `changes`
    /// (read from the log since `provenance.seq`), answering for `version`.
    pub fn new(
        saved: Arc<AnnIndex>,
        provenance: Provenance,
        changes: VectorChanges,
        version: i64,
    ) -> super::Result<Approximate> {
        Ok(Approximate {
            changes: ExactVectors::from_rows(provenance.dim, version, changes.present)?,
            changed: changes.changed,
            saved,
            provenance,
            version,
        })
    }

    pub fn saved(&self) -> &Arc<AnnIndex> {
        &self.saved
    }

    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    /// Where in the log the saved index stands.
    pub fn saved_at(&self) -> LogPosition {
        LogPosition {
            epoch: self.provenance.epoch,
            seq: self.provenance.seq,
        }
    }

    /// How many chunks changed since the index was saved.
    pub fn pending(&self) -> usize {
        self.changed.len()
    }

    fn nearest(&self, query: &[f32], k: usize, scope: Option<&DocumentSet>) -> Vec<(i64, f32)> {
        let stale = |id: i64| self.changed.binary_search(&id).is_ok();
        let mut found = match scope {
            Some(s) if s.chunks().len() <= SCOPE_SCAN_UP_TO => self.saved.nearest_among(
                query,
                k,
                s.chunks().iter().copied().filter(|id| !stale(*id)),
            ),
            Some(s) => self.saved.nearest(
                query,
                k,
                Some(&|id| !stale(id) && s.chunks().binary_search(&id).is_ok()),
            ),
            None if self.changed.is_empty() => self.saved.nearest(query, k, None),
            None => self.saved.nearest(query, k, Some(&|id| !stale(id))),
        };
        found.extend(self.changes.nearest(query, k, scope));
        found.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        found.truncate(k);
        found
    }
}
