//! The job runtime: every kind of long work (ingestion, the gain graph, and
//! kinds defined above the library through [`JobKind`], the evaluation) is
//! a row in `jobs` and goes through one lifecycle here: claim it (so two
//! processes never run one job), run it under a token of its own that a
//! pause or a cancel fires, then settle it (done, failed, parked while
//! paused, or back in the queue after a shutdown, so the next start resumes
//! it; a process that died leaves its job claimable as interrupted). One
//! poller drives the background work of long-lived processes: each tick it
//! wakes the watcher and one lane per kind of job, so a long graph build
//! never holds up indexing.

use std::collections::{HashMap, HashSet};
use std::fmt::Display;
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{watcher, Library};
use crate::error::{Error, Result};
use folio_core::events::{EngineEvent, JobPhase, JobProgress};
use folio_index::graph::{BuildProgress, GraphBuild, GraphBuildOptions, GRAPH_JOB};
use folio_index::pipeline::{Change, Ingestor, PassSummary, Root};
use folio_retrieve::ExactVectors;
use folio_store::{Job, JobState};

pub use folio_index::pipeline::INGEST_JOB;

/// How often the poller wakes the lanes and the watcher: queued jobs from
/// other processes (`folio add --no-wait`), new chunks for built graphs and
/// folders added elsewhere are picked up within this.
const POLL: Duration = Duration::from_secs(2);

/// The setting that holds a pause. Background work is paused for the
/// library, not for one process: every process that runs it (the app,
/// `folio watch`) follows a pause or a resume made in any of them, or by
/// `folio jobs pause`, within one [`POLL`].
const PAUSED_KEY: &str = "background_paused";
const PAUSED: &str = "1";
const RUNNING: &str = "0";

/// Each running pass's token by its serial number, with the job it works for.
type RunningPasses = HashMap<u64, (Option<i64>, CancellationToken)>;

/// The user's hold on background work: paused, or the running job cancelled.
#[derive(Default)]
pub(super) struct JobControl {
    paused: AtomicBool,
    /// The watcher saw edits while paused; a reconcile on resume catches them.
    missed_changes: AtomicBool,
    /// A watcher is running in this process.
    pub(super) watching: AtomicBool,
    /// The token of each pass this process is running, by a serial number,
    /// with the job it works for (none for a pass over the watcher's
    /// changes); a pause fires them all, a cancel those of its job.
    running: Mutex<RunningPasses>,
    serials: AtomicU64,
    /// Counts pauses, so a pass can tell that one landed between claiming
    /// its job and registering its token, when no token was there to fire.
    pauses: AtomicU64,
}

impl JobControl {
    /// Fires the tokens of the running passes whose job `which` picks.
    fn stop_running(&self, which: impl Fn(Option<i64>) -> bool) {
        for (job, token) in self.running().values() {
            if which(*job) {
                token.cancel();
            }
        }
    }

    /// Registers a pass for `job`: its token, a child of `stop`, is fired
    /// by a pause (or a cancel of `job`) until the returned `RunningPass`
    /// is dropped. `pauses` is the pause count read before the pass was
    /// allowed to start: a pause since then found no token to fire, so the
    /// token is fired here instead.
    fn register(&self, job: Option<i64>, stop: &CancellationToken, pauses: u64) -> RunningPass<'_> {
        let token = stop.child_token();
        let serial = self.serials.fetch_add(1, Ordering::Relaxed);
        self.running().insert(serial, (job, token.clone()));
        if self.pauses.load(Ordering::SeqCst) != pauses {
            token.cancel();
        }
        RunningPass {
            control: self,
            serial,
            token,
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, RunningPasses> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A pass a pause or a cancel can stop, for as long as it lives.
struct RunningPass<'a> {
    control: &'a JobControl,
    serial: u64,
    token: CancellationToken,
}

impl Drop for RunningPass<'_> {
    fn drop(&mut self) {
        self.control.running().remove(&self.serial);
    }
}

/// Clears the watching flag when the watcher stops, however it stops.
pub struct WatchingGuard<'a>(&'a AtomicBool);

impl Drop for WatchingGuard<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// The payload of an ingest job: the roots it reconciles.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct IngestPayload {
    pub(super) roots: Vec<String>,
}

/// What a pass of any job reports at its end.
pub trait Pass {
    /// It ended before its work did (paused, cancelled, shut down).
    fn stopped(&self) -> bool;
}

/// A kind of job defined above the library (the evaluation): it runs each
/// of its jobs through [`Jobs::run_claimed`] or
/// [`Jobs::run_in_foreground`], and [`Jobs::run_background`] gives it
/// a lane beside ingestion and the graph, which resumes its jobs after a
/// crash or a pause.
pub trait JobKind: Sync {
    /// The `kind` of its rows in `jobs`.
    fn kind(&self) -> &'static str;

    /// Runs (or resumes) job `job_id` until it ends or `stop` fires; how
    /// it ended is recorded on the job, as for the library's own kinds.
    fn run<'a>(
        &'a self,
        library: &'a Library,
        job_id: i64,
        stop: &'a CancellationToken,
    ) -> BoxFuture<'a, ()>;
}

impl Pass for PassSummary {
    fn stopped(&self) -> bool {
        self.cancelled
    }
}

impl Pass for BuildProgress {
    fn stopped(&self) -> bool {
        self.stopped
    }
}

impl Library {
    /// The job runtime: queueing, running, pausing and cancelling the
    /// library's long work.
    pub fn jobs(&self) -> Jobs<'_> {
        Jobs { library: self }
    }
}

/// The job runtime of one library, as [`Library::jobs`] hands it out.
///
/// A handle is a reference, copied into each call, so what a call returns
/// borrows the library, not the handle: `library.jobs().run(id)` can be
/// awaited beside another call. The other handles work the same way.
#[derive(Clone, Copy)]
pub struct Jobs<'a> {
    pub(super) library: &'a Library,
}

impl<'a> Jobs<'a> {
    /// Job `id` as it stands now.
    pub async fn get(self, id: i64) -> Result<Job> {
        self.library
            .store
            .job(id)
            .await?
            .ok_or(Error::JobNotFound(id))
    }

    /// The newest `limit` jobs, newest first.
    pub async fn list(self, limit: usize) -> Result<Vec<Job>> {
        Ok(self.library.store.jobs(limit).await?)
    }

    /// Every job that has not ended: queued, running, paused or left
    /// interrupted by a process that died.
    pub async fn unfinished(self) -> Result<Vec<Job>> {
        Ok(self.library.store.unfinished_jobs().await?)
    }

    async fn ingestor(self, stop: &CancellationToken) -> Result<Ingestor> {
        let (embedder, space) = self.library.retrieval.model().await?;
        Ok(Ingestor {
            store: self.library.store.clone(),
            embedder: embedder.clone(),
            space: space.clone(),
            limits: self.library.config.limits(),
            events: self.library.events.clone(),
            reading: self.library.reading.clone(),
            stop: stop.clone(),
        })
    }

    /// An ingestor that has first dealt with what a process that died was
    /// reading (`Ingestor::recover`): files it died on alone set aside, the
    /// others it was reading read here one at a time. The summary says
    /// what that did; the pass's own is added to it.
    async fn recovered_ingestor(self, stop: &CancellationToken) -> Result<(Ingestor, PassSummary)> {
        let ingestor = self.ingestor(stop).await?;
        let recovered = ingestor.recover(&self.library.roots().await?).await?;
        Ok((ingestor, recovered))
    }

    /// Reads `paths` again, each alone: files set aside after a crash, or
    /// that failed for a reason since fixed (`folio retry`). A file that
    /// kills the process again is set aside again by the next start.
    pub async fn retry(self, paths: &[PathBuf]) -> Result<PassSummary> {
        let roots = self.library.roots().await?;
        let mut wanted = Vec::with_capacity(paths.len());
        for path in paths {
            let path = std::path::absolute(path).map_err(|_| Error::NotFound(path.clone()))?;
            // The indexed path, even when the file itself is gone.
            let path = std::fs::canonicalize(&path).unwrap_or(path);
            if !roots.iter().any(|r| path.starts_with(&r.path)) {
                return Err(Error::NotInLibrary(path));
            }
            wanted.push(path);
        }
        let (ingestor, mut summary) = self.recovered_ingestor(&self.library.stop).await?;
        summary.add(ingestor.retry(&roots, &wanted).await?);
        Ok(summary)
    }

    /// The lifecycle every job goes through: claim job `job_id` if it is of
    /// `kind` and free (queued, or interrupted by a process that died), run
    /// `work` on it under a child of `stop` that a pause or a cancel of the
    /// job fires, and settle it by how the pass ended. `None` means the job
    /// is not free to run here.
    pub async fn run_claimed<T, E, F, Fut>(
        self,
        job_id: i64,
        kind: &str,
        stop: &CancellationToken,
        work: F,
    ) -> std::result::Result<Option<T>, E>
    where
        T: Pass,
        E: From<Error> + Display,
        F: FnOnce(Job, CancellationToken) -> Fut,
        Fut: Future<Output = std::result::Result<T, E>>,
    {
        let job = self
            .library
            .store
            .job(job_id)
            .await
            .map_err(Error::from)?
            .ok_or(Error::JobNotFound(job_id))?;
        let pauses = self.library.control.pauses.load(Ordering::SeqCst);
        let free = job.state == JobState::Queued || job.interrupted;
        if job.kind != kind
            || !free
            || self.paused()
            || !self
                .library
                .store
                .claim_job(job_id, job.owner_pid)
                .await
                .map_err(Error::from)?
        {
            return Ok(None);
        }
        self.run_owned(job, pauses, stop, work).await.map(Some)
    }

    /// Starts work the user asked for now (`folio eval`, the Evaluate
    /// view) as a job of `kind`, whatever the queue holds: it takes over
    /// the waiting job `same` recognises (one a killed process left, or one
    /// a pause parked), or else makes a new one, and runs it as
    /// [`Jobs::run_claimed`] does. A job `same` recognises that a live
    /// process runs is refused, naming that process.
    pub async fn run_in_foreground<T, E, F, Fut>(
        self,
        kind: &str,
        payload: &serde_json::Value,
        same: impl Fn(&Job) -> bool,
        stop: &CancellationToken,
        work: F,
    ) -> std::result::Result<T, E>
    where
        T: Pass,
        E: From<Error> + Display,
        F: FnOnce(Job, CancellationToken) -> Fut,
        Fut: Future<Output = std::result::Result<T, E>>,
    {
        let pauses = self.library.control.pauses.load(Ordering::SeqCst);
        let unfinished = self
            .library
            .store
            .unfinished_jobs()
            .await
            .map_err(Error::from)?;
        let mine = unfinished.into_iter().filter(|j| j.kind == kind && same(j));
        let mut taken = None;
        for job in mine {
            if job.state == JobState::Running && !job.interrupted {
                return Err(Error::JobRunning {
                    job: job.id,
                    pid: job.owner_pid.unwrap_or_default(),
                }
                .into());
            }
            if self
                .library
                .store
                .claim_job_in_foreground(job.id, job.owner_pid)
                .await
                .map_err(Error::from)?
            {
                self.library
                    .store
                    .set_job_payload(job.id, payload)
                    .await
                    .map_err(Error::from)?;
                taken = Some(job.id);
                break;
            }
        }
        let id = match taken {
            Some(id) => id,
            None => self
                .library
                .store
                .create_claimed_job(kind, payload)
                .await
                .map_err(Error::from)?,
        };
        let job = self
            .library
            .store
            .job(id)
            .await
            .map_err(Error::from)?
            .ok_or(Error::JobNotFound(id))?;
        self.run_owned(job, pauses, stop, work).await
    }

    /// Runs a job this process has claimed and settles it. `pauses` is the
    /// pause count read before the claim: a pause or a cancel that came
    /// after the claim but before the token was registered found no token
    /// to fire, so the token is fired here instead.
    async fn run_owned<T, E, F, Fut>(
        self,
        job: Job,
        pauses: u64,
        stop: &CancellationToken,
        work: F,
    ) -> std::result::Result<T, E>
    where
        T: Pass,
        E: From<Error> + Display,
        F: FnOnce(Job, CancellationToken) -> Fut,
        Fut: Future<Output = std::result::Result<T, E>>,
    {
        let job_id = job.id;
        let pass = self.library.control.register(Some(job_id), stop, pauses);
        let cancelled = self
            .library
            .store
            .job(job_id)
            .await
            .map_err(Error::from)?
            .is_some_and(|j| j.state == JobState::Cancelled);
        if cancelled {
            pass.token.cancel();
        }
        let result = work(job, pass.token.clone()).await;
        drop(pass);
        match &result {
            Ok(pass) if pass.stopped() => self.settle_stopped_job(job_id).await?,
            Ok(_) => self
                .library
                .store
                .finish_job(job_id, JobState::Done, None)
                .await
                .map_err(Error::from)?,
            Err(e) => self
                .library
                .store
                .finish_job(job_id, JobState::Failed, Some(&e.to_string()))
                .await
                .map_err(Error::from)?,
        }
        result
    }

    /// A pass stopped early: by the user cancelling the job (leave it
    /// cancelled), pausing (park it), or shutting down (back to the queue,
    /// so the next start resumes it).
    async fn settle_stopped_job(self, job_id: i64) -> Result<()> {
        let state = self.library.store.job(job_id).await?.map(|j| j.state);
        if state != Some(JobState::Cancelled) {
            let to = if self.paused() {
                JobState::Paused
            } else {
                JobState::Queued
            };
            self.library.store.release_job(job_id, to).await?;
        }
        Ok(())
    }

    /// Runs (or resumes) an ingest job to the end, or until the library's
    /// stop token fires. `None` means the job is not free to run here.
    pub async fn run(self, job_id: i64) -> Result<Option<PassSummary>> {
        self.run_ingest_job(job_id, &self.library.stop).await
    }

    async fn run_ingest_job(
        self,
        job_id: i64,
        stop: &CancellationToken,
    ) -> Result<Option<PassSummary>> {
        self.run_claimed(job_id, INGEST_JOB, stop, |job, stop| async move {
            self.ingest(job, &stop).await
        })
        .await
    }

    async fn ingest(self, job: Job, stop: &CancellationToken) -> Result<PassSummary> {
        let payload: IngestPayload = serde_json::from_value(job.payload)
            .map_err(|e| Error::Task(format!("job {} is unreadable: {e}", job.id)))?;
        let roots: Vec<Root> = self
            .library
            .roots()
            .await?
            .into_iter()
            .filter(|r| {
                payload
                    .roots
                    .contains(&folio_core::path_text::to_text(&r.path))
            })
            .collect();
        let (ingestor, mut summary) = self.recovered_ingestor(stop).await?;
        if !summary.cancelled {
            summary.add(ingestor.reconcile(&roots, job.id).await?);
        }
        Ok(summary)
    }

    /// Runs (or resumes) a graph job until every pending chunk is scored,
    /// background work is paused, the job is cancelled, or `stop` fires.
    /// `None` means the job is not free to run here.
    pub async fn run_graph(
        self,
        job_id: i64,
        stop: &CancellationToken,
        on_progress: &(dyn Fn(&BuildProgress) + Sync),
    ) -> Result<Option<BuildProgress>> {
        self.run_claimed(job_id, GRAPH_JOB, stop, |job, stop| async move {
            self.build_graph(job, &stop, on_progress).await
        })
        .await
    }

    async fn build_graph(
        self,
        job: Job,
        stop: &CancellationToken,
        on_progress: &(dyn Fn(&BuildProgress) + Sync),
    ) -> Result<BuildProgress> {
        let options: GraphBuildOptions = serde_json::from_value(job.payload.clone())
            .map_err(|e| Error::Task(format!("job {} is unreadable: {e}", job.id)))?;
        let report = |p: &BuildProgress| {
            let _ = self
                .library
                .events
                .send(EngineEvent::JobProgress(JobProgress {
                    job_id: job.id,
                    kind: GRAPH_JOB.into(),
                    phase: if p.progress.done < p.progress.total {
                        JobPhase::Scoring
                    } else {
                        JobPhase::Finished
                    },
                    progress: p.progress,
                }));
            on_progress(p);
        };
        self.score_graph(options, Some(&job), None, stop, &report)
            .await
    }

    /// Scores the pending chunks among `scope` only, outside any job: an
    /// evaluation's questions reach a small part of a large corpus, and the
    /// graph is only needed there. Stopping keeps what was scored, and the
    /// next call goes on with what is still pending.
    pub async fn build_graph_within(
        self,
        options: GraphBuildOptions,
        scope: &HashSet<i64>,
        stop: &CancellationToken,
        on_progress: &(dyn Fn(&BuildProgress) + Sync),
    ) -> Result<BuildProgress> {
        self.score_graph(options, None, Some(scope), stop, on_progress)
            .await
    }

    async fn score_graph(
        self,
        options: GraphBuildOptions,
        job: Option<&Job>,
        scope: Option<&HashSet<i64>>,
        stop: &CancellationToken,
        on_progress: &(dyn Fn(&BuildProgress) + Sync),
    ) -> Result<BuildProgress> {
        let dim = self.library.retrieval.model().await?.1.dim;
        let vectors = ExactVectors::load(&self.library.store, dim).await?;
        let llm = self.library.llm().await?;
        let prompts = self.library.prompts().await?;
        let build = GraphBuild {
            store: &self.library.store,
            llm: llm.as_ref(),
            prompts: &prompts,
            vectors: &vectors,
            options,
            job: job.map(|j| (j.id, j.active_ms)),
            scope,
            timeout: Duration::from_secs(self.library.config.llm.timeout_secs),
            cancel: stop,
            reuse_prefix: true,
        };
        Ok(build.run(on_progress).await?)
    }

    /// Queues a graph job that scores every chunk still unscored under the
    /// rubric; a waiting job with the same options is reused.
    pub async fn queue_graph_build(self, options: GraphBuildOptions) -> Result<i64> {
        options.check()?;
        let payload = serde_json::to_value(options).unwrap_or_default();
        if let Some(job) = self
            .library
            .store
            .waiting_jobs()
            .await?
            .into_iter()
            .find(|j| j.kind == GRAPH_JOB && j.payload == payload)
        {
            return Ok(job.id);
        }
        Ok(self
            .library
            .store
            .create_job(GRAPH_JOB, &payload, self.new_job_state())
            .await?)
    }

    /// Queues an update for each rubric whose last build finished and that
    /// has unscored chunks now (new or edited documents). A build that
    /// failed or was cancelled waits for the user instead.
    async fn queue_graph_updates(self) -> Result<()> {
        let jobs = self.library.store.jobs(200).await?;
        for rubric in self.library.store.built_rubrics().await? {
            let last = jobs.iter().find(|j| {
                j.kind == GRAPH_JOB
                    && serde_json::from_value::<GraphBuildOptions>(j.payload.clone())
                        .is_ok_and(|o| o.rubric == rubric)
            });
            let Some(last) = last.filter(|j| j.state == JobState::Done) else {
                continue;
            };
            if self
                .library
                .store
                .pending_gain_chunks(rubric)
                .await?
                .is_empty()
            {
                continue;
            }
            let options = serde_json::from_value(last.payload.clone()).unwrap_or_default();
            self.queue_graph_build(options).await?;
        }
        Ok(())
    }

    /// Jobs created while paused start parked.
    fn new_job_state(self) -> JobState {
        if self.paused() {
            JobState::Paused
        } else {
            JobState::Queued
        }
    }

    /// Marks this process as watching the folders (while the guard lives).
    pub(super) fn watching(self) -> WatchingGuard<'a> {
        self.library.control.watching.store(true, Ordering::Relaxed);
        WatchingGuard(&self.library.control.watching)
    }

    /// A pause outlives the session that set it: background work starts
    /// paused while the library is paused. A library paused by a build
    /// before the pause was stored shows it by its parked jobs.
    pub async fn restore_pause(self) -> Result<()> {
        if self.paused_for_library().await? {
            self.hold_here().await?;
        }
        Ok(())
    }

    /// Whether this process holds its background work.
    pub fn paused(self) -> bool {
        self.library.control.paused.load(Ordering::Relaxed)
    }

    /// Whether the library's background work is paused, by whichever
    /// process paused it.
    pub async fn paused_for_library(self) -> Result<bool> {
        Ok(match self.library.store.setting(PAUSED_KEY).await? {
            Some(value) => value == PAUSED,
            None => {
                let parked = self.library.store.waiting_jobs().await?;
                parked.iter().any(|j| j.state == JobState::Paused)
            }
        })
    }

    /// Stops background work in every process on this library: here at
    /// once, elsewhere at their next tick. The running job halts at its
    /// next batch (its work so far is kept) and nothing queued starts
    /// until [`Jobs::resume`].
    pub async fn pause(self) -> Result<()> {
        self.library.store.set_setting(PAUSED_KEY, PAUSED).await?;
        self.hold_here().await
    }

    /// Pauses this process's background work.
    async fn hold_here(self) -> Result<()> {
        self.library.control.paused.store(true, Ordering::Relaxed);
        self.library.control.pauses.fetch_add(1, Ordering::SeqCst);
        self.library.control.stop_running(|_| true);
        self.library
            .store
            .move_jobs(JobState::Queued, JobState::Paused)
            .await?;
        Ok(())
    }

    /// Lets paused jobs run again, in every process on this library; edits
    /// the watcher saw meanwhile are picked up by a reconcile job.
    pub async fn resume(self) -> Result<()> {
        self.library.store.set_setting(PAUSED_KEY, RUNNING).await?;
        self.release_here().await
    }

    /// Resumes this process's background work.
    async fn release_here(self) -> Result<()> {
        self.library.control.paused.store(false, Ordering::Relaxed);
        self.library
            .store
            .move_jobs(JobState::Paused, JobState::Queued)
            .await?;
        if self
            .library
            .control
            .missed_changes
            .swap(false, Ordering::Relaxed)
        {
            self.queue_reconcile().await?;
        }
        Ok(())
    }

    /// Takes up what another process did to this one's background work
    /// since the last look: a pause or a resume, and a cancel of a job
    /// running here. Says whether the pause changed.
    async fn follow_other_processes(self) -> Result<bool> {
        let paused = self.paused_for_library().await?;
        let changed = paused != self.paused();
        match paused {
            true if changed => self.hold_here().await?,
            false if changed => self.release_here().await?,
            _ => {}
        }
        let running: Vec<i64> = self
            .library
            .control
            .running()
            .values()
            .filter_map(|(job, _)| *job)
            .collect();
        for id in running {
            let job = self.library.store.job(id).await?;
            if job.is_some_and(|j| j.state == JobState::Cancelled) {
                self.library.control.stop_running(|job| job == Some(id));
            }
        }
        Ok(changed)
    }

    /// Cancels a queued, paused or running job. What it indexed stays. A
    /// job another process runs stops at that process's next tick.
    pub async fn cancel(self, job_id: i64) -> Result<()> {
        let job = self
            .library
            .store
            .cancel_job(job_id)
            .await?
            .ok_or(Error::JobNotFound(job_id))?;
        if job.state == JobState::Running && job.owner_pid == Some(i64::from(std::process::id())) {
            self.library.control.stop_running(|job| job == Some(job_id));
        }
        Ok(())
    }

    /// Runs queued ingest jobs and resumes those whose process died, oldest
    /// first; stops early when the library's stop token fires.
    pub async fn run_pending(self) -> Result<Vec<(i64, PassSummary)>> {
        self.run_pending_ingest(&self.library.stop).await
    }

    async fn run_pending_ingest(self, stop: &CancellationToken) -> Result<Vec<(i64, PassSummary)>> {
        let mut done = Vec::new();
        if self.paused() {
            return Ok(done);
        }
        for job in self.library.store.pending_jobs().await? {
            if job.kind != INGEST_JOB {
                continue;
            }
            if let Some(summary) = self.run_ingest_job(job.id, stop).await? {
                done.push((job.id, summary));
                if summary.cancelled {
                    break;
                }
            }
        }
        Ok(done)
    }

    /// Reconciles every watched folder with the disk (changes made while
    /// Folio was closed), as a job of its own.
    pub async fn reconcile_all(self) -> Result<PassSummary> {
        if self.library.store.folders().await?.is_empty() {
            return Ok(PassSummary::default());
        }
        let id = self.queue_reconcile().await?;
        Ok(self.run(id).await?.unwrap_or_default())
    }

    /// A full reconcile that is already waiting (queued, left behind by a
    /// process that died, or parked while paused) does the same work as a
    /// new one, so it is reused: restarts never pile up identical jobs.
    pub(super) async fn queue_reconcile(self) -> Result<i64> {
        let roots: Vec<String> = self
            .library
            .store
            .folders()
            .await?
            .into_iter()
            .map(|f| f.path)
            .collect();
        let paused = self.paused();
        let covering = self
            .library
            .store
            .waiting_jobs()
            .await?
            .into_iter()
            .find(|j| {
                j.kind == INGEST_JOB
                    && (j.state == JobState::Paused) == paused
                    && serde_json::from_value::<IngestPayload>(j.payload.clone())
                        .is_ok_and(|p| roots.iter().all(|r| p.roots.contains(r)))
            });
        if let Some(job) = covering {
            return Ok(job.id);
        }
        let payload = serde_json::to_value(IngestPayload { roots }).unwrap_or_default();
        Ok(self
            .library
            .store
            .create_job(INGEST_JOB, &payload, self.new_job_state())
            .await?)
    }

    /// Applies what the watcher saw, unless background work is paused.
    pub async fn apply_changes(self, changes: Vec<Change>) -> Result<PassSummary> {
        self.apply_changes_until(changes, &self.library.stop).await
    }

    pub(super) async fn apply_changes_until(
        self,
        changes: Vec<Change>,
        stop: &CancellationToken,
    ) -> Result<PassSummary> {
        let pauses = self.library.control.pauses.load(Ordering::SeqCst);
        if self.paused() {
            self.library
                .control
                .missed_changes
                .store(true, Ordering::Relaxed);
            return Ok(PassSummary::default());
        }
        let pass = self.library.control.register(None, stop, pauses);
        let roots = self.library.roots().await?;
        let (ingestor, mut summary) = self.recovered_ingestor(&pass.token).await?;
        if !summary.cancelled {
            summary.add(ingestor.apply_changes(&roots, changes).await?);
        }
        if summary.cancelled && !stop.is_cancelled() {
            // Paused part-way: a reconcile, which waits for the resume,
            // catches up what the pass did not reach.
            self.queue_reconcile().await?;
        }
        Ok(summary)
    }

    /// The background work of a long-lived process (the app, `folio
    /// watch`) until `shutdown` completes or the library's stop token
    /// fires: the watcher keeps the index current with the disk, and the
    /// job runtime runs queued and interrupted jobs (work an earlier
    /// session left first, then a reconcile that catches the edits made
    /// while nothing watched), keeps every built graph up to date with
    /// the library (Algorithm 3), and gives each of `kinds` a lane too.
    /// `on_pass` hears about every ingestion pass. A failure (a folder that
    /// cannot be watched, an unreadable index) stops the rest at a safe
    /// point first, then is returned.
    pub async fn run_background(
        self,
        shutdown: impl Future<Output = ()>,
        on_pass: &(dyn Fn(&PassSummary) + Sync),
        kinds: &[&dyn JobKind],
    ) -> Result<()> {
        self.restore_pause().await?;
        if !self.library.store.folders().await?.is_empty() {
            self.queue_reconcile().await?;
        }
        let stop = self.library.stop.child_token();
        let (tick, ticks) = watch::channel(0u64);
        let poller = async {
            tokio::pin!(shutdown);
            loop {
                tick.send_modify(|n| *n += 1);
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = &mut shutdown => break,
                    _ = tokio::time::sleep(POLL) => {}
                }
            }
            stop.cancel();
        };
        // Whichever part fails first stops the others.
        let stopping = |r: Result<()>| {
            if r.is_err() {
                stop.cancel();
            }
            r
        };
        let watching =
            async { stopping(watcher::watch(self, &stop, ticks.clone(), on_pass).await) };
        let ingesting = async {
            stopping(
                self.lane(&stop, ticks.clone(), || async {
                    for (_, summary) in self.run_pending_ingest(&stop).await? {
                        on_pass(&summary);
                    }
                    Ok(())
                })
                .await,
            )
        };
        let graphing = async {
            stopping(
                self.lane(&stop, ticks.clone(), || async {
                    self.queue_graph_updates().await?;
                    for job in self.library.store.pending_jobs().await? {
                        if job.kind == GRAPH_JOB && !stop.is_cancelled() {
                            // A failed build is recorded on its job, which
                            // waits for the user; the lane goes on.
                            self.run_graph(job.id, &stop, &|_| {}).await.ok();
                        }
                    }
                    Ok(())
                })
                .await,
            )
        };
        let noticing = self.notice_changes(&stop, ticks.clone());
        let others = futures::future::join_all(kinds.iter().map(|kind| async {
            stopping(
                self.lane(&stop, ticks.clone(), || async {
                    for job in self.library.store.pending_jobs().await? {
                        if job.kind == kind.kind() && !stop.is_cancelled() {
                            kind.run(self.library, job.id, &stop).await;
                        }
                    }
                    Ok(())
                })
                .await,
            )
        }));
        let ((), (), watched, ingested, graphed, others) =
            tokio::join!(poller, noticing, watching, ingesting, graphing, others);
        others
            .into_iter()
            .fold(watched.and(ingested).and(graphed), Result::and)
    }

    /// On every tick, paused or not, takes up another process's pause,
    /// resume or cancel, and tells subscribers when the library changed
    /// since the last (`EngineEvent::LibraryChanged`): the app shows what a
    /// `folio add`, `folio watch` or `folio jobs pause` beside it did. Its
    /// own changes are told too, which costs a refresh the events of the
    /// work itself ask for anyway.
    async fn notice_changes(self, stop: &CancellationToken, mut ticks: watch::Receiver<u64>) {
        let mut seen = None;
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                changed = ticks.changed() => if changed.is_err() { return },
            }
            // A failed look is taken again at the next tick.
            let held = self.follow_other_processes().await.unwrap_or(false);
            if let Ok(mark) = self.library.store.change_mark().await {
                if held || seen.is_some_and(|seen| seen != mark) {
                    self.library.publish(EngineEvent::LibraryChanged);
                }
                seen = Some(mark);
            }
        }
    }

    /// One lane of the runtime: on every tick of the poller, unless paused,
    /// `work` runs the lane's pending jobs; a tick that comes while it
    /// works is taken as soon as it is done.
    async fn lane<F, Fut>(
        self,
        stop: &CancellationToken,
        mut ticks: watch::Receiver<u64>,
        work: F,
    ) -> Result<()>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<()>>,
    {
        loop {
            tokio::select! {
                _ = stop.cancelled() => return Ok(()),
                changed = ticks.changed() => if changed.is_err() { return Ok(()) },
            }
            if !self.paused() && !stop.is_cancelled() {
                work().await?;
            }
        }
    }
}
