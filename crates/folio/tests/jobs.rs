//! Job ownership and lifecycle: one worker per job, cancelled work resumes,
//! a vanished root keeps its index, a job's write waits for another's, the
//! runtime's lanes keep a graph build from holding up indexing, a pause
//! stops a pass over the watcher's changes as it stops a job, `folio jobs`
//! holds what a `folio watch` runs in another process, and a kind of job
//! defined above the library goes through the same lifecycle.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::engine::{folio, folio_json, folio_watch, ingest, open, scalar};
use common::wait::{eventually, Background};
use folio_engine::eval::job::{EvalJobs, EVAL_JOB};
use folio_engine::events::{EngineEvent, JobPhase};
use folio_engine::graph::{GraphBuildOptions, Rubric};
use folio_engine::library::{JobKind, Pass};
use folio_engine::pipeline::Change;
use folio_engine::retrieve::SearchMode;
use folio_engine::store::{JobState, NodeScoring};
use tokio_util::sync::CancellationToken;

/// More one-chunk notes than an ingest batch holds (256 documents).
const NOTES_OVER_A_BATCH: usize = 400;

fn corpus(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_notes(dir.path(), n);
    dir
}

/// Writes notes `note-000.md` … into `dir` and returns their paths.
fn write_notes(dir: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let path = dir.join(format!("note-{i:03}.md"));
            let text = format!("# Note {i}\n\nParagraph number {i} mentions the word marker{i}.\n");
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect()
}

/// The one pending job runs to the end and every file ends up indexed.
async fn finishes_on_resume(library: &folio_engine::Library, job: i64, files: i64) {
    assert_eq!(library.jobs().run_pending().await.unwrap().len(), 1);
    assert_eq!(library.jobs().get(job).await.unwrap().state, JobState::Done);
    assert_eq!(
        scalar(
            library,
            "SELECT COUNT(*) FROM documents WHERE status = 'indexed'"
        )
        .await,
        files
    );
}

/// Embedded batches wait to be committed together (fewer, larger commits
/// write less), while progress moves with every batch, before the commit
/// that stores it; the documents are announced once stored.
#[tokio::test(flavor = "multi_thread")]
async fn progress_moves_with_each_batch_before_the_commit_that_holds_it() {
    let (data, docs) = (tempfile::tempdir().unwrap(), corpus(300));
    let library = open(data.path()).await;
    let mut events = library.subscribe();
    assert_eq!(ingest(&library, docs.path()).await.indexed, 300);
    let (mut staged_progress, mut stored) = (0, 0);
    while let Ok(event) = events.try_recv() {
        match event {
            EngineEvent::JobProgress(p)
                if p.phase == JobPhase::Indexing
                    && stored == 0
                    && (1..300).contains(&p.progress.done) =>
            {
                staged_progress += 1
            }
            EngineEvent::DocumentIndexed { .. } => stored += 1,
            _ => {}
        }
    }
    assert_eq!(stored, 300);
    assert!(
        staged_progress > 0,
        "no progress reported before the first commit"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_workers_never_run_the_same_job() {
    let (data, docs) = (tempfile::tempdir().unwrap(), corpus(20));
    let (a, b) = (open(data.path()).await, open(data.path()).await);
    let job = a.add(&[docs.path().to_path_buf()]).await.unwrap();
    let (ra, rb) = tokio::join!(a.jobs().run(job), b.jobs().run(job));
    let ran = [ra.unwrap(), rb.unwrap()]
        .iter()
        .filter(|r| r.is_some())
        .count();
    assert_eq!(ran, 1);
    assert_eq!(a.jobs().get(job).await.unwrap().state, JobState::Done);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_job_goes_back_to_the_queue_and_resumes() {
    // More notes than one batch takes: a pass stopped before it starts
    // commits its first batch, which holds every note the reader had ready.
    let (data, docs) = (tempfile::tempdir().unwrap(), corpus(NOTES_OVER_A_BATCH));
    let library = open(data.path()).await;
    let job = library.add(&[docs.path().to_path_buf()]).await.unwrap();
    library.stop_token().cancel();
    let stopped = library.jobs().run(job).await.unwrap().unwrap();
    assert!(stopped.cancelled);
    let queued = library.jobs().get(job).await.unwrap();
    assert_eq!(queued.state, JobState::Queued);
    assert!(
        queued.done > 0 && queued.done < NOTES_OVER_A_BATCH as i64,
        "{queued:?}"
    );
    library.close().await;

    // The next start resumes it.
    let restarted = open(data.path()).await;
    finishes_on_resume(&restarted, job, NOTES_OVER_A_BATCH as i64).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pausing_parks_the_running_job_and_resuming_finishes_it() {
    let (data, docs) = (tempfile::tempdir().unwrap(), corpus(700));
    let library = std::sync::Arc::new(open(data.path()).await);
    let job = library.add(&[docs.path().to_path_buf()]).await.unwrap();
    let mut events = library.subscribe();
    let runner = tokio::spawn({
        let library = library.clone();
        async move { library.jobs().run(job).await }
    });
    // The first embedded batch reports progress; pause right then.
    while !matches!(
        events.recv().await.unwrap(),
        EngineEvent::JobProgress(p) if p.phase == JobPhase::Indexing && p.progress.done > 0
    ) {}
    library.jobs().pause().await.unwrap();
    assert!(runner.await.unwrap().unwrap().unwrap().cancelled);
    let parked = library.jobs().get(job).await.unwrap();
    assert_eq!(parked.state, JobState::Paused);
    assert!(parked.done > 0 && parked.done < 700, "{parked:?}");
    assert!(
        library.jobs().run_pending().await.unwrap().is_empty(),
        "nothing runs while paused"
    );

    library.jobs().resume().await.unwrap();
    finishes_on_resume(&library, job, 700).await;
}

/// A pause stops a pass over the watcher's changes at its next batch, as it
/// stops a job; what the pass did not reach is caught up on resume.
#[tokio::test(flavor = "multi_thread")]
async fn pausing_stops_a_pass_over_the_watchers_changes_and_resuming_catches_up() {
    let (data, docs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let docs = std::fs::canonicalize(docs.path()).unwrap();
    let library = Arc::new(open(data.path()).await);
    ingest(&library, &docs).await;
    // 700 notes appear at once, as a copy into the folder makes them.
    let changes = write_notes(&docs, 700)
        .into_iter()
        .map(Change::Touched)
        .collect();
    let mut events = library.subscribe();
    let pass = tokio::spawn({
        let library = library.clone();
        async move { library.jobs().apply_changes(changes).await }
    });
    while !matches!(
        events.recv().await.unwrap(),
        EngineEvent::JobProgress(p) if p.phase == JobPhase::Indexing && p.progress.done > 0
    ) {}
    library.jobs().pause().await.unwrap();
    assert!(pass.await.unwrap().unwrap().cancelled);
    let indexed = "SELECT COUNT(*) FROM documents WHERE status = 'indexed'";
    let before_resume = scalar(&library, indexed).await;
    assert!(before_resume < 700, "{before_resume} indexed");
    assert!(
        library.jobs().run_pending().await.unwrap().is_empty(),
        "nothing runs while paused"
    );

    library.jobs().resume().await.unwrap();
    assert_eq!(library.jobs().run_pending().await.unwrap().len(), 1);
    assert_eq!(scalar(&library, indexed).await, 700);
}

async fn job_count(library: &folio_engine::Library) -> i64 {
    scalar(library, "SELECT COUNT(*) FROM jobs").await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_resumes_the_waiting_reconcile_instead_of_queuing_another() {
    let (data, docs) = (tempfile::tempdir().unwrap(), corpus(150));
    let before = open(data.path()).await;
    let job = before.add(&[docs.path().to_path_buf()]).await.unwrap();
    before.stop_token().cancel();
    assert!(before.jobs().run(job).await.unwrap().unwrap().cancelled);
    before.close().await;

    // What the watcher does first when the app or `folio watch` starts.
    let after = open(data.path()).await;
    after.jobs().reconcile_all().await.unwrap();
    assert_eq!(job_count(&after).await, 1);
    assert_eq!(after.jobs().get(job).await.unwrap().state, JobState::Done);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pause_outlives_the_session_that_set_it() {
    let (data, docs) = (tempfile::tempdir().unwrap(), corpus(40));
    let before = open(data.path()).await;
    let job = before.add(&[docs.path().to_path_buf()]).await.unwrap();
    before.jobs().pause().await.unwrap();
    before.close().await;

    let after = open(data.path()).await;
    after.jobs().restore_pause().await.unwrap();
    assert!(after.jobs().paused());
    after.jobs().reconcile_all().await.unwrap();
    assert_eq!(job_count(&after).await, 1, "the parked job is reused");
    assert!(after.jobs().run_pending().await.unwrap().is_empty());

    after.jobs().resume().await.unwrap();
    finishes_on_resume(&after, job, 40).await;
}

/// Job `id` as `folio jobs` lists it, from a process of its own.
fn listed_job(data: &Path, id: i64) -> serde_json::Value {
    let listed = folio_json(data, &["jobs"]);
    let jobs = listed["jobs"].as_array().unwrap();
    jobs.iter().find(|j| j["id"] == id).cloned().unwrap()
}

/// Waits until `folio jobs` lists job `id` in `state`, and returns how
/// much of its work is done.
async fn listed_in(data: &Path, id: i64, state: &str) -> i64 {
    eventually(&format!("job {id} {state}"), || async {
        listed_job(data, id)["state"] == state
    })
    .await;
    listed_job(data, id)["done"].as_i64().unwrap()
}

/// Longer than the runtime's poll (2 s), so a process that was going to
/// act on a change has.
const A_FEW_TICKS: std::time::Duration = std::time::Duration::from_secs(5);

/// `folio jobs pause`, `resume` and `cancel`, each run as a process of its
/// own, reach the job a `folio watch` runs in another, as the app's
/// buttons reach it; the watch stays up throughout.
#[tokio::test(flavor = "multi_thread")]
async fn folio_jobs_pauses_resumes_and_cancels_what_folio_watch_runs() {
    const NOTES: i64 = 3_000;
    let (data, first, second) = (
        tempfile::tempdir().unwrap(),
        corpus(NOTES as usize),
        tempfile::tempdir().unwrap(),
    );
    // Other words than the first folder's, so nothing is reused from it.
    for i in 0..NOTES {
        let text =
            format!("# Entry {i}\n\nThe second folder's entry {i} names the term other{i}.\n");
        std::fs::write(second.path().join(format!("entry-{i:04}.md")), text).unwrap();
    }
    let data = data.path();
    let log = tempfile::NamedTempFile::new().unwrap();

    // Paused before any watch starts: the watch starts paused.
    assert_eq!(folio_json(data, &["jobs", "pause"])["paused"], true);
    let added = folio_json(data, &["add", "--no-wait", first.path().to_str().unwrap()]);
    let job = added["job"].as_i64().unwrap();
    let mut watch = folio_watch(data, log.path());
    tokio::time::sleep(A_FEW_TICKS).await;
    let parked = listed_job(data, job);
    assert_eq!(
        (parked["state"].as_str(), parked["done"].as_i64()),
        (Some("paused"), Some(0))
    );
    assert_eq!(folio_json(data, &["jobs"])["paused"], true);

    // Resumed from here, the job runs there; paused from here mid-way, it
    // parks there with its work so far, and nothing moves while paused.
    folio_json(data, &["jobs", "resume"]);
    listed_in(data, job, "running").await;
    folio_json(data, &["jobs", "pause"]);
    let parked = listed_in(data, job, "paused").await;
    assert!(parked < NOTES, "the job ended before the pause reached it");
    tokio::time::sleep(A_FEW_TICKS).await;
    assert_eq!(listed_job(data, job)["done"], parked);
    folio_json(data, &["jobs", "resume"]);
    listed_in(data, job, "done").await;
    assert_eq!(folio_json(data, &["status"])["counts"]["documents"], NOTES);

    // Cancelled from here, the second job stops there, keeping its work.
    let added = folio_json(data, &["add", "--no-wait", second.path().to_str().unwrap()]);
    let job = added["job"].as_i64().unwrap();
    listed_in(data, job, "running").await;
    assert_eq!(
        folio_json(data, &["jobs", "cancel", &job.to_string()])["cancelled"],
        job
    );
    tokio::time::sleep(A_FEW_TICKS).await;
    let stopped = listed_job(data, job)["done"].as_i64().unwrap();
    tokio::time::sleep(A_FEW_TICKS).await;
    let cancelled = listed_job(data, job);
    assert_eq!(cancelled["state"], "cancelled");
    assert_eq!(
        cancelled["done"], stopped,
        "the watch stopped working on it"
    );
    assert!(
        stopped < NOTES,
        "the job ended before the cancel reached it"
    );
    let again = folio(data, &["jobs", "cancel", &job.to_string()]);
    assert!(String::from_utf8_lossy(&again.stderr)
        .contains(&format!("there is no unfinished job {job}")));

    assert!(watch.try_wait().unwrap().is_none(), "the watch stays up");
    watch.kill().unwrap();
    watch.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_job_stays_cancelled_and_keeps_what_it_indexed() {
    let (data, docs) = (tempfile::tempdir().unwrap(), corpus(3));
    let library = open(data.path()).await;
    let job = library.add(&[docs.path().to_path_buf()]).await.unwrap();
    library.jobs().cancel(job).await.unwrap();
    assert_eq!(
        library.jobs().get(job).await.unwrap().state,
        JobState::Cancelled
    );
    assert!(library.jobs().run_pending().await.unwrap().is_empty());
    assert!(matches!(
        library.jobs().cancel(job).await,
        Err(folio_engine::Error::JobNotFound(_))
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_root_that_disappears_keeps_its_index_until_removed() {
    let (data, parent) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let root = parent.path().join("usb-drive");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.md"), "# A\n\nKept while the drive is away.\n").unwrap();
    let library = open(data.path()).await;
    ingest(&library, &root).await;
    let canonical = std::fs::canonicalize(&root).unwrap();

    std::fs::rename(&root, parent.path().join("elsewhere")).unwrap();
    let pass = library.jobs().reconcile_all().await.unwrap();
    assert_eq!(pass.removed, 0);
    assert_eq!(scalar(&library, "SELECT COUNT(*) FROM documents").await, 1);

    library.remove(&canonical).await.unwrap();
    assert_eq!(scalar(&library, "SELECT COUNT(*) FROM documents").await, 0);
    assert_eq!(scalar(&library, "SELECT COUNT(*) FROM chunks").await, 0);
    assert!(library.remove(&canonical).await.is_err());
}

/// Jobs of the app, or two processes, write the same index at once. A graph
/// node is written with a read first; begun as a deferred transaction, its
/// write failed at once with "database is locked" while the other held the
/// write lock, and the whole graph build stopped. It now waits its turn.
#[tokio::test(flavor = "multi_thread")]
async fn a_write_that_reads_first_waits_for_another_connections_write() {
    let (data, docs) = (tempfile::tempdir().unwrap(), corpus(3));
    let (a, b) = (open(data.path()).await, open(data.path()).await);
    ingest(&a, docs.path()).await;
    let chunk_id = scalar(&a, "SELECT MIN(id) FROM chunks").await;

    let mut other = b
        .store()
        .pool()
        .begin_with("BEGIN IMMEDIATE")
        .await
        .unwrap();
    sqlx::query("UPDATE jobs SET updated_at = updated_at")
        .execute(&mut *other)
        .await
        .unwrap();
    let release = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        other.commit().await.unwrap();
    });
    let node = NodeScoring {
        chunk_id,
        rubric: Rubric::Coarse,
        model: "a model".into(),
        outcome: Ok(Vec::new()),
        calls: 1,
        prompt_tokens: 10,
        cached_tokens: 0,
        completion_tokens: 2,
    };
    let written = a.store().write_gain_node(&node, None).await;
    release.await.unwrap();
    written.expect("the node waits for the other write instead of failing");
    assert_eq!(scalar(&a, "SELECT COUNT(*) FROM gain_nodes").await, 1);
}

/// The runtime runs each kind of job in a lane of its own: a graph build,
/// minutes of model calls with the real model, does not hold up indexing a
/// folder added meanwhile, and stopping the background work puts the build
/// back in the queue to resume.
#[tokio::test(flavor = "multi_thread")]
async fn a_graph_build_in_the_background_does_not_hold_up_indexing() {
    let (data, docs) = (tempfile::tempdir().unwrap(), corpus(60));
    let library = Arc::new(open(data.path()).await);
    ingest(&library, docs.path()).await;
    let graph = library
        .jobs()
        .queue_graph_build(GraphBuildOptions {
            rubric: Rubric::Coarse,
            n: 2,
        })
        .await
        .unwrap();
    let graph_job = || async { library.jobs().get(graph).await.unwrap() };

    let background = Background::start(&library);
    eventually("the graph build scores its first chunk", || async {
        let job = graph_job().await;
        job.state == JobState::Running && job.done > 0
    })
    .await;

    let late = tempfile::tempdir().unwrap();
    std::fs::write(
        late.path().join("late.md"),
        "# Late\n\nAdded while the graph was being built: kumquats.\n",
    )
    .unwrap();
    library.add(&[late.path().to_path_buf()]).await.unwrap();
    eventually("the folder added meanwhile is searchable", || async {
        !library
            .retrieval()
            .search("kumquats", 3, SearchMode::Bm25, None)
            .await
            .unwrap()
            .is_empty()
    })
    .await;
    let job = graph_job().await;
    assert_eq!(job.state, JobState::Running, "{job:?}");
    assert!(job.done < job.total, "the build had finished: {job:?}");

    background.stop().await;
    let job = graph_job().await;
    assert_eq!(job.state, JobState::Queued, "{job:?}");
    assert!(job.done < job.total);
}

/// A pass of a job kind defined above the library: it waits until its
/// token fires (a pause, a cancel, a shutdown), or ends at once when told to.
#[derive(Debug)]
struct Waited {
    stopped: bool,
}

impl Pass for Waited {
    fn stopped(&self) -> bool {
        self.stopped
    }
}

async fn wait_for_stop(stop: CancellationToken) -> folio_engine::Result<Waited> {
    stop.cancelled().await;
    Ok(Waited { stopped: true })
}

/// The job the test's kind runs in the foreground, taken over by payload.
async fn run_sketch(
    library: &folio_engine::Library,
    payload: &serde_json::Value,
    finish: bool,
) -> folio_engine::Result<Waited> {
    let same = |job: &folio_engine::store::Job| job.payload == *payload;
    library
        .jobs()
        .run_in_foreground(
            "sketch",
            payload,
            same,
            &CancellationToken::new(),
            |_, stop| async move {
                if finish {
                    Ok(Waited { stopped: false })
                } else {
                    wait_for_stop(stop).await
                }
            },
        )
        .await
}

/// The pass ends once its token fires; a token nothing fires fails here
/// rather than hanging.
async fn stopped_pass(running: tokio::task::JoinHandle<folio_engine::Result<Waited>>) -> bool {
    tokio::time::timeout(std::time::Duration::from_secs(60), running)
        .await
        .expect("the pass did not stop")
        .unwrap()
        .unwrap()
        .stopped
}

async fn sketch_jobs(library: &folio_engine::Library) -> Vec<folio_engine::store::Job> {
    let mut jobs = library.jobs().list(50).await.unwrap();
    jobs.retain(|j| j.kind == "sketch");
    jobs
}

#[tokio::test(flavor = "multi_thread")]
async fn a_foreground_job_is_paused_taken_over_refused_while_live_and_cancelled() {
    let data = tempfile::tempdir().unwrap();
    let library = Arc::new(open(data.path()).await);
    let payload = serde_json::json!({ "out": "one" });

    // A pause stops the running pass through its token and parks the job.
    let running = tokio::spawn({
        let (library, payload) = (library.clone(), payload.clone());
        async move { run_sketch(&library, &payload, false).await }
    });
    eventually("the job runs", || async {
        sketch_jobs(&library).await.first().map(|j| j.state) == Some(JobState::Running)
    })
    .await;
    // While it runs here, starting it again is refused, naming the process.
    let refused = run_sketch(&library, &payload, true).await.unwrap_err();
    assert!(
        refused
            .to_string()
            .contains(&std::process::id().to_string()),
        "{refused}"
    );
    library.jobs().pause().await.unwrap();
    assert!(stopped_pass(running).await);
    let parked = sketch_jobs(&library).await;
    assert_eq!(parked.len(), 1);
    assert_eq!(parked[0].state, JobState::Paused);

    // Started again by hand, it takes the parked job over and finishes it.
    library.jobs().resume().await.unwrap();
    run_sketch(&library, &payload, true).await.unwrap();
    let done = sketch_jobs(&library).await;
    assert_eq!(done.len(), 1, "no second job for the same work");
    assert_eq!(done[0].state, JobState::Done);

    // Other work gets its own job; cancelling it stops the pass and the
    // job stays cancelled.
    let other = serde_json::json!({ "out": "two" });
    let running = tokio::spawn({
        let (library, other) = (library.clone(), other.clone());
        async move { run_sketch(&library, &other, false).await }
    });
    eventually("the second job runs", || async {
        sketch_jobs(&library).await.len() == 2
    })
    .await;
    let second = sketch_jobs(&library).await[0].id;
    library.jobs().cancel(second).await.unwrap();
    assert!(stopped_pass(running).await);
    let jobs = sketch_jobs(&library).await;
    assert_eq!(jobs[0].state, JobState::Cancelled);
    assert_eq!(jobs[1].state, JobState::Done);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_evaluation_job_whose_payload_is_unreadable_fails_saying_so() {
    let data = tempfile::tempdir().unwrap();
    let library = open(data.path()).await;
    let payload = serde_json::json!({ "dataset": 7 });
    let id = library
        .store()
        .create_job(EVAL_JOB, &payload, JobState::Queued)
        .await
        .unwrap();
    EvalJobs.run(&library, id, &CancellationToken::new()).await;
    let job = library.jobs().get(id).await.unwrap();
    assert_eq!(job.state, JobState::Failed);
    let error = job.error.unwrap();
    assert!(
        error.contains(&format!("evaluation job {id} is unreadable")),
        "{error}"
    );
}
