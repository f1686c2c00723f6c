//! The approximate nearest-neighbour index of a large library: an HNSW
//! graph (usearch) over the store's int8 vectors, saved in a folder beside
//! the database. SQLite stays the truth; this file is a copy that can be
//! thrown away and built again from it at any time.
//!
//! The folder holds index files and `manifest.json`, which names the one in
//! use and what it was built from (model, dimension, the vector log's epoch
//! and position, size in vectors and bytes). A save writes a new index file
//! under a new name, syncs it, and only then replaces the manifest (synced,
//! renamed); older files go after. A kill at any point leaves the last good
//! manifest with its file, or no manifest. Opening checks everything the
//! manifest says against the file and the store, and refuses a file that
//! does not match: a truncated, foreign or stale index is never used.
//!
//! A served index is memory-mapped, in huge pages where the system offers
//! them ([`super::ann_mapping`]), and usearch views the mapping: start-up
//! reads the manifest and the file's header, and a search touches only the
//! pages of the nodes it visits. Changing it needs a loaded copy
//! ([`AnnIndex::open_for_update`]).
//!
//! Distances are not usearch's: every candidate is scored again against the
//! real query from its stored int8 row, so they are the exact scan's.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

use super::ann_mapping::{self, Mapping};
use folio_store::quantize;

/// Graph links per node (HNSW's M).
pub const CONNECTIVITY: usize = 16;
/// Candidates kept while inserting (efConstruction).
pub const EXPANSION_ADD: usize = 128;
/// Candidates kept while searching (ef). Chosen with one-off measurements
/// (2-core machine, 2026-11-28). On 200,000 vectors (the kit model's 9,588
/// HotpotQA chunk vectors and noisy copies of them, queried with 200
/// held-out ones), recall@10 against the exact scan was 0.922 at ef 64,
/// 0.959 at 128 and 0.995 at 256 (0.86 ms p50, against the exact scan's
/// 6.4 ms). On the 1M-vector set of `folio bench scale`, 256 gave 0.886,
/// 384 0.932, 512 0.965 and 768 0.980 (1.5, 1.8, 1.8 and 3.3 ms p50 through usearch's Python binding): the
/// graph of a larger library needs a wider search for the same recall, and
/// 512 is the narrowest that keeps 0.95 there.
pub const EXPANSION_SEARCH: usize = 512;

/// Candidates the graph returns per result wanted. The graph compares an
/// int8 query with int8 rows; scoring a longer list again with the real
/// query recovers neighbours that rounding put just outside the top k.
const SHORTLIST: usize = 2;

const FORMAT: u32 = 1;
const MANIFEST: &str = "manifest.json";
const FILE_PREFIX: &str = "index-";
const FILE_SUFFIX: &str = ".usearch";

#[derive(Debug, thiserror::Error)]
pub enum AnnError {
    #[error(
        "the approximate index in {dir} is not usable ({why}); it is built again from the database"
    )]
    Unusable { dir: PathBuf, why: String },
    #[error("cannot save the approximate index in {dir}: {source}")]
    Save {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("the approximate index failed: {0}")]
    Index(String),
}

type Result<T> = std::result::Result<T, AnnError>;

fn index_err(e: impl std::fmt::Display) -> AnnError {
    AnnError::Index(e.to_string())
}

/// What an index holds: the vectors of `model` (`dim` dimensions) as the
/// store had them at vector-log position `seq` of `epoch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    pub model: String,
    pub dim: usize,
    pub epoch: i64,
    pub seq: i64,
}

#[derive(Serialize, Deserialize)]
struct Manifest {
    format: u32,
    provenance: Provenance,
    count: usize,
    file: String,
    bytes: u64,
}

pub struct AnnIndex {
    index: Index,
    dim: usize,
    /// The file `index` views, when it views one. Declared after `index`,
    /// so it is unmapped only once the index is gone.
    mapping: Option<Mapping>,
}

impl AnnIndex {
    /// An empty index for `dim`-dimensional vectors, room for `capacity`.
    pub fn new(dim: usize, capacity: usize) -> Result<AnnIndex> {
        let index = Index::new(&IndexOptions {
            dimensions: dim,
            metric: MetricKind::L2sq,
            quantization: ScalarKind::I8,
            connectivity: CONNECTIVITY,
            expansion_add: EXPANSION_ADD,
            expansion_search: EXPANSION_SEARCH,
            multi: false,
        })
        .map_err(index_err)?;
        let ann = AnnIndex {
            index,
            dim,
            mapping: None,
        };
        ann.reserve(capacity.max(1))?;
        Ok(ann)
    }

    fn reserve(&self, capacity: usize) -> Result<()> {
        self.index
            .reserve_capacity_and_threads(capacity, threads())
            .map_err(index_err)
    }

    /// The index saved in `dir`, memory-mapped for searching, if there is
    /// one and it was built from `expected` (any `seq`); `Ok(None)` when
    /// there is none, `Err(Unusable)` when there is one that must not be used.
    pub fn open(dir: &Path, expected: &Provenance) -> Result<Option<(AnnIndex, Provenance)>> {
        AnnIndex::open_as(dir, expected, true)
    }

    /// The same, loaded into memory so it can be changed and saved again.
    pub fn open_for_update(
        dir: &Path,
        expected: &Provenance,
    ) -> Result<Option<(AnnIndex, Provenance)>> {
        AnnIndex::open_as(dir, expected, false)
    }

    fn open_as(
        dir: &Path,
        expected: &Provenance,
        view: bool,
    ) -> Result<Option<(AnnIndex, Provenance)>> {
        let unusable = |why: String| AnnError::Unusable {
            dir: dir.to_path_buf(),
            why,
        };
        let text = match std::fs::read(dir.join(MANIFEST)) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(unusable(format!("its manifest cannot be read: {e}"))),
        };
        let manifest: Manifest = serde_json::from_slice(&text)
            .map_err(|e| unusable(format!("its manifest is not valid: {e}")))?;
        let p = &manifest.provenance;
        if manifest.format != FORMAT {
            return Err(unusable(format!(
                "format {}, expected {FORMAT}",
                manifest.format
            )));
        }
        if p.model != expected.model || p.dim != expected.dim || p.epoch != expected.epoch {
            return Err(unusable(format!(
                "it holds vectors of {} ({} dimensions, log epoch {}), the database {} ({}, epoch {})",
                p.model, p.dim, p.epoch, expected.model, expected.dim, expected.epoch
            )));
        }
        if !is_index_file_name(&manifest.file) {
            return Err(unusable(format!(
                "it names {:?} as its file",
                manifest.file
            )));
        }
        let path = dir.join(&manifest.file);
        let bytes = std::fs::metadata(&path)
            .map_err(|e| unusable(format!("{}: {e}", manifest.file)))?
            .len();
        if bytes != manifest.bytes {
            return Err(unusable(format!(
                "{} has {bytes} bytes, its manifest says {}",
                manifest.file, manifest.bytes
            )));
        }
        let path_str = path
            .to_str()
            .ok_or_else(|| unusable("its folder's path is not UTF-8".to_string()))?;
        let head = Index::metadata(path_str).map_err(|e| unusable(e.to_string()))?;
        if head.dimensions != p.dim as u64 || head.quantization != ScalarKind::I8 || head.multi {
            return Err(unusable(format!(
                "{} is not an int8 index of {} dimensions",
                manifest.file, p.dim
            )));
        }
        let mut ann = AnnIndex::new(p.dim, 1)?;
        if view {
            let mapping = std::fs::File::open(&path)
                .and_then(|file| Mapping::new(&file))
                .map_err(|e| unusable(format!("{}: {e}", manifest.file)))?;
            // SAFETY: the mapping lives in `ann` beside the index and is
            // dropped after it (field order).
            unsafe { ann.index.view_from_buffer(mapping.bytes()) }
                .map_err(|e| unusable(e.to_string()))?;
            ann.mapping = Some(mapping);
        } else {
            ann.index
                .load(path_str)
                .map_err(|e| unusable(e.to_string()))?;
        }
        if ann.len() != manifest.count {
            return Err(unusable(format!(
                "{} holds {} vectors, its manifest says {}",
                manifest.file,
                ann.len(),
                manifest.count
            )));
        }
        if !view {
            ann.reserve(ann.len() + 1)?;
        }
        Ok(Some((ann, manifest.provenance)))
    }

    /// Writes this index to `dir` as holding `provenance`, replacing the
    /// one there only once it is whole on disk.
    pub fn save(&self, dir: &Path, provenance: &Provenance) -> Result<()> {
        let save_err = |source| AnnError::Save {
            dir: dir.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(save_err)?;
        let file = format!(
            "{FILE_PREFIX}{}-{}{FILE_SUFFIX}",
            provenance.seq,
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        let path = dir.join(&file);
        let path_str = path.to_str().ok_or_else(|| {
            save_err(std::io::Error::other(
                "the index folder's path is not UTF-8",
            ))
        })?;
        self.index.save(path_str).map_err(index_err)?;
        let written = std::fs::File::open(&path).map_err(save_err)?;
        written.sync_all().map_err(save_err)?;
        ann_mapping::drop_cached(&written);
        let manifest = Manifest {
            format: FORMAT,
            provenance: provenance.clone(),
            count: self.len(),
            file: file.clone(),
            bytes: written.metadata().map_err(save_err)?.len(),
        };
        let text = serde_json::to_vec_pretty(&manifest).map_err(index_err)?;
        folio_core::atomic_file::replace(&dir.join(MANIFEST), &text, 0o644).map_err(save_err)?;
        remove_index_files(dir, Some(&file));
        Ok(())
    }

    /// Removes every saved index from `dir` (the library went back to
    /// exact search, or its index is being built again).
    pub fn discard(dir: &Path) {
        let _ = std::fs::remove_file(dir.join(MANIFEST));
        remove_index_files(dir, None);
    }

    pub fn len(&self) -> usize {
        self.index.size()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `rows` ((chunk, int8 blob)), on every core, replacing any
    /// vector a chunk had.
    pub fn add(&self, rows: &[(i64, Vec<u8>)]) -> Result<()> {
        if self.index.size() + rows.len() > self.index.capacity() {
            self.reserve((self.index.size() + rows.len()).max(self.index.capacity() * 2))?;
        }
        let per = rows.len().div_ceil(threads()).max(1);
        std::thread::scope(|s| {
            let handles: Vec<_> = rows
                .chunks(per)
                .map(|part| {
                    s.spawn(move || -> Result<()> {
                        for (id, blob) in part {
                            if blob.len() != self.dim {
                                return Err(AnnError::Index(format!(
                                    "vector {id} has {} bytes, expected {}",
                                    blob.len(),
                                    self.dim
                                )));
                            }
                            let key = *id as u64;
                            if self.index.contains(key) {
                                self.index.remove(key).map_err(index_err)?;
                            }
                            self.index
                                .add::<i8>(key, &quantize::from_blob(blob))
                                .map_err(index_err)?;
                        }
                        Ok(())
                    })
                })
                .collect();
            handles.into_iter().try_for_each(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(index_err("an insert thread panicked")))
            })
        })
    }

    /// Removes the vectors of `ids` (those it has).
    pub fn remove(&self, ids: &[i64]) -> Result<()> {
        for id in ids {
            self.index.remove(*id as u64).map_err(index_err)?;
        }
        Ok(())
    }

    /// The `k` nearest chunks to `query` among those `keep` accepts (all,
    /// when `None`), with their L2 distances, nearest first.
    pub fn nearest(
        &self,
        query: &[f32],
        k: usize,
        keep: Option<&dyn Fn(i64) -> bool>,
    ) -> Vec<(i64, f32)> {
        if k == 0 || self.is_empty() || query.len() != self.dim {
            return Vec::new();
        }
        let q = quantize::quantize(query);
        // Unfiltered, the graph is walked without calling back into Rust
        // for every node it visits.
        let found = match keep {
            None => self.index.search::<i8>(&q, k * SHORTLIST),
            Some(keep) => self
                .index
                .filtered_search::<i8, _>(&q, k * SHORTLIST, |key| keep(key as i64)),
        };
        let Ok(found) = found else {
            return Vec::new();
        };
        let mut best = self.scored(query, found.keys.iter().map(|key| *key as i64));
        best.truncate(k);
        best
    }

    /// The `k` nearest among `ids` by an exact scan of their rows: a scope
    /// too small for the graph to find its members.
    pub fn nearest_among(
        &self,
        query: &[f32],
        k: usize,
        ids: impl Iterator<Item = i64>,
    ) -> Vec<(i64, f32)> {
        if k == 0 || query.len() != self.dim {
            return Vec::new();
        }
        let mut all = self.scored(query, ids);
        all.truncate(k);
        all
    }

    /// `ids` that the index holds, with their distances to `query`, nearest first.
    fn scored(&self, query: &[f32], ids: impl Iterator<Item = i64>) -> Vec<(i64, f32)> {
        let step = 1.0 / quantize::scale(self.dim);
        let mut row = vec![0i8; self.dim];
        let mut out: Vec<(i64, f32)> = ids
            .filter_map(|id| {
                let got = self.index.get::<i8>(id as u64, &mut row).ok()?;
                (got > 0).then(|| {
                    let d2: f32 = query
                        .iter()
                        .zip(&row)
                        .map(|(q, x)| {
                            let d = q - f32::from(*x) * step;
                            d * d
                        })
                        .sum();
                    (id, d2.sqrt())
                })
            })
            .collect();
        out.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        out
    }
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Only names this module writes are read back: nothing else in the folder,
/// and no path a manifest could smuggle in, is ever opened.
fn is_index_file_name(name: &str) -> bool {
    name.strip_prefix(FILE_PREFIX)
        .and_then(|rest| rest.strip_suffix(FILE_SUFFIX))
        .is_some_and(|middle| {
            !middle.is_empty() && middle.bytes().all(|b| b.is_ascii_digit() || b == b'-')
        })
}

fn remove_index_files(dir: &Path, keep: Option<&str>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if is_index_file_name(name) && Some(name) != keep {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ExactVectors;

    /// Unit vectors around 40 random centres, from a fixed seed: clustered
    /// like embeddings, so a graph search has neighbours to confuse.
    fn clustered(n: usize, dim: usize, seed: u64) -> Vec<(i64, Vec<f32>)> {
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        let centres: Vec<Vec<f32>> = (0..40)
            .map(|_| (0..dim).map(|_| next()).collect())
            .collect();
        (0..n)
            .map(|i| {
                let c = &centres[i % centres.len()];
                let v: Vec<f32> = c.iter().map(|x| x + 0.35 * next()).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                (i as i64 * 3 + 1, v.iter().map(|x| x / norm).collect())
            })
            .collect()
    }

    fn blobs(rows: &[(i64, Vec<f32>)]) -> Vec<(i64, Vec<u8>)> {
        rows.iter()
            .map(|(id, v)| (*id, quantize::to_blob(v)))
            .collect()
    }

    fn exact(rows: &[(i64, Vec<f32>)]) -> ExactVectors {
        let dim = rows[0].1.len();
        let with_docs = rows
            .iter()
            .map(|(id, v)| (*id, *id % 5, quantize::to_blob(v)))
            .collect();
        ExactVectors::from_rows(dim, 0, with_docs).unwrap()
    }

    fn provenance(dim: usize, seq: i64) -> Provenance {
        Provenance {
            model: "m".into(),
            dim,
            epoch: 7,
            seq,
        }
    }

    fn built(rows: &[(i64, Vec<f32>)]) -> AnnIndex {
        let ann = AnnIndex::new(rows[0].1.len(), rows.len()).unwrap();
        ann.add(&blobs(rows)).unwrap();
        ann
    }

    fn recall(ann: &AnnIndex, exact: &ExactVectors, queries: &[(i64, Vec<f32>)]) -> f64 {
        let mut hit = 0;
        for (_, q) in queries {
            let truth: Vec<i64> = exact.nearest(q, 10, None).iter().map(|h| h.0).collect();
            let got = ann.nearest(q, 10, None);
            hit += got.iter().filter(|h| truth.contains(&h.0)).count();
        }
        hit as f64 / (queries.len() * 10) as f64
    }

    /// The graph finds what the exact scan finds, with the exact scan's
    /// distances (candidates are scored again from their rows).
    #[test]
    fn graph_search_agrees_with_the_exact_scan() {
        let rows = clustered(4_000, 48, 1);
        // One row at a time, so one thread inserts and the graph is the same
        // in every run: built on several, it differed from run to run, and
        // its wide-search recall once fell to 0.988.
        let ann = AnnIndex::new(48, rows.len()).unwrap();
        for row in &rows {
            ann.add(&blobs(std::slice::from_ref(row))).unwrap();
        }
        assert_eq!(ann.len(), 4_000);
        let exact = exact(&rows);
        let queries = clustered(60, 48, 99);
        // Tight clusters of near-ties are hard for a graph; at the default
        // breadth it finds (nearly always exactly) the scan's answer.
        let r = recall(&ann, &exact, &queries);
        assert!(r >= 0.99, "recall@10 {r}");
        let q = &queries[0].1;
        let truth = exact.nearest(q, 10, None);
        for (id, d) in ann.nearest(q, 10, None) {
            if let Some((_, e)) = truth.iter().find(|t| t.0 == id) {
                assert!(
                    (d - e).abs() < 1e-3,
                    "chunk {id}: {d} against the scan's {e}"
                );
            }
        }
        let kept = ann.nearest(q, 10, Some(&|id| id % 2 == 0));
        assert_eq!(kept.len(), 10);
        assert!(kept.iter().all(|h| h.0 % 2 == 0), "{kept:?}");
        let among: Vec<i64> = rows.iter().map(|r| r.0).filter(|id| id % 97 == 0).collect();
        let scanned = ann.nearest_among(q, 5, among.iter().copied());
        let mut expected: Vec<(i64, f32)> = ann.scored(q, among.iter().copied());
        expected.truncate(5);
        assert_eq!(scanned, expected);
        assert!(scanned.iter().all(|h| h.0 % 97 == 0));
    }

    /// Saved, opened mapped or loaded, changed and saved again: the same
    /// answers, the new size, one index file left.
    #[test]
    fn an_index_saved_opens_with_the_same_answers_and_is_updated_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let rows = clustered(1_500, 32, 2);
        let ann = built(&rows);
        assert!(AnnIndex::open(dir.path(), &provenance(32, 0))
            .unwrap()
            .is_none());
        ann.save(dir.path(), &provenance(32, 5)).unwrap();
        let q = &rows[17].1;
        let (viewed, p) = AnnIndex::open(dir.path(), &provenance(32, 0))
            .unwrap()
            .unwrap();
        assert_eq!(p, provenance(32, 5));
        assert_eq!(viewed.nearest(q, 10, None), ann.nearest(q, 10, None));

        let (loaded, _) = AnnIndex::open_for_update(dir.path(), &provenance(32, 0))
            .unwrap()
            .unwrap();
        let more = clustered(300, 32, 3)
            .into_iter()
            .map(|(id, v)| (id + 1_000_000, v))
            .collect::<Vec<_>>();
        loaded.add(&blobs(&more)).unwrap();
        loaded.remove(&[rows[17].0]).unwrap();
        loaded.save(dir.path(), &provenance(32, 9)).unwrap();
        let (reopened, p) = AnnIndex::open(dir.path(), &provenance(32, 0))
            .unwrap()
            .unwrap();
        assert_eq!(p.seq, 9);
        assert_eq!(reopened.len(), 1_500 + 300 - 1);
        assert!(reopened
            .nearest(q, 10, None)
            .iter()
            .all(|h| h.0 != rows[17].0));
        assert_eq!(reopened.nearest(&more[0].1, 1, None)[0].0, more[0].0);
        let files = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| is_index_file_name(e.as_ref().unwrap().file_name().to_str().unwrap()))
            .count();
        assert_eq!(
            files, 1,
            "the older file is removed once the new one is in use"
        );
    }

    /// Everything that does not match the manifest or the database is
    /// refused, never used: another model or epoch, a truncated or swapped
    /// file, a manifest naming a path of its own, a manifest that is not one.
    #[test]
    fn a_foreign_truncated_or_tampered_index_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let rows = clustered(800, 16, 4);
        built(&rows).save(dir.path(), &provenance(16, 3)).unwrap();
        let refused = |expected: &Provenance| {
            matches!(
                AnnIndex::open(dir.path(), expected),
                Err(AnnError::Unusable { .. })
            )
        };
        assert!(refused(&Provenance {
            model: "other".into(),
            ..provenance(16, 0)
        }));
        assert!(refused(&Provenance {
            epoch: 8,
            ..provenance(16, 0)
        }));
        assert!(refused(&provenance(24, 0)));

        let manifest_path = dir.path().join(MANIFEST);
        let manifest: Manifest =
            serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
        let file = dir.path().join(&manifest.file);
        let whole = std::fs::read(&file).unwrap();
        std::fs::write(&file, &whole[..whole.len() / 2]).unwrap();
        assert!(refused(&provenance(16, 0)), "truncated");
        let smaller = built(&rows[..400]);
        let other = tempfile::tempdir().unwrap();
        smaller.save(other.path(), &provenance(16, 3)).unwrap();
        let other_manifest: Manifest =
            serde_json::from_slice(&std::fs::read(other.path().join(MANIFEST)).unwrap()).unwrap();
        let other_bytes = std::fs::read(other.path().join(&other_manifest.file)).unwrap();
        let mut padded = other_bytes.clone();
        padded.resize(whole.len(), 0);
        std::fs::write(&file, &padded).unwrap();
        assert!(
            refused(&provenance(16, 0)),
            "another index of the right size"
        );
        std::fs::write(&file, &whole).unwrap();
        assert!(AnnIndex::open(dir.path(), &provenance(16, 0))
            .unwrap()
            .is_some());

        for name in [
            "../index-1-2.usearch",
            "/etc/passwd",
            "index-1-2.usearch/..",
        ] {
            let tampered = Manifest {
                format: FORMAT,
                provenance: manifest.provenance.clone(),
                count: manifest.count,
                file: name.into(),
                bytes: manifest.bytes,
            };
            std::fs::write(&manifest_path, serde_json::to_vec(&tampered).unwrap()).unwrap();
            assert!(refused(&provenance(16, 0)), "{name}");
        }
        std::fs::write(&manifest_path, b"{ not json").unwrap();
        assert!(refused(&provenance(16, 0)));
    }

    /// Where the child of the kill test saves, over and over.
    const SAVE_LOOP_DIR: &str = "FOLIO_TEST_ANN_SAVE_LOOP";

    /// The child of the kill test: opens the index in the folder named by
    /// `FOLIO_TEST_ANN_SAVE_LOOP` and saves it again until it is killed.
    #[test]
    #[ignore = "run by a_kill_during_a_save_leaves_the_last_good_index"]
    fn save_until_killed() {
        let Some(dir) = std::env::var_os(SAVE_LOOP_DIR) else {
            return;
        };
        let dir = PathBuf::from(dir);
        let (ann, p) = AnnIndex::open_for_update(&dir, &provenance(32, 0))
            .unwrap()
            .unwrap();
        for seq in p.seq + 1.. {
            ann.save(&dir, &provenance(32, seq)).unwrap();
        }
    }

    /// `kill -9` at random moments of saving: the folder always opens to a
    /// whole index, the last one saved or an earlier one.
    #[test]
    fn a_kill_during_a_save_leaves_the_last_good_index() {
        let dir = tempfile::tempdir().unwrap();
        let rows = clustered(20_000, 32, 5);
        built(&rows).save(dir.path(), &provenance(32, 1)).unwrap();
        let q = &rows[3].1;
        let mut seqs = Vec::new();
        for round in 0..12u64 {
            let mut child = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "ann::tests::save_until_killed",
                    "--ignored",
                    "--quiet",
                ])
                .env(SAVE_LOOP_DIR, dir.path())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(150 + round * 37));
            child.kill().unwrap();
            child.wait().unwrap();
            let (ann, p) = AnnIndex::open(dir.path(), &provenance(32, 0))
                .unwrap_or_else(|e| panic!("round {round}: {e}"))
                .expect("an index is always there");
            assert_eq!(ann.len(), 20_000, "round {round}");
            assert_eq!(ann.nearest(q, 1, None)[0].0, rows[3].0, "round {round}");
            seqs.push(p.seq);
        }
        assert!(
            seqs.last() > Some(&1),
            "the child saved at least once: {seqs:?}"
        );
    }
}
