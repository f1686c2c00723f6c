//! Keeping a process's vector copy ([`VectorCopy`]) current.
//!
//! A long-lived process (the app, the watcher, an evaluation) asks for the
//! copy with [`MemoryVectors::warm`]: below [`APPROXIMATE_FROM`] vectors it
//! loads them all for an exact scan; above, it opens the saved approximate
//! index, or builds one from the store (reporting
//! [`EngineEvent::VectorIndexBuilding`]) while sqlite-vec answers exactly.
//! After that every query checks the store's vector version: an exact copy
//! is reloaded in the background, an approximate one catches up from the
//! vector log at once, and merges its changes into the saved index in the
//! background once they are many.
//!
//! A one-shot command does not warm, and reads nothing up front; it uses a
//! saved approximate index if one is there (memory-mapped, so opening it
//! costs a header read), and sqlite-vec otherwise.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use super::ann::{AnnError, AnnIndex, Provenance};
use super::vector_copy::{Approximate, VectorCopy, APPROXIMATE_FROM, MERGE_FROM};
use super::{ExactVectors, Result, RetrieveError};
use folio_core::events::{EngineEvent, EventSender, Progress};
use folio_store::{LogPosition, Store, VectorSpace};

/// Vectors read from the store and added per step of a build.
const BUILD_BATCH: usize = 10_000;

/// When a library's vectors are searched approximately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyLimits {
    /// From this many vectors on, the approximate index.
    pub approximate_from: u64,
    /// Changes after which the saved index is brought up to date.
    pub merge_from: usize,
}

impl Default for CopyLimits {
    fn default() -> CopyLimits {
        CopyLimits {
            approximate_from: APPROXIMATE_FROM,
            merge_from: MERGE_FROM,
        }
    }
}

/// Where the approximate index lives, and when it is used.
#[derive(Debug, Clone)]
pub struct CopySettings {
    /// The folder beside the database that holds the saved index.
    pub dir: PathBuf,
    pub limits: CopyLimits,
}

/// What a process searches vectors with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyStatus {
    /// No copy (a one-shot command, or one being made): sqlite-vec answers.
    None,
    Exact {
        vectors: usize,
    },
    /// The saved index of `indexed` vectors, and `pending` chunks changed
    /// since it was saved.
    Approximate {
        indexed: usize,
        pending: usize,
    },
}

pub(super) struct MemoryVectors {
    settings: CopySettings,
    /// Whether this process keeps a copy (it warmed).
    wanted: AtomicBool,
    /// Whether a one-shot process looked for a saved index already.
    looked: AtomicBool,
    /// A reload, build or merge is running.
    busy: AtomicBool,
    copy: RwLock<Option<Arc<VectorCopy>>>,
}

/// What the background work needs, owned.
#[derive(Clone)]
struct Parts {
    store: Store,
    space: VectorSpace,
    events: EventSender,
}

impl MemoryVectors {
    pub fn new(settings: CopySettings) -> MemoryVectors {
        MemoryVectors {
            settings,
            wanted: AtomicBool::new(false),
            looked: AtomicBool::new(false),
            busy: AtomicBool::new(false),
            copy: RwLock::new(None),
        }
    }

    fn current(&self) -> Option<Arc<VectorCopy>> {
        self.copy.read().ok().and_then(|c| c.clone())
    }

    pub fn status(&self) -> CopyStatus {
        match self.current().as_deref() {
            None => CopyStatus::None,
            Some(VectorCopy::Exact(index)) => CopyStatus::Exact {
                vectors: index.len(),
            },
            Some(VectorCopy::Approximate(a)) => CopyStatus::Approximate {
                indexed: a.saved().len(),
                pending: a.pending(),
            },
        }
    }

    fn set(&self, copy: VectorCopy) -> Arc<VectorCopy> {
        let copy = Arc::new(copy);
        if let Ok(mut slot) = self.copy.write() {
            *slot = Some(copy.clone());
        }
        copy
    }

    /// Keeps a copy from now on, made now (an approximate index is built
    /// in the background if there is none).
    pub async fn warm(
        self: &Arc<Self>,
        store: &Store,
        space: &VectorSpace,
        events: &EventSender,
    ) -> Result<()> {
        self.wanted.store(true, Ordering::Relaxed);
        let parts = Parts {
            store: store.clone(),
            space: space.clone(),
            events: events.clone(),
        };
        if self.busy.swap(true, Ordering::AcqRel) {
            // Already being made.
            return Ok(());
        }
        let served = self.reload(&parts, false).await;
        self.busy.store(false, Ordering::Release);
        if !served? {
            self.in_background(parts, |me, parts| async move {
                me.reload(&parts, true).await.map(|_| ())
            });
        }
        Ok(())
    }

    /// The copy to search, if it answers for the store as it is now;
    /// `None`: ask sqlite-vec.
    pub async fn for_query(
        self: &Arc<Self>,
        store: &Store,
        space: &VectorSpace,
        events: &EventSender,
    ) -> Result<Option<Arc<VectorCopy>>> {
        let parts = Parts {
            store: store.clone(),
            space: space.clone(),
            events: events.clone(),
        };
        if !self.wanted.load(Ordering::Relaxed) && !self.looked.swap(true, Ordering::AcqRel) {
            // A one-shot process: a saved index is cheap to open, never built.
            if let Ok(Some(copy)) = self.open_saved(&parts).await {
                self.set(VectorCopy::Approximate(copy));
            }
        }
        let current = self.current();
        if current.is_none() && !self.wanted.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let version = store.vectors_version().await?;
        if let Some(copy) = &current {
            if copy.version() == version {
                return Ok(current);
            }
            if let VectorCopy::Approximate(a) = copy.as_ref() {
                if let Some(fresh) = self.caught_up(a, &parts, version).await? {
                    let merge = fresh.pending() >= self.settings.limits.merge_from;
                    let fresh = self.set(VectorCopy::Approximate(fresh));
                    if merge && self.wanted.load(Ordering::Relaxed) {
                        self.in_background(
                            parts,
                            |me, parts| async move { me.merge(&parts).await },
                        );
                    }
                    return Ok(Some(fresh));
                }
            }
        }
        if self.wanted.load(Ordering::Relaxed) {
            self.in_background(parts, |me, parts| async move {
                me.reload(&parts, true).await.map(|_| ())
            });
        }
        Ok(None)
    }

    /// Runs `work` unless other work on the copy is running; a failure
    /// leaves sqlite-vec answering, and the next query tries again.
    fn in_background<F, Fut>(self: &Arc<Self>, parts: Parts, work: F)
    where
        F: FnOnce(Arc<Self>, Parts) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<()>> + Send,
    {
        if self.busy.swap(true, Ordering::AcqRel) {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            if let Err(e) = work(me.clone(), parts).await {
                eprintln!("folio: the vector copy could not be brought up to date: {e}");
            }
            me.busy.store(false, Ordering::Release);
        });
    }

    /// Makes the copy from nothing: exact or approximate by size. Builds
    /// the approximate index if there is no usable one and `build` allows
    /// (minutes for a large library); returns whether a copy is served.
    async fn reload(&self, parts: &Parts, build: bool) -> Result<bool> {
        let Parts { store, space, .. } = parts;
        if store.vector_count().await? < self.settings.limits.approximate_from {
            if store.vector_log_position().await?.is_some() {
                store.stop_vector_log().await?;
            }
            AnnIndex::discard(&self.settings.dir);
            self.set(VectorCopy::Exact(
                ExactVectors::load(store, space.dim).await?,
            ));
            return Ok(true);
        }
        let copy = match self.open_saved(parts).await {
            Ok(Some(copy)) => copy,
            Ok(None) if build => self.build(parts, "there is none yet".to_string()).await?,
            Err(RetrieveError::Ann(e @ AnnError::Unusable { .. })) if build => {
                self.build(parts, e.to_string()).await?
            }
            Ok(None) | Err(RetrieveError::Ann(AnnError::Unusable { .. })) => return Ok(false),
            Err(e) => return Err(e),
        };
        let merge = copy.pending() >= self.settings.limits.merge_from;
        self.set(VectorCopy::Approximate(copy));
        if merge {
            self.merge(parts).await?;
        }
        Ok(true)
    }

    fn expected(&self, space: &VectorSpace, at: LogPosition) -> Provenance {
        Provenance {
            model: space.name.clone(),
            dim: space.dim,
            epoch: at.epoch,
            seq: at.seq,
        }
    }

    /// The saved index, memory-mapped and caught up, if there is a usable one.
    async fn open_saved(&self, parts: &Parts) -> Result<Option<Approximate>> {
        let Some(at) = parts.store.vector_log_position().await? else {
            return Ok(None);
        };
        let (dir, expected) = (self.settings.dir.clone(), self.expected(&parts.space, at));
        let opened = tokio::task::spawn_blocking(move || AnnIndex::open(&dir, &expected))
            .await
            .map_err(|e| RetrieveError::Task(e.to_string()))??;
        let Some((saved, provenance)) = opened else {
            return Ok(None);
        };
        let version = parts.store.vectors_version().await?;
        let Some(changes) = parts.store.vector_changes(position(&provenance)).await? else {
            return Ok(None);
        };
        Ok(Some(Approximate::new(
            Arc::new(saved),
            provenance,
            changes,
            version,
        )?))
    }

    /// `a` with the changes logged since its index was saved, answering
    /// for `version`; `None` if the log cannot say (its epoch ended).
    async fn caught_up(
        &self,
        a: &Approximate,
        parts: &Parts,
        version: i64,
    ) -> Result<Option<Approximate>> {
        let Some(changes) = parts.store.vector_changes(a.saved_at()).await? else {
            return Ok(None);
        };
        Ok(Some(Approximate::new(
            a.saved().clone(),
            a.provenance().clone(),
            changes,
            version,
        )?))
    }

    /// Builds the index from every vector in the store, saves it and opens
    /// it. Changes made meanwhile are logged and caught up afterwards.
    async fn build(&self, parts: &Parts, reason: String) -> Result<Approximate> {
        let Parts {
            store,
            space,
            events,
        } = parts;
        AnnIndex::discard(&self.settings.dir);
        let start = store.start_vector_log().await?;
        let total = store.vector_count().await?;
        let started = Instant::now();
        let report = |done: u64| {
            // Nobody listening is fine: the work goes on.
            let _ = events.send(EngineEvent::VectorIndexBuilding {
                progress: Progress::after(done, total.max(done), 0, started.elapsed()),
                reason: reason.clone(),
            });
        };
        report(0);
        let index = Arc::new(AnnIndex::new(space.dim, total as usize)?);
        let (mut after, mut done) = (0, 0u64);
        loop {
            let batch = store.vectors_after(after, BUILD_BATCH).await?;
            let Some(&(last, _)) = batch.last() else {
                break;
            };
            after = last;
            done += batch.len() as u64;
            let into = index.clone();
            blocking(move || into.add(&batch)).await?;
            report(done);
        }
        let provenance = self.expected(space, start);
        let dir = self.settings.dir.clone();
        blocking(move || index.save(&dir, &provenance)).await?;
        self.open_saved(parts)
            .await?
            .ok_or_else(|| RetrieveError::Task("the index just saved could not be opened".into()))
    }

    /// Writes the changes since the saved index into it (loaded, changed,
    /// saved as a new file) and serves the new file.
    async fn merge(&self, parts: &Parts) -> Result<()> {
        let Some(at) = parts.store.vector_log_position().await? else {
            return Ok(());
        };
        let (dir, expected) = (self.settings.dir.clone(), self.expected(&parts.space, at));
        let Some((index, provenance)) =
            blocking(move || AnnIndex::open_for_update(&dir, &expected)).await?
        else {
            return Ok(());
        };
        let Some(changes) = parts.store.vector_changes(position(&provenance)).await? else {
            return Ok(());
        };
        let merged = Provenance {
            seq: changes.to,
            ..provenance
        };
        let dir = self.settings.dir.clone();
        let saved = merged.clone();
        blocking(move || {
            index.remove(&changes.changed)?;
            let rows: Vec<(i64, Vec<u8>)> = changes
                .present
                .into_iter()
                .map(|(id, _, v)| (id, v))
                .collect();
            index.add(&rows)?;
            index.save(&dir, &saved)
        })
        .await?;
        parts.store.prune_vector_log(merged.seq).await?;
        if let Some(copy) = self.open_saved(parts).await? {
            self.set(VectorCopy::Approximate(copy));
        }
        Ok(())
    }
}

fn position(p: &Provenance) -> LogPosition {
    LogPosition {
        epoch: p.epoch,
        seq: p.seq,
    }
}

/// Index work off the async threads: it is CPU-bound and may take minutes.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> std::result::Result<T, AnnError> + Send + 'static,
) -> Result<T> {
    Ok(tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| RetrieveError::Task(e.to_string()))??)
}
