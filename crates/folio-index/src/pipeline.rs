//! Brings the index in line with the disk. Files are parsed on blocking
//! threads while the previous batch is embedded; each batch of whole documents
//! is committed in one transaction together with the job's progress, so an
//! interrupted pass (Ctrl-C, kill -9) resumes where its last commit left off.
//! Every file read is marked in the process's reading log until its commit
//! ([`crate::quarantine`]), so a file that kills the process is read alone
//! on the next start and, if it kills that too, set aside.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::quarantine::{Mark, PassMarks, ReadingLog};
use crate::{IndexError, Result};
use folio_core::events::{EngineEvent, EventSender, JobPhase, JobProgress, Progress};
use folio_core::path_text;
use folio_documents::loaders::{Format, PageLog};
use folio_documents::prepare::{prepare, Limits, Prepared, Reading};
use folio_documents::scan::{inspect, mtime_ns, scan, FileEntry, ScanError};
use folio_documents::skip::SkipRules;
use folio_embed::Embedder;
use folio_store::{
    vector_blob, BatchProgress, ChunkWrite, DocumentRecord, DocumentWrite, Store, VectorSpace,
};

/// A batch is embedded once it holds this many chunks or documents: a few
/// seconds of the embedded model on two cores between progress reports and
/// stop checks.
const BATCH_CHUNKS: usize = 512;
const BATCH_DOCS: usize = 256;
/// Embedded batches are gathered into commits of about this many chunks
/// (`FOLIO_COMMIT_CHUNKS` sets another number).
/// Every commit writes the pages it shares with the one before (B-tree
/// edges, FTS5 segments, sqlite-vec's partly filled blocks) again, to the
/// WAL and once more at the checkpoint: ingesting HotpotQA a commit per
/// batch (about 280 chunks) wrote 15.9× its input, in commits of 2,048
/// chunks 10.3–11.5× (run to run, checkpoints every 1,000 pages).
pub const COMMIT_CHUNKS: usize = 2048;
/// A commit waits no longer than this for more batches (what a crash
/// can cost), and not at all when no prepared file is ready: a slow file
/// (a long OCR) never holds finished ones back.
const COMMIT_WAIT: Duration = Duration::from_secs(30);
/// A slower embedder (a busy embedding server) gets smaller batches: as
/// many chunks as it embedded in this long at its last pace, so progress
/// moves and a stop is honoured within about this long.
const BATCH_SECS: f64 = 20.0;
const MIN_BATCH_CHUNKS: usize = 8;
/// Prepared files waiting for the embedder hold at most this much text in
/// all, in KiB; a larger file waits until it is alone. Reading is faster
/// than embedding, so without it a folder of large files would wait in
/// memory whole (up to two batches of documents, each up to the expansion
/// budget).
const WAITING_KIB: u32 = 64 << 10;

/// The kind of the indexing jobs in the jobs table.
pub const INGEST_JOB: &str = "ingest";

#[derive(Clone)]
pub struct Ingestor {
    pub store: Store,
    pub embedder: Arc<Embedder>,
    pub space: VectorSpace,
    pub limits: Limits,
    pub events: EventSender,
    /// Where this process marks the files it reads (one per process).
    pub reading: Arc<ReadingLog>,
    /// Fired by a shutdown, a pause or a cancel of the pass's job: the pass
    /// stops at its next batch boundary.
    pub stop: CancellationToken,
}

/// A watched root and the folder row it belongs to.
#[derive(Debug, Clone)]
pub struct Root {
    pub folder_id: i64,
    pub path: PathBuf,
}

/// What the watcher saw happen to a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Created or modified (or maybe deleted: the path is inspected again).
    Touched(PathBuf),
    Renamed {
        from: PathBuf,
        to: PathBuf,
    },
}

#[derive(
    Debug,
    Default,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    ts_rs::TS,
    schemars::JsonSchema,
)]
#[ts(export)]
pub struct PassSummary {
    pub indexed: u64,
    pub unchanged: u64,
    pub failed: u64,
    pub removed: u64,
    /// Files set aside because the process died while reading them alone
    /// (absent from summaries an older Folio wrote).
    #[serde(default)]
    pub set_aside: u64,
    pub chunks_embedded: u64,
    pub chunks_reused: u64,
    pub cancelled: bool,
}

impl PassSummary {
    /// Counts `other`'s work in this summary too.
    pub fn add(&mut self, other: PassSummary) {
        self.indexed += other.indexed;
        self.unchanged += other.unchanged;
        self.failed += other.failed;
        self.removed += other.removed;
        self.set_aside += other.set_aside;
        self.chunks_embedded += other.chunks_embedded;
        self.chunks_reused += other.chunks_reused;
        self.cancelled |= other.cancelled;
    }
}

struct Task {
    folder_id: i64,
    entry: FileEntry,
    stored_hash: Option<String>,
}

/// Work found by comparing disk and index: files to (re)parse, and writes that
/// need no parsing (removals, unreadable entries).
#[derive(Default)]
struct Plan {
    tasks: Vec<Task>,
    writes: Vec<DocumentWrite>,
}

/// A file's key in the store: its path as lossless text.
fn path_str(p: &Path) -> String {
    path_text::to_text(p)
}

/// What the disk holds of `path` now, so that the store can drop a write
/// from an older read than another process has committed.
fn on_disk(path: &str) -> Option<(u64, i64)> {
    let meta = std::fs::metadata(path_text::to_path(path)).ok()?;
    Some((meta.len(), mtime_ns(&meta)))
}

fn failed_write(folder_id: i64, e: ScanError) -> DocumentWrite {
    DocumentWrite::Failed {
        folder_id,
        path: path_str(&e.path),
        size: 0,
        mtime_ns: 0,
        error: e.error,
    }
}

/// A stored document that still matches the file on disk needs no work;
/// nor does a set-aside file that has not changed.
fn up_to_date(stored: Option<&DocumentRecord>, f: &FileEntry) -> bool {
    stored.is_some_and(|d| {
        (d.status == "indexed" || d.set_aside)
            && d.size == f.size as i64
            && d.mtime_ns == f.mtime_ns
    })
}

/// The innermost of `roots` that holds `p`.
fn root_of<'r>(roots: &'r [Root], p: &Path) -> Option<&'r Root> {
    roots
        .iter()
        .filter(|r| p.starts_with(&r.path))
        .max_by_key(|r| r.path.as_os_str().len())
}

impl Ingestor {
    fn cancelled(&self) -> bool {
        self.stop.is_cancelled()
    }

    /// Prepares one file on this thread, reporting its pages as OCR reads
    /// them and stopping between pages when the pass is stopped.
    fn prepare(&self, entry: FileEntry, stored_hash: Option<&str>) -> Prepared {
        let path = path_str(&entry.path);
        let started = Instant::now();
        let on_page = |done: u32, total: u32| {
            let progress = Progress::after(done.into(), total.into(), 0, started.elapsed());
            self.emit(EngineEvent::DocumentReading {
                path: path.clone(),
                progress,
            });
        };
        let interrupted = || self.cancelled();
        let reading = Reading {
            on_page: &on_page,
            interrupted: &interrupted,
        };
        prepare(entry, stored_hash, &self.limits, &reading)
    }

    fn log_error(&self, source: std::io::Error) -> IndexError {
        IndexError::ReadingLog {
            dir: self.reading.dir().to_path_buf(),
            source,
        }
    }

    /// Deals with what processes that died were reading, before a pass
    /// reads anything: files they were reading alone are set aside, and
    /// files they were reading beside others are read here one at a time,
    /// so the next crash names its file. `roots` are all watched roots.
    pub async fn recover(&self, roots: &[Root]) -> Result<PassSummary> {
        let _recovering = self.reading.recovering.lock().await;
        let (verdicts, claimed) = self
            .reading
            .claim_orphans()
            .map_err(|e| self.log_error(e))?;
        let mut summary = PassSummary::default();
        let set_aside: Vec<DocumentWrite> = verdicts
            .culprits
            .iter()
            .filter_map(|path| {
                let root = root_of(roots, path)?;
                let f = inspect(path, &self.limits.ocr)?.ok()?;
                Some(DocumentWrite::SetAside {
                    folder_id: root.folder_id,
                    path: path_str(path),
                    size: f.size,
                    mtime_ns: f.mtime_ns,
                })
            })
            .collect();
        if !set_aside.is_empty() {
            self.store
                .write_documents(&set_aside, &self.space, None, Some(on_disk))
                .await?;
            summary.set_aside = set_aside.len() as u64;
            for w in set_aside {
                let path = w.path().to_owned();
                let error = folio_store::set_aside_error(&path);
                self.emit(EngineEvent::DocumentFailed { path, error });
            }
        }
        self.reading
            .inherit(&verdicts)
            .and_then(|()| self.reading.forget_claimed(&claimed))
            .map_err(|e| self.log_error(e))?;
        while let Some(path) = self.reading.next_suspect() {
            if self.cancelled() {
                summary.cancelled = true;
                break;
            }
            summary.add(self.read_alone(roots, &path, false).await?);
            self.reading
                .settle_suspect(&path)
                .map_err(|e| self.log_error(e))?;
        }
        Ok(summary)
    }

    /// Reads `paths` again, each alone, set aside or failed as they may
    /// be: `folio retry`. A file that kills the process is set aside again
    /// by the next start.
    pub async fn retry(&self, roots: &[Root], paths: &[PathBuf]) -> Result<PassSummary> {
        let mut summary = PassSummary::default();
        for path in paths {
            summary.add(self.read_alone(roots, path, true).await?);
        }
        Ok(summary)
    }

    /// Reads and stores one file with nothing else in progress, marked so
    /// that a crash blames it. An up-to-date file is read only if `again`.
    async fn read_alone(&self, roots: &[Root], path: &Path, again: bool) -> Result<PassSummary> {
        let Some(root) = root_of(roots, path) else {
            // Its folder is no longer watched: nothing to read it into.
            return Ok(PassSummary::default());
        };
        let mut plan = Plan::default();
        match inspect(path, &self.limits.ocr) {
            Some(Ok(entry)) => {
                let stored = self.store.document(&path_str(path)).await?;
                if again || !up_to_date(stored.as_ref(), &entry) {
                    plan.tasks.push(Task {
                        folder_id: root.folder_id,
                        entry,
                        stored_hash: stored.and_then(|d| d.hash),
                    });
                }
            }
            Some(Err(e)) => plan.writes.push(failed_write(root.folder_id, e)),
            // Gone or no longer read: the pass that follows records it.
            None => {}
        }
        self.execute(plan, None, true).await
    }

    fn emit(&self, event: EngineEvent) {
        // No subscriber is fine: nobody is watching progress.
        let _ = self.events.send(event);
    }

    /// Full reconciliation of `roots` with the disk, recorded under `job_id`.
    pub async fn reconcile(&self, roots: &[Root], job_id: i64) -> Result<PassSummary> {
        self.report(job_id, JobPhase::Scanning, 0, 0, 0, None);
        let mut plan = Plan::default();
        for root in roots {
            // A root that is gone may be an unmounted drive: keep its index
            // rather than wiping it; `folio remove` forgets it on purpose.
            if !root.path.exists() {
                continue;
            }
            let path = root.path.clone();
            let ocr = self.limits.ocr.clone();
            let found = tokio::task::spawn_blocking(move || scan(&path, &ocr))
                .await
                .map_err(|e| IndexError::Task(e.to_string()))?;
            let stored: HashMap<String, DocumentRecord> = self
                .store
                .documents_under(&path_str(&root.path))
                .await?
                .into_iter()
                .map(|d| (d.path.clone(), d))
                .collect();
            let mut seen = HashSet::new();
            for f in found.files {
                let key = path_str(&f.path);
                let doc = stored.get(&key);
                if !up_to_date(doc, &f) {
                    let stored_hash = doc.and_then(|d| d.hash.clone());
                    plan.tasks.push(Task {
                        folder_id: root.folder_id,
                        entry: f,
                        stored_hash,
                    });
                }
                seen.insert(key);
            }
            for e in found.errors {
                let key = path_str(&e.path);
                if stored.get(&key).and_then(|d| d.error.as_deref()) != Some(e.error.as_str()) {
                    plan.writes.push(failed_write(root.folder_id, e));
                }
                seen.insert(key);
            }
            for path in stored.into_keys().filter(|p| !seen.contains(p)) {
                plan.writes.push(DocumentWrite::Removed { path });
            }
        }
        self.execute(plan, Some(job_id), false).await
    }

    /// Applies what the watcher saw. `roots` are all watched roots; paths
    /// outside them are ignored.
    pub async fn apply_changes(&self, roots: &[Root], changes: Vec<Change>) -> Result<PassSummary> {
        let root_of = |p: &Path| root_of(roots, p);
        let mut plan = Plan::default();
        let mut touched = Vec::new();
        let mut seen = HashSet::new();
        // What the scan skips, the watcher skips: a path hidden or named by
        // a `.folioignore` counts as gone.
        let mut rules: HashMap<PathBuf, SkipRules> = HashMap::new();
        let mut skips = |root: &Root, p: &Path| {
            rules
                .entry(root.path.clone())
                .or_insert_with(|| SkipRules::new(&root.path))
                .skips(p, p.is_dir())
        };
        for change in changes {
            match change {
                Change::Touched(p) => touched.push(p),
                Change::Renamed { from, to } => {
                    let old = self.store.document(&path_str(&from)).await?;
                    let to_root = root_of(&to).filter(|root| !skips(root, &to));
                    match (to_root, old, inspect(&to, &self.limits.ocr)) {
                        (Some(root), Some(old), Some(Ok(f))) => {
                            plan.writes.push(DocumentWrite::Renamed {
                                from: path_str(&from),
                                to: path_str(&to),
                                folder_id: root.folder_id,
                            });
                            // The moved document is re-read only if its content changed too.
                            if !up_to_date(Some(&old), &f) {
                                plan.tasks.push(Task {
                                    folder_id: root.folder_id,
                                    entry: f,
                                    stored_hash: old.hash,
                                });
                            }
                            seen.insert(to);
                        }
                        _ => touched.extend([from, to]),
                    }
                }
            }
        }
        for p in touched {
            if !seen.insert(p.clone()) {
                continue;
            }
            let Some(root) = root_of(&p) else { continue };
            let key = path_str(&p);
            let skipped = skips(root, &p);
            if p.is_dir() && !skipped {
                // A folder appeared (or was moved in): index what it holds.
                let dir = p.clone();
                let ocr = self.limits.ocr.clone();
                let found = tokio::task::spawn_blocking(move || scan(&dir, &ocr))
                    .await
                    .map_err(|e| IndexError::Task(e.to_string()))?;
                for f in found.files {
                    let stored = self.store.document(&path_str(&f.path)).await?;
                    if !up_to_date(stored.as_ref(), &f) {
                        plan.tasks.push(Task {
                            folder_id: root.folder_id,
                            entry: f,
                            stored_hash: stored.and_then(|d| d.hash),
                        });
                    }
                }
                plan.writes.extend(
                    found
                        .errors
                        .into_iter()
                        .map(|e| failed_write(root.folder_id, e)),
                );
                continue;
            }
            let found = match skipped {
                true => None,
                false => inspect(&p, &self.limits.ocr),
            };
            match found {
                Some(Ok(f)) => {
                    let stored = self.store.document(&key).await?;
                    if !up_to_date(stored.as_ref(), &f) {
                        plan.tasks.push(Task {
                            folder_id: root.folder_id,
                            entry: f,
                            stored_hash: stored.and_then(|d| d.hash),
                        });
                    }
                }
                Some(Err(e)) if p.symlink_metadata().is_ok() => {
                    plan.writes.push(failed_write(root.folder_id, e))
                }
                // The watched folder itself is gone (an unmounted drive):
                // keep its index, as the reconcile does.
                _ if !root.path.exists() => {}
                _ => {
                    // Gone: the file itself, or a folder with everything under it.
                    for d in self.store.documents_under(&key).await? {
                        plan.writes.push(DocumentWrite::Removed { path: d.path });
                    }
                }
            }
        }
        // Removals go last so a rename seen as delete + create can still reuse
        // the old file's vectors while the new one is indexed.
        plan.writes
            .sort_by_key(|w| matches!(w, DocumentWrite::Removed { .. }));
        self.execute(plan, None, false).await
    }

    /// Carries out `plan`. Files are read two at a time (one per core)
    /// unless `alone`, which marks the one file of the plan as read with
    /// nothing beside it.
    async fn execute(&self, plan: Plan, job_id: Option<i64>, alone: bool) -> Result<PassSummary> {
        let Plan { tasks, writes } = plan;
        let total = (tasks.len() + writes.len()) as u64;
        if let Some(id) = job_id {
            self.store.start_job(id, total).await?;
        }
        // A file read alone waits for this process's other passes to end,
        // and they wait for it.
        let (_alone, _beside);
        if alone {
            _alone = self.reading.gate.write().await;
        } else {
            _beside = self.reading.gate.read().await;
        }
        let marks = Arc::new(PassMarks::new(self.reading.clone()));
        let mut tracker = Tracker::new(self, job_id, total, marks.clone()).await?;
        let (removals, direct): (Vec<_>, Vec<_>) = writes
            .into_iter()
            .partition(|w| matches!(w, DocumentWrite::Removed { .. }));
        tracker.summary.failed += failures(&direct);
        tracker.commit(self, direct).await?;

        let (tx, mut rx) = mpsc::channel::<(i64, Prepared, Waiting)>(BATCH_DOCS * 2);
        let waiting = Arc::new(Semaphore::new(WAITING_KIB as usize));
        let ingestor = self.clone();
        let producer_marks = marks.clone();
        let producer = tokio::spawn(async move {
            let parallel = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2);
            let (read, read_mark) = match alone {
                true => (1, Mark::Alone),
                false => (parallel, Mark::Reading),
            };
            let mut prepared = futures::stream::iter(tasks)
                .map(|t| {
                    let ingestor = ingestor.clone();
                    let marks = producer_marks.clone();
                    tokio::task::spawn_blocking(move || {
                        let path = t.entry.path.clone();
                        marks
                            .mark(read_mark, [path.as_path()])
                            .map_err(|e| ingestor.log_error(e))?;
                        if alone {
                            marks.time_lone_read(path.clone());
                        }
                        let prepared = ingestor.prepare(t.entry, t.stored_hash.as_deref());
                        if !alone {
                            marks
                                .mark(Mark::Waiting, [path.as_path()])
                                .map_err(|e| ingestor.log_error(e))?;
                        }
                        Ok::<_, IndexError>((t.folder_id, prepared))
                    })
                })
                .buffer_unordered(read);
            while let Some(item) = prepared.next().await {
                let (folder_id, prepared) = item.map_err(|e| IndexError::Task(e.to_string()))??;
                let kib = prepared
                    .held_bytes()
                    .div_ceil(1024)
                    .min(u64::from(WAITING_KIB));
                let Ok(permit) = waiting.clone().acquire_many_owned(kib as u32).await else {
                    break;
                };
                if tx.send((folder_id, prepared, permit)).await.is_err() {
                    break;
                }
            }
            Ok::<_, IndexError>(())
        });

        let mut batch_limit = BATCH_CHUNKS;
        let mut next = None;
        loop {
            let first = match next.take() {
                Some(item) => item,
                None => match rx.recv().await {
                    Some(item) => item,
                    None => break,
                },
            };
            let (folder_id, prepared, permit) = first;
            let mut chunks = batch_chunks(&prepared);
            let (mut batch, mut permits) = (vec![(folder_id, prepared)], vec![permit]);
            while chunks < batch_limit && batch.len() < BATCH_DOCS {
                match rx.try_recv() {
                    Ok((folder_id, prepared, permit)) => {
                        chunks += batch_chunks(&prepared);
                        batch.push((folder_id, prepared));
                        permits.push(permit);
                    }
                    Err(_) => break,
                }
            }
            let pdfs: Vec<String> = batch
                .iter()
                .filter_map(|(_, p)| match p {
                    Prepared::Index { entry, hash, .. } if entry.format == Format::Pdf => {
                        Some(hash.clone())
                    }
                    _ => None,
                })
                .collect();
            let (embedded_before, started) = (tracker.summary.chunks_embedded, Instant::now());
            let marks = (!alone).then_some(marks.as_ref());
            let writes = self
                .embed_batch(batch, &tracker.staged.writes, &mut tracker.summary, marks)
                .await?;
            batch_limit = next_batch_chunks(
                tracker.summary.chunks_embedded - embedded_before,
                started.elapsed(),
            );
            tracker.stage(self, writes, pdfs);
            // Staged writes are bounded by the commit's size instead.
            drop(permits);
            let cancelled = self.cancelled();
            next = if cancelled { None } else { rx.try_recv().ok() };
            if cancelled || next.is_none() || tracker.staged.full(self.limits.commit_chunks) {
                tracker.commit_staged(self).await?;
            }
            if cancelled {
                tracker.summary.cancelled = true;
                break;
            }
        }
        drop(rx);
        producer
            .await
            .map_err(|e| IndexError::Task(e.to_string()))??;
        if !tracker.summary.cancelled {
            // Every file was stored or failed; no read is left to resume.
            if let Some(dir) = &self.limits.ocr_pages_dir {
                PageLog::forget_all(dir);
            }
            tracker.summary.removed += removals.len() as u64;
            tracker.commit(self, removals).await?;
            self.embed_pending(&mut tracker).await?;
        }
        self.report(
            job_id.unwrap_or(0),
            JobPhase::Finished,
            tracker.done,
            total,
            tracker.failed,
            Some(&tracker),
        );
        Ok(tracker.summary)
    }

    /// Turns prepared files into writes, giving every new chunk a vector:
    /// reused when the same text was embedded before, computed otherwise.
    /// The files whose chunks are computed are marked as being embedded
    /// in `marks` (`None`: a file read alone stays marked so).
    async fn embed_batch(
        &self,
        batch: Vec<(i64, Prepared)>,
        staged: &[DocumentWrite],
        summary: &mut PassSummary,
        marks: Option<&PassMarks>,
    ) -> Result<Vec<DocumentWrite>> {
        let mut writes = Vec::with_capacity(batch.len());
        for (folder_id, p) in batch {
            writes.push(match p {
                Prepared::Index {
                    entry,
                    hash,
                    note,
                    tree,
                    facts,
                    chunks,
                    ocr_pages,
                } => {
                    summary.indexed += 1;
                    DocumentWrite::Indexed {
                        folder_id,
                        path: path_str(&entry.path),
                        format: entry.format.as_str(),
                        hash,
                        size: entry.size,
                        mtime_ns: entry.mtime_ns,
                        note,
                        chunks: chunks
                            .into_iter()
                            .map(|c| ChunkWrite {
                                text_hash: c.text_hash(),
                                text: c.text,
                                heading_path: c.heading_path,
                                ranges: c.ranges,
                                span: c.span,
                                boxes: c.boxes,
                                rows: c.rows,
                                vector: None,
                            })
                            .collect(),
                        tree,
                        facts,
                        ocr_pages,
                    }
                }
                Prepared::Unchanged { entry } => {
                    summary.unchanged += 1;
                    DocumentWrite::Touched {
                        path: path_str(&entry.path),
                        mtime_ns: entry.mtime_ns,
                    }
                }
                Prepared::Failed { entry, error } => {
                    summary.failed += 1;
                    DocumentWrite::Failed {
                        folder_id,
                        path: path_str(&entry.path),
                        size: entry.size,
                        mtime_ns: entry.mtime_ns,
                        error,
                    }
                }
                Prepared::Vanished { entry } => {
                    summary.removed += 1;
                    DocumentWrite::Removed {
                        path: path_str(&entry.path),
                    }
                }
                Prepared::Interrupted { entry } => {
                    // Stopped, not crashed: nothing to blame it for.
                    if let Some(marks) = marks {
                        marks
                            .mark(Mark::Done, [entry.path.as_path()])
                            .map_err(|e| self.log_error(e))?;
                    }
                    continue;
                }
            });
        }
        let mut inputs: HashMap<i64, String> = HashMap::new();
        for w in &writes {
            if let DocumentWrite::Indexed { chunks, .. } = w {
                for c in chunks {
                    inputs.entry(c.text_hash).or_insert_with(|| {
                        folio_documents::chunker::embedding_input(&c.heading_path, &c.text)
                    });
                }
            }
        }
        // Text embedded earlier: in writes staged for the next commit, or
        // in the store.
        let mut vectors: HashMap<i64, Arc<[u8]>> = staged
            .iter()
            .flat_map(|w| match w {
                DocumentWrite::Indexed { chunks, .. } => chunks.as_slice(),
                _ => &[],
            })
            .filter(|c| inputs.contains_key(&c.text_hash))
            .filter_map(|c| Some((c.text_hash, c.vector.clone()?)))
            .collect();
        let hashes: Vec<i64> = inputs
            .keys()
            .filter(|h| !vectors.contains_key(h))
            .copied()
            .collect();
        vectors.extend(
            self.store
                .vectors_by_text_hash(&self.space, &hashes)
                .await?
                .into_iter()
                .map(|(h, v)| (h, Arc::from(v))),
        );
        summary.chunks_reused += vectors.len() as u64;
        let missing: Vec<(i64, String)> = inputs
            .into_iter()
            .filter(|(h, _)| !vectors.contains_key(h))
            .collect();
        if !missing.is_empty() {
            let embedder = self.embedder.clone();
            let texts: Vec<String> = missing.iter().map(|(_, t)| t.clone()).collect();
            let embedding: Vec<PathBuf> = writes
                .iter()
                .filter(|w| matches!(w, DocumentWrite::Indexed { .. }))
                .map(|w| path_text::to_path(w.path()))
                .collect();
            if let Some(marks) = marks {
                marks
                    .mark(Mark::Embedding, embedding.iter().map(PathBuf::as_path))
                    .map_err(|e| self.log_error(e))?;
            }
            let computed = tokio::task::spawn_blocking(move || {
                #[cfg(feature = "fault-injection")]
                for path in &embedding {
                    folio_documents::fault::strike(folio_documents::fault::Stage::Embed, path);
                }
                embedder.embed_bulk(&texts).map(|v| (v, embedding))
            })
            .await
            .map_err(|e| IndexError::Task(e.to_string()))??;
            let (computed, embedded) = computed;
            if let Some(marks) = marks {
                marks
                    .mark(Mark::Waiting, embedded.iter().map(PathBuf::as_path))
                    .map_err(|e| self.log_error(e))?;
            }
            summary.chunks_embedded += computed.len() as u64;
            for ((h, _), v) in missing.iter().zip(computed) {
                vectors.insert(*h, Arc::from(vector_blob(&v)));
            }
        }
        for w in &mut writes {
            if let DocumentWrite::Indexed { chunks, .. } = w {
                for c in chunks {
                    c.vector = vectors.get(&c.text_hash).cloned();
                }
            }
        }
        Ok(writes)
    }

    /// Embeds chunks that have no vector from the current model: all of them
    /// after a model change, or a few left by an interrupted pass.
    async fn embed_pending(&self, tracker: &mut Tracker) -> Result<()> {
        let mut batch_limit = BATCH_CHUNKS;
        loop {
            if self.cancelled() {
                tracker.summary.cancelled = true;
                return Ok(());
            }
            let pending = self.store.unembedded_chunks(batch_limit).await?;
            if pending.is_empty() {
                return Ok(());
            }
            self.report(
                tracker.job_id.unwrap_or(0),
                JobPhase::Embedding,
                tracker.done,
                tracker.total,
                tracker.failed,
                None,
            );
            let embedder = self.embedder.clone();
            let texts: Vec<String> = pending
                .iter()
                .map(|(_, heading, text)| folio_documents::chunker::embedding_input(heading, text))
                .collect();
            let started = Instant::now();
            let computed = tokio::task::spawn_blocking(move || embedder.embed_bulk(&texts))
                .await
                .map_err(|e| IndexError::Task(e.to_string()))??;
            batch_limit = next_batch_chunks(computed.len() as u64, started.elapsed());
            tracker.summary.chunks_embedded += computed.len() as u64;
            let rows: Vec<(i64, Vec<f32>)> =
                pending.iter().map(|(id, _, _)| *id).zip(computed).collect();
            self.store.store_vectors(&self.space, &rows).await?;
        }
    }

    fn report(
        &self,
        job_id: i64,
        phase: JobPhase,
        done: u64,
        total: u64,
        failed: u64,
        tracker: Option<&Tracker>,
    ) {
        let elapsed = tracker.map_or(Duration::ZERO, |t| t.started.elapsed());
        self.emit(EngineEvent::JobProgress(JobProgress {
            job_id,
            kind: "ingest".into(),
            phase,
            progress: Progress::after(done, total, failed, elapsed),
        }));
    }
}

/// Chunks the next batch may hold after `embedded` chunks took `took`.
fn next_batch_chunks(embedded: u64, took: Duration) -> usize {
    if embedded == 0 {
        return BATCH_CHUNKS;
    }
    let per_second = embedded as f64 / took.as_secs_f64().max(1e-3);
    ((per_second * BATCH_SECS) as usize).clamp(MIN_BATCH_CHUNKS, BATCH_CHUNKS)
}

/// A prepared file's share of what may wait for the embedder
/// ([`WAITING_KIB`]), given back once its writes are staged.
type Waiting = OwnedSemaphorePermit;

fn batch_chunks(p: &Prepared) -> usize {
    match p {
        Prepared::Index { chunks, .. } => chunks.len().max(1),
        _ => 1,
    }
}

fn failures(writes: &[DocumentWrite]) -> u64 {
    writes
        .iter()
        .filter(|w| matches!(w, DocumentWrite::Failed { .. }))
        .count() as u64
}

/// Counts a pass's progress; holds embedded writes until they are committed.
struct Tracker {
    job_id: Option<i64>,
    total: u64,
    done: u64,
    failed: u64,
    started: Instant,
    active_ms_before: i64,
    summary: PassSummary,
    staged: Staged,
    /// The pass's files in the reading log, marked done as they commit.
    marks: Arc<PassMarks>,
}

/// Embedded documents waiting for their commit (see [`COMMIT_CHUNKS`]).
#[derive(Default)]
struct Staged {
    writes: Vec<DocumentWrite>,
    chunks: usize,
    /// PDFs whose saved OCR pages are no longer needed once committed.
    pdfs: Vec<String>,
    since: Option<Instant>,
}

impl Staged {
    /// Whether to commit now rather than wait for another batch.
    fn full(&self, commit_chunks: usize) -> bool {
        self.chunks >= commit_chunks || self.since.is_some_and(|t| t.elapsed() >= COMMIT_WAIT)
    }
}

impl Tracker {
    async fn new(
        ing: &Ingestor,
        job_id: Option<i64>,
        total: u64,
        marks: Arc<PassMarks>,
    ) -> Result<Tracker> {
        let active_ms_before = match job_id {
            Some(id) => ing.store.job(id).await?.map(|j| j.active_ms).unwrap_or(0),
            None => 0,
        };
        Ok(Tracker {
            job_id,
            total,
            done: 0,
            failed: 0,
            started: Instant::now(),
            active_ms_before,
            summary: PassSummary::default(),
            staged: Staged::default(),
            marks,
        })
    }

    /// Holds embedded writes for the next commit. The progress reported
    /// counts them: they are done but for the write, which a crash would
    /// have the next pass redo.
    fn stage(&mut self, ing: &Ingestor, writes: Vec<DocumentWrite>, pdfs: Vec<String>) {
        let staged = &mut self.staged;
        staged.since.get_or_insert_with(Instant::now);
        staged.chunks += writes
            .iter()
            .map(|w| match w {
                DocumentWrite::Indexed { chunks, .. } => chunks.len(),
                _ => 0,
            })
            .sum::<usize>();
        staged.writes.extend(writes);
        staged.pdfs.extend(pdfs);
        let failed = failures(&staged.writes);
        ing.report(
            self.job_id.unwrap_or(0),
            JobPhase::Indexing,
            self.done + staged.writes.len() as u64,
            self.total,
            self.failed + failed,
            Some(self),
        );
    }

    /// Commits the staged writes; their saved OCR pages go after.
    async fn commit_staged(&mut self, ing: &Ingestor) -> Result<()> {
        let staged = std::mem::take(&mut self.staged);
        self.commit(ing, staged.writes).await?;
        if let Some(dir) = &ing.limits.ocr_pages_dir {
            for hash in &staged.pdfs {
                PageLog::forget(dir, hash, &ing.limits.ocr);
            }
        }
        Ok(())
    }

    async fn commit(&mut self, ing: &Ingestor, writes: Vec<DocumentWrite>) -> Result<()> {
        if writes.is_empty() {
            return Ok(());
        }
        let failed = failures(&writes);
        let progress = self.job_id.map(|job_id| BatchProgress {
            job_id,
            done: writes.len() as u64,
            failed,
            active_ms: self.active_ms_before + self.started.elapsed().as_millis() as i64,
        });
        ing.store
            .write_documents(&writes, &ing.space, progress, Some(on_disk))
            .await?;
        let files: Vec<PathBuf> = writes
            .iter()
            .map(|w| path_text::to_path(w.path()))
            .collect();
        self.marks
            .mark(Mark::Done, files.iter().map(PathBuf::as_path))
            .map_err(|e| ing.log_error(e))?;
        self.done += writes.len() as u64;
        self.failed += failed;
        for w in writes {
            ing.emit(match w {
                DocumentWrite::Indexed { path, chunks, .. } => EngineEvent::DocumentIndexed {
                    path,
                    chunks: chunks.len(),
                },
                DocumentWrite::Failed { path, error, .. } => {
                    EngineEvent::DocumentFailed { path, error }
                }
                DocumentWrite::SetAside { path, .. } => EngineEvent::DocumentFailed {
                    error: folio_store::set_aside_error(&path),
                    path,
                },
                DocumentWrite::Removed { path } => EngineEvent::DocumentRemoved { path },
                DocumentWrite::Touched { .. } | DocumentWrite::Renamed { .. } => continue,
            });
        }
        ing.report(
            self.job_id.unwrap_or(0),
            JobPhase::Indexing,
            self.done,
            self.total,
            self.failed,
            Some(self),
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_embedder_gets_batches_it_finishes_in_about_twenty_seconds() {
        // The embedded model on two cores: about 50 chunks a second.
        assert_eq!(
            next_batch_chunks(512, Duration::from_secs(10)),
            BATCH_CHUNKS
        );
        // A server answering 1.5 chunks a second.
        assert_eq!(next_batch_chunks(30, Duration::from_secs(20)), 30);
        assert_eq!(
            next_batch_chunks(1, Duration::from_secs(60)),
            MIN_BATCH_CHUNKS
        );
        // Everything reused: nothing to learn the pace from.
        assert_eq!(next_batch_chunks(0, Duration::from_secs(5)), BATCH_CHUNKS);
    }
}
