//! The hostile corpus (crates/folio/tests/fixtures/hostile/build.py) through the real CLI:
//! every file gets the outcome the script promises for it, the store stays
//! consistent, the library stays readable while the corpus ingests, and
//! memory does not grow with the size of a file that is too big to index.
//!
//! Full size (`FOLIO_SOAK=full`, scripts/soak.sh): 100,000 tiny files and a
//! scanned PDF of 10,000 pages. CI size: 10,000 files, still ten times the
//! corpus's 1,000 texts and 40 batches of documents, so the folder still
//! takes many batches and many reads of the library happen while it
//! ingests; and 96 pages, 12 batches of OCR. Every other file is the same
//! at both sizes, and so is every check.

mod common;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::engine::{assert_consistent, open};
use common::soak::Soak;
use folio_engine::store::Store;
use serde::Deserialize;

/// The tiny notes in the corpus's `tiny/` folder, at the CI size and at
/// the full size.
const TINY_FILES_CI: usize = 10_000;
const TINY_FILES_FULL: usize = 100_000;

/// The pages of the scanned PDF that OCR reads, at the CI size and at the
/// full size. Its memory is the same at both: pages are read a batch per
/// core at a time and only their text is kept.
const SCAN_PAGES_CI: usize = 96;
const SCAN_PAGES_FULL: usize = 10_000;

/// How much more memory `folio add` may take for a folder that also holds
/// the scanned PDF than for one note: OCR's text, the PDF's page tree and
/// the Tesseract and poppler processes (the peak counts the largest of them).
const SCAN_RSS_ALLOWANCE_MIB: u64 = 128;

/// How much more memory `folio add` may take for a folder that also holds
/// the 200 MB and the 1 GB file than for one without them: they are refused
/// from their size alone, so reading either would show as hundreds of MiB.
const BIG_FILES_RSS_ALLOWANCE_MIB: u64 = 64;

/// The compression bombs (one per zip-based format, a PDF whose content
/// stream is one and a PDF whose image is one) decompress to 512 MiB or
/// more each, twice the per-file budget at the default limits (256 MiB).
const BOMBS: [&str; 7] = [
    "bomb.docx",
    "bomb.pptx",
    "bomb-sheets.xlsx",
    "bomb.odt",
    "bomb.epub",
    "bomb.pdf",
    "bomb-image.pdf",
];
/// The files that expand into gigabytes of text and structure (one per
/// zip-based format) while inflating to less than the budget.
const EXPANSIONS: [&str; 5] = [
    "expand-shared.xlsx",
    "expand-spaces.odt",
    "expand-paragraphs.docx",
    "expand-slides.pptx",
    "expand-spine.epub",
];

/// The stated bound on `folio add` (docs/hardening.md, "The bound"): the
/// process with its models, plus, for each file being read and for what
/// waits for the embedder and is being embedded (two more), the per-file
/// budget (4× the 64 MiB file-size limit) and the parser's own use.
const BUDGET_MIB: u64 = 256;
const PARSER_MIB: u64 = 64;
/// The process with both models, as RLIMIT_DATA counts it: heap and
/// private writable mappings, reserved or not (thread stacks, allocator
/// arenas), so about 100 MiB more than its resident set. One note needs
/// 380 MiB of it and aborts under 340 MiB (debug build, 2 cores).
const PROCESS_DATA_MIB: u64 = 384;

/// Files read at once: one per core.
fn cores() -> u64 {
    std::thread::available_parallelism().map_or(2, |n| n.get() as u64)
}

/// The bound's files: those being read, plus the two beyond them.
fn bounded_files() -> u64 {
    cores() + 2
}

/// The memory limit `folio add` runs under: the bound with the process's
/// reservations.
fn data_limit() -> u64 {
    (PROCESS_DATA_MIB + bounded_files() * (BUDGET_MIB + PARSER_MIB)) << 20
}

/// The longest a reader of the library may wait while the corpus ingests.
/// Readers never wait on the writer in WAL mode, so anything near this is a
/// lock held across a batch. It bounds each read, so it is the same however
/// many files there are.
const READ_LATENCY_LIMIT: Duration = Duration::from_secs(5);

#[derive(Debug, Deserialize)]
struct Expected {
    /// The file name's bytes: names may be newlines or not UTF-8 at all.
    name: Vec<u8>,
    #[serde(default)]
    indexed: bool,
    #[serde(default)]
    empty: bool,
    lossy: Option<String>,
    error: Option<String>,
    folder: Option<i64>,
    #[serde(default)]
    absent: Vec<String>,
    #[serde(default)]
    present: Vec<String>,
    ocr_pages: Option<i64>,
}

fn build_corpus(dest: &Path, tiny_files: usize, scan_pages: usize) -> BTreeMap<String, Expected> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile/build.py");
    let status = Command::new("python3")
        .arg(&script)
        .arg(dest)
        .arg(tiny_files.to_string())
        .arg(scan_pages.to_string())
        .status()
        .expect("python3 runs the corpus script");
    assert!(status.success(), "{} failed", script.display());
    let manifest = std::fs::read(dest.join(".expected.json")).unwrap();
    serde_json::from_slice(&manifest).unwrap()
}

/// `folio` as a user who cannot read a mode-000 file. Under root (CI
/// containers) permissions do not stop reads, so the CLI runs as `nobody`,
/// which needs the data folder to be its own.
fn folio_as_user(corpus: &Path, data_dir: &Path) -> Command {
    let privileged = std::fs::File::open(corpus.join("unreadable.md")).is_ok();
    let mut command = if privileged {
        for dir in [data_dir.parent().unwrap(), corpus] {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::os::unix::fs::chown(data_dir, Some(65534), Some(65534)).unwrap();
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
        c.arg(env!("CARGO_BIN_EXE_folio"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_folio"))
    };
    command.env("FOLIO_CONFIG", "/dev/null");
    command.arg("--data-dir").arg(data_dir);
    command
}

/// Waits for `pid` and returns its exit status and peak resident set in MiB.
fn wait_with_peak_rss(pid: u32) -> (i32, u64) {
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid as libc::pid_t, "wait4 failed");
    // Linux reports ru_maxrss in KiB.
    (status, usage.ru_maxrss as u64 / 1024)
}

/// Peak RSS in MiB of `folio add` over a folder of links to `names` in the
/// corpus, run under `data_limit` bytes of data (RLIMIT_DATA: heap and
/// private writable mappings) when given.
fn peak_rss_adding(
    corpus: &Path,
    root: &Path,
    label: &str,
    names: &[&str],
    data_limit: Option<u64>,
) -> u64 {
    let folder = root.join(label);
    std::fs::create_dir(&folder).unwrap();
    for name in names {
        std::os::unix::fs::symlink(corpus.join(name), folder.join(name)).unwrap();
    }
    let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
    command
        .env("FOLIO_CONFIG", "/dev/null")
        .arg("--data-dir")
        .arg(root.join(format!("{label}-data")))
        .arg("add")
        .arg(&folder)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(bytes) = data_limit {
        limit_data(&mut command, bytes);
    }
    let child = command.spawn().unwrap();
    let (status, peak) = wait_with_peak_rss(child.id());
    assert_eq!(
        status, 0,
        "folio add {label} failed (status {status}; a process over its data limit aborts)"
    );
    peak
}

/// Runs `command` under a data limit of `bytes` (RLIMIT_DATA: heap and
/// private writable mappings), as a memory limit would hold it.
fn limit_data(command: &mut Command, bytes: u64) {
    let limit = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: bytes,
    };
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        command.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_DATA, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// What the Library view reads, from a second connection: how long the
/// slowest read took while ingestion ran, and how many reads there were.
async fn read_while_ingesting(db: &Path, running: impl Fn() -> bool) -> (Duration, usize) {
    while running() && !db.exists() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let store = Store::open(db)
        .await
        .expect("open the store being ingested");
    let (mut slowest, mut reads) = (Duration::ZERO, 0);
    while running() {
        let start = Instant::now();
        store.counts().await.unwrap();
        store.folder_summaries().await.unwrap();
        store.failed_documents(50).await.unwrap();
        slowest = slowest.max(start.elapsed());
        reads += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    store.close().await;
    (slowest, reads)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_hostile_file_gets_its_promised_outcome() {
    let root = tempfile::tempdir().unwrap();
    let corpus = root.path().join("corpus");
    let data_dir = root.path().join("data");
    std::fs::create_dir(&data_dir).unwrap();
    let soak = Soak::from_env();
    let expected = build_corpus(
        &corpus,
        soak.pick(TINY_FILES_CI, TINY_FILES_FULL),
        soak.pick(SCAN_PAGES_CI, SCAN_PAGES_FULL),
    );

    let small = peak_rss_adding(&corpus, root.path(), "small", &["good.md"], None);
    let big = peak_rss_adding(
        &corpus,
        root.path(),
        "big",
        &["good.md", "huge-200mb.txt", "sparse-1gb.md"],
        None,
    );
    eprintln!("peak RSS of folio add: {small} MiB for one note, {big} MiB with the 200 MB and 1 GB files beside it");
    assert!(
        big < small + BIG_FILES_RSS_ALLOWANCE_MIB,
        "the big files cost {} MiB",
        big.saturating_sub(small)
    );

    // Files are prepared on as many threads as there are cores, so as many
    // bombs or expansions may be open at once; without the budget each
    // would take its full 512 MiB or more (the workbook 4 GiB). They run
    // under the bound's memory limit: a process over it dies (and, before
    // the budget, died again on every retry).
    let at_once = cores().min(BOMBS.len() as u64);
    let refused: Vec<&str> = std::iter::once("good.md")
        .chain(BOMBS)
        .chain(EXPANSIONS)
        .collect();
    let bombs = peak_rss_adding(&corpus, root.path(), "bombs", &refused, Some(data_limit()));
    eprintln!(
        "peak RSS of folio add with {} compression bombs and {} expansions: {bombs} MiB",
        BOMBS.len(),
        EXPANSIONS.len()
    );
    assert!(
        bombs < small + at_once * (BUDGET_MIB + PARSER_MIB),
        "the bombs and expansions cost {} MiB with {at_once} prepared at once",
        bombs.saturating_sub(small)
    );

    let scan = peak_rss_adding(
        &corpus,
        root.path(),
        "scan",
        &["good.md", "long-scan.pdf"],
        None,
    );
    eprintln!(
        "peak RSS of folio add with a scan of {} pages: {scan} MiB",
        soak.pick(SCAN_PAGES_CI, SCAN_PAGES_FULL)
    );
    assert!(
        scan < small + SCAN_RSS_ALLOWANCE_MIB,
        "the scan cost {} MiB",
        scan.saturating_sub(small)
    );

    let log = root.path().join("add.log");

    // The whole corpus, every hostile kind together, under the bound's
    // memory limit.
    let mut command = folio_as_user(&corpus, &data_dir);
    limit_data(&mut command, data_limit());
    let child = command
        .arg("add")
        .arg(&corpus)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id();
    let waiter = std::thread::spawn(move || wait_with_peak_rss(pid));
    let started = Instant::now();
    let (slowest_read, reads) =
        read_while_ingesting(&data_dir.join("folio.sqlite"), || !waiter.is_finished()).await;
    let (status, peak_rss_mib) = waiter.join().unwrap();
    eprintln!(
        "hostile corpus: ingested in {:.0?}, peak RSS {peak_rss_mib} MiB, \
         {reads} reads of the library meanwhile, slowest {slowest_read:.0?}",
        started.elapsed()
    );
    assert_eq!(
        status,
        0,
        "folio add failed: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    let bound = small + bounded_files() * (BUDGET_MIB + PARSER_MIB);
    assert!(
        peak_rss_mib < bound,
        "the corpus peaked at {peak_rss_mib} MiB, over the bound of {bound} MiB"
    );
    assert!(reads > 0, "no read happened while ingesting");
    assert!(
        slowest_read < READ_LATENCY_LIMIT,
        "a read of the library took {slowest_read:?}"
    );

    let library = open(&data_dir).await;
    for (key, want) in &expected {
        let path: PathBuf = corpus.join(OsStr::from_bytes(&want.name));
        check(&library, key, &path, want).await;
    }
    assert_consistent(&library).await;
}

async fn check(library: &folio_engine::Library, key: &str, path: &Path, want: &Expected) {
    let store = library.store();
    if let Some(files) = want.folder {
        let indexed: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM documents WHERE path LIKE ?1 || '/%' AND status = 'indexed'",
        )
        .bind(folio_engine::path_text::to_text(path))
        .fetch_one(store.pool())
        .await
        .unwrap();
        assert_eq!(indexed, files, "{key}: every file in the folder is indexed");
        return;
    }
    let doc = store
        .document(&folio_engine::path_text::to_text(&path))
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{key}: no record at all"));
    match (&want.error, &want.lossy) {
        (Some(reason), _) => {
            let error = doc.error.as_deref().unwrap_or_default();
            assert!(
                error.contains(reason.as_str()),
                "{key}: expected an error containing {reason:?}, got {doc:?}"
            );
        }
        (None, lossy) => {
            assert_eq!(doc.status, "indexed", "{key}: {doc:?}");
            match lossy {
                Some(note) => assert!(
                    doc.note
                        .as_deref()
                        .unwrap_or_default()
                        .contains(note.as_str()),
                    "{key}: expected a note containing {note:?}, got {doc:?}"
                ),
                None => assert!(
                    (want.indexed || want.empty) && doc.note.is_none(),
                    "{key}: {doc:?}"
                ),
            }
            let chunks = store.chunks_of(doc.id).await.unwrap();
            assert_eq!(
                chunks.is_empty(),
                want.empty,
                "{key}: {} chunks",
                chunks.len()
            );
            for kept in &want.present {
                assert!(
                    chunks.iter().any(|c| c.text.contains(kept.as_str())),
                    "{key}: {kept:?} was not indexed"
                );
            }
            if let Some(pages) = want.ocr_pages {
                let read: i64 =
                    sqlx::query_scalar("SELECT COUNT(*) FROM ocr_pages WHERE document_id = ?")
                        .bind(doc.id)
                        .fetch_one(store.pool())
                        .await
                        .unwrap();
                assert_eq!(read, pages, "{key}: pages read by OCR");
            }
            for gone in &want.absent {
                assert!(
                    chunks.iter().all(|c| !c.text.contains(gone.as_str())),
                    "{key}: {gone:?} was indexed"
                );
            }
        }
    }
}
