//! Benchmark `embed-server`: chunks per second through Folio's embedder
//! from the configured `/v1/embeddings` server (`[embedding]` base_url and
//! model, or `FOLIO_EMBEDDING_BASE_URL` and `FOLIO_EMBEDDING_MODEL`), on
//! HotpotQA passages through the bulk path indexing uses, against two
//! baselines on the same texts: a raw HTTP client posting them to the same
//! server in the same batches and parallelism (bench/embed_server_baseline.py:
//! Folio's client overhead), and the embedded ONNX model (what the server
//! buys or costs here). The models differ, so this measures throughput, not
//! vector quality; the server runs wherever the configuration points, which
//! the report names.

use std::ffi::OsStr;
use std::io::BufRead;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use serde::Deserialize;
use serde_json::json;

use super::python::field;
use super::report::{Report, Row};
use super::{Context, TempDir};
use folio_engine::embed::{Embedder, EmbeddingSource};

#[derive(Deserialize)]
struct Passage {
    title: String,
    text: String,
}

pub fn run(ctx: &Context) -> Result<Report> {
    let server = ctx.config.embedding_server.clone();
    if server.model.trim().is_empty() {
        bail!("embed-server needs a server: set [embedding] base_url and model in folio.toml, or FOLIO_EMBEDDING_BASE_URL and FOLIO_EMBEDDING_MODEL");
    }
    let limit = if ctx.quick { 500 } else { 10_000 };
    let texts = passages(ctx, limit)?;
    eprintln!(
        "embed-server: {} HotpotQA passages, {} at {} ({} a request, {} in flight) against the embedded model",
        texts.len(),
        server.model,
        server.base_url,
        server.batch,
        server.parallel
    );
    let served = round(&EmbeddingSource::Server(server.clone()), &texts)?;
    let raw = raw_client(ctx, &server, served.batch, &texts)?;
    let embedded = round(
        &EmbeddingSource::Embedded(ctx.config.embedding_files()),
        &texts,
    )?;
    Ok(Report {
        name: "embed-server",
        title: format!(
            "embedding throughput from a server, {} HotpotQA passages",
            texts.len()
        ),
        baseline: "a raw HTTP client on the same server (bench/embed_server_baseline.py), and the embedded ONNX model (all-MiniLM-L6-v2 int8)".into(),
        rows: vec![
            Row::new("against a raw HTTP client", "chunks/s", served.rate)
                .baseline(field(&raw, "texts_per_s")?),
            Row::new("against the embedded model", "chunks/s", served.rate).baseline(embedded.rate),
        ],
        details: json!({
            "passages": texts.len(),
            "server": {"base_url": server.base_url, "model": server.model, "batch_configured": server.batch,
                       "batch_used": served.batch, "parallel": server.parallel, "dimensions": served.dim,
                       "note": served.note},
            "raw_client": raw,
            "embedded": {"chunks_per_s": embedded.rate, "dimensions": embedded.dim},
        }),
        notes: vec![
            "each side's model load and first request are untimed; the sides run one after another".into(),
            format!("texts per request as Folio sent them: {} ({})", served.batch,
                served.note.as_deref().unwrap_or("the server passed the batching check")),
            "different models on the server and embedded: that row compares throughput, not retrieval quality".into(),
        ],
    })
}

/// The first `limit` passages of HotpotQA's corpus as Folio embeds a passage
/// file: its title as the heading, then its text.
pub(super) fn passages(ctx: &Context, limit: usize) -> Result<Vec<String>> {
    let path = ctx.eval_dir.join("hotpotqa/corpus.jsonl");
    let file = std::fs::File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    std::io::BufReader::new(file)
        .lines()
        .take(limit)
        .map(|line| {
            let passage: Passage = serde_json::from_str(&line?)?;
            Ok(format!("{}\n\n{}", passage.title, passage.text))
        })
        .collect()
}

/// One side's bulk pass.
struct Round {
    rate: f64,
    dim: usize,
    /// Texts a request (servers): the setting, or 1 after a failed check.
    batch: usize,
    note: Option<String>,
}

/// Chunks per second of one bulk pass over `texts` through Folio's embedder.
fn round(source: &EmbeddingSource, texts: &[String]) -> Result<Round> {
    let embedder = Embedder::load(source).context("loading the embedding model")?;
    let start = Instant::now();
    let vectors = embedder.embed_bulk(texts)?;
    let rate = vectors.len() as f64 / start.elapsed().as_secs_f64();
    let batch = match (source, embedder.note()) {
        (EmbeddingSource::Server(_), Some(_)) => 1,
        (EmbeddingSource::Server(settings), None) => settings.batch as usize,
        (EmbeddingSource::Embedded(_), _) => folio_engine::embed::BATCH_SIZE,
    };
    Ok(Round {
        rate,
        dim: embedder.dim(),
        batch,
        note: embedder.note().map(str::to_string),
    })
}

/// The raw client's answer for the same texts, batches and parallelism.
fn raw_client(
    ctx: &Context,
    server: &folio_engine::embed::ServerSettings,
    batch: usize,
    texts: &[String],
) -> Result<serde_json::Value> {
    let dir = TempDir::new("embed-server")?;
    let input = dir.path().join("input.json");
    let job = json!({
        "texts": texts,
        "endpoint": format!("{}/embeddings", server.base_url.trim_end_matches('/')),
        "model": server.model,
        "batch": batch,
        "parallel": server.parallel,
    });
    std::fs::write(&input, serde_json::to_vec(&job)?)
        .with_context(|| format!("writing {}", input.display()))?;
    ctx.python()?
        .run_json("embed_server_baseline.py", &[OsStr::new(&input)])
}
