//! Benchmark `watch`: save-to-searchable latency. A word nobody has used is
//! appended to a watched markdown file and BM25 search is polled until it
//! finds it. The baseline is the same edit indexed by calling the index
//! directly (`Jobs::apply_changes`), so the ratio shows what watching
//! (notify, the debounce, the watcher loop) adds to indexing itself.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use super::report::{Report, Row, Target};
use super::{percentile, rust_book_files, Context, Rng, TempDir};
use folio_engine::config::Config;
use folio_engine::library::Library;
use folio_engine::pipeline::{Change, PassSummary};
use folio_engine::retrieve::SearchMode;

const EDITS: usize = 10;
const POLL: Duration = Duration::from_millis(10);
/// An edit not searchable by then counts as lost, and the run fails.
const GIVE_UP: Duration = Duration::from_secs(30);
const TARGET_MS: f64 = 2_000.0;

pub async fn run(ctx: &Context) -> Result<Report> {
    let file_count = if ctx.quick { 20 } else { 50 };
    let dir = TempDir::new("watch")?;
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(&notes).with_context(|| format!("creating {}", notes.display()))?;
    let mut files = Vec::new();
    for f in rust_book_files(ctx)?.into_iter().take(file_count) {
        let name = f
            .path
            .file_name()
            .context("a rust-book file without a name")?;
        let to = notes.join(name);
        std::fs::write(&to, &f.bytes).with_context(|| format!("writing {}", to.display()))?;
        files.push(
            std::fs::canonicalize(&to).with_context(|| format!("resolving {}", to.display()))?,
        );
    }

    let config = Config {
        data_dir: dir.path().join("data"),
        ..ctx.config.clone()
    };
    let library = Arc::new(Library::open(config).await?);
    eprintln!("watch: indexing {} rust-book files first", files.len());
    let start = Instant::now();
    let job = library.add(std::slice::from_ref(&notes)).await?;
    let initial = library.jobs().run(job).await?;
    let initial_seconds = start.elapsed().as_secs_f64();

    let mut rng = Rng::new(0x00f0_1100);
    let mut direct = Vec::new();
    for i in 0..EDITS {
        let word = append_unique_word(&files[i % files.len()], &mut rng)?;
        let saved = Instant::now();
        library
            .jobs()
            .apply_changes(vec![Change::Touched(files[i % files.len()].clone())])
            .await?;
        direct.push(wait_until_found(&library, &word, saved).await?);
    }

    let (stop, stopped) = oneshot::channel::<()>();
    let (passes_tx, mut passes) = mpsc::unbounded_channel::<PassSummary>();
    let watcher = {
        let library = library.clone();
        tokio::spawn(async move {
            let shutdown = async move {
                // A dropped sender also means stop.
                let _ = stopped.await;
            };
            library
                .jobs()
                .run_background(
                    shutdown,
                    &move |s| {
                        let _ = passes_tx.send(*s);
                    },
                    &[],
                )
                .await
        })
    };
    // The background work reconciles first; wait for it, so the edits
    // below are the watcher's alone.
    tokio::time::timeout(Duration::from_secs(60), passes.recv())
        .await
        .context("the watcher's first reconcile took over a minute")?
        .context("the watcher stopped before its first pass")?;
    tokio::time::sleep(Duration::from_secs(1)).await;

    let mut watched = Vec::new();
    // Other files than the baseline's, so each edit is a fresh one.
    for i in EDITS..2 * EDITS {
        let word = append_unique_word(&files[i % files.len()], &mut rng)?;
        let saved = Instant::now();
        watched.push(wait_until_found(&library, &word, saved).await?);
    }
    let _ = stop.send(());
    watcher.await.context("the watcher task panicked")??;

    let ms = |v: &[Duration]| {
        v.iter()
            .map(|d| d.as_secs_f64() * 1000.0)
            .collect::<Vec<f64>>()
    };
    let (watched_ms, direct_ms) = (ms(&watched), ms(&direct));
    let rows = vec![
        Row::new("save → searchable p50", "ms", percentile(&watched_ms, 50.0))
            .baseline(percentile(&direct_ms, 50.0))
            .target(Target::AtMost(TARGET_MS)),
        Row::new(
            "save → searchable max",
            "ms",
            percentile(&watched_ms, 100.0),
        )
        .baseline(percentile(&direct_ms, 100.0))
        .target(Target::AtMost(TARGET_MS)),
    ];
    Ok(Report {
        name: "watch",
        title: format!(
            "save-to-searchable latency, {EDITS} appended paragraphs, {} watched rust-book files",
            files.len()
        ),
        baseline: "the same edit indexed by calling Jobs::apply_changes directly".into(),
        rows,
        details: json!({
            "files": files.len(),
            "edits": EDITS,
            "poll_ms": POLL.as_millis() as u64,
            "watched_ms": watched_ms,
            "direct_ms": direct_ms,
            "initial_index_seconds": initial_seconds,
            "initial_index": initial,
        }),
        notes: vec!["search is store-level BM25 (no query embedding); polled every 10 ms".into()],
    })
}

/// Appends a paragraph holding a fresh made-up word, as an editor would save
/// it (written and closed), and returns the word.
fn append_unique_word(path: &Path, rng: &mut Rng) -> Result<String> {
    let word = format!("zq{}", rng.word(10));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .with_context(|| format!("opening {} for append", path.display()))?;
    writeln!(
        f,
        "\n\nA note added while benchmarking mentions {word} once."
    )
    .with_context(|| format!("appending to {}", path.display()))?;
    Ok(word)
}

/// Time from `saved` until BM25 search returns a hit for `word`.
async fn wait_until_found(library: &Library, word: &str, saved: Instant) -> Result<Duration> {
    loop {
        let hits = SearchMode::Bm25
            .rank(library.store(), None, word, &[], 1, None)
            .await?;
        if !hits.is_empty() {
            return Ok(saved.elapsed());
        }
        if saved.elapsed() > GIVE_UP {
            bail!("`{word}` was still not searchable after {GIVE_UP:?}");
        }
        tokio::time::sleep(POLL).await;
    }
}
