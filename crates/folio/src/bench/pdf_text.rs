//! Benchmark `pdf-text`: text extraction from real multi-page PDFs, in
//! documents per second on one thread, against poppler's `pdftotext` on the
//! same files, and how far the two texts agree (word-level F1).
//!
//! Folio's side is what indexing does with a PDF's bytes, minus OCR: the
//! decompression budget's count, lopdf, pdf-extract through our page
//! writer (text and where each run is drawn), the outline and the tree.
//! `pdftotext` is one process per file, as a person would run it; the
//! process start is a millisecond or two against files that take hundreds.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context as _, Result};
use serde_json::json;

use super::report::{Report, Row, Target};
use super::{baseline_stdout, read_files, Context, InputFile};
use folio_engine::documents::loaders::{load, Format, LoadOptions, DECOMPRESSION_FACTOR};
use folio_engine::documents::structure_tree::NodeKind;

const TARGET_SPEED_RATIO: f64 = 0.8;
const TARGET_F1: f64 = 0.95;

/// Both sides run this many times, alternating, and each side's fastest
/// pass counts, so a burst of other work on the machine hurts neither.
const PASSES: usize = 2;

pub fn run(ctx: &Context, folder: &Path) -> Result<Report> {
    let mut pdfs = read_files(folder, Format::Pdf)
        .context("reading the benchmark's PDFs (scripts/bench.sh documents fetches some)")?;
    if ctx.quick {
        pdfs.truncate(3);
    }
    let bytes: usize = pdfs.iter().map(|p| p.bytes.len()).sum();
    let budget = ctx.config.limits().max_file_size * DECOMPRESSION_FACTOR;
    eprintln!(
        "pdf-text: {} PDFs, {:.1} MB, {PASSES} passes per side on one thread",
        pdfs.len(),
        bytes as f64 / 1e6
    );

    let (mut folio_best, mut poppler_best) = (f64::INFINITY, f64::INFINITY);
    let (mut folio_texts, mut poppler_texts) = (Vec::new(), Vec::new());
    for _ in 0..PASSES {
        let start = Instant::now();
        folio_texts = pdfs
            .iter()
            .map(|pdf| folio_text(pdf, budget))
            .collect::<Result<_>>()?;
        folio_best = folio_best.min(start.elapsed().as_secs_f64());

        let start = Instant::now();
        poppler_texts = pdfs
            .iter()
            .map(|pdf| pdftotext(&pdf.path))
            .collect::<Result<_>>()?;
        poppler_best = poppler_best.min(start.elapsed().as_secs_f64());
    }

    let mut per_file = Vec::new();
    let mut total = Overlap::default();
    let mut lowest = f64::INFINITY;
    for ((pdf, folio), poppler) in pdfs.iter().zip(&folio_texts).zip(&poppler_texts) {
        let overlap = Overlap::of(folio, poppler);
        total.add(&overlap);
        lowest = lowest.min(overlap.f1());
        per_file.push(json!({
            "file": pdf.path.file_name().map(|n| n.to_string_lossy()),
            "bytes": pdf.bytes.len(),
            "folio_words": overlap.folio,
            "pdftotext_words": overlap.poppler,
            "f1": overlap.f1(),
        }));
    }
    let docs = pdfs.len() as f64;

    Ok(Report {
        name: "pdf_text",
        title: format!("PDF text extraction ({} real PDFs, one thread)", pdfs.len()),
        baseline: "poppler's pdftotext on the same files, one process per file, one at a time"
            .into(),
        rows: vec![
            Row::new("docs/s", "docs/s", docs / folio_best)
                .baseline(docs / poppler_best)
                .target(Target::RatioAtLeast(TARGET_SPEED_RATIO)),
            Row::new("word F1 against pdftotext, all words", "", total.f1())
                .target(Target::AtLeast(TARGET_F1)),
            Row::new("word F1 against pdftotext, lowest file", "", lowest)
                .target(Target::AtLeast(TARGET_F1)),
        ],
        details: json!({
            "folder": folder,
            "files": pdfs.len(),
            "bytes": bytes,
            "folio_seconds": folio_best,
            "pdftotext_seconds": poppler_best,
            "passes": PASSES,
            "words": "maximal runs of letters and digits, compared as multisets",
            "per_file": per_file,
        }),
        notes: vec![
            "OCR is off on Folio's side (pdftotext has none); everything else indexing does with a PDF is timed".into(),
        ],
    })
}

/// The page text Folio indexes: its paragraphs, without the outline's
/// titles, which are not part of the pages' text.
fn folio_text(pdf: &InputFile, budget: u64) -> Result<String> {
    let doc = load(
        Format::Pdf,
        &pdf.bytes,
        &pdf.title,
        &LoadOptions::budget(budget),
    )
    .with_context(|| format!("loading {}", pdf.path.display()))?;
    let mut text = String::new();
    for node in doc.tree.nodes() {
        if node.kind == NodeKind::Content {
            text.push_str(&node.text);
            text.push('\n');
        }
    }
    Ok(text)
}

fn pdftotext(path: &Path) -> Result<String> {
    let mut command = Command::new("pdftotext");
    command.args(["-enc", "UTF-8", "-q"]).arg(path).arg("-");
    baseline_stdout(&mut command, path, "poppler-utils")
}

/// Word counts of two texts and the words they share.
#[derive(Debug, Default)]
struct Overlap {
    folio: usize,
    poppler: usize,
    shared: usize,
}

impl Overlap {
    fn of(folio: &str, poppler: &str) -> Overlap {
        let mut counts: HashMap<&str, i64> = HashMap::new();
        let mut folio_words = 0;
        for word in words(folio) {
            *counts.entry(word).or_default() += 1;
            folio_words += 1;
        }
        let (mut poppler_words, mut shared) = (0, 0);
        for word in words(poppler) {
            poppler_words += 1;
            if let Some(n) = counts.get_mut(word).filter(|n| **n > 0) {
                *n -= 1;
                shared += 1;
            }
        }
        Overlap {
            folio: folio_words,
            poppler: poppler_words,
            shared,
        }
    }

    fn add(&mut self, other: &Overlap) {
        self.folio += other.folio;
        self.poppler += other.poppler;
        self.shared += other.shared;
    }

    fn f1(&self) -> f64 {
        if self.folio + self.poppler == 0 {
            return 1.0;
        }
        2.0 * self.shared as f64 / (self.folio + self.poppler) as f64
    }
}

/// Maximal runs of letters and digits: spacing and punctuation differ
/// between extractors without changing what a search finds.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f1_counts_repeated_words_once_each() {
        let overlap = Overlap::of("a b b c", "a b, c d");
        assert_eq!((overlap.folio, overlap.poppler, overlap.shared), (4, 4, 3));
        assert!((overlap.f1() - 0.75).abs() < 1e-12);
    }
}
