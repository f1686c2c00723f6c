//! Benchmark `scale` (issue 29): a library of a million chunks on one
//! machine, served from its approximate index, beside faiss.
//!
//! How the library is made, exactly:
//! - **Base passages** (50,000; 10,000 with `--quick`): windows of 40 to 120
//!   words at seeded random places in the HotpotQA corpus's passage texts,
//!   embedded with the configured model (the kit's MiniLM). Their vectors are
//!   cached under `target/bench-scale/`, named by the model and a hash of the
//!   texts, so only the first run pays for embedding them.
//! - **Copies** beyond the base: chunk `i` copies base passage
//!   `i mod base`, with a tenth of its words replaced by random corpus words
//!   (so BM25 has varied postings), and its vector moved by Gaussian noise of
//!   σ = 0.025 a component, normalised again (cosine ≈ 0.9 to its base).
//! - Ten chunks a document, documents spread over 100 folders (the scope
//!   units), written with `Store::write_documents` as indexing writes them,
//!   vectors precomputed: the ingest row is the stored side alone.
//!
//! Then the approximate index is built as a long-lived process builds it
//! (`RetrievalService::warm_vectors`), and two kinds of fresh `folio` processes are
//! measured: a one-shot `folio search` (start to first result, peak RSS), and
//! a serving process that opens the library as the app does, loads both
//! embedded models, and times 200 queries (the HotpotQA dev questions,
//! embedded by the same model): dense, hybrid and scoped top-10
//! (`scale_serve.rs`). `bench/scale_baseline.py` computes the exact top-10
//! (L2 over the stored rows, as Folio's exact scan ranks), builds and
//! searches faiss's HNSW with the same M, efConstruction, efSearch and
//! thread count, and scores both sides' recall.

use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::embed_server::passages;
use super::hotpotqa_recall::dev_questions;
use super::process::{run_measured, this_program};
use super::python::field;
use super::report::{Report, Row, Target};
use super::search::{flat_document, folder, write_f32, CHUNKS_PER_DOC, DOCS_PER_COMMIT, FOLDERS};
use super::{cores, files_bytes, Context, Rng, TempDir};
use folio_engine::config::Config;
use folio_engine::embed::Embedder;
use folio_engine::events::EngineEvent;
use folio_engine::retrieve::{
    CopyStatus, RetrievalService, CONNECTIVITY, EXPANSION_ADD, EXPANSION_SEARCH,
};
use folio_engine::store::{quantize, Store};

const CHUNKS: usize = 1_000_000;
/// Above the approximate threshold, so `--quick` measures the same index.
const QUICK_CHUNKS: usize = 250_000;
const BASE: usize = 50_000;
const QUICK_BASE: usize = 10_000;
const PASSAGE_WORDS: std::ops::RangeInclusive<usize> = 40..=120;
/// Share of a copy's words replaced by random corpus words.
const REWORDED: f64 = 0.1;
/// Standard deviation of the noise added to each component of a copy's vector.
const NOISE: f64 = 0.025;
pub(super) const K: usize = 10;
/// Scopes measured, in percent of the folders (and so of the chunks).
pub(super) const SCOPES: [usize; 2] = [1, 10];
/// One-shot searches run; the median counts.
const ONE_SHOTS: usize = 3;
const TARGET_FAISS_RATIO: f64 = 1.5;
const TARGET_RECALL: f64 = 0.95;
const TARGET_HYBRID_MS: f64 = 60.0;
const TARGET_RSS_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;
const TARGET_FIRST_RESULT_MS: f64 = 2000.0;
/// The database may hold this much per byte of chunk text…
const TARGET_DB_PER_TEXT_BYTE: f64 = 2.5;
/// …plus this much per vector.
const TARGET_DB_PER_VECTOR: f64 = 400.0;

/// A query as the serving process reads it.
#[derive(Serialize, Deserialize)]
pub(super) struct Query {
    pub text: String,
    pub vector: Vec<f32>,
}

pub async fn run(ctx: &Context, chunks: Option<usize>) -> Result<Report> {
    let python = ctx.python()?;
    let total = chunks.unwrap_or(if ctx.quick { QUICK_CHUNKS } else { CHUNKS });
    let base_len = total.min(if ctx.quick { QUICK_BASE } else { BASE });
    let words = corpus_words(ctx)?;
    let questions: Vec<String> = dev_questions(ctx)?
        .into_iter()
        .map(|q| q.question)
        .collect();
    let embedder =
        Embedder::load(&ctx.config.embedding_source()).context("loading the embedding model")?;
    let base = base_passages(&words, base_len, &embedder)?;
    let query_vectors = embedder.embed(&questions)?;
    let queries: Vec<Query> = questions
        .into_iter()
        .zip(query_vectors)
        .map(|(text, vector)| Query { text, vector })
        .collect();

    let dir = TempDir::new("scale")?;
    let mut config = ctx.config.clone();
    config.data_dir = dir.path().join("library");
    std::fs::create_dir_all(&config.data_dir)?;
    let rows_path = dir.path().join("vectors.i8");
    let ingest = write_library(&config, &embedder, &base, &words, total, &rows_path).await?;
    drop(embedder);
    let build = build_index(&config, total).await?;
    let one_shot = one_shot_searches(&config, &queries)?;
    let served = serve(&config, dir.path(), &queries)?;
    let rows_of = |ids: &[Vec<i64>]| -> Vec<Vec<i64>> {
        ids.iter()
            .map(|q| q.iter().map(|id| id - ingest.first_id).collect())
            .collect()
    };
    let folio_answers = json!({
        "dense": rows_of(&served.dense.ids),
        "scoped": served
            .scoped
            .iter()
            .map(|s| (s.percent.to_string(), json!(rows_of(&s.dense.ids))))
            .collect::<serde_json::Map<_, _>>(),
    });
    let answers_path = dir.path().join("folio-answers.json");
    std::fs::write(&answers_path, serde_json::to_vec(&folio_answers)?)?;
    let queries_path = dir.path().join("queries.f32");
    write_f32(&queries_path, queries.iter().map(|q| q.vector.as_slice()))?;
    eprintln!("scale: exact answers and faiss's HNSW over {total} vectors");
    let arg = |n: usize| n.to_string();
    let baseline = python.run_json(
        "scale_baseline.py",
        &[
            rows_path.as_os_str(),
            queries_path.as_os_str(),
            answers_path.as_os_str(),
            arg(ingest.dim).as_ref(),
            (1.0 / folio_engine::store::quantize::scale(ingest.dim))
                .to_string()
                .as_ref(),
            arg(K).as_ref(),
            arg(CONNECTIVITY).as_ref(),
            arg(EXPANSION_ADD).as_ref(),
            arg(EXPANSION_SEARCH).as_ref(),
            arg(cores()).as_ref(),
            arg(CHUNKS_PER_DOC).as_ref(),
            arg(FOLDERS).as_ref(),
        ],
    )?;
    report(
        total, base_len, &ingest, &build, &one_shot, &served, &baseline,
    )
}

/// The words of the HotpotQA corpus's passage texts, in file order.
fn corpus_words(ctx: &Context) -> Result<Vec<String>> {
    let words: Vec<String> = passages(ctx, usize::MAX)?
        .iter()
        .flat_map(|p| {
            let text = p.split_once("\n\n").map_or(p.as_str(), |(_, text)| text);
            text.split_whitespace().map(str::to_string)
        })
        .collect();
    if words.len() < 2 * PASSAGE_WORDS.end() {
        bail!("the HotpotQA corpus has too little text to cut passages from");
    }
    Ok(words)
}

/// The base passages with their model vectors.
struct Base {
    texts: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

/// `n` passages cut from `words` (seeded), embedded by `embedder`, or read
/// from the cache a run before left.
fn base_passages(words: &[String], n: usize, embedder: &Embedder) -> Result<Base> {
    let mut rng = Rng::new(0x5ca1e);
    let texts: Vec<String> = (0..n)
        .map(|_| {
            let len =
                PASSAGE_WORDS.start() + rng.below(PASSAGE_WORDS.end() - PASSAGE_WORDS.start() + 1);
            let start = rng.below(words.len() - len);
            words[start..start + len].join(" ")
        })
        .collect();
    let dim = embedder.dim();
    let cache = folio_engine::config::checkout()
        .join("target/bench-scale")
        .join(format!(
            "base-{}-{n}-{:016x}.f32",
            embedder
                .name()
                .replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
            fingerprint(&texts)
        ));
    if let Ok(bytes) = std::fs::read(&cache) {
        if bytes.len() == n * dim * 4 {
            eprintln!("scale: base vectors from {}", cache.display());
            let vectors = bytes
                .chunks_exact(dim * 4)
                .map(|row| {
                    row.chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect()
                })
                .collect();
            return Ok(Base { texts, vectors });
        }
    }
    let started = Instant::now();
    let mut vectors = Vec::with_capacity(n);
    for batch in texts.chunks(1000) {
        vectors.extend(embedder.embed_bulk(batch)?);
        eprintln!(
            "scale: embedded {} of {n} base passages ({:.0} s)",
            vectors.len(),
            started.elapsed().as_secs_f64()
        );
    }
    std::fs::create_dir_all(cache.parent().unwrap_or(Path::new(".")))?;
    let partial = cache.with_extension("partial");
    write_f32(&partial, vectors.iter().map(Vec::as_slice))?;
    std::fs::rename(&partial, &cache).with_context(|| format!("saving {}", cache.display()))?;
    Ok(Base { texts, vectors })
}

/// FNV-1a over the texts: names the cache after exactly what was embedded.
fn fingerprint(texts: &[String]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in texts.iter().flat_map(|t| t.bytes().chain([0])) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// What writing the library measured.
struct Ingest {
    dim: usize,
    first_id: i64,
    text_bytes: u64,
    write_seconds: f64,
    db_bytes: u64,
}

/// Writes `total` chunks (the base passages, then their copies) and the
/// int8 rows the store holds, in chunk order, to `rows_path`.
async fn write_library(
    config: &Config,
    embedder: &Embedder,
    base: &Base,
    words: &[String],
    total: usize,
    rows_path: &Path,
) -> Result<Ingest> {
    let store = Store::open(&config.database_path()).await?;
    let (space, _) = store
        .ensure_vector_space(embedder.name(), embedder.dim())
        .await?;
    let folder_id = store.add_folder("/folio-bench/synthetic").await?;
    let mut rows = BufWriter::new(
        std::fs::File::create(rows_path)
            .with_context(|| format!("creating {}", rows_path.display()))?,
    );
    let mut rng = Rng::new(total as u64);
    let (mut text_bytes, mut write_seconds) = (0u64, 0.0);
    let mut batch = Vec::with_capacity(DOCS_PER_COMMIT);
    let documents = total.div_ceil(CHUNKS_PER_DOC);
    for doc in 0..documents {
        let parts = (doc * CHUNKS_PER_DOC..total.min((doc + 1) * CHUNKS_PER_DOC))
            .map(|i| {
                let b = i % base.texts.len();
                let (text, vector) = if i < base.texts.len() {
                    (base.texts[b].clone(), base.vectors[b].clone())
                } else {
                    (
                        reworded(&base.texts[b], words, &mut rng),
                        moved(&base.vectors[b], &mut rng),
                    )
                };
                text_bytes += text.len() as u64;
                let row: Vec<u8> = quantize::quantize(&vector)
                    .into_iter()
                    .map(|x| x as u8)
                    .collect();
                rows.write_all(&row)?;
                Ok((text, vector))
            })
            .collect::<Result<Vec<_>>>()?;
        batch.push(flat_document(
            folder_id,
            format!("{}/doc{doc:07}.md", folder(doc % FOLDERS)),
            &format!("Synthetic document {doc}"),
            parts,
        ));
        if batch.len() == DOCS_PER_COMMIT || doc + 1 == documents {
            let started = Instant::now();
            store.write_documents(&batch, &space, None, None).await?;
            write_seconds += started.elapsed().as_secs_f64();
            batch.clear();
            if (doc + 1) % (documents / 10).max(1) < DOCS_PER_COMMIT {
                eprintln!(
                    "scale: wrote {} of {total} chunks ({write_seconds:.0} s in the store)",
                    ((doc + 1) * CHUNKS_PER_DOC).min(total)
                );
            }
        }
    }
    rows.flush()?;
    store.checkpoint_wal().await?;
    let (first_id, last_id, count) = store.chunk_id_range().await?;
    if count as usize != total || last_id - first_id + 1 != count {
        bail!(
            "expected {total} chunks with consecutive ids, found {count} in {first_id}..={last_id}"
        );
    }
    store.close().await;
    Ok(Ingest {
        dim: embedder.dim(),
        first_id,
        text_bytes,
        write_seconds,
        db_bytes: files_bytes(&config.data_dir, |name| name.starts_with("folio.sqlite"))?,
    })
}

/// A copy's text: each word replaced by a random corpus word with
/// probability [`REWORDED`].
fn reworded(text: &str, words: &[String], rng: &mut Rng) -> String {
    text.split(' ')
        .map(|w| {
            if rng.unit() < REWORDED {
                words[rng.below(words.len())].as_str()
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A copy's vector: the base moved by [`NOISE`] a component, unit length.
fn moved(vector: &[f32], rng: &mut Rng) -> Vec<f32> {
    let v: Vec<f64> = vector
        .iter()
        .map(|&x| f64::from(x) + NOISE * rng.normal())
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.iter().map(|x| (x / norm) as f32).collect()
}

struct Build {
    seconds: f64,
    index_bytes: u64,
}

/// Builds and saves the approximate index as a long-lived process does,
/// printing its progress.
async fn build_index(config: &Config, total: usize) -> Result<Build> {
    let store = Store::open(&config.database_path()).await?;
    let (events, mut progress) = tokio::sync::broadcast::channel(64);
    let retrieval = RetrievalService::new(
        store.clone(),
        config.embedding_source(),
        config.vector_copy_settings(),
        events,
    );
    let printer = tokio::spawn(async move {
        while let Ok(event) = progress.recv().await {
            if let EngineEvent::VectorIndexBuilding { progress, .. } = event {
                eprintln!(
                    "scale: index {} of {} vectors",
                    progress.done, progress.total
                );
            }
        }
    });
    let started = Instant::now();
    retrieval.warm_vectors().await?;
    loop {
        match retrieval.vector_copy() {
            CopyStatus::Approximate { .. } => break,
            CopyStatus::Exact { .. } => bail!(
                "{total} chunks are searched exactly (FOLIO_APPROXIMATE_FROM or [vector_copy] is above it)"
            ),
            CopyStatus::None => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    printer.abort();
    drop(retrieval);
    store.close().await;
    Ok(Build {
        seconds,
        index_bytes: files_bytes(&config.vector_copy_settings().dir, |n| {
            n.ends_with(".usearch")
        })?,
    })
}

/// This program, run on the benchmark's library.
fn folio(config: &Config) -> Result<Command> {
    let mut command = Command::new(this_program()?);
    command.arg("--data-dir").arg(&config.data_dir);
    Ok(command)
}

struct OneShot {
    /// Start to first result, per run.
    seconds: Vec<f64>,
    peak_rss_bytes: Vec<u64>,
}

/// `folio search` as a person types it: a fresh process that opens the
/// saved index, loads the embedding model and prints its hits.
fn one_shot_searches(config: &Config, queries: &[Query]) -> Result<OneShot> {
    let mut seconds = Vec::new();
    let mut peak_rss_bytes = Vec::new();
    for q in queries.iter().take(ONE_SHOTS) {
        let mut command = folio(config)?;
        command.args(["--json", "search", &q.text]);
        let done = run_measured(&mut command)?.succeeded("a one-shot folio search")?;
        let hits: Vec<Value> = serde_json::from_slice(&done.stdout)
            .context("folio search printed something other than its hits")?;
        if hits.len() != K {
            bail!("a one-shot search found {} chunks, not {K}", hits.len());
        }
        seconds.push(done.seconds);
        peak_rss_bytes.push(done.peak_rss_bytes);
    }
    Ok(OneShot {
        seconds,
        peak_rss_bytes,
    })
}

/// The serving process's report (`scale_serve.rs`).
#[derive(Serialize, Deserialize)]
pub(super) struct Served {
    pub open_seconds: f64,
    pub indexed: usize,
    pub pending: usize,
    pub dense: Timed,
    pub hybrid: Timed,
    /// Hybrid with the query embedded, as a person's search runs.
    pub hybrid_embedded: Timed,
    pub bm25: Timed,
    /// BM25 ranking every chunk that holds a kept term (no narrowing).
    pub bm25_every_chunk: Timed,
    pub scoped: Vec<ScopedTimes>,
    pub rss_bytes: u64,
    pub peak_rss_bytes: u64,
    /// Of `rss_bytes`, mapped files' pages.
    pub file_rss_bytes: u64,
    /// Of `file_rss_bytes`, pages mapped 2 MiB at a time.
    pub file_huge_bytes: u64,
    /// What SQLite has allocated (page caches included), all connections.
    pub sqlite_heap_bytes: u64,
}

#[derive(Serialize, Deserialize)]
pub(super) struct Timed {
    pub ms: Vec<f64>,
    /// The chunk ids found, best first, per query.
    pub ids: Vec<Vec<i64>>,
}

#[derive(Serialize, Deserialize)]
pub(super) struct ScopedTimes {
    pub percent: usize,
    pub chunks: usize,
    pub dense: Timed,
    pub hybrid: Timed,
}

fn serve(config: &Config, dir: &Path, queries: &[Query]) -> Result<Served> {
    let queries_path: PathBuf = dir.join("queries.json");
    std::fs::write(&queries_path, serde_json::to_vec(queries)?)?;
    let mut command = folio(config)?;
    command
        .args(["bench", "scale-serve", "--queries"])
        .arg(&queries_path);
    eprintln!(
        "scale: serving {} queries from a fresh process",
        queries.len()
    );
    let done = run_measured(&mut command)?.succeeded("the serving process")?;
    serde_json::from_slice(&done.stdout).context("the serving process printed no report")
}

fn report(
    total: usize,
    base_len: usize,
    ingest: &Ingest,
    build: &Build,
    one_shot: &OneShot,
    served: &Served,
    baseline: &Value,
) -> Result<Report> {
    use super::Latency;
    let faiss = baseline
        .get("faiss")
        .context("the baseline has no faiss answer")?;
    let recall = |name: &str, how: &str| -> Result<f64> {
        baseline["folio_recall"][name][how]
            .as_f64()
            .with_context(|| format!("the baseline scored no {how} recall for {name}"))
    };
    let median = |xs: &[f64]| Latency::of(xs).p50;
    let dense = Latency::of(&served.dense.ms);
    let hybrid = Latency::of(&served.hybrid.ms);
    let n = format!("@{}k", total / 1000);
    let allowed_db =
        TARGET_DB_PER_TEXT_BYTE * ingest.text_bytes as f64 + TARGET_DB_PER_VECTOR * total as f64;
    let mut rows = vec![
        Row::new(
            format!("ingest of the stored side {n}"),
            "chunks/s",
            total as f64 / ingest.write_seconds,
        ),
        Row::new(
            format!("database size {n} (baseline: chunk text)"),
            "bytes",
            ingest.db_bytes as f64,
        )
        .baseline(ingest.text_bytes as f64)
        .target(Target::AtMost(allowed_db)),
        Row::new(
            format!("approximate index build {n} (baseline: faiss)"),
            "s",
            build.seconds,
        )
        .baseline(field(faiss, "build_seconds")?),
        Row::new(
            format!("approximate index file {n}"),
            "bytes",
            build.index_bytes as f64,
        ),
        Row::new(
            format!("one-shot folio search, start to result {n}"),
            "ms",
            1000.0 * median(&one_shot.seconds),
        )
        .target(Target::AtMost(TARGET_FIRST_RESULT_MS)),
        Row::new(
            format!("one-shot folio search peak RSS {n}"),
            "bytes",
            one_shot.peak_rss_bytes.iter().copied().max().unwrap_or(0) as f64,
        ),
        Row::new(
            format!("serving RSS, both models loaded {n}"),
            "bytes",
            served.rss_bytes as f64,
        )
        .target(Target::AtMost(TARGET_RSS_BYTES)),
        Row::new(
            format!("serving RSS in mapped files (index, models) {n}"),
            "bytes",
            served.file_rss_bytes as f64,
        ),
        Row::new(
            format!("serving RSS in mapped files, in 2 MiB pages {n}"),
            "bytes",
            served.file_huge_bytes as f64,
        ),
        Row::new(
            format!("serving SQLite heap {n}"),
            "bytes",
            served.sqlite_heap_bytes as f64,
        ),
        Row::new(
            format!("serving peak RSS {n}"),
            "bytes",
            served.peak_rss_bytes as f64,
        )
        .target(Target::AtMost(TARGET_RSS_BYTES)),
        Row::new(
            format!("dense top-10 p50 {n} (baseline: faiss HNSW)"),
            "ms",
            dense.p50,
        )
        .baseline(field(faiss, "p50_ms")?)
        .target(Target::RatioAtMost(TARGET_FAISS_RATIO)),
        Row::new(
            format!("dense top-10 p95 {n} (baseline: faiss HNSW)"),
            "ms",
            dense.p95,
        )
        .baseline(field(faiss, "p95_ms")?),
        Row::new(
            format!("dense recall@10 by id {n} (baseline: faiss)"),
            "share",
            recall("dense", "by_id")?,
        )
        .baseline(field(faiss, "recall_by_id")?)
        .target(Target::AtLeast(TARGET_RECALL)),
        Row::new(
            format!("dense recall@10 by distance {n} (baseline: faiss)"),
            "share",
            recall("dense", "by_distance")?,
        )
        .baseline(field(faiss, "recall_by_distance")?),
        Row::new(format!("hybrid top-10 p50 {n}"), "ms", hybrid.p50)
            .target(Target::AtMost(TARGET_HYBRID_MS)),
        Row::new(format!("hybrid top-10 p95 {n}"), "ms", hybrid.p95),
        Row::new(
            format!("hybrid top-10 p50 with the query embedded {n}"),
            "ms",
            Latency::of(&served.hybrid_embedded.ms).p50,
        ),
        Row::new(
            format!("bm25 top-10 p50 {n} (baseline: every chunk of the kept words ranked)"),
            "ms",
            median(&served.bm25.ms),
        )
        .baseline(median(&served.bm25_every_chunk.ms)),
        Row::new(
            format!("bm25 top-10 shared with ranking every chunk of the kept words {n}"),
            "share",
            shared(&served.bm25.ids, &served.bm25_every_chunk.ids),
        ),
    ];
    for s in &served.scoped {
        let label =
            |what: &str| format!("{what} {n}, scope of {}% ({} chunks)", s.percent, s.chunks);
        let name = format!("scoped {}%", s.percent);
        let scoped_dense = Latency::of(&s.dense.ms);
        rows.push(Row::new(label("dense top-10 p50"), "ms", scoped_dense.p50).baseline(dense.p50));
        rows.push(Row::new(label("dense top-10 p95"), "ms", scoped_dense.p95).baseline(dense.p95));
        rows.push(
            Row::new(
                label("dense recall@10 by id"),
                "share",
                recall(&name, "by_id")?,
            )
            .target(Target::AtLeast(TARGET_RECALL)),
        );
        rows.push(Row::new(
            label("dense recall@10 by distance"),
            "share",
            recall(&name, "by_distance")?,
        ));
        rows.push(
            Row::new(
                label("hybrid top-10 p50"),
                "ms",
                Latency::of(&s.hybrid.ms).p50,
            )
            .baseline(hybrid.p50),
        );
    }
    Ok(Report {
        name: "scale",
        title: format!(
            "a library of {total} chunks ({base_len} embedded passages and noisy copies), served from its approximate index"
        ),
        baseline: format!(
            "faiss IndexHNSWFlat (L2, M {CONNECTIVITY}, efConstruction {EXPANSION_ADD}, efSearch {EXPANSION_SEARCH}) over the same vectors as f32, {} threads to build, one per query",
            cores()
        ),
        rows,
        details: json!({
            "chunks": total,
            "base_passages": base_len,
            "text_bytes": ingest.text_bytes,
            "db_bytes": ingest.db_bytes,
            "db_bytes_allowed": allowed_db,
            "write_seconds": ingest.write_seconds,
            "index_build_seconds": build.seconds,
            "index_bytes": build.index_bytes,
            "one_shot_seconds": one_shot.seconds,
            "one_shot_peak_rss_bytes": one_shot.peak_rss_bytes,
            "served": served,
            "baseline": baseline,
        }),
        notes: vec![
            format!("base passages: windows of 40–120 words of the HotpotQA corpus, embedded by the configured model; copies: a tenth of the words replaced by random corpus words, the vector moved by Gaussian noise σ = {NOISE} a component and normalised"),
            "recall is against the exact top-10 by L2 over the stored int8 vectors, as Folio's exact scan ranks them; by distance, a returned chunk counts if it is as near as the exact 10th (relative slack 1e-4): copies of one passage tie closely".into(),
            "dense rows time the search alone, the query vector given, in the serving process; faiss searches one query at a time on one thread, as Folio does".into(),
            "bm25: common words are left out on both sides; search ranks only the chunks of the query's rarest words once its kept words match more than 20,000 chunks together (retrieve::bm25), the baseline ranks every chunk of the kept words".into(),
            "one-shot: a fresh `folio --json search` (hybrid): process start, model load, the saved index opened memory-mapped, the search, the hits printed".into(),
            "serving: a fresh process that opens the library as the app does (warm), loads the embedded LLM and generates a few tokens, runs every dense query once untimed (the first searches of a memory-mapped index fault its pages in), then answers the queries; RSS read from /proc at the end, peak from the kernel".into(),
        ],
    })
}

/// The share of `b`'s ids that `a` also found, over all queries.
fn shared(a: &[Vec<i64>], b: &[Vec<i64>]) -> f64 {
    let (found, total) = a.iter().zip(b).fold((0, 0), |(found, total), (a, b)| {
        (
            found + b.iter().filter(|id| a.contains(id)).count(),
            total + b.len(),
        )
    });
    found as f64 / total.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_vector_is_a_unit_vector_near_its_base() {
        let mut rng = Rng::new(1);
        let base = rng.unit_vector(384);
        let copy = moved(&base, &mut rng);
        let norm: f32 = copy.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
        // Noise of 0.025 a component in 384 dimensions has norm about 0.49.
        let cosine: f32 = base.iter().zip(&copy).map(|(a, b)| a * b).sum();
        assert!((0.85..0.95).contains(&cosine), "{cosine}");
    }

    #[test]
    fn a_copy_text_keeps_most_words_in_place() {
        let mut rng = Rng::new(2);
        let words: Vec<String> = (0..50).map(|i| format!("w{i}")).collect();
        let text = vec!["base"; 2000].join(" ");
        let copy = reworded(&text, &words, &mut rng);
        let kept = copy.split(' ').filter(|w| *w == "base").count();
        assert_eq!(copy.split(' ').count(), 2000);
        assert!((1700..1900).contains(&kept), "{kept} of 2000 kept");
    }

    #[test]
    fn shared_counts_the_baselines_ids_found() {
        let found = vec![vec![1, 2, 3], vec![7, 8]];
        let baseline = vec![vec![3, 2, 9], vec![8, 7]];
        assert!((shared(&found, &baseline) - 0.8).abs() < 1e-12);
    }

    #[test]
    fn the_cache_name_follows_the_texts() {
        let a = vec!["one".to_string(), "two".to_string()];
        let b = vec!["onet".to_string(), "wo".to_string()];
        assert_eq!(fingerprint(&a), fingerprint(&a.clone()));
        assert_ne!(fingerprint(&a), fingerprint(&b));
    }
}
