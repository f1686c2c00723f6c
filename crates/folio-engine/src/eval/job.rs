//! An evaluation as a job of the user's library, so it lives like the
//! library's other long work: `folio eval` and the Evaluate view start it
//! in the foreground ([`run_in_foreground`]), a pause or a cancel stops it
//! after the answer in flight, its row says how far it got, and one that a
//! crash, a shutdown or a pause left is resumed by the same command or by
//! the background lane of the app and `folio watch` ([`EvalJobs`]). Its
//! checkpoint is its own folder (`results.jsonl`), so a resumed job asks
//! only what is still unanswered. Only the job's row lives in the user's
//! library; the evaluation indexes its corpus in its own folder.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use futures::future::BoxFuture;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{EvalError, EvalEvent, EvalRequest, EvalStage, Evaluation, Result, Summary};
use crate::library::{JobKind, Library, Pass};
use folio_core::events::{EngineEvent, JobPhase, JobProgress, Progress};
use folio_store::{Job, RunStatus};

/// The `kind` of an evaluation's row in `jobs`.
pub const EVAL_JOB: &str = "eval";

/// How a pass of an evaluation job ended.
enum Outcome {
    /// Every stage ran; the summary says whether answering was cut short.
    Summarized(Summary),
    /// Stopped before answering, while indexing or scoring the graph.
    Stopped(EvalError),
}

impl Pass for Outcome {
    fn stopped(&self) -> bool {
        match self {
            Outcome::Summarized(summary) => summary.interrupted,
            Outcome::Stopped(_) => true,
        }
    }
}

/// Runs `request` now as an evaluation job of `library`, reporting its
/// events through `on`. Bad settings, specs or dataset lines are refused
/// before any job exists. It takes over the unfinished job writing to the
/// same folder (killed, shut down or paused), and refuses while a live
/// process runs that one. `stop` stops it after the answer in flight, as a
/// pause does; the job waits to be resumed.
pub async fn run_in_foreground(
    library: &Library,
    mut request: EvalRequest,
    stop: &CancellationToken,
    on: &(dyn Fn(EvalEvent) + Sync),
) -> Result<Summary> {
    request.check(library.config())?;
    for path in [&mut request.dataset, &mut request.corpus, &mut request.out] {
        *path = absolute(path)?;
    }
    // `fresh` clears the folder once, now; a resumed pass keeps its answers.
    let resumable = EvalRequest {
        fresh: false,
        ..request.clone()
    };
    let payload = serde_json::to_value(&resumable).expect("an evaluation request serializes");
    let out = request.out.clone();
    let same_folder = |job: &Job| payload_of(job).is_ok_and(|r| r.out == out);
    let outcome = library
        .jobs()
        .run_in_foreground(EVAL_JOB, &payload, same_folder, stop, |job, stop| {
            evaluate(library, job, request, stop, on)
        })
        .await?;
    match outcome {
        Outcome::Summarized(summary) => Ok(summary),
        Outcome::Stopped(e) => Err(e),
    }
}

/// Cancels the evaluation jobs this process runs (the Evaluate view's
/// Cancel): each stops after the answer in flight, keeps its answers, and
/// stays cancelled instead of waiting to be resumed.
pub async fn cancel_running(library: &Library) -> crate::Result<()> {
    let me = i64::from(std::process::id());
    for job in library.jobs().unfinished().await? {
        if job.kind == EVAL_JOB && job.owner_pid == Some(me) {
            library.jobs().cancel(job.id).await?;
        }
    }
    Ok(())
}

/// The newest evaluation job writing into `out`, if one was ever started.
pub async fn job_for(library: &Library, out: &std::path::Path) -> Result<Option<Job>> {
    let out = absolute(out)?;
    Ok(library
        .jobs()
        .list(MAX_JOBS_LOOKED_AT)
        .await?
        .into_iter()
        .find(|job| job.kind == EVAL_JOB && payload_of(job).is_ok_and(|r| r.out == out)))
}

/// How far back [`job_for`] looks.
const MAX_JOBS_LOOKED_AT: usize = 1_000;

/// The lane that resumes evaluation jobs in the background: those a crash
/// or a shutdown left, and those a pause parked once they are resumed.
pub struct EvalJobs;

impl JobKind for EvalJobs {
    fn kind(&self) -> &'static str {
        EVAL_JOB
    }

    fn run<'a>(
        &'a self,
        library: &'a Library,
        job_id: i64,
        stop: &'a CancellationToken,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            // How it ended is recorded on the job, which waits for the user
            // when it failed.
            let _ = library
                .jobs()
                .run_claimed(job_id, EVAL_JOB, stop, |job, stop| async move {
                    let request = payload_of(&job)?;
                    evaluate(library, job, request, stop, &|_| {}).await
                })
                .await;
        })
    }
}

fn payload_of(job: &Job) -> Result<EvalRequest> {
    serde_json::from_value(job.payload.clone()).map_err(|e| {
        EvalError::Engine(crate::Error::Task(format!(
            "evaluation job {} is unreadable: {e}",
            job.id
        )))
    })
}

/// A resumed job may run in another process from another folder, so its
/// paths are kept absolute.
fn absolute(path: &std::path::Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|source| EvalError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// One pass of job `job`: opens the evaluation under the job's token and
/// runs every stage, keeping the job's row and the event bus told how far
/// it has got.
async fn evaluate(
    library: &Library,
    job: Job,
    request: EvalRequest,
    stop: CancellationToken,
    on: &(dyn Fn(EvalEvent) + Sync),
) -> Result<Outcome> {
    let started = Instant::now();
    let evaluation = Evaluation::open(request, library.config().clone(), &stop).await?;
    let tracker = Tracker::new(job.id);
    let (latest, mut recorded) = watch::channel::<Option<JobProgress>>(None);
    let running = async move {
        let summary = evaluation
            .run(&|event| {
                if let Some(progress) = tracker.progress(&event) {
                    library.publish(EngineEvent::JobProgress(progress.clone()));
                    latest.send_replace(Some(progress));
                }
                on(event);
            })
            .await;
        drop(latest);
        summary
    };
    // The row is written from here, not from the callback: the latest
    // count wins, and a slow write never holds up the answers.
    let (job_id, active_before) = (job.id, job.active_ms);
    let record = |progress: Option<JobProgress>| async move {
        if let Some(p) = progress {
            let active_ms = active_before + started.elapsed().as_millis() as i64;
            // A row that cannot be written fails the job's settling, which
            // writes the same row; the answers are safe in their own folder.
            let _ = library
                .store
                .set_job_progress(job_id, &p.progress, active_ms)
                .await;
        }
    };
    let recording = async {
        while recorded.changed().await.is_ok() {
            let progress = recorded.borrow_and_update().clone();
            record(progress).await;
        }
        let last = recorded.borrow().clone();
        record(last).await;
    };
    let (summary, ()) = tokio::join!(running, recording);
    match summary {
        Ok(summary) => Ok(Outcome::Summarized(summary)),
        Err(e @ EvalError::Interrupted(_)) => Ok(Outcome::Stopped(e)),
        Err(e) => Err(e),
    }
}

/// Turns an evaluation's events into its job's progress: the phase, and
/// the count with its pace since that phase began.
struct Tracker {
    job_id: i64,
    state: Mutex<TrackerState>,
}

struct TrackerState {
    phase_started: Instant,
    failed_answers: u64,
    last: Progress,
}

impl Tracker {
    fn new(job_id: i64) -> Tracker {
        Tracker {
            job_id,
            state: Mutex::new(TrackerState {
                phase_started: Instant::now(),
                failed_answers: 0,
                last: Progress::default(),
            }),
        }
    }

    fn progress(&self, event: &EvalEvent) -> Option<JobProgress> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let elapsed = state.phase_started.elapsed();
        let (phase, progress) = match event {
            EvalEvent::Stage { stage } => {
                state.phase_started = Instant::now();
                match stage {
                    EvalStage::Summarizing => (JobPhase::Finished, state.last),
                    _ => return None,
                }
            }
            EvalEvent::Indexing { progress } => (progress.phase, progress.progress),
            EvalEvent::GraphScoring { progress } => (JobPhase::Scoring, progress.progress),
            EvalEvent::Answered { done, total, row } => {
                if row.status != RunStatus::Done {
                    state.failed_answers += 1;
                }
                let progress =
                    Progress::after(*done as u64, *total as u64, state.failed_answers, elapsed);
                (JobPhase::Answering, progress)
            }
            EvalEvent::Judged { done, total } => (
                JobPhase::Judging,
                Progress::after(*done as u64, *total as u64, 0, elapsed),
            ),
            EvalEvent::Notice { .. }
            | EvalEvent::Indexed { .. }
            | EvalEvent::GraphStarted { .. } => return None,
        };
        state.last = progress;
        Some(JobProgress {
            job_id: self.job_id,
            kind: EVAL_JOB.into(),
            phase,
            progress,
        })
    }
}
