//! Benchmark `llm` (second half): Folio's per-question overhead outside the
//! model for vanilla-rag. Each rust-book dev question is asked through
//! `Library::ask`, exactly as `folio ask` does (retrieval, prompt building,
//! streaming events, storing the run); the baseline is the model's own wall
//! time inside the same question, so the ratio is the overhead's share of
//! the question's wall time.

use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use serde_json::json;

use super::report::{Report, Row, Target};
use super::{percentile, Context, TempDir};
use folio_engine::config::Config;
use folio_engine::library::Library;
use folio_engine::methods::runner::AskRequest;
use folio_engine::methods::EventSink;
use folio_engine::store::RunStatus;

const TARGET_SHARE: f64 = 0.05;

struct Question {
    wall_ms: f64,
    llm_ms: f64,
    retrieval_ms: f64,
}

pub(crate) async fn run(ctx: &Context) -> Result<Report> {
    let questions = dev_questions(ctx)?;
    let questions = &questions[..if ctx.quick { 3 } else { questions.len() }];
    let dir = TempDir::new("llm-overhead")?;
    let library = rust_book_library(ctx, &dir, "the overhead questions").await?;
    library.retrieval().warm_vectors().await?;

    let cancel = tokio_util::sync::CancellationToken::new();
    let sink = EventSink::default();
    // The first question loads the models and warms caches; it is not counted.
    library
        .ask(
            &AskRequest::new(&questions[0], "vanilla-rag"),
            &sink,
            &cancel,
        )
        .await?;
    let mut measured = Vec::new();
    for question in questions {
        let started = Instant::now();
        let run = library
            .ask(&AskRequest::new(question, "vanilla-rag"), &sink, &cancel)
            .await?;
        let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
        // A cut-off answer still spent its full model time; only a failure
        // to reach the model would make the split meaningless.
        if run.status != RunStatus::Done && run.llm_calls == 0 {
            bail!(
                "run {} failed before the model answered: {:?}",
                run.id,
                run.error
            );
        }
        let ms = |key: &str| run.timings.get(key).and_then(|v| v.as_f64()).unwrap_or(0.0);
        measured.push(Question {
            wall_ms,
            llm_ms: ms("llm_ms"),
            retrieval_ms: ms("retrieval_ms"),
        });
    }

    let overhead: Vec<f64> = measured.iter().map(|q| q.wall_ms - q.llm_ms).collect();
    let share: Vec<f64> = measured
        .iter()
        .map(|q| (q.wall_ms - q.llm_ms) / q.wall_ms)
        .collect();
    let walls: Vec<f64> = measured.iter().map(|q| q.wall_ms).collect();
    let retrieval: Vec<f64> = measured.iter().map(|q| q.retrieval_ms).collect();
    let worst = share.iter().copied().fold(0.0, f64::max);
    let percent = |x: f64| x * 100.0;
    let rows = vec![
        Row::new(
            "overhead share of wall time, p50",
            "%",
            percent(percentile(&share, 50.0)),
        )
        .target(Target::AtMost(percent(TARGET_SHARE))),
        Row::new(
            "overhead share of wall time, worst question",
            "%",
            percent(worst),
        )
        .target(Target::AtMost(percent(TARGET_SHARE))),
        Row::new(
            "overhead per question, p50",
            "ms",
            percentile(&overhead, 50.0),
        ),
        Row::new(
            "retrieval per question, p50 (in the overhead)",
            "ms",
            percentile(&retrieval, 50.0),
        ),
        Row::new(
            "wall time per question, p50",
            "ms",
            percentile(&walls, 50.0),
        ),
    ];
    Ok(Report {
        name: "llm-overhead",
        title: "vanilla-rag: Folio's time outside the model per question".into(),
        baseline: "the question's own wall time (overhead = wall − model time)".into(),
        rows,
        details: json!({
            "questions": measured.len(),
            "model": ctx.config.llm.model,
            "backend": ctx.config.llm.backend,
            "per_question": measured.iter().map(|q| json!({ "wall_ms": q.wall_ms, "llm_ms": q.llm_ms, "retrieval_ms": q.retrieval_ms })).collect::<Vec<_>>(),
        }),
        notes: vec!["overhead includes query embedding, hybrid search, prompt rendering, event streaming and storing the run".into()],
    })
}

/// A library of its own in `dir` with the rust-book indexed, for `what`.
pub(super) async fn rust_book_library(ctx: &Context, dir: &TempDir, what: &str) -> Result<Library> {
    let config = Config {
        data_dir: dir.path().join("data"),
        ..ctx.config.clone()
    };
    let library = Library::open(config).await?;
    eprintln!("llm: indexing the rust-book for {what}");
    let job = library.add(&[ctx.rust_book()]).await?;
    library.jobs().run(job).await?;
    Ok(library)
}

pub(super) fn dev_questions(ctx: &Context) -> Result<Vec<String>> {
    let path = ctx.eval_dir.join("rust-book/dev.jsonl");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let questions: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).with_context(|| format!("a line of {}", path.display()))?;
            v["question"]
                .as_str()
                .map(str::to_string)
                .with_context(|| format!("a line of {} has no question", path.display()))
        })
        .collect::<Result<_>>()?;
    if questions.is_empty() {
        bail!("{} has no questions", path.display());
    }
    Ok(questions)
}
