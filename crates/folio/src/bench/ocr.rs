//! Benchmark `ocr`: pages read per second, Folio's OCR against the
//! `tesseract` CLI on the same page images with the same threads.
//!
//! The pages are real: the first pages of the benchmark's PDFs, rendered
//! once by poppler at the resolution indexing uses, as 8-bit grey, the way
//! a scan reaches Tesseract. Folio's side is what indexing does with them:
//! batches of consecutive pages through one Tesseract process each, TSV
//! parsed into text, word boxes and a confidence. The baseline is a person
//! running `tesseract page.pgm stdout` on each page. Both sides run one
//! single-threaded Tesseract per core at a time, so the thread count is the
//! same; what differs is only the work each process is given.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use serde_json::json;

use super::report::{Report, Row, Target};
use super::{baseline_stdout, cores, paths_of, Context, TempDir};
use folio_engine::documents::loaders::ocr::{
    self, OcrSettings, MAX_RASTER_BYTES, OCR_DPI, PAGES_PER_BATCH,
};
use folio_engine::documents::loaders::Format;

const TARGET_RATIO: f64 = 0.9;
const PAGES: u32 = 48;
const QUICK_PAGES: u32 = 16;
const PASSES: usize = 2;

pub fn run(ctx: &Context, folder: &Path) -> Result<Report> {
    // The first PDF by name is the one whose pages are rendered.
    let source = paths_of(folder, Format::Pdf)?.swap_remove(0);
    let pages = if ctx.quick { QUICK_PAGES } else { PAGES };
    // Each batch of pages in its own folder, as indexing renders them:
    // Tesseract reads a batch from a list file written beside its pages.
    let dir = TempDir::new("ocr")?;
    let mut batches: Vec<Vec<PathBuf>> = Vec::new();
    for first in (1..=pages).step_by(PAGES_PER_BATCH) {
        let last = (first + PAGES_PER_BATCH as u32 - 1).min(pages);
        let folder = dir.path().join(format!("pages-{first}"));
        std::fs::create_dir(&folder).with_context(|| format!("creating {}", folder.display()))?;
        let rendered =
            ocr::rasterize_pdf_pages(&source, first, last, OCR_DPI, &folder, MAX_RASTER_BYTES)
                .context("rendering the pages with pdftoppm")?;
        if rendered.is_empty() {
            break;
        }
        batches.push(rendered.into_iter().map(|(_, path)| path).collect());
    }
    let images: Vec<PathBuf> = batches.iter().flatten().cloned().collect();
    if images.is_empty() {
        bail!("pdftoppm rendered no pages of {}", source.display());
    }
    let threads = cores();
    let settings = OcrSettings::default();
    eprintln!(
        "ocr: {} pages of {} at {OCR_DPI} dpi, {threads} single-threaded Tesseract processes at a time, {PASSES} passes per side",
        images.len(),
        source.display()
    );

    let (mut folio_best, mut cli_best) = (f64::INFINITY, f64::INFINITY);
    let (mut folio_text, mut cli_text) = (String::new(), String::new());
    for _ in 0..PASSES {
        let start = Instant::now();
        let read = in_parallel(&batches, threads, |batch: &Vec<PathBuf>| {
            let pages = ocr::recognize_files(batch, OCR_DPI, &settings).context("Folio's OCR")?;
            Ok(pages
                .into_iter()
                .map(|p| p.text)
                .collect::<Vec<_>>()
                .join("\n"))
        })?;
        folio_best = folio_best.min(start.elapsed().as_secs_f64());
        folio_text = read.join("\n");

        let start = Instant::now();
        let read = in_parallel(&images, threads, |image| tesseract(image))?;
        cli_best = cli_best.min(start.elapsed().as_secs_f64());
        cli_text = read.join("\n");
    }
    let n = images.len() as f64;
    let (folio_words, cli_words) = (word_count(&folio_text), word_count(&cli_text));

    Ok(Report {
        name: "ocr",
        title: format!("OCR of {} rendered pages, {threads} threads", images.len()),
        baseline: format!(
            "the tesseract CLI on the same page images, one page per process, {threads} processes at a time"
        ),
        rows: vec![Row::new("pages/s", "pages/s", n / folio_best)
            .baseline(n / cli_best)
            .target(Target::RatioAtLeast(TARGET_RATIO))],
        details: json!({
            "source": source,
            "pages": images.len(),
            "dpi": OCR_DPI,
            "threads": threads,
            "tesseract_threads_per_process": 1,
            "pages_per_folio_process": PAGES_PER_BATCH,
            "folio_seconds": folio_best,
            "tesseract_cli_seconds": cli_best,
            "passes": PASSES,
            "folio_words": folio_words,
            "tesseract_cli_words": cli_words,
        }),
        notes: vec![format!(
            "{threads} threads on each side: one Tesseract process per core, each limited to one thread (OMP_THREAD_LIMIT=1); Folio read {folio_words} words, the CLI {cli_words}"
        )],
    })
}

/// The plain text of one page image from the tesseract CLI, run the way
/// Folio runs it: one thread, English, automatic page segmentation.
fn tesseract(image: &Path) -> Result<String> {
    let mut command = Command::new("tesseract");
    command
        .arg(image)
        .args(["stdout", "-l", "eng", "--psm", "3", "--dpi"])
        .arg(OCR_DPI.to_string())
        .env("OMP_THREAD_LIMIT", "1")
        .stderr(Stdio::null());
    baseline_stdout(&mut command, image, "tesseract-ocr")
}

/// Runs `work` on every item with `threads` workers, each taking the next
/// item as it finishes one, and returns the results in the items' order.
/// Both sides are scheduled by this, so the pool is not part of the
/// difference.
fn in_parallel<T: Sync>(
    items: &[T],
    threads: usize,
    work: impl Fn(&T) -> Result<String> + Sync,
) -> Result<Vec<String>> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, Result<String>)>> = Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|scope| {
        for _ in 0..threads.min(items.len()) {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::SeqCst);
                let Some(item) = items.get(index) else { break };
                let result = work(item);
                done.lock()
                    .expect("no worker panics while holding it")
                    .push((index, result));
            });
        }
    });
    let mut done = done.into_inner().expect("the workers have finished");
    done.sort_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, result)| result).collect()
}

fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}
