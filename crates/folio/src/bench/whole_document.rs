//! Benchmark `llm` (third part): what a whole-document answer costs, and
//! what keeping its section summaries saves. One long rust-book chapter is
//! indexed alone and asked two questions with the configured model; the
//! first writes every section summary, the second finds them kept. The
//! second's model calls and tokens are reported against the first's (the
//! issue's target: at most 20%). An edit to one paragraph is then asked
//! about a third time, to show it re-summarises only its section and the
//! sections above it.

use anyhow::{bail, Context as _, Result};
use serde_json::json;

use super::report::{Report, Row, Target};
use super::{Context, TempDir};
use folio_engine::config::Config;
use folio_engine::library::Library;
use folio_engine::methods::runner::AskRequest;
use folio_engine::methods::EventSink;
use folio_engine::store::{RunRecord, RunStatus, Scope};

const CHAPTER: &str = "ch08-02-strings.md";
const QUESTIONS: [&str; 3] = [
    "Why can't you index into a String in Rust?",
    "Which macro concatenates several strings without taking ownership?",
    "How do you iterate over the characters of a string?",
];
const TARGET_RATIO: f64 = 0.2;

pub(crate) async fn run(ctx: &Context) -> Result<Report> {
    let dir = TempDir::new("whole-document")?;
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs)?;
    let chapter = docs.join(CHAPTER);
    let text = std::fs::read_to_string(ctx.rust_book().join(CHAPTER))
        .with_context(|| format!("reading {CHAPTER} from the rust-book"))?;
    std::fs::write(&chapter, &text)?;
    let config = Config {
        data_dir: dir.path().join("data"),
        ..ctx.config.clone()
    };
    let library = Library::open(config).await?;
    let job = library.add(&[docs.clone()]).await?;
    library.jobs().run(job).await?;

    let ask = |question: &'static str| {
        let library = &library;
        let chapter = &chapter;
        async move {
            let mut request = AskRequest::new(question, "whole-document");
            request.temperature = Some(0.0);
            request.scope = Scope {
                paths: vec![Library::place(chapter)],
                ..Scope::default()
            };
            eprintln!("whole-document: {question}");
            let run = library
                .ask(&request, &EventSink::default(), &Default::default())
                .await?;
            if run.status != RunStatus::Done {
                bail!("the whole-document answer failed: {:?}", run.error);
            }
            anyhow::Ok(run)
        }
    };
    let first = ask(QUESTIONS[0]).await?;
    let second = ask(QUESTIONS[1]).await?;
    // One paragraph edited: its section and those above it are summarised again.
    let edited = text.replacen("Indexing into a string", "Indexing into a Rust string", 1);
    if edited == text {
        bail!("{CHAPTER} no longer has the paragraph the benchmark edits");
    }
    std::fs::write(&chapter, edited)?;
    library.jobs().reconcile_all().await?;
    let third = ask(QUESTIONS[2]).await?;

    let tokens = |run: &RunRecord| (run.prompt_tokens + run.completion_tokens) as f64;
    let sections = |run: &RunRecord| {
        run.trace
            .as_ref()
            .and_then(|t| t["sections"].as_array())
            .map_or(0, Vec::len)
    };
    let rows = vec![
        Row::new(
            "model calls, second question",
            "calls",
            second.llm_calls as f64,
        )
        .baseline(first.llm_calls as f64)
        .target(Target::RatioAtMost(TARGET_RATIO)),
        Row::new("tokens, second question", "tokens", tokens(&second))
            .baseline(tokens(&first))
            .target(Target::RatioAtMost(TARGET_RATIO)),
        Row::new(
            "model calls after editing one paragraph",
            "calls",
            third.llm_calls as f64,
        )
        .baseline(first.llm_calls as f64),
    ];
    let summary = |run: &RunRecord| {
        json!({
            "run": run.id,
            "llm_calls": run.llm_calls,
            "prompt_tokens": run.prompt_tokens,
            "completion_tokens": run.completion_tokens,
            "timings": run.timings,
        })
    };
    Ok(Report {
        name: "whole-document",
        title: format!("whole-document answers over {CHAPTER} ({} sections)", sections(&first)),
        baseline: "the first question about the chapter, which writes every section summary".into(),
        rows,
        details: json!({
            "chapter": CHAPTER,
            "questions": QUESTIONS,
            "first": summary(&first),
            "second": summary(&second),
            "after_edit": summary(&third),
        }),
        notes: vec![
            "each question goes through Library::ask with the configured model at temperature 0".into(),
            "the edit changes one paragraph's wording; the third question re-summarises its section and the sections above it, and reuses the rest".into(),
        ],
    })
}
