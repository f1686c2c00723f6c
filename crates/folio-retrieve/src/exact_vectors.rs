//! An in-memory copy of the chunk vectors for exact nearest-neighbour search.
//! sqlite-vec stays the persisted truth; long-lived processes (the watcher,
//! the app, evaluations) keep this copy because a scan over a flat array
//! is an order of magnitude faster than sqlite-vec 0.1.6's scalar scan. The
//! copy is tagged with the store's vector version, so a stale copy is
//! detected and never answers.
//!
//! Rows are the store's int8 values (`store::quantize`), a byte a
//! dimension. A query stays nearly exact: it is scaled to i16, so each row
//! costs one integer dot product (i16 × i8 summed in i32), and only the
//! rows are approximate. By Cauchy–Schwarz no sum, partial or whole, can
//! exceed |q₁₆|·|x₈|, so the query's scale is capped to keep that under
//! 2³¹ whatever the dimension.

use std::collections::{BinaryHeap, HashMap};

use folio_store::quantize;
use folio_store::{DocumentSet, Result, Store, StoreError};

/// Below this many vectors one thread scans faster than two can start.
const PARALLEL_FROM: usize = 20_000;
/// The largest query component, as i16.
const QUERY_TOP: f32 = 32_767.0;
/// What |q₁₆|·|x₈| must stay under: 2³¹ with room for rounding.
const SUM_LIMIT: f32 = 2.0e9;

pub struct ExactVectors {
    dim: usize,
    ids: Vec<i64>,
    /// Each row's document, so a scoped search skips other documents' rows.
    documents: Vec<i64>,
    data: Vec<i8>,
    /// Squared norms of the rows as they are stored, so L2 distances come
    /// from one dot product per row.
    norms: Vec<f32>,
    /// Real components per int8 step.
    step: f32,
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
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
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

/// An i16 query against an int8 row, exactly. Written so the compiler turns
/// pairs of products into multiply-add instructions.
#[inline(always)]
fn dot_i8_portable(q: &[i16], x: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    let (cq, cx) = (q.chunks_exact(32), x.chunks_exact(32));
    let tail: i32 = cq
        .remainder()
        .iter()
        .zip(cx.remainder())
        .map(|(a, b)| i32::from(*a) * i32::from(*b))
        .sum();
    for (a, b) in cq.zip(cx) {
        for i in 0..16 {
            acc[i] += i32::from(a[2 * i]) * i32::from(b[2 * i])
                + i32::from(a[2 * i + 1]) * i32::from(b[2 * i + 1]);
        }
    }
    acc.iter().sum::<i32>() + tail
}

/// The same code compiled for AVX2, chosen at run time where the CPU has
/// it: twice the lanes of the SSE2 baseline a portable build targets.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_i8_avx2(q: &[i16], x: &[i8]) -> i32 {
    dot_i8_portable(q, x)
}

fn dot_i8(q: &[i16], x: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked on the line above.
        return unsafe { dot_i8_avx2(q, x) };
    }
    dot_i8_portable(q, x)
}

impl ExactVectors {
    /// Reads every vector of the active space, tagged with the version the
    /// store read them at.
    pub async fn load(store: &Store, dim: usize) -> Result<ExactVectors> {
        let (version, rows) = store.all_vectors().await?;
        ExactVectors::from_rows(dim, version, rows)
    }

    /// An index of `rows` ((chunk, document, int8 blob)) tagged `version`.
    pub fn from_rows(
        dim: usize,
        version: i64,
        rows: Vec<(i64, i64, Vec<u8>)>,
    ) -> Result<ExactVectors> {
        let mut index = ExactVectors::empty(dim, version);
        index.ids.reserve(rows.len());
        index.documents.reserve(rows.len());
        index.data.reserve(rows.len() * dim);
        index.norms.reserve(rows.len());
        for (id, document, blob) in rows {
            if blob.len() != dim {
                return Err(StoreError::Corrupt(format!(
                    "vector {id} has {} bytes, expected {dim}",
                    blob.len(),
                )));
            }
            index.push(id, document, &quantize::from_blob(&blob));
        }
        Ok(index)
    }

    fn empty(dim: usize, version: i64) -> ExactVectors {
        ExactVectors {
            dim,
            ids: Vec::new(),
            documents: Vec::new(),
            data: Vec::new(),
            norms: Vec::new(),
            step: 1.0 / quantize::scale(dim),
            version,
        }
    }

    fn push(&mut self, id: i64, document: i64, row: &[i8]) {
        let n: i64 = row.iter().map(|&x| i64::from(x) * i64::from(x)).sum();
        self.norms.push(n as f32 * self.step * self.step);
        self.data.extend_from_slice(row);
        self.ids.push(id);
        self.documents.push(document);
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

    /// Each chunk id's row, to read its vector back with [`Self::vector`].
    pub fn rows(&self) -> HashMap<i64, usize> {
        self.ids
            .iter()
            .enumerate()
            .map(|(row, id)| (*id, row))
            .collect()
    }

    /// The vector of `row` as stored (int8 values scaled back).
    pub fn vector(&self, row: usize) -> Vec<f32> {
        quantize::dequantize(&self.data[row * self.dim..(row + 1) * self.dim])
    }

    /// The `k` nearest chunks by L2 distance, nearest first, among the
    /// chunks of `scope`'s documents if one is given: the same answer as
    /// `Store::nearest_chunks`, from memory.
    pub fn nearest(&self, query: &[f32], k: usize, scope: Option<&DocumentSet>) -> Vec<(i64, f32)> {
        if k == 0 || self.is_empty() || query.len() != self.dim {
            return Vec::new();
        }
        let qn = dot(query, query);
        let top = query.iter().fold(0f32, |m, x| m.max(x.abs()));
        // Rows are unit vectors at most, so |x₈| ≤ the int8 scale.
        let cap = SUM_LIMIT / (qn.sqrt().max(f32::MIN_POSITIVE) / self.step);
        let q_scale = if top > 0.0 {
            (QUERY_TOP / top).min(cap)
        } else {
            1.0
        };
        let q16: Vec<i16> = query.iter().map(|x| (x * q_scale).round() as i16).collect();
        // Real dot product = integer dot × this.
        let unit = self.step / q_scale;
        let threads = if self.len() >= PARALLEL_FROM {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        } else {
            1
        };
        let rows_per = self.len().div_ceil(threads);
        let query = Query {
            q16: &q16,
            qn,
            unit,
        };
        let partial: Vec<BinaryHeap<Candidate>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let range = t * rows_per..((t + 1) * rows_per).min(self.len());
                    let query = &query;
                    s.spawn(move || match scope {
                        None => self.scan(query, k, range, |_| true),
                        Some(set) => {
                            self.scan(query, k, range, |row| set.contains(self.documents[row]))
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
        query: &Query,
        k: usize,
        rows: std::ops::Range<usize>,
        wanted: impl Fn(usize) -> bool,
    ) -> BinaryHeap<Candidate> {
        let mut best = BinaryHeap::with_capacity(k + 1);
        for row in rows.filter(|row| wanted(*row)) {
            let v = &self.data[row * self.dim..(row + 1) * self.dim];
            let d2 = query.qn + self.norms[row] - 2.0 * query.unit * dot_i8(query.q16, v) as f32;
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

/// A query as the scan uses it.
struct Query<'a> {
    q16: &'a [i16],
    /// Its squared norm.
    qn: f32,
    /// The real dot product per unit of the integer one.
    unit: f32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(rows: &[(i64, Vec<f32>)]) -> ExactVectors {
        let mut ix = ExactVectors::empty(rows[0].1.len(), 0);
        for (id, v) in rows {
            ix.push(*id, *id % 7, &quantize::quantize(v));
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
    fn the_integer_dot_product_is_exact_at_any_length_and_at_the_extremes() {
        for len in [1, 31, 32, 33, 384, 1000] {
            let q: Vec<i16> = (0..len).map(|i| ((i * 7919) % 65535) as i16).collect();
            let x: Vec<i8> = (0..len).map(|i| ((i * 31) % 255) as i8).collect();
            let naive: i64 = q
                .iter()
                .zip(&x)
                .map(|(a, b)| i64::from(*a) * i64::from(*b))
                .sum();
            assert_eq!(i64::from(dot_i8(&q, &x)), naive, "len {len}");
            assert_eq!(i64::from(dot_i8_portable(&q, &x)), naive, "len {len}");
        }
        let q = vec![i16::MAX; 384];
        let x = vec![i8::MIN + 1; 384];
        assert_eq!(dot_i8(&q, &x), -32_767 * 127 * 384);
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
        // Against the rows as stored: the scan itself adds no error.
        let mut expected: Vec<(i64, f32)> = rows
            .iter()
            .map(|(id, v)| {
                (
                    *id,
                    quantize::dequantize(&quantize::quantize(v))
                        .iter()
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
        let found = ix.nearest(&[1.0, 0.0], 5, None);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, 1);
        assert!(found[0].1 < 0.01, "{found:?}: within an int8 step");
    }
}
