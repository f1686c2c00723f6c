//! The engine's front door: one `Library` per data directory. The CLI and the
//! desktop shell call these methods and nothing below them, so both behave the
//! same. It owns the background jobs (ingestion, the gain graph) and hands
//! methods the retrieval service, which loads the embedding model on first
//! use, so `status` and `tree` start instantly.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{broadcast, OnceCell};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::events::{EngineEvent, EventSender, JobPhase, JobProgress};
use crate::graph::{BuildProgress, GraphBuild, GraphBuildOptions, GraphStatus, GRAPH_JOB};
use crate::ingest::pipeline::{Change, Ingestor, PassSummary, Root};
use crate::ingest::structure_tree::StructureTree;
use crate::llm::prompts::Prompts;
use crate::llm::Llm;
use crate::methods::runner::{Answering, AskRequest};
use crate::methods::EventSink;
use crate::retrieve::{Retrieval, VectorIndex};
use crate::store::{
    DocumentPage, DocumentRecord, Folder, FolderSummary, IndexCounts, Job, JobState, LlmCallRow,
    RunRecord, RunStatus, Store,
};
use tokio_util::sync::CancellationToken;

pub const INGEST_JOB: &str = "ingest";

/// How often the graph worker looks for new chunks and queued graph jobs.
const GRAPH_POLL: Duration = Duration::from_secs(2);

pub struct Library {
    config: Config,
    store: Store,
    events: EventSender,
    /// Cancelled when the process shuts down (Ctrl-C, the window closing)
    /// or the work it was opened for is cancelled: every pass stops at its
    /// next batch and its job resumes later.
    stop: CancellationToken,
    jobs: JobControl,
    retrieval: Retrieval,
    llm: OnceCell<Arc<dyn Llm>>,
    prompts: OnceCell<Arc<Prompts>>,
}

/// The user's hold on background work: paused, or the running job cancelled.
#[derive(Default)]
struct JobControl {
    paused: AtomicBool,
    /// Stops the running pass at its next batch; shared with the ingestor.
    /// Unlike the library's stop token it is cleared again on resume.
    interrupt: Arc<AtomicBool>,
    /// The watcher saw edits while paused; a reconcile on resume catches them.
    missed_changes: AtomicBool,
    /// A watcher is running in this process.
    watching: AtomicBool,
}

/// Clears the watching flag when the watcher stops, however it stops.
pub struct WatchingGuard<'a>(&'a AtomicBool);

impl Drop for WatchingGuard<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub data_dir: String,
    pub folders: Vec<Folder>,
    pub counts: IndexCounts,
    pub documents: Vec<DocumentRecord>,
    pub errors: Vec<FileError>,
    pub jobs: Vec<Job>,
}

/// What the library view shows: small however many documents there are
/// (documents themselves come a page at a time).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct LibraryOverview {
    pub data_dir: String,
    pub folders: Vec<FolderSummary>,
    pub counts: IndexCounts,
    /// The most recent failures, with reasons.
    pub errors: Vec<FileError>,
    pub jobs: Vec<Job>,
    pub jobs_paused: bool,
    /// Whether this process watches the folders for changes now.
    pub watching: bool,
}

/// How many failures the overview lists; the rest are counted.
const OVERVIEW_ERRORS: i64 = 200;

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct FileError {
    pub path: String,
    pub error: String,
}

#[derive(Debug, Clone, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct DocumentTree {
    pub document: DocumentRecord,
    pub tree: StructureTree,
}

/// The payload of an ingest job: the roots it reconciles.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
struct IngestPayload {
    roots: Vec<String>,
}

/// Resolves symlinks and `..` so one file has one path in the index.
fn canonical(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path).map_err(|_| Error::NotFound(path.to_path_buf()))
}

impl Library {
    pub async fn open(config: Config) -> Result<Library> {
        Library::open_with_stop(config, CancellationToken::new()).await
    }

    /// [`Library::open`] for work that `stop` cancels: an evaluation opens
    /// its own index under the evaluation's token.
    pub async fn open_with_stop(config: Config, stop: CancellationToken) -> Result<Library> {
        std::fs::create_dir_all(&config.data_dir).map_err(|source| Error::DataDir {
            path: config.data_dir.clone(),
            source,
        })?;
        let store = Store::open(&config.database_path()).await?;
        let (events, _) = broadcast::channel(1024);
        Ok(Library {
            retrieval: Retrieval::new(store.clone(), config.embedding_files()),
            config,
            store,
            events,
            stop,
            jobs: JobControl::default(),
            llm: OnceCell::new(),
            prompts: OnceCell::new(),
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.events.subscribe()
    }

    /// Cancelling it stops running passes at their next batch boundary;
    /// the work done so far is committed and the job resumes later.
    pub fn stop_token(&self) -> &CancellationToken {
        &self.stop
    }

    /// Everything methods and searches read from the index.
    pub fn retrieval(&self) -> &Retrieval {
        &self.retrieval
    }

    async fn ingestor(&self) -> Result<Ingestor> {
        let (embedder, space) = self.retrieval.model().await?;
        Ok(Ingestor {
            store: self.store.clone(),
            embedder: embedder.clone(),
            space: space.clone(),
            limits: self.config.limits(),
            events: self.events.clone(),
            stop: self.stop.clone(),
            interrupt: self.jobs.interrupt.clone(),
        })
    }

    /// Registers folders or files for watching and queues a job that indexes
    /// them. Nothing is read yet: run the job (or let `folio watch` do it).
    pub async fn add(&self, paths: &[PathBuf]) -> Result<i64> {
        let mut roots = Vec::new();
        for p in paths {
            let path = canonical(p)?;
            let path = path.to_string_lossy().into_owned();
            self.store.add_folder(&path).await?;
            roots.push(path);
        }
        let payload = serde_json::to_value(IngestPayload { roots }).unwrap_or_default();
        Ok(self
            .store
            .create_job(INGEST_JOB, &payload, JobState::Queued)
            .await?)
    }

    /// Runs (or resumes) an ingest job to the end, or until cancelled.
    /// `None` means another worker holds the job.
    pub async fn run_job(&self, job_id: i64) -> Result<Option<PassSummary>> {
        let job = self
            .store
            .job(job_id)
            .await?
            .ok_or_else(|| Error::Task(format!("job {job_id} does not exist")))?;
        let free = job.state == JobState::Queued || job.interrupted;
        if !free || self.jobs_paused() || !self.store.claim_job(job_id, job.owner_pid).await? {
            return Ok(None);
        }
        let payload: IngestPayload = serde_json::from_value(job.payload)
            .map_err(|e| Error::Task(format!("job {job_id} is unreadable: {e}")))?;
        let folders = self.store.folders().await?;
        let roots: Vec<Root> = folders
            .iter()
            .filter(|f| payload.roots.contains(&f.path))
            .map(|f| Root {
                folder_id: f.id,
                path: PathBuf::from(&f.path),
            })
            .collect();
        let ingestor = match self.ingestor().await {
            Ok(i) => i,
            Err(e) => {
                self.store
                    .finish_job(job_id, JobState::Failed, Some(&e.to_string()))
                    .await?;
                return Err(e);
            }
        };
        match ingestor.reconcile(&roots, job_id).await {
            Ok(summary) if summary.cancelled => {
                self.settle_stopped_job(job_id).await?;
                Ok(Some(summary))
            }
            Ok(summary) => {
                self.store.finish_job(job_id, JobState::Done, None).await?;
                Ok(Some(summary))
            }
            Err(e) => {
                self.store
                    .finish_job(job_id, JobState::Failed, Some(&e.to_string()))
                    .await?;
                Err(e)
            }
        }
    }

    /// A pass stopped early: by the user cancelling the job (leave it
    /// cancelled), pausing (park it), or shutting down (back to the queue,
    /// so the next start resumes it).
    async fn settle_stopped_job(&self, job_id: i64) -> Result<()> {
        let state = self.store.job(job_id).await?.map(|j| j.state);
        if state != Some(JobState::Cancelled) {
            let to = if self.jobs_paused() {
                JobState::Paused
            } else {
                JobState::Queued
            };
            self.store.release_job(job_id, to).await?;
        }
        if !self.jobs_paused() {
            self.jobs.interrupt.store(false, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Marks this process as watching the folders (while the guard lives).
    pub fn watching(&self) -> WatchingGuard<'_> {
        self.jobs.watching.store(true, Ordering::Relaxed);
        WatchingGuard(&self.jobs.watching)
    }

    /// A pause outlives the session that set it: when jobs were left
    /// parked, background work starts paused until the user resumes it.
    pub async fn restore_pause(&self) -> Result<()> {
        let parked = self.store.waiting_jobs().await?;
        if parked.iter().any(|j| j.state == JobState::Paused) {
            self.pause_jobs().await?;
        }
        Ok(())
    }

    pub fn jobs_paused(&self) -> bool {
        self.jobs.paused.load(Ordering::Relaxed)
    }

    /// Stops background work: the running job halts at its next batch
    /// (its work so far is kept) and nothing queued starts until
    /// [`Library::resume_jobs`].
    pub async fn pause_jobs(&self) -> Result<()> {
        self.jobs.paused.store(true, Ordering::Relaxed);
        self.jobs.interrupt.store(true, Ordering::Relaxed);
        self.store
            .move_jobs(JobState::Queued, JobState::Paused)
            .await?;
        Ok(())
    }

    /// Lets paused jobs run again; edits the watcher saw meanwhile are
    /// picked up by a reconcile job.
    pub async fn resume_jobs(&self) -> Result<()> {
        self.jobs.paused.store(false, Ordering::Relaxed);
        self.jobs.interrupt.store(false, Ordering::Relaxed);
        self.store
            .move_jobs(JobState::Paused, JobState::Queued)
            .await?;
        if self.jobs.missed_changes.swap(false, Ordering::Relaxed) {
            self.queue_reconcile().await?;
        }
        Ok(())
    }

    /// Cancels a queued, paused or running job. What it indexed stays.
    pub async fn cancel_job(&self, job_id: i64) -> Result<()> {
        let job = self
            .store
            .cancel_job(job_id)
            .await?
            .ok_or(Error::JobNotFound(job_id))?;
        if job.state == JobState::Running && job.owner_pid == Some(i64::from(std::process::id())) {
            self.jobs.interrupt.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Runs queued jobs and resumes those whose process died, oldest first;
    /// stops early when cancelled.
    pub async fn run_pending(&self) -> Result<Vec<(i64, PassSummary)>> {
        let mut done = Vec::new();
        if self.jobs_paused() {
            return Ok(done);
        }
        for job in self.store.pending_jobs().await? {
            if job.kind != INGEST_JOB {
                continue;
            }
            if let Some(summary) = self.run_job(job.id).await? {
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
    pub async fn reconcile_all(&self) -> Result<PassSummary> {
        if self.store.folders().await?.is_empty() {
            return Ok(PassSummary::default());
        }
        let id = self.queue_reconcile().await?;
        Ok(self.run_job(id).await?.unwrap_or_default())
    }

    /// A full reconcile that is already waiting (queued, left behind by a
    /// process that died, or parked while paused) does the same work as a
    /// new one, so it is reused: restarts never pile up identical jobs.
    async fn queue_reconcile(&self) -> Result<i64> {
        let roots: Vec<String> = self
            .store
            .folders()
            .await?
            .into_iter()
            .map(|f| f.path)
            .collect();
        let paused = self.jobs_paused();
        let covering = self.store.waiting_jobs().await?.into_iter().find(|j| {
            j.kind == INGEST_JOB
                && (j.state == JobState::Paused) == paused
                && serde_json::from_value::<IngestPayload>(j.payload.clone())
                    .is_ok_and(|p| roots.iter().all(|r| p.roots.contains(r)))
        });
        if let Some(job) = covering {
            return Ok(job.id);
        }
        let payload = serde_json::to_value(IngestPayload { roots }).unwrap_or_default();
        let state = if self.jobs_paused() {
            JobState::Paused
        } else {
            JobState::Queued
        };
        Ok(self.store.create_job(INGEST_JOB, &payload, state).await?)
    }

    pub async fn roots(&self) -> Result<Vec<Root>> {
        Ok(self
            .store
            .folders()
            .await?
            .into_iter()
            .map(|f| Root {
                folder_id: f.id,
                path: PathBuf::from(f.path),
            })
            .collect())
    }

    /// Applies what the watcher saw, unless background work is paused.
    pub async fn apply_changes(&self, changes: Vec<Change>) -> Result<PassSummary> {
        if self.jobs_paused() {
            self.jobs.missed_changes.store(true, Ordering::Relaxed);
            return Ok(PassSummary::default());
        }
        let roots = self.roots().await?;
        self.ingestor().await?.apply_changes(&roots, changes).await
    }

    /// Stops watching a folder and forgets everything indexed from it.
    pub async fn remove(&self, path: &Path) -> Result<()> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self.store.remove_folder(&key.to_string_lossy()).await? {
            Ok(())
        } else {
            Err(Error::NotWatched(path.to_path_buf()))
        }
    }

    pub async fn status(&self) -> Result<Status> {
        let documents = self.store.all_documents().await?;
        let errors = documents
            .iter()
            .filter_map(|d| {
                d.error.as_ref().map(|e| FileError {
                    path: d.path.clone(),
                    error: e.clone(),
                })
            })
            .collect();
        Ok(Status {
            data_dir: self.config.data_dir.to_string_lossy().into_owned(),
            folders: self.store.folders().await?,
            counts: self.store.counts().await?,
            documents,
            errors,
            jobs: self.store.jobs(20).await?,
        })
    }

    pub async fn overview(&self) -> Result<LibraryOverview> {
        let errors = self.store.failed_documents(OVERVIEW_ERRORS).await?;
        Ok(LibraryOverview {
            data_dir: self.config.data_dir.to_string_lossy().into_owned(),
            folders: self.store.folder_summaries().await?,
            counts: self.store.counts().await?,
            errors: errors
                .into_iter()
                .map(|d| FileError {
                    path: d.path,
                    error: d.error.unwrap_or_default(),
                })
                .collect(),
            jobs: self.store.jobs(20).await?,
            jobs_paused: self.jobs_paused(),
            watching: self.jobs.watching.load(Ordering::Relaxed),
        })
    }

    /// A page of the documents of the watched folder at `folder` (as listed).
    pub async fn folder_documents(
        &self,
        folder: &str,
        offset: i64,
        limit: i64,
    ) -> Result<DocumentPage> {
        let id = self
            .store
            .folders()
            .await?
            .into_iter()
            .find(|f| f.path == folder)
            .ok_or_else(|| Error::NotWatched(PathBuf::from(folder)))?
            .id;
        Ok(self.store.folder_documents(id, offset, limit).await?)
    }

    pub async fn tree(&self, path: &Path) -> Result<DocumentTree> {
        let key = canonical(path)?;
        let document = self
            .store
            .document(&key.to_string_lossy())
            .await?
            .filter(|d| d.status == "indexed")
            .ok_or_else(|| Error::NotIndexed(path.to_path_buf()))?;
        let tree = self.store.structure_tree(document.id).await?;
        Ok(DocumentTree { document, tree })
    }

    /// The configured language model, loaded (or connected) on first use.
    pub async fn llm(&self) -> Result<Arc<dyn Llm>> {
        self.llm
            .get_or_try_init(|| crate::llm::connect(&self.config.llm))
            .await
            .cloned()
            .map_err(Error::from)
    }

    /// The prompt templates, with the user's overrides, checked on first use.
    pub async fn prompts(&self) -> Result<Arc<Prompts>> {
        self.prompts
            .get_or_try_init(|| async {
                Prompts::load(Some(&self.config.prompts_dir)).map(Arc::new)
            })
            .await
            .cloned()
            .map_err(Error::from)
    }

    /// Answers `request` with its method and the configured model, and
    /// stores the run, failed or not.
    pub async fn ask(
        &self,
        request: &AskRequest,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<RunRecord> {
        let llm = self.llm().await?;
        self.ask_with(llm.as_ref(), request, events, cancel).await
    }

    /// [`Library::ask`] with another model than the configured one, such as
    /// a scripted model in tests of a method's control flow.
    pub async fn ask_with(
        &self,
        llm: &dyn Llm,
        request: &AskRequest,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<RunRecord> {
        let prompts = self.prompts().await?;
        let answering = Answering {
            retrieval: &self.retrieval,
            store: &self.store,
            llm,
            settings: &self.config.llm,
            prompts: &prompts,
        };
        Ok(crate::methods::runner::ask(&answering, request, events, cancel).await?)
    }

    pub async fn run(&self, id: i64) -> Result<RunRecord> {
        self.store.run(id).await?.ok_or(Error::RunNotFound(id))
    }

    /// Newest first; `text` filters by question and answer.
    pub async fn runs(&self, text: Option<&str>, limit: i64) -> Result<Vec<RunRecord>> {
        Ok(self.store.runs(text, limit).await?)
    }

    /// Deletes a finished (or failed, cancelled, interrupted) run.
    pub async fn delete_run(&self, id: i64) -> Result<()> {
        if self.run(id).await?.status == RunStatus::Running {
            return Err(Error::RunInProgress(id));
        }
        self.store.delete_run(id).await?;
        Ok(())
    }

    /// The model calls a run made, in order.
    pub async fn run_calls(&self, id: i64) -> Result<Vec<LlmCallRow>> {
        Ok(self.store.llm_calls(id).await?)
    }

    /// Writes the run as markdown to exactly `out`.
    pub async fn export(&self, id: i64, out: &Path) -> Result<PathBuf> {
        let run = self.run(id).await?;
        let calls = self.run_calls(id).await?;
        Ok(crate::export::write_file(
            out,
            &crate::export::render(&run, &calls),
        )?)
    }

    /// Queues a graph job that scores every chunk still unscored under the
    /// rubric; a waiting job with the same options is reused.
    pub async fn queue_graph_build(&self, options: GraphBuildOptions) -> Result<i64> {
        options.check()?;
        let payload = serde_json::to_value(options).unwrap_or_default();
        if let Some(job) = self
            .store
            .waiting_jobs()
            .await?
            .into_iter()
            .find(|j| j.kind == GRAPH_JOB && j.payload == payload)
        {
            return Ok(job.id);
        }
        let state = if self.jobs_paused() {
            JobState::Paused
        } else {
            JobState::Queued
        };
        Ok(self.store.create_job(GRAPH_JOB, &payload, state).await?)
    }

    /// Runs (or resumes) a graph job until every pending chunk is scored,
    /// background work is paused, the job is cancelled, or `stop` fires.
    /// `None` means the job is not free to run here.
    pub async fn run_graph_job(
        &self,
        job_id: i64,
        stop: &CancellationToken,
        on_progress: &(dyn Fn(&BuildProgress) + Sync),
    ) -> Result<Option<BuildProgress>> {
        let job = self
            .store
            .job(job_id)
            .await?
            .ok_or(Error::JobNotFound(job_id))?;
        let free = job.state == JobState::Queued || job.interrupted;
        if job.kind != GRAPH_JOB
            || !free
            || self.jobs_paused()
            || !self.store.claim_job(job_id, job.owner_pid).await?
        {
            return Ok(None);
        }
        let result = self.build_graph(&job, stop, on_progress).await;
        match &result {
            Ok(p) if p.stopped => self.settle_stopped_job(job_id).await?,
            Ok(_) => self.store.finish_job(job_id, JobState::Done, None).await?,
            Err(e) => {
                self.store
                    .finish_job(job_id, JobState::Failed, Some(&e.to_string()))
                    .await?
            }
        }
        result.map(Some)
    }

    async fn build_graph(
        &self,
        job: &Job,
        stop: &CancellationToken,
        on_progress: &(dyn Fn(&BuildProgress) + Sync),
    ) -> Result<BuildProgress> {
        let options: GraphBuildOptions = serde_json::from_value(job.payload.clone())
            .map_err(|e| Error::Task(format!("job {} is unreadable: {e}", job.id)))?;
        let report = |p: &BuildProgress| {
            let _ = self.events.send(EngineEvent::JobProgress(JobProgress {
                job_id: job.id,
                kind: GRAPH_JOB.into(),
                phase: if p.done < p.total {
                    JobPhase::Scoring
                } else {
                    JobPhase::Finished
                },
                done: p.done,
                total: p.total,
                failed: p.failed,
                rate: p.rate,
                eta_seconds: p.eta_seconds,
            }));
            on_progress(p);
        };
        self.score_graph(options, Some(job), None, stop, &report)
            .await
    }

    /// Scores the pending chunks among `scope` only, outside any job: an
    /// evaluation's questions reach a small part of a large corpus, and the
    /// graph is only needed there. Stopping keeps what was scored, and the
    /// next call goes on with what is still pending.
    pub async fn build_graph_within(
        &self,
        options: GraphBuildOptions,
        scope: &HashSet<i64>,
        stop: &CancellationToken,
        on_progress: &(dyn Fn(&BuildProgress) + Sync),
    ) -> Result<BuildProgress> {
        self.score_graph(options, None, Some(scope), stop, on_progress)
            .await
    }

    async fn score_graph(
        &self,
        options: GraphBuildOptions,
        job: Option<&Job>,
        scope: Option<&HashSet<i64>>,
        stop: &CancellationToken,
        on_progress: &(dyn Fn(&BuildProgress) + Sync),
    ) -> Result<BuildProgress> {
        let dim = self.retrieval.model().await?.1.dim;
        let vectors = VectorIndex::load(&self.store, dim).await?;
        let llm = self.llm().await?;
        let prompts = self.prompts().await?;
        GraphBuild {
            store: &self.store,
            llm: llm.as_ref(),
            prompts: &prompts,
            vectors: &vectors,
            options,
            job: job.map(|j| (j.id, j.active_ms)),
            scope,
            timeout: Duration::from_secs(self.config.llm.timeout_secs),
            cancel: stop,
            reuse_prefix: true,
        }
        .run(&|| self.jobs_paused(), on_progress)
        .await
    }

    /// The background graph worker of long-lived processes (the app,
    /// `folio watch`): keeps every built graph up to date with the library
    /// (Algorithm 3) and runs queued graph jobs, until `stop`.
    pub async fn run_graph_jobs(&self, stop: &CancellationToken) -> Result<()> {
        while !stop.is_cancelled() {
            if !self.jobs_paused() {
                self.queue_graph_updates().await?;
                for job in self.store.pending_jobs().await? {
                    if job.kind == GRAPH_JOB && !stop.is_cancelled() {
                        self.run_graph_job(job.id, stop, &|_| {}).await.ok();
                    }
                }
            }
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(GRAPH_POLL) => {}
            }
        }
        Ok(())
    }

    /// Queues an update for each rubric whose last build finished and that
    /// has unscored chunks now (new or edited documents). A build that
    /// failed or was cancelled waits for the user instead.
    async fn queue_graph_updates(&self) -> Result<()> {
        let jobs = self.store.jobs(200).await?;
        for rubric in self.store.built_rubrics().await? {
            let last = jobs.iter().find(|j| {
                j.kind == GRAPH_JOB
                    && serde_json::from_value::<GraphBuildOptions>(j.payload.clone())
                        .is_ok_and(|o| o.rubric == rubric)
            });
            let Some(last) = last.filter(|j| j.state == JobState::Done) else {
                continue;
            };
            if self.store.pending_gain_chunks(rubric).await?.is_empty() {
                continue;
            }
            let options = serde_json::from_value(last.payload.clone()).unwrap_or_default();
            self.queue_graph_build(options).await?;
        }
        Ok(())
    }

    /// Coverage, cost and jobs of every built graph.
    pub async fn graph_status(&self) -> Result<GraphStatus> {
        let chunks = self.store.embedded_chunks().await?;
        let mut rubrics = Vec::new();
        for rubric in self.store.built_rubrics().await? {
            rubrics.push(self.store.rubric_status(rubric, chunks).await?);
        }
        let jobs = self
            .store
            .jobs(200)
            .await?
            .into_iter()
            .filter(|j| j.kind == GRAPH_JOB)
            .take(10)
            .collect();
        Ok(GraphStatus {
            chunks,
            rubrics,
            jobs,
        })
    }
}
