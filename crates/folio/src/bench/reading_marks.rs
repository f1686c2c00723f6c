//! Benchmark `reading-marks`: what crash quarantine's reading log costs an
//! ingest of 10,000 small notes, the case where a few `write(2)`s per file
//! weigh most against the work of reading it. The baseline is a folio
//! binary from before the log (`--unmarked`; `scripts/bench.sh documents`
//! builds commit 6adaa6ba), ingesting the same folder into a fresh library
//! in the same run. Runs alternate, this build first, so a machine that
//! slows down as it warms weighs on both; the row is each side's median.

use std::path::Path;

use anyhow::{bail, Result};
use serde_json::json;

use super::hostile::{ingest, Ingested};
use super::process::this_program;
use super::report::{Report, Row, Target};
use super::{Context, TempDir};

const NOTES: usize = 10_000;
const QUICK_NOTES: usize = 1_000;
/// Ingests per side.
const ROUNDS: usize = 3;
const TARGET_RATIO: f64 = 1.03;

pub fn run(ctx: &Context, unmarked: Option<&Path>) -> Result<Report> {
    let notes = if ctx.quick { QUICK_NOTES } else { NOTES };
    let root = TempDir::new("reading-marks")?;
    let corpus = root.path().join("notes");
    write_notes(&corpus, notes)?;
    let this = this_program()?;
    let models = &ctx.config.models_dir;
    let (mut marked, mut baseline) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        eprintln!(
            "reading-marks: round {} of {ROUNDS}, {notes} notes",
            round + 1
        );
        marked.push(checked(ingest(
            &this,
            models,
            &corpus,
            &root.path().join(format!("marked-{round}")),
        )?)?);
        if let Some(binary) = unmarked {
            let dir = root.path().join(format!("unmarked-{round}"));
            baseline.push(checked(ingest(binary, models, &corpus, &dir)?)?);
        }
    }
    let median = |runs: &[Ingested]| {
        let seconds: Vec<f64> = runs.iter().map(|r| r.seconds).collect();
        folio_engine::stats::percentile(&seconds, 50.0)
    };
    let mut row = Row::new(
        format!("folio add, {notes} notes (median of {ROUNDS})"),
        "s",
        median(&marked),
    );
    if !baseline.is_empty() {
        row = row
            .baseline(median(&baseline))
            .target(Target::RatioAtMost(TARGET_RATIO));
    }
    Ok(Report {
        name: "reading-marks",
        title: format!("the reading log's cost on an ingest of {notes} small notes"),
        baseline: match unmarked {
            Some(_) => "a build from before the reading log (--unmarked), same folder, same run, runs alternating".into(),
            None => "none: pass --unmarked with a folio binary from before the reading log".into(),
        },
        rows: vec![row],
        details: json!({
            "notes": notes,
            "marked": marked.iter().map(Ingested::to_json).collect::<Vec<_>>(),
            "unmarked": baseline.iter().map(Ingested::to_json).collect::<Vec<_>>(),
            "unmarked_binary": unmarked,
        }),
        notes: vec![
            "each file gets four marks in the log (reading, waiting, embedding, waiting) and one more when its batch commits".into(),
        ],
    })
}

fn checked(run: Ingested) -> Result<Ingested> {
    if run.exit != 0 {
        bail!("folio add exited with {}", run.exit);
    }
    Ok(run)
}

/// `n` notes of a sentence or two each, all different, so each is read,
/// chunked and embedded.
fn write_notes(dir: &Path, n: usize) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for i in 0..n {
        let body = format!(
            "# Note {i}\n\nThe orchard keeps {} pear trees in row {}, pruned in week {}.\n",
            i % 97 + 3,
            i / 97,
            i % 52 + 1
        );
        std::fs::write(dir.join(format!("note-{i:05}.md")), body)?;
    }
    Ok(())
}
