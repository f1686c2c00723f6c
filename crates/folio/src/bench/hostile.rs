//! Benchmark `hostile`: peak memory of `folio add` over the whole hostile
//! corpus (crates/folio/tests/fixtures/hostile/build.py), this build against a build
//! from before the shared decompression budget, on the same files in the
//! same run.
//!
//! The corpus is built at the size CI tests it (10,000 tiny notes and a
//! scan of 96 pages), with compression bombs in a PDF content stream, a
//! PDF image and each zip-based format. The "before" binary is given with
//! `--before` (`scripts/bench.sh documents` builds commit 0cd72be, the last
//! before the budget). Peak RSS is the kernel's `ru_maxrss` for the `folio
//! add` process, which counts the largest child it waited for (poppler and
//! Tesseract) too.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context as _, Result};
use serde_json::json;

use super::process::{run_measured, this_program};
use super::report::{Report, Row, Target};
use super::{cores, Context, TempDir};

const TINY_FILES: usize = 10_000;
const SCAN_PAGES: usize = 96;
const QUICK_TINY_FILES: usize = 1_000;
const QUICK_SCAN_PAGES: usize = 16;

/// The bound `docs/hardening.md` documents: the process with both models
/// (about 270 MiB) plus one budget (256 MiB at the default limits) and
/// 64 MiB for the parser, for each file prepared at once (one per core).
fn bound_mib(cores: u64) -> f64 {
    270.0 + cores as f64 * (256.0 + 64.0)
}

pub fn run(ctx: &Context, before_binary: Option<&Path>) -> Result<Report> {
    let (tiny, scan) = if ctx.quick {
        (QUICK_TINY_FILES, QUICK_SCAN_PAGES)
    } else {
        (TINY_FILES, SCAN_PAGES)
    };
    let root = TempDir::new("hostile")?;
    let corpus = root.path().join("corpus");
    build_corpus(&corpus, tiny, scan)?;
    let this = this_program()?;

    eprintln!("hostile: folio add over the corpus ({tiny} tiny notes, a {scan}-page scan)");
    let models = &ctx.config.models_dir;
    let after = ingest(&this, models, &corpus, &root.path().join("after"))?;
    if after.exit != 0 {
        bail!(
            "folio add over the hostile corpus exited with {}",
            after.exit
        );
    }
    let before = match before_binary {
        Some(binary) => {
            eprintln!("hostile: the same with {}", binary.display());
            Some(ingest(
                binary,
                models,
                &corpus,
                &root.path().join("before"),
            )?)
        }
        None => None,
    };
    let cores = cores() as u64;

    let mut peak = Row::new("peak RSS, whole corpus", "MiB", after.peak_mib)
        .target(Target::AtMost(bound_mib(cores)));
    let mut seconds = Row::new("wall time, whole corpus", "s", after.seconds);
    if let Some(before) = &before {
        peak = peak.baseline(before.peak_mib);
        seconds = seconds.baseline(before.seconds);
    }
    Ok(Report {
        name: "hostile",
        title: format!("folio add over the hostile corpus ({tiny} tiny notes, a {scan}-page scan)"),
        baseline: match before {
            Some(_) => "a build from before the shared decompression budget (--before), same corpus, same run".into(),
            None => "none: pass --before with a folio binary from before the budget".into(),
        },
        rows: vec![peak, seconds],
        details: json!({
            "tiny_files": tiny,
            "scan_pages": scan,
            "cores": cores,
            "bound_mib": bound_mib(cores),
            "after": after.to_json(),
            "before": before.as_ref().map(Ingested::to_json),
            "before_binary": before_binary,
        }),
        notes: vec![
            "the scan is read by OCR after the budget and refused as text-less before it, so the after build does more work".into(),
        ],
    })
}

fn build_corpus(dest: &Path, tiny: usize, scan: usize) -> Result<()> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile/build.py");
    let status = Command::new("python3")
        .arg(&script)
        .arg(dest)
        .arg(tiny.to_string())
        .arg(scan.to_string())
        .status()
        .with_context(|| format!("running {}", script.display()))?;
    if !status.success() {
        bail!("{} failed: {status}", script.display());
    }
    Ok(())
}

pub(super) struct Ingested {
    pub peak_mib: f64,
    pub seconds: f64,
    pub exit: i32,
}

impl Ingested {
    pub(super) fn to_json(&self) -> serde_json::Value {
        json!({ "peak_rss_mib": self.peak_mib, "seconds": self.seconds, "exit_status": self.exit })
    }
}

/// `binary add corpus` into a fresh data folder, with no config file and
/// this run's models (a binary built elsewhere would look for its own
/// checkout's), and its peak RSS from `wait4`.
pub(super) fn ingest(
    binary: &Path,
    models: &Path,
    corpus: &Path,
    data_dir: &Path,
) -> Result<Ingested> {
    let done = run_measured(
        Command::new(binary)
            .env("FOLIO_CONFIG", "/dev/null")
            .env("FOLIO_MODELS_DIR", models)
            .arg("--data-dir")
            .arg(data_dir)
            .arg("add")
            .arg(corpus)
            .stderr(Stdio::null()),
    )?;
    Ok(Ingested {
        peak_mib: done.peak_rss_bytes as f64 / (1024.0 * 1024.0),
        seconds: done.seconds,
        exit: done.code.unwrap_or(-1),
    })
}
