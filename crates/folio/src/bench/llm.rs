//! Benchmark `llm` (tokens per second): the embedded backend measured from
//! outside, through the [`Llm`] trait with streaming on, against llama.cpp's
//! own performance counters for the very same requests (same model, context,
//! threads, build). The ratio is therefore Folio's overhead alone — chat
//! template, tokenising, sampling, UTF-8 decoding, stop-string handling and
//! the hop between the worker thread and the async caller — not a comparison
//! of two inference engines.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::report::{Report, Row, Target};
use super::{cores, percentile};
use folio_engine::llm::{ChatMessage, ChatRequest, EmbeddedLlm, GenerateOptions, Llm, LlmSettings};

/// Folio may lose at most a tenth to llama.cpp: per token, its own work is
/// microseconds against milliseconds of decoding.
const TARGET_RATIO: f64 = 0.9;

/// A fixed passage, so every run evaluates the same prompt and the model has
/// something to talk about at length.
const PASSAGE: &str =
    "The lighthouse on the northern cape was built in 1854 from granite quarried \
on the island itself. Its keepers lived in two cottages at the foot of the tower and kept a log of \
every ship that passed, every storm and every repair. In 1911 the oil lamp was replaced by an \
acetylene burner, and in 1962 the station was electrified and the last keeper left. Today the \
tower is a museum: visitors climb 137 steps to the lantern room, where the original Fresnel lens \
still turns, and the keepers' logbooks are on display in the cottages below.";

/// One request's figures: Folio's as seen by the caller, llama.cpp's from
/// its counters.
struct Sample {
    prompt_tokens: u32,
    completion_tokens: u32,
    first_piece_s: f64,
    total_s: f64,
    llama_prompt_tokens: u32,
    llama_prompt_ms: f64,
    llama_generated_tokens: u32,
    llama_generation_ms: f64,
}

/// Prompt-evaluation and generation speed of the embedded model in
/// `settings`, each the median of several greedy runs, beside llama.cpp's
/// figure for the same runs. Folio's prompt time runs from the call to the
/// first streamed piece; its generation time from there to the answer.
pub(crate) async fn tokens_per_second(settings: &LlmSettings, quick: bool) -> Result<Report> {
    let llm = EmbeddedLlm::load(settings)
        .await
        .context("loading the embedded model")?;
    let (runs, max_tokens) = if quick { (3, 48) } else { (7, 128) };
    let messages = [
        ChatMessage::system("You are a helpful assistant. Answer at length."),
        ChatMessage::user(format!(
            "{}\n\nRetell the history of this lighthouse in your own words, with every date and detail.",
            [PASSAGE; 3].join("\n\n")
        )),
    ];
    let options = GenerateOptions {
        max_tokens,
        temperature: 0.0,
        timeout: Duration::from_secs(600),
        ..GenerateOptions::default()
    };
    eprintln!(
        "llm: {} — {runs} runs of up to {max_tokens} tokens, after one warm-up",
        llm.info().model
    );
    // First calls allocate buffers and fault in the weights.
    run_once(
        &llm,
        &messages,
        &GenerateOptions {
            max_tokens: 8,
            ..options.clone()
        },
    )
    .await?;
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        samples.push(run_once(&llm, &messages, &options).await?);
    }

    let median =
        |f: &dyn Fn(&Sample) -> f64| percentile(&samples.iter().map(f).collect::<Vec<_>>(), 50.0);
    let prompt = median(&|s| f64::from(s.prompt_tokens) / s.first_piece_s);
    let llama_prompt = median(&|s| f64::from(s.llama_prompt_tokens) / (s.llama_prompt_ms / 1e3));
    // The first token came with the prompt; the rest are what generation made.
    let generation =
        median(&|s| f64::from(s.completion_tokens - 1) / (s.total_s - s.first_piece_s));
    let llama_generation =
        median(&|s| f64::from(s.llama_generated_tokens) / (s.llama_generation_ms / 1e3));
    let overall = median(&|s| f64::from(s.prompt_tokens + s.completion_tokens) / s.total_s);
    let llama_overall = median(&|s| {
        f64::from(s.llama_prompt_tokens + s.llama_generated_tokens)
            / ((s.llama_prompt_ms + s.llama_generation_ms) / 1e3)
    });

    let info = llm.info();
    let threads = settings.threads.unwrap_or_else(|| cores() as u32);
    Ok(Report {
        name: "llm",
        title: format!("embedded LLM tokens/s, {} on {threads} threads", info.model),
        baseline: "llama.cpp's own perf counters (llama_perf_context) for the same requests".to_string(),
        rows: vec![
            Row::new("prompt evaluation", "tokens/s", prompt).baseline(llama_prompt).target(Target::RatioAtLeast(TARGET_RATIO)),
            Row::new("generation", "tokens/s", generation)
                .baseline(llama_generation)
                .target(Target::RatioAtLeast(TARGET_RATIO)),
            Row::new("end to end", "tokens/s", overall).baseline(llama_overall).target(Target::RatioAtLeast(TARGET_RATIO)),
        ],
        details: json!({
            "model": info.model,
            "context_size": info.context_size,
            "threads": threads,
            "gpu_layers": settings.gpu_layers,
            "runs": runs,
            "max_tokens": max_tokens,
            "samples": samples.iter().map(|s| json!({
                "prompt_tokens": s.prompt_tokens,
                "completion_tokens": s.completion_tokens,
                "first_piece_ms": s.first_piece_s * 1e3,
                "total_ms": s.total_s * 1e3,
                "llama_prompt_tokens": s.llama_prompt_tokens,
                "llama_prompt_ms": s.llama_prompt_ms,
                "llama_generated_tokens": s.llama_generated_tokens,
                "llama_generation_ms": s.llama_generation_ms,
            })).collect::<Vec<_>>(),
        }),
        notes: vec![
            format!("median (nearest rank) of {runs} greedy runs, streaming on, logprobs off; model load and one warm-up untimed"),
            "Folio's prompt time includes template, tokenising and the first token; llama.cpp's counts decoding only"
                .to_string(),
        ],
    })
}

async fn run_once(
    llm: &EmbeddedLlm,
    messages: &[ChatMessage],
    options: &GenerateOptions,
) -> Result<Sample> {
    let first_piece = Mutex::new(None);
    let start = Instant::now();
    let sink = |_: &str| {
        if let Ok(mut first) = first_piece.lock() {
            first.get_or_insert_with(|| start.elapsed());
        }
    };
    let cancel = CancellationToken::new();
    let request = ChatRequest {
        messages,
        options,
        on_token: Some(&sink),
        cancel: &cancel,
    };
    let answer = Llm::chat(llm, request).await.context("generating")?;
    let total = start.elapsed();
    let first_piece = first_piece.into_inner().ok().flatten();
    let timings = llm
        .last_timings()
        .context("llama.cpp reported no timings")?;
    let Some(first_piece) = first_piece.filter(|_| answer.usage.completion_tokens >= 2) else {
        bail!(
            "the model answered with fewer than two tokens, too few to time: {:?}",
            answer.text
        );
    };
    Ok(Sample {
        prompt_tokens: answer.usage.prompt_tokens,
        completion_tokens: answer.usage.completion_tokens,
        first_piece_s: first_piece.as_secs_f64(),
        total_s: total.as_secs_f64(),
        llama_prompt_tokens: timings.prompt_tokens,
        llama_prompt_ms: timings.prompt_ms,
        llama_generated_tokens: timings.generated_tokens,
        llama_generation_ms: timings.generation_ms,
    })
}
