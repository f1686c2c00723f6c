//! Benchmark `embed`: Folio's embedding pipeline (fastembed over ONNX
//! Runtime) against a raw ONNX Runtime session doing the same work in Python
//! (bench/embed_baseline.py), on the rust-book's real chunk inputs. Both see
//! the texts in Folio's length-sorted order and batch size, so padding is
//! identical and the ratio is pure pipeline overhead; the vectors are
//! compared too, so a fast but different pipeline cannot pass.

use std::ffi::OsStr;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use serde_json::json;

use super::python::{field, ORT_VERSION};
use super::report::{Report, Row, Target};
use super::{cores, rust_book_embedding_inputs, Context, TempDir};
use folio_engine::embed::{Embedder, EmbeddingModelFiles, EmbeddingSource, BATCH_SIZE};

/// The tokenizer window Folio's embedder is configured with (embed/mod.rs).
const MAX_LENGTH: usize = 256;
const TARGET_RATIO: f64 = 0.9;

pub fn run(ctx: &Context) -> Result<Report> {
    let python = ctx.python()?;
    let limit = if ctx.quick { 200 } else { 1000 };
    let mut texts = rust_book_embedding_inputs(ctx)?;
    texts.truncate(limit);
    // The order `Embedder::embed` runs them in (a stable sort by byte
    // length); handing both sides this order makes their batches equal.
    texts.sort_by_key(String::len);
    let threads = cores();
    eprintln!(
        "embed: {} chunk inputs of the rust-book, batches of {BATCH_SIZE}, {threads} threads",
        texts.len()
    );

    let files = ctx.config.embedding_files();
    let dir = TempDir::new("embed")?;
    let input = dir.path().join("input.json");
    let vectors_path = dir.path().join("vectors.f32");
    let job = json!({
        "texts": texts,
        "model_dir": files.model_dir,
        "batch_size": BATCH_SIZE,
        "threads": threads,
        "max_length": MAX_LENGTH,
    });
    std::fs::write(&input, serde_json::to_vec(&job)?)
        .with_context(|| format!("writing {}", input.display()))?;

    // Alternating rounds, best of each side: on a shared machine a slow
    // minute would otherwise land on one side only.
    let rounds = if ctx.quick { 1 } else { 2 };
    let mut folio_rates = Vec::new();
    let mut raw_rates = Vec::new();
    let mut answers = Vec::new();
    let mut folio_vectors = Vec::new();
    for _ in 0..rounds {
        let (rate, vectors) = folio_round(&files, &texts)?;
        folio_rates.push(rate);
        folio_vectors = vectors;
        let answer = python.run_json(
            "embed_baseline.py",
            &[input.as_os_str(), OsStr::new(&vectors_path)],
        )?;
        raw_rates.push(field(&answer, "texts_per_s")?);
        answers.push(answer);
    }
    let folio_rate = folio_rates.iter().copied().fold(0.0, f64::max);
    let raw_rate = raw_rates.iter().copied().fold(0.0, f64::max);
    let raw_vectors = read_f32(&vectors_path)?;

    let dim = folio_vectors.first().map(Vec::len).unwrap_or(0);
    if raw_vectors.len() != texts.len() * dim {
        bail!(
            "the baseline returned {} floats, expected {} × {dim}",
            raw_vectors.len(),
            texts.len()
        );
    }
    let max_abs_diff = folio_vectors
        .iter()
        .flatten()
        .zip(&raw_vectors)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);

    Ok(Report {
        name: "embed",
        title: format!("embedding throughput, {} rust-book chunks", texts.len()),
        baseline: format!("raw ONNX Runtime {ORT_VERSION} session in Python, same tokenizer, batches, threads and pooling"),
        rows: vec![
            Row::new("throughput", "texts/s", folio_rate).baseline(raw_rate).target(Target::RatioAtLeast(TARGET_RATIO)),
        ],
        details: json!({
            "texts": texts.len(),
            "batch_size": BATCH_SIZE,
            "threads": threads,
            "max_length": MAX_LENGTH,
            "rounds": rounds,
            "folio_texts_per_s": folio_rates,
            "baseline_texts_per_s": raw_rates,
            "baseline": answers,
            "max_abs_diff": max_abs_diff,
        }),
        notes: vec![
            format!("best of {rounds} alternating round(s) per side; each side's model load is untimed"),
            format!("same vectors: max |folio − raw| = {max_abs_diff:.2e} over {} values", raw_vectors.len()),
        ],
    })
}

/// One timed pass of Folio's embedder over `texts`, after an untimed batch
/// (first runs allocate); texts per second and the vectors.
fn folio_round(files: &EmbeddingModelFiles, texts: &[String]) -> Result<(f64, Vec<Vec<f32>>)> {
    let embedder = Embedder::load(&EmbeddingSource::Embedded(files.clone()))
        .context("loading the embedding model")?;
    embedder.embed(&texts[..BATCH_SIZE.min(texts.len())])?;
    let start = Instant::now();
    let vectors = embedder.embed(texts)?;
    let rate = texts.len() as f64 / start.elapsed().as_secs_f64();
    // Dropped before the baseline runs, so their thread pools never compete.
    drop(embedder);
    Ok((rate, vectors))
}

fn read_f32(path: &std::path::Path) -> Result<Vec<f32>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}
