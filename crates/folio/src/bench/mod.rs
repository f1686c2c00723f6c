//! `folio bench`: the speed and memory checks (README, "Benchmarks"): not
//! timed tests. Every number is measured next to a baseline in the same run
//! on the same machine (pulldown-cmark alone, a raw ONNX Runtime session in
//! Python, a direct index call, the input size, numpy brute force, scipy and
//! networkx PageRank, poppler's `pdftotext`, the `tesseract` CLI, an older
//! build) and is reported as a ratio beside the target: a
//! table on stdout and one JSON file per benchmark under `bench/results/`. A
//! CLI-only feature, so errors are `anyhow` here.

mod answer_overhead;
mod embed;
mod embed_server;
mod graph_build;
mod hostile;
mod hotpotqa_recall;
mod llm;
mod ocr;
mod pdf_text;
mod ppr;
mod prefix_reuse;
mod process;
mod python;
mod reading_marks;
mod report;
mod scale;
mod scale_serve;
mod search;
mod tree;
mod watch;
mod whole_document;
mod write_amp;

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use clap::{Args, Subcommand, ValueEnum};

use folio_engine::config::{checkout, Config};
use folio_engine::documents::loaders::{load, Format, LoadOptions};
use folio_engine::stats::percentile;
use python::Python;
use report::Report;

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    command: BenchCommand,
    /// Smaller inputs and shorter timings, for a quick look (results go to
    /// `<name>-quick.json`, so they never overwrite a full run's).
    #[arg(long, global = true)]
    quick: bool,
    /// The shared evaluation data (rust-book, hotpotqa).
    #[arg(long, global = true, env = "FOLIO_EVAL_DIR", default_value_os_t = default_eval_dir())]
    eval_dir: PathBuf,
    /// Where the JSON results are written.
    #[arg(long, global = true, default_value_os_t = default_out_dir())]
    out_dir: PathBuf,
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Structure trees, embedding throughput, save-to-searchable latency,
    /// write amplification and peak memory.
    Ingest {
        /// Run only these (default: all, in this order).
        #[arg(value_enum)]
        only: Vec<IngestBench>,
    },
    /// Dense, BM25 and hybrid search latency at 10k and 100k chunks.
    Search,
    /// A library of a million chunks (real vectors for a sample, noisy
    /// copies beyond it) served from its approximate index: ingest, size,
    /// start-up, memory, dense/hybrid/scoped latency and recall, beside
    /// faiss's HNSW.
    Scale {
        /// Chunks in the library (default 1,000,000; 250,000 with --quick).
        #[arg(long)]
        chunks: Option<usize>,
    },
    /// The serving process `scale` starts and measures; not for people.
    #[command(hide = true)]
    ScaleServe {
        #[arg(long)]
        queries: PathBuf,
    },
    /// Personalized PageRank latency on random graphs of 10k and 100k nodes.
    Ppr,
    /// Information-gain graph build cost per node with the configured
    /// model, with and without prompt-prefix reuse.
    Graph,
    /// The configured model's tokens/s against llama.cpp's own count,
    /// vanilla-rag's per-question overhead outside the model, what kept
    /// section summaries save a second whole-document question, and what
    /// kept prompts save the multi-call methods and a follow-up.
    Llm {
        /// Run only these (default: all, in this order).
        #[arg(value_enum)]
        only: Vec<LlmBench>,
    },
    /// PDF text extraction against pdftotext, OCR against the tesseract
    /// CLI, the hostile corpus's peak memory against an older build, and
    /// what the reading log costs an ingest against a build without it.
    Documents {
        /// Run only these (default: all, in this order).
        #[arg(value_enum)]
        only: Vec<DocumentsBench>,
        /// A folder of real multi-page PDFs (`scripts/bench.sh documents`
        /// fetches the R manuals and gnuplot's from Debian).
        #[arg(long, env = "FOLIO_BENCH_PDFS")]
        pdfs: Option<PathBuf>,
        /// A folio binary from before the shared decompression budget, the
        /// hostile corpus's baseline (`scripts/bench.sh documents` builds it).
        #[arg(long, env = "FOLIO_BENCH_BEFORE")]
        before: Option<PathBuf>,
        /// A folio binary from before the reading log, the baseline of
        /// `reading-marks` (`scripts/bench.sh documents` builds it).
        #[arg(long, env = "FOLIO_BENCH_UNMARKED")]
        unmarked: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DocumentsBench {
    PdfText,
    Ocr,
    Hostile,
    ReadingMarks,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LlmBench {
    TokensPerSecond,
    AnswerOverhead,
    WholeDocument,
    PrefixReuse,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum IngestBench {
    Tree,
    Embed,
    /// Not in the default list: it needs a `/v1/embeddings` server.
    EmbedServer,
    Watch,
    WriteAmp,
}

/// What every benchmark needs: where the data and models are, how big to go,
/// and the Python that runs the baselines.
pub(crate) struct Context {
    config: Config,
    eval_dir: PathBuf,
    quick: bool,
    python: Option<Python>,
}

impl Context {
    fn rust_book(&self) -> PathBuf {
        self.eval_dir.join("rust-book/docs")
    }

    fn python(&self) -> Result<&Python> {
        self.python
            .as_ref()
            .context("this benchmark needs the Python baselines, which were not set up")
    }
}

fn default_eval_dir() -> PathBuf {
    checkout().join("../shared/eval")
}

fn default_out_dir() -> PathBuf {
    checkout().join("bench/results")
}

/// Runs the chosen benchmarks one after another (never concurrently: each
/// one's timings assume the machine to itself) and writes their reports.
/// With `json`, stdout gets one JSON array of the reports instead of tables.
pub async fn run(args: BenchArgs, config: Config, json: bool) -> Result<()> {
    let benches: Vec<IngestBench> = match &args.command {
        BenchCommand::Ingest { only } if only.is_empty() => {
            vec![
                IngestBench::Tree,
                IngestBench::Embed,
                IngestBench::Watch,
                IngestBench::WriteAmp,
            ]
        }
        BenchCommand::Ingest { only } => only.clone(),
        BenchCommand::Search
        | BenchCommand::Scale { .. }
        | BenchCommand::ScaleServe { .. }
        | BenchCommand::Ppr
        | BenchCommand::Graph
        | BenchCommand::Llm { .. }
        | BenchCommand::Documents { .. } => Vec::new(),
    };
    let needs_python = matches!(
        args.command,
        BenchCommand::Search | BenchCommand::Ppr | BenchCommand::Scale { .. }
    ) || benches.contains(&IngestBench::Embed)
        || benches.contains(&IngestBench::EmbedServer);
    // Checked up front so a missing package fails in a second, not after
    // minutes of Folio-side measurement.
    let python = if needs_python {
        Some(Python::locate()?)
    } else {
        None
    };
    // The serving process reads only the library and queries it is given.
    let needs_eval_data = !matches!(
        args.command,
        BenchCommand::Documents { .. } | BenchCommand::ScaleServe { .. }
    );
    if needs_eval_data && !args.eval_dir.join("rust-book/docs").is_dir() {
        bail!(
            "evaluation data not found under {}; pass --eval-dir or set FOLIO_EVAL_DIR",
            args.eval_dir.display()
        );
    }
    let ctx = Context {
        config,
        eval_dir: args.eval_dir,
        quick: args.quick,
        python,
    };
    let mut out = Output {
        dir: args.out_dir,
        quick: args.quick,
        json,
        reports: Vec::new(),
    };
    match args.command {
        BenchCommand::Search => out.write(&search::run(&ctx).await?)?,
        BenchCommand::Scale { chunks } => out.write(&scale::run(&ctx, chunks).await?)?,
        // It prints its own report for the `scale` run that started it.
        BenchCommand::ScaleServe { queries } => {
            return scale_serve::run(ctx.config, &queries).await
        }
        BenchCommand::Ppr => out.write(&ppr::run(&ctx)?)?,
        BenchCommand::Graph => out.write(&graph_build::run(&ctx).await?)?,
        BenchCommand::Llm { only } => {
            let only = if only.is_empty() {
                vec![
                    LlmBench::TokensPerSecond,
                    LlmBench::AnswerOverhead,
                    LlmBench::WholeDocument,
                    LlmBench::PrefixReuse,
                ]
            } else {
                only
            };
            for bench in only {
                let report = match bench {
                    LlmBench::TokensPerSecond => {
                        llm::tokens_per_second(&ctx.config.llm, ctx.quick).await?
                    }
                    LlmBench::AnswerOverhead => answer_overhead::run(&ctx).await?,
                    LlmBench::WholeDocument => whole_document::run(&ctx).await?,
                    LlmBench::PrefixReuse => prefix_reuse::run(&ctx).await?,
                };
                out.write(&report)?;
            }
        }
        BenchCommand::Documents {
            only,
            pdfs,
            before,
            unmarked,
        } => {
            let only = if only.is_empty() {
                vec![
                    DocumentsBench::PdfText,
                    DocumentsBench::Ocr,
                    DocumentsBench::Hostile,
                    DocumentsBench::ReadingMarks,
                ]
            } else {
                only
            };
            let pdfs = || {
                pdfs.as_deref().context(
                    "pass --pdfs with a folder of real PDFs (scripts/bench.sh documents fetches some)",
                )
            };
            for bench in only {
                let report = match bench {
                    DocumentsBench::PdfText => pdf_text::run(&ctx, pdfs()?)?,
                    DocumentsBench::Ocr => ocr::run(&ctx, pdfs()?)?,
                    DocumentsBench::Hostile => hostile::run(&ctx, before.as_deref())?,
                    DocumentsBench::ReadingMarks => reading_marks::run(&ctx, unmarked.as_deref())?,
                };
                out.write(&report)?;
            }
        }
        BenchCommand::Ingest { .. } => {
            for bench in benches {
                let report = match bench {
                    IngestBench::Tree => tree::run(&ctx)?,
                    IngestBench::Embed => embed::run(&ctx)?,
                    IngestBench::EmbedServer => embed_server::run(&ctx)?,
                    IngestBench::Watch => watch::run(&ctx).await?,
                    IngestBench::WriteAmp => write_amp::run(&ctx).await?,
                };
                out.write(&report)?;
            }
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&out.reports)?);
    }
    Ok(())
}

/// Saves each report as it finishes, so a failure later in the run keeps
/// the results already measured.
struct Output {
    dir: PathBuf,
    quick: bool,
    json: bool,
    reports: Vec<serde_json::Value>,
}

impl Output {
    fn write(&mut self, report: &Report) -> Result<()> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))?;
        let name = if self.quick {
            format!("{}-quick.json", report.name)
        } else {
            format!("{}.json", report.name)
        };
        let path = self.dir.join(name);
        let value = report.to_json(self.quick);
        let text = serde_json::to_string_pretty(&value)?;
        std::fs::write(&path, text + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
        if self.json {
            self.reports.push(value);
        } else {
            print!("{}", report.table());
            println!("  → {}\n", path.display());
        }
        Ok(())
    }
}

/// A benchmark's input file: its fallback title and its bytes.
struct InputFile {
    path: PathBuf,
    title: String,
    bytes: Vec<u8>,
}

/// The rust-book's markdown files in name order, read into memory.
fn rust_book_files(ctx: &Context) -> Result<Vec<InputFile>> {
    read_files(&ctx.rust_book(), Format::Markdown)
}

/// The files of `format` in `dir`, in name order; at least one.
fn paths_of(dir: &Path, format: Format) -> Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| Format::from_path(p) == Some(format))
        .collect();
    paths.sort();
    if paths.is_empty() {
        bail!("no {} files in {}", format.as_str(), dir.display());
    }
    Ok(paths)
}

/// The files of `format` in `dir`, in name order, read into memory.
fn read_files(dir: &Path, format: Format) -> Result<Vec<InputFile>> {
    paths_of(dir, format)?
        .into_iter()
        .map(|path| {
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            let title = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok(InputFile { path, title, bytes })
        })
        .collect()
}

/// What a baseline program printed on stdout for `input`, which it must
/// succeed on; `package` names the Debian package that provides it.
fn baseline_stdout(
    command: &mut std::process::Command,
    input: &Path,
    package: &str,
) -> Result<String> {
    let program = command.get_program().to_string_lossy().into_owned();
    let out = command
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| {
            format!("running {program} (Debian's {package}; scripts/setup.sh installs it)")
        })?;
    if !out.status.success() {
        bail!("{program} failed on {}: {}", input.display(), out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What the embedder sees for every chunk of the rust-book, in document order:
/// the same loaders, chunker and sizes as indexing uses.
fn rust_book_embedding_inputs(ctx: &Context) -> Result<Vec<String>> {
    let sizes = ctx.config.limits().chunk_sizes;
    let mut inputs = Vec::new();
    for file in rust_book_files(ctx)? {
        let doc = load(
            Format::Markdown,
            &file.bytes,
            &file.title,
            &LoadOptions::budget(u64::MAX),
        )
        .with_context(|| format!("loading {}", file.path.display()))?;
        inputs.extend(
            folio_engine::documents::chunker::chunk(&doc.tree, sizes)
                .iter()
                .map(|c| c.embedding_input()),
        );
    }
    Ok(inputs)
}

/// Bytes of the plain files in `dir` whose names `keep` accepts.
fn files_bytes(dir: &Path, keep: impl Fn(&str) -> bool) -> Result<u64> {
    let mut bytes = 0;
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry?;
        let meta = entry.metadata()?;
        if meta.is_file() && keep(&entry.file_name().to_string_lossy()) {
            bytes += meta.len();
        }
    }
    Ok(bytes)
}

/// A directory removed when dropped. (`tempfile` is only a dev-dependency;
/// the engine does not need it, and this is all the benchmarks need.)
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Result<TempDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "folio-bench-{label}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(TempDir(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Best effort: a leftover temp dir is harmless.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A small deterministic generator (SplitMix64), so synthetic data and edits
/// are reproducible without a `rand` dependency in the engine.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0); the modulo bias is negligible for our n.
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller): normal coordinates make a uniformly
    /// random direction once normalised.
    fn normal(&mut self) -> f64 {
        let u = 1.0 - self.unit();
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    fn unit_vector(&mut self, dim: usize) -> Vec<f32> {
        let v: Vec<f64> = (0..dim).map(|_| self.normal()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter().map(|x| (x / norm) as f32).collect()
    }

    fn word(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| (b'a' + self.below(26) as u8) as char)
            .collect()
    }
}

fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Median and 95th percentile of per-query times in milliseconds.
#[derive(Clone, Copy)]
struct Latency {
    p50: f64,
    p95: f64,
}

impl Latency {
    fn of(ms: &[f64]) -> Latency {
        Latency {
            p50: percentile(ms, 50.0),
            p95: percentile(ms, 95.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_unit_vectors_have_unit_length() {
        let mut rng = Rng::new(7);
        let v = rng.unit_vector(384);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }
}
