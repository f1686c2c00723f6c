//! An in-memory copy of the chunk vectors for exact nearest-neighbour search.
//! sqlite-vec stays the persisted truth; long-lived processes (the watcher,
//! the app, evaluations) keep this copy because a scan over a flat f32 array
//! is an order of magnitude faster than sqlite-vec 0.1.6's scalar scan. The
//! copy is tagged with the store's vector version, so a stale copy is
//! detected and never answers.

use std::collections::BinaryHeap;

use crate::store::{DocumentSet, Result, Store, StoreError};

/// Below this many vectors one thread scans faster than two can start.
const PARALLEL_FROM: usize = 20_000;

pub struct VectorIndex {
    dim: usize,
    ids: Vec<i64>,
    /// Each row's document, so a scoped search skips other documents' rows.
    documents: Vec<i64>,
    data: Vec<f32>,
    /// Squared norms, so L2 distances come from one dot product per row.
    norms: Vec<f32>,
    version: i64,
}

/// A candidate ordered by distance, largest first, so the heap's top is the
/// worst of the best `k` seen so far.
#[derive(PartialEq)]
struct Candidate(f32, i64);

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// Eight independent accumulators let the compiler vectorise the loop
/// without reordering a single floating-point sum.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

impl VectorIndex {
    /// Reads every vector of the active space, tagged with the version the
    /// store read them at.
    pub async fn load(store: &Store, dim: usize) -> Result<VectorIndex> {
        let (version, rows) = store.all_vectors().await?;
        let mut index = VectorIndex {
            dim,
            ids: Vec::with_capacity(rows.len()),
            documents: Vec::with_capacity(rows.len()),
            data: Vec::with_capacity(rows.len() * dim),
            norms: Vec::with_capacity(rows.len()),
            version,
        };
        for (id, document, blob) in rows {
            if blob.len() != dim * 4 {
                return Err(StoreError::Corrupt(format!(
                    "vector {id} has {} bytes, expected {}",
                    blob.len(),
                    dim * 4
                )));
            }
            let start = index.data.len();
            index.data.extend(
                blob.chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
            let v = &index.data[start..];
            index.norms.push(dot(v, v));
            index.ids.push(id);
            index.documents.push(document);
        }
        Ok(index)
    }

    pub fn version(&self) -> i64 {
        self.version
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Every chunk id with its vector.
    pub fn vectors(&self) -> impl Iterator<Item = (i64, &[f32])> {
        self.ids
            .iter()
            .copied()
            .zip(self.data.chunks_exact(self.dim))
    }

    /// The `k` nearest chunks by L2 distance, nearest first, among the
    /// chunks of `scope`'s documents if one is given: the same answer as
    /// `Store::nearest_chunks`, from memory.
    pub fn nearest(&self, query: &[f32], k: usize, scope: Option<&DocumentSet>) -> Vec<(i64, f32)> {
        if k == 0 || self.is_empty() || query.len() != self.dim {
            return Vec::new();
        }
        let qn = dot(query, query);
        let threads = if self.len() >= PARALLEL_FROM {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        } else {
            1
        };
        let rows_per = self.len().div_ceil(threads);
        let partial: Vec<BinaryHeap<Candidate>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let range = t * rows_per..((t + 1) * rows_per).min(self.len());
                    s.spawn(move || match scope {
                        None => self.scan(query, qn, k, range, |_| true),
                        Some(set) => {
                            self.scan(query, qn, k, range, |row| set.contains(self.documents[row]))
                        }
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        let mut all: Vec<Candidate> = partial.into_iter().flatten().collect();
        all.sort();
        all.truncate(k);
        all.into_iter()
            .map(|Candidate(d2, id)| (id, d2.max(0.0).sqrt()))
            .collect()
    }

    fn scan(
        &self,
        query: &[f32],
        qn: f32,
        k: usize,
        rows: std::ops::Range<usize>,
        wanted: impl Fn(usize) -> bool,
    ) -> BinaryHeap<Candidate> {
        let mut best = BinaryHeap::with_capacity(k + 1);
        for row in rows.filter(|row| wanted(*row)) {
            let v = &self.data[row * self.dim..(row + 1) * self.dim];
            let d2 = qn + self.norms[row] - 2.0 * dot(query, v);
            if best.len() < k {
                best.push(Candidate(d2, self.ids[row]));
            } else if best.peek().is_some_and(|worst| d2 < worst.0) {
                best.pop();
                best.push(Candidate(d2, self.ids[row]));
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(rows: &[(i64, Vec<f32>)]) -> VectorIndex {
        let dim = rows[0].1.len();
        let mut ix = VectorIndex {
            dim,
            ids: vec![],
            documents: vec![],
            data: vec![],
            norms: vec![],
            version: 0,
        };
        for (id, v) in rows {
            ix.ids.push(*id);
            ix.documents.push(*id % 7);
            ix.norms.push(dot(v, v));
            ix.data.extend(v);
        }
        ix
    }

    #[test]
    fn dot_matches_the_naive_sum_for_any_length() {
        for len in [1, 7, 8, 9, 384] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| (i as f32 * 0.11).cos()).collect();
            let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - naive).abs() < 1e-4, "len {len}");
        }
    }

    #[test]
    fn nearest_agrees_with_brute_force_including_the_parallel_path() {
        let dim = 16;
        let rows: Vec<(i64, Vec<f32>)> = (0..(PARALLEL_FROM as i64 + 500))
            .map(|i| {
                (
                    i * 3,
                    (0..dim)
                        .map(|j| ((i * 31 + j as i64 * 7) % 97) as f32 / 97.0 - 0.5)
                        .collect(),
                )
            })
            .collect();
        let ix = index_of(&rows);
        let q: Vec<f32> = (0..dim).map(|j| (j as f32 * 0.3).sin()).collect();
        let mut expected: Vec<(i64, f32)> = rows
            .iter()
            .map(|(id, v)| {
                (
                    *id,
                    v.iter()
                        .zip(&q)
                        .map(|(a, b)| (a - b) * (a - b))
                        .sum::<f32>()
                        .sqrt(),
                )
            })
            .collect();
        expected.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        let got = ix.nearest(&q, 10, None);
        assert_eq!(got.len(), 10);
        for (g, e) in got.iter().zip(&expected) {
            assert!((g.1 - e.1).abs() < 1e-3, "{got:?} vs {:?}", &expected[..10]);
        }
        assert_eq!(got[0].0, expected[0].0);
    }

    #[test]
    fn a_scoped_search_ranks_only_its_documents_and_fills_k_from_them() {
        let rows: Vec<(i64, Vec<f32>)> = (0..700i64)
            .map(|i| (i, vec![(i as f32 * 0.001).cos(), (i as f32 * 0.001).sin()]))
            .collect();
        let ix = index_of(&rows);
        let q = [1.0, 0.0];
        let scope = DocumentSet::new(vec![3], vec![]);
        let got = ix.nearest(&q, 10, Some(&scope));
        // Rows whose id is 3 mod 7, nearest to angle 0 first.
        let expected: Vec<i64> = (0..700i64).filter(|i| i % 7 == 3).take(10).collect();
        assert_eq!(got.iter().map(|(id, _)| *id).collect::<Vec<_>>(), expected);
        assert!(ix
            .nearest(&q, 10, Some(&DocumentSet::new(vec![99], vec![])))
            .is_empty());
    }

    #[test]
    fn empty_index_and_wrong_dimension_give_nothing() {
        let ix = index_of(&[(1, vec![1.0, 0.0])]);
        assert!(ix.nearest(&[1.0, 0.0, 0.0], 3, None).is_empty());
        assert_eq!(ix.nearest(&[1.0, 0.0], 0, None), vec![]);
        assert_eq!(ix.nearest(&[1.0, 0.0], 5, None), vec![(1, 0.0)]);
    }
}
