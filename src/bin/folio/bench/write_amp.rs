//! Benchmark `write-amp`: bytes written to disk and peak memory while a fresh
//! library ingests the HotpotQA corpus (8,094 passages, one file each). The
//! baseline is the input itself: written bytes over input bytes is the write
//! amplification. Counters come from the kernel (/proc/self/io, VmHWM), so
//! SQLite's WAL and checkpoints are included; a final TRUNCATE checkpoint
//! runs inside the window so no deferred write escapes it.

use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use serde_json::json;

use super::process::resident;
use super::report::{Report, Row, Target};
use super::{files_bytes, Context, TempDir};
use folio::config::Config;
use folio::eval::corpus::write_passages;
use folio::library::Library;

const TARGET_RATIO: f64 = 10.0;

pub async fn run(ctx: &Context) -> Result<Report> {
    let corpus_path = ctx.eval_dir.join("hotpotqa/corpus.jsonl");
    let limit = ctx.quick.then_some(1_000);
    let dir = TempDir::new("write-amp")?;
    let input_dir = dir.path().join("corpus");
    let written = write_passages(&corpus_path, &input_dir, limit)?;
    let (passages, input_bytes) = (written.passages, written.bytes);
    eprintln!(
        "write-amp: ingesting {passages} passages ({:.1} MB) into a fresh library",
        input_bytes as f64 / 1e6
    );

    let data_dir = dir.path().join("data");
    let config = Config {
        data_dir: data_dir.clone(),
        ..ctx.config.clone()
    };
    // The peak should be this ingest's, not an earlier benchmark's.
    let peak_reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = ProcIo::read()?;
    let start = Instant::now();
    let library = Library::open(config).await?;
    let job = library.add(std::slice::from_ref(&input_dir)).await?;
    let summary = library.run_job(job).await?;
    let counts = library.store().counts().await?;
    let checkpointed = library
        .store()
        .checkpoint_wal()
        .await
        .context("checkpointing the WAL")?;
    // Read-only, so harmless inside the window: where the bytes went.
    let tables = library
        .store()
        .table_sizes()
        .await
        .context("reading table sizes (dbstat)")?;
    library.store().close().await;
    let seconds = start.elapsed().as_secs_f64();
    let after = ProcIo::read()?;
    let peak_rss = resident()?.peak;
    if !checkpointed {
        bail!("the final checkpoint could not complete (a reader held the WAL); written bytes would be undercounted");
    }
    let written = after.write_bytes - before.write_bytes;
    if written == 0 {
        bail!(
            "the kernel counted no bytes written; {} may be on a filesystem without writeback accounting (tmpfs) — set TMPDIR to a disk",
            std::env::temp_dir().display()
        );
    }
    let db_bytes = files_bytes(&data_dir, |_| true)?;

    let rows = vec![
        Row::new("bytes written (storage)", "MB", written as f64 / 1e6)
            .baseline(input_bytes as f64 / 1e6)
            .target(Target::RatioAtMost(TARGET_RATIO)),
        Row::new(
            "bytes written (syscalls)",
            "MB",
            (after.wchar - before.wchar) as f64 / 1e6,
        )
        .baseline(input_bytes as f64 / 1e6)
        .target(Target::RatioAtMost(TARGET_RATIO)),
        Row::new("final database size", "MB", db_bytes as f64 / 1e6)
            .baseline(input_bytes as f64 / 1e6),
        Row::new("peak RSS (VmHWM)", "MB", peak_rss as f64 / 1e6),
    ];
    let mut notes = vec![
        "baseline = input bytes; storage = /proc/self/io write_bytes (pages dirtied), syscalls = wchar (every write() call)".into(),
        format!(
            "{} passages → {} chunks in {seconds:.0} s ({:.1} passages/s, embedding included)",
            passages,
            counts.chunks,
            passages as f64 / seconds
        ),
    ];
    if !peak_reset {
        notes.push("VmHWM could not be reset: the peak covers the whole process, earlier benchmarks included".into());
    }
    Ok(Report {
        name: "write_amp",
        title: format!(
            "write amplification and peak memory, HotpotQA corpus ({passages} passages)"
        ),
        baseline: "the input: bytes of the files ingested".into(),
        rows,
        details: json!({
            "passages": passages,
            "input_bytes": input_bytes,
            "write_bytes": written,
            "cancelled_write_bytes": after.cancelled_write_bytes - before.cancelled_write_bytes,
            "wchar": after.wchar - before.wchar,
            "db_bytes": db_bytes,
            "peak_rss_bytes": peak_rss,
            "peak_rss_reset": peak_reset,
            "seconds": seconds,
            "summary": summary,
            "counts": counts,
            "table_bytes": tables.into_iter().map(|(name, bytes)| (name, json!(bytes))).collect::<serde_json::Map<_, _>>(),
        }),
        notes,
    })
}

/// The process's I/O counters (all threads, living and exited).
struct ProcIo {
    wchar: u64,
    write_bytes: u64,
    cancelled_write_bytes: u64,
}

impl ProcIo {
    fn read() -> Result<ProcIo> {
        let text = std::fs::read_to_string("/proc/self/io")
            .context("reading /proc/self/io (Linux only)")?;
        let get = |key: &str| -> Result<u64> {
            text.lines()
                .find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix(':')))
                .and_then(|v| v.trim().parse().ok())
                .with_context(|| format!("/proc/self/io has no `{key}`"))
        };
        Ok(ProcIo {
            wchar: get("wchar")?,
            write_bytes: get("write_bytes")?,
            cancelled_write_bytes: get("cancelled_write_bytes")?,
        })
    }
}
