//! Benchmark `write-amp`: bytes written to disk and peak memory while a fresh
//! library ingests the HotpotQA corpus (8,094 passages, one file each). The
//! baseline is the input itself: written bytes over input bytes is the write
//! amplification. The counts come from the kernel, so SQLite's WAL and
//! checkpoints are included; a final TRUNCATE checkpoint runs inside the
//! window so no deferred write escapes it.
//!
//! Storage is counted where the bytes land: the sectors the disk under the
//! library wrote, with the filesystem flushed at both ends of the window.
//! That count is machine-wide (the filesystem's journal is in it, and so is
//! any other process's writing), so it wants a quiet machine. The process's
//! own `write()` bytes are the second count. The kernel's per-process count
//! of pages dirtied (`write_bytes`) is reported without a target: it counts
//! whole page-cache folios, which can be far more than the disk writes (on
//! this machine 16.4 MB of random 4 KB writes into a file read ahead counted
//! as 2,980 MB dirtied, against 16.7 MB the disk wrote), though for this
//! ingest the two agree.

use std::fs::File;
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context as _, Result};
use serde_json::json;

use super::process::resident;
use super::report::{Report, Row, Target};
use super::{files_bytes, Context, TempDir};
use folio_engine::config::Config;
use folio_engine::eval::corpus::write_passages;
use folio_engine::library::Library;
use folio_engine::store::WAL_AUTOCHECKPOINT_PAGES;

const TARGET_RATIO: f64 = 10.0;
/// A WAL frame: one page (SQLite's default 4,096 bytes, which the store
/// keeps) behind a 24-byte header.
const WAL_FRAME_BYTES: u64 = 4096 + 24;

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
    // Flushing first keeps the corpus just written out of the disk's count.
    let disk = Disk::under(dir.path())?;
    let disk_before = disk.as_ref().map(Disk::written).transpose()?;
    let before = ProcIo::read()?;
    let start = Instant::now();
    let library = Library::open(config).await?;
    let job = library.add(std::slice::from_ref(&input_dir)).await?;
    let summary = library.jobs().run(job).await?;
    let counts = library.store().counts().await?;
    let wal_frames = library
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
    library.close().await;
    let seconds = start.elapsed().as_secs_f64();
    let after = ProcIo::read()?;
    let disk_written = match (&disk, disk_before) {
        (Some(disk), Some(before)) => Some(disk.written()? - before),
        _ => None,
    };
    let peak_rss = resident()?.peak;
    let Some(wal_frames) = wal_frames else {
        bail!("the final checkpoint could not complete (a reader held the WAL); written bytes would be undercounted");
    };
    let db_bytes = files_bytes(&data_dir, |_| true)?;
    let input_mb = input_bytes as f64 / 1e6;
    let written_row = |metric: &str, bytes: u64| {
        Row::new(metric, "MB", bytes as f64 / 1e6)
            .baseline(input_mb)
            .target(Target::RatioAtMost(TARGET_RATIO))
    };

    let mut rows = Vec::new();
    if let Some(bytes) = disk_written {
        rows.push(written_row("bytes written (disk)", bytes));
    }
    rows.push(written_row(
        "bytes written (syscalls)",
        after.wchar - before.wchar,
    ));
    // Only a WAL that never reached the autocheckpoint holds every frame
    // the ingest wrote when the final checkpoint counts it.
    if wal_frames < WAL_AUTOCHECKPOINT_PAGES {
        rows.push(
            Row::new(
                "WAL traffic",
                "MB",
                (wal_frames * WAL_FRAME_BYTES) as f64 / 1e6,
            )
            .baseline(input_mb),
        );
    }
    rows.extend([
        Row::new("final database size", "MB", db_bytes as f64 / 1e6).baseline(input_mb),
        Row::new(
            "pages dirtied (kernel's count)",
            "MB",
            (after.write_bytes - before.write_bytes) as f64 / 1e6,
        )
        .baseline(input_mb),
        Row::new("peak RSS (VmHWM)", "MB", peak_rss as f64 / 1e6),
    ]);
    let mut notes = vec![
        "baseline = input bytes; disk = sectors written by the disk under the library (machine-wide, filesystem journal included); syscalls = wchar (every write() call); pages dirtied = /proc/self/io write_bytes, whole page-cache folios, no target".into(),
        format!(
            "{} passages → {} chunks in {seconds:.0} s ({:.1} passages/s, embedding included)",
            passages,
            counts.chunks,
            passages as f64 / seconds
        ),
    ];
    match &disk {
        Some(disk) => notes.push(format!("disk: {}", disk.stat.display())),
        None => notes.push(format!(
            "{} is not on a block device with statistics (tmpfs, overlay, btrfs): no disk count; set TMPDIR to a plain disk",
            std::env::temp_dir().display()
        )),
    }
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
            "disk_written_bytes": disk_written,
            "wal_frames": wal_frames,
            "write_bytes": after.write_bytes - before.write_bytes,
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

/// The block device under a folder, read from sysfs.
struct Disk {
    /// `/sys/dev/block/MAJOR:MINOR/stat` (a partition's, where it is one).
    stat: PathBuf,
    /// The folder, held open to flush its filesystem.
    folder: File,
}

impl Disk {
    /// `None` where the folder's filesystem has no block device of its own.
    fn under(folder: &Path) -> Result<Option<Disk>> {
        let dev = std::fs::metadata(folder)
            .with_context(|| format!("reading {}", folder.display()))?
            .dev();
        let stat = PathBuf::from(format!(
            "/sys/dev/block/{}:{}/stat",
            libc::major(dev),
            libc::minor(dev)
        ));
        if !stat.exists() {
            return Ok(None);
        }
        let folder = File::open(folder).with_context(|| format!("opening {}", folder.display()))?;
        Ok(Some(Disk { stat, folder }))
    }

    /// Bytes the device has written since boot, once the folder's
    /// filesystem has flushed everything dirty.
    fn written(&self) -> Result<u64> {
        // SAFETY: syncfs only reads the descriptor, which `self` keeps open.
        if unsafe { libc::syncfs(self.folder.as_raw_fd()) } != 0 {
            return Err(std::io::Error::last_os_error())
                .context("flushing the filesystem (syncfs)");
        }
        let text = std::fs::read_to_string(&self.stat)
            .with_context(|| format!("reading {}", self.stat.display()))?;
        // The seventh field counts 512-byte sectors written, whatever the
        // device's own sector size (Documentation/block/stat.rst).
        let sectors: u64 = text
            .split_whitespace()
            .nth(6)
            .and_then(|f| f.parse().ok())
            .with_context(|| format!("{} has no sectors-written field", self.stat.display()))?;
        Ok(sectors * 512)
    }
}
