//! Benchmark `tree`: structure trees from markdown, in documents per second
//! on one core, against pulldown-cmark parsing the same bytes with the same
//! options and doing nothing else. The ratio is the share of the time spent
//! on the parse itself; what is left is Folio's tree building (and decoding).

use std::hint::black_box;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use pulldown_cmark::Parser;
use serde_json::json;

use super::report::{Report, Row, Target};
use super::{rust_book_files, Context, InputFile};
use folio_engine::documents::loaders::{load, Format, LoadOptions, MARKDOWN_OPTIONS};

/// The target, and what the RDR2 paper reports for its document
/// structure trees: 5.82M Wikipedia documents in about 20 minutes on 8 cores.
const TARGET_DOCS_PER_CORE: f64 = 6_000.0;
const RDR2_DOCS_PER_CORE: f64 = 606.0;

pub fn run(ctx: &Context) -> Result<Report> {
    let files = rust_book_files(ctx)?;
    let bytes: usize = files.iter().map(|f| f.bytes.len()).sum();
    let min_time = if ctx.quick {
        Duration::from_millis(500)
    } else {
        Duration::from_secs(2)
    };
    eprintln!(
        "tree: {} files, {:.1} MB, ≥ {:?} per side on one thread",
        files.len(),
        bytes as f64 / 1e6,
        min_time
    );

    let folio = docs_per_second(&files, min_time, |f| {
        let doc = load(
            Format::Markdown,
            &f.bytes,
            &f.title,
            &LoadOptions::budget(u64::MAX),
        )
        .with_context(|| format!("loading {}", f.path.display()))?;
        Ok(doc.tree.len())
    })?;
    let parse_only = docs_per_second(&files, min_time, |f| {
        let text = std::str::from_utf8(&f.bytes)
            .with_context(|| format!("{} is not UTF-8", f.path.display()))?;
        Ok(Parser::new_ext(text, MARKDOWN_OPTIONS)
            .into_offset_iter()
            .count())
    })?;

    Ok(Report {
        name: "tree",
        title: format!("structure trees from markdown (rust-book, {} files, one thread)", files.len()),
        baseline: "pulldown-cmark alone: same bytes, same options, every event with its offsets".into(),
        rows: vec![Row::new("docs/s/core", "docs/s", folio.rate)
            .baseline(parse_only.rate)
            .target(Target::AtLeast(TARGET_DOCS_PER_CORE))],
        details: json!({
            "files": files.len(),
            "bytes": bytes,
            "folio": folio.to_json(),
            "pulldown_cmark": parse_only.to_json(),
            "folio_mb_per_s": folio.rate * bytes as f64 / files.len() as f64 / 1e6,
            "rdr2_paper_docs_per_s_per_core": RDR2_DOCS_PER_CORE,
            "vs_rdr2_paper": folio.rate / RDR2_DOCS_PER_CORE,
        }),
        notes: vec![format!(
            "RDR2 paper: {RDR2_DOCS_PER_CORE} docs/s/core (5.82M docs, ~20 min, 8 cores; Wikipedia pages, not book chapters) — Folio is {:.0}× that here",
            folio.rate / RDR2_DOCS_PER_CORE
        )],
    })
}

struct Rate {
    rate: f64,
    docs: usize,
    seconds: f64,
}

impl Rate {
    fn to_json(&self) -> serde_json::Value {
        json!({ "docs_per_s": self.rate, "docs": self.docs, "seconds": self.seconds })
    }
}

/// Whole passes over `files` until `min_time` has passed, after one untimed
/// pass that warms caches and the allocator.
fn docs_per_second(
    files: &[InputFile],
    min_time: Duration,
    mut work: impl FnMut(&InputFile) -> Result<usize>,
) -> Result<Rate> {
    for f in files {
        black_box(work(f)?);
    }
    let start = Instant::now();
    let mut docs = 0;
    while start.elapsed() < min_time {
        for f in files {
            black_box(work(black_box(f))?);
        }
        docs += files.len();
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(Rate {
        rate: docs as f64 / seconds,
        docs,
        seconds,
    })
}
