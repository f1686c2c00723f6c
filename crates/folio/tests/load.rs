//! Load, in one process as in the app: questions in flight at once while
//! passages ingest and the information-gain graph builds with the same
//! model. Nothing deadlocks (everything finishes within the time
//! limit); no question times out waiting behind background work; the async
//! executor, which carries the window's event stream, never stalls (a probe
//! task's timer fires on time) and ingestion keeps reporting progress while
//! the model is busy; the store stays consistent and memory stays bounded.
//! Throughput and latency are printed, not asserted.
//!
//! Full size (`FOLIO_SOAK=full`, scripts/soak.sh): ten questions beside
//! 8,000 passages. CI size: three questions beside 1,000 passages, about
//! as long to ingest as the three answers take, so the questions still wait on
//! the model next to ingestion and graph scoring; every check is the same.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::engine::{assert_consistent, ingest, open, rust_book, write_hotpotqa_passages_from};
use common::soak::Soak;
use folio_engine::events::EngineEvent;
use folio_engine::graph::{GraphBuildOptions, Rubric};
use folio_engine::methods::runner::AskRequest;
use folio_engine::methods::EventSink;
use folio_engine::store::RunStatus;
use tokio_util::sync::CancellationToken;

/// How much load there is.
struct Size {
    /// Passages ingested while the questions are asked.
    passages: usize,
    /// Questions asked at once: the first ones of `QUESTIONS`.
    questions: usize,
}

const CI: Size = Size {
    passages: 1_000,
    questions: 3,
};
const FULL: Size = Size {
    passages: 8_000,
    questions: 10,
};
const QUESTIONS: [&str; 10] = [
    "How do I declare a mutable variable?",
    "What is shadowing?",
    "Which integer type does Rust use by default?",
    "How many bytes is a char?",
    "What does a tuple hold?",
    "How do I write a function that returns a value?",
    "What is the difference between a statement and an expression?",
    "How does an if expression work?",
    "Which loops does Rust have?",
    "How are comments written?",
];

/// All of it must be over by then; past it, something waits forever. The
/// same at both sizes: it is far above either's running time, and a
/// deadlock never ends.
const DEADLOCK_LIMIT: Duration = Duration::from_secs(30 * 60);
/// The longest the ingestion job may go without a progress event while the
/// model answers and scores next to it: a batch of chunks is embedded
/// between two events, at any size of the corpus.
const EVENT_SILENCE_LIMIT: Duration = Duration::from_secs(30);
/// How often the probe task asks to be woken, and how late a wake-up may
/// come: later means the executor's threads were held by blocking work,
/// which a smaller load does not make shorter.
const PROBE_PERIOD: Duration = Duration::from_millis(100);
const PROBE_LATENESS_LIMIT: Duration = Duration::from_secs(2);
/// Peak RSS of the whole process: the embedding model, the LLM, the
/// vectors of 8,000 passages and ten runs' worth of prompts. The same at
/// both sizes: the models take most of it (874 MiB in all at full size),
/// 8,000 vectors are 12 MiB, and a leak per passage or per question would
/// have to be large to show at either size.
const PEAK_RSS_LIMIT_MIB: u64 = 3 * 1024;

fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        / 1024
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::test(flavor = "multi_thread")]
async fn questions_while_passages_ingest_and_the_graph_builds() {
    let soak = Soak::from_env();
    let Size {
        passages,
        questions,
    } = soak.pick(CI, FULL);
    let root = tempfile::tempdir().unwrap();
    let (seed, big) = (root.path().join("book"), root.path().join("passages"));
    std::fs::create_dir(&seed).unwrap();
    std::fs::create_dir(&big).unwrap();
    for entry in std::fs::read_dir(rust_book()).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("ch03-")
        {
            std::fs::copy(&path, seed.join(path.file_name().unwrap())).unwrap();
        }
    }
    write_hotpotqa_passages_from(&soak.hotpotqa(), &big, passages);
    let library = Arc::new(open(&root.path().join("data")).await);
    ingest(&library, &seed).await;

    let progress_at: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let mut events = library.subscribe();
    let recorder = {
        let progress_at = progress_at.clone();
        tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(EngineEvent::JobProgress(_)) => {
                        progress_at.lock().unwrap().push(Instant::now())
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
        })
    };

    let lateness: Arc<Mutex<Duration>> = Arc::default();
    let probe = {
        let lateness = lateness.clone();
        tokio::spawn(async move {
            loop {
                let due = Instant::now() + PROBE_PERIOD;
                tokio::time::sleep(PROBE_PERIOD).await;
                let late = Instant::now().saturating_duration_since(due);
                let mut worst = lateness.lock().unwrap();
                *worst = (*worst).max(late);
            }
        })
    };

    let started = Instant::now();
    let job = library.add(&[big.clone()]).await.unwrap();
    let ingesting = {
        let library = library.clone();
        tokio::spawn(async move {
            let summary = library.jobs().run(job).await.unwrap().unwrap();
            (summary, started.elapsed())
        })
    };
    let stop_graph = CancellationToken::new();
    let graph_job = library
        .jobs()
        .queue_graph_build(GraphBuildOptions {
            rubric: Rubric::Coarse,
            n: 2,
        })
        .await
        .unwrap();
    let graphing = {
        let (library, stop) = (library.clone(), stop_graph.clone());
        tokio::spawn(async move { library.jobs().run_graph(graph_job, &stop, &|_| {}).await })
    };
    let asking: Vec<_> = QUESTIONS[..questions]
        .iter()
        .map(|question| {
            let library = library.clone();
            let request = AskRequest {
                k: Some(3),
                temperature: Some(0.0),
                max_tokens: Some(128),
                ..AskRequest::new(*question, "vanilla-rag")
            };
            tokio::spawn(async move {
                let asked = Instant::now();
                let run = library
                    .ask(&request, &EventSink::default(), &CancellationToken::new())
                    .await
                    .unwrap();
                (run, asked.elapsed())
            })
        })
        .collect();

    let finished = tokio::time::timeout(DEADLOCK_LIMIT, async {
        let mut answered = Vec::new();
        for task in asking {
            answered.push(task.await.unwrap());
        }
        let questions_done = started.elapsed();
        let ingested = ingesting.await.unwrap();
        (answered, questions_done, ingested)
    })
    .await;
    let (answered, questions_done, (summary, ingest_time)) = finished
        .expect("questions, ingestion and the graph did not all finish: a deadlock or starvation");
    stop_graph.cancel();
    let graph = graphing.await.unwrap().unwrap();
    recorder.abort();
    probe.abort();
    let lateness = *lateness.lock().unwrap();

    let mut latencies: Vec<Duration> = answered.iter().map(|(_, d)| *d).collect();
    latencies.sort();
    let progress = progress_at.lock().unwrap().clone();
    let ingest_end = started + ingest_time;
    let longest_silence = progress
        .windows(2)
        .filter(|w| w[1] <= ingest_end)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap_or_default();
    let scored = graph.map(|p| p.progress.done).unwrap_or_default();
    eprintln!(
        "load: {} passages in {ingest_time:.0?} ({:.0} per second) beside {} questions \
         (all answered after {questions_done:.0?}; latency p50 {:.1?}, p95 {:.1?}, max {:.1?}) \
         and {scored} chunks scored for the graph; {} progress events, longest silence \
         {longest_silence:.1?}; executor probe at most {lateness:.1?} late; peak RSS {} MiB",
        summary.indexed,
        summary.indexed as f64 / ingest_time.as_secs_f64(),
        questions,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.95),
        latencies.last().unwrap(),
        progress.len(),
        peak_rss_mib(),
    );

    assert_eq!(summary.indexed as usize, passages, "{summary:?}");
    for (run, took) in &answered {
        eprintln!(
            "  {took:>6.1?} {:?} {:?}: {}",
            run.status,
            run.question,
            run.error.as_deref().unwrap_or("answered")
        );
    }
    // The tiny model may run past the token limit: an answer that ended
    // with a recorded error. Anything else (a timeout above all) means a
    // question was left waiting.
    for (run, _) in &answered {
        let cut_off = run
            .error
            .as_deref()
            .is_some_and(|e| e.contains("was cut off at"));
        assert!(
            run.status == RunStatus::Done || (run.status == RunStatus::Failed && cut_off),
            "{:?} ended {:?}: {:?}",
            run.question,
            run.status,
            run.error
        );
    }
    assert!(
        lateness < PROBE_LATENESS_LIMIT,
        "a task on the executor was woken {lateness:?} late"
    );
    assert!(
        longest_silence < EVENT_SILENCE_LIMIT,
        "ingestion went {longest_silence:?} without a progress event"
    );
    assert!(
        peak_rss_mib() < PEAK_RSS_LIMIT_MIB,
        "peak RSS {} MiB",
        peak_rss_mib()
    );
    assert_consistent(&library).await;
}
