//! OCR on the real parts: Debian's Tesseract and poppler, pages drawn in the
//! test (text rendered by poppler, then put into a PDF as an image with no
//! text layer), the real embedding model and the real CLI.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use common::engine::{folio, folio_json, open, scalar};
use common::fixtures::{rendered_page, repeated_scan_pdf, scanned_pdf_bytes};
use folio_engine::documents::loaders::ocr::{OcrWord, Recognized, PAGES_PER_BATCH};
use folio_engine::documents::loaders::{
    load, Format, LoadError, LoadOptions, OcrSettings, PageLog, PdfRect,
};

const BUDGET: u64 = 256 << 20;

const KEEPER: &str = "The lighthouse keeper logged every passing schooner.";
const TYPED: &str = "A typed page about barometers and tides.";
const CLIFFS: &str = "Cormorants nest on the northern cliffs each spring.";

fn words(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn all_text(doc: &folio_engine::documents::loaders::LoadedDocument) -> String {
    let texts: Vec<&str> = doc.tree.nodes().iter().map(|n| n.text.as_str()).collect();
    words(&texts.join("\n"))
}

#[test]
fn scanned_pages_are_read_one_by_one_with_a_confidence_each() {
    let bytes = scanned_pdf_bytes(&[(KEEPER, true), (TYPED, false), (CLIFFS, true)]);
    let progress = Mutex::new(Vec::new());
    let on_page = |done, total| progress.lock().unwrap().push((done, total));
    let options = LoadOptions {
        budget: BUDGET,
        ocr: OcrSettings::default(),
        on_ocr_page: &on_page,
        interrupted: &|| false,
        resume: None,
    };
    let doc = load(Format::Pdf, &bytes, "scan", &options).expect("the scan loads");
    let text = all_text(&doc);
    for line in [KEEPER, TYPED, CLIFFS] {
        assert!(text.contains(&words(line)), "{line:?} not in {text:?}");
    }
    // Only the pages without a text layer went to OCR, in page order.
    let pages: Vec<u32> = doc.ocr_pages.iter().map(|p| p.page).collect();
    assert_eq!(pages, [1, 3]);
    for page in &doc.ocr_pages {
        assert!(page.confidence > 0.8, "{page:?}");
    }
    assert_eq!(*progress.lock().unwrap(), [(1, 2), (2, 2)]);
    // The page's text is where its span says: page 3's paragraph is on page 3.
    let cliffs = doc
        .tree
        .nodes()
        .iter()
        .find(|n| words(&n.text).contains("cormorants"))
        .expect("page 3's paragraph");
    assert_eq!(cliffs.span.page, Some(3));
    // And its words are boxed where the scan shows them: the page was
    // typed in 12-point Helvetica from x = 72 on a baseline at 770 before
    // it was rendered into an image.
    let boxes = doc.boxes(&cliffs.span);
    assert_eq!(boxes.len(), 1, "{boxes:?}");
    let line = boxes[0];
    assert!((line.x0 - 72.0).abs() < 3.0, "{line:?}");
    assert!(
        line.x1 > 300.0 && line.y0 > 765.0 && line.y0 < 771.0,
        "{line:?}"
    );
    assert!((line.y1 - 779.0).abs() < 3.0, "{line:?}");
}

#[test]
fn with_ocr_off_scans_say_how_to_read_them() {
    let mixed = scanned_pdf_bytes(&[(KEEPER, true), (TYPED, false)]);
    let doc = load(Format::Pdf, &mixed, "mixed", &LoadOptions::budget(BUDGET)).unwrap();
    assert!(doc.ocr_pages.is_empty());
    assert!(!all_text(&doc).contains("schooner"));

    let scan = scanned_pdf_bytes(&[(KEEPER, true)]);
    match load(Format::Pdf, &scan, "scan", &LoadOptions::budget(BUDGET)) {
        Err(e @ LoadError::Empty { .. }) => {
            assert!(e.to_string().contains("turn OCR on"), "{e}")
        }
        other => panic!("{:?}", other.map(|d| d.tree.len())),
    }
}

/// Enough small scanned pages that every core takes a batch and many are
/// still left: a stop after the first batch leaves pages unread. The pages
/// are counted on the thread that gathers results, so on a busy machine
/// workers can take a few more batches before the stop is seen; two spare
/// batches were once not enough (a clean-clone run with a build beside it).
fn pages_for_a_stop() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    (3 * cores + 2) * PAGES_PER_BATCH
}

const LINE: &str = "The harbour log goes on for pages.";

#[test]
fn ocr_stops_between_batches_when_the_pass_is_stopped() {
    let pages = pages_for_a_stop();
    let bytes = repeated_scan_pdf(LINE, pages);
    let read = AtomicUsize::new(0);
    let on_page = |_, _| {
        read.fetch_add(1, Ordering::SeqCst);
    };
    let interrupted = || read.load(Ordering::SeqCst) > 0;
    let options = LoadOptions {
        ocr: OcrSettings::default(),
        on_ocr_page: &on_page,
        interrupted: &interrupted,
        ..LoadOptions::budget(BUDGET)
    };
    assert!(matches!(
        load(Format::Pdf, &bytes, "scan", &options),
        Err(LoadError::Interrupted)
    ));
    let read = read.load(Ordering::SeqCst);
    assert!(read > 0 && read < pages, "{read} of {pages} pages read");
}

#[test]
fn a_stopped_read_resumes_at_the_page_it_reached() {
    let pages = pages_for_a_stop();
    let bytes = repeated_scan_pdf(LINE, pages);
    let dir = tempfile::tempdir().unwrap();
    let ocr = OcrSettings::default();
    let log = PageLog::open(dir.path(), "5ca9", &ocr).unwrap();
    let read = AtomicUsize::new(0);
    let on_page = |_, _| {
        read.fetch_add(1, Ordering::SeqCst);
    };
    let interrupted = || read.load(Ordering::SeqCst) > 0;
    let stopping = LoadOptions {
        ocr: ocr.clone(),
        on_ocr_page: &on_page,
        interrupted: &interrupted,
        resume: Some(&log),
        ..LoadOptions::budget(BUDGET)
    };
    assert!(matches!(
        load(Format::Pdf, &bytes, "scan", &stopping),
        Err(LoadError::Interrupted)
    ));
    drop(log);

    // The pages read before the stop were kept; the last page never was.
    let log = PageLog::open(dir.path(), "5ca9", &ocr).unwrap();
    let kept = log.page(1).expect("page 1 is in the log");
    assert!(words(&kept.text).contains("harbour log"), "{kept:?}");
    assert!(log.page(pages as u32).is_none());
    drop(log);

    // The next read takes logged pages from the log, not from OCR: a log
    // whose page 1 says something else shows which was used.
    let other = tempfile::tempdir().unwrap();
    let log = PageLog::open(other.path(), "5ca9", &ocr).unwrap();
    log.record(
        1,
        &Recognized {
            text: "Logged before the stop.".to_owned(),
            confidence: Some(0.7),
            // "Logged", 120 × 40 pixels at 30, 30 from the top left.
            words: vec![OcrWord {
                start: 0,
                end: 6,
                left: 30,
                top: 30,
                width: 120,
                height: 40,
            }],
        },
    );
    drop(log);
    let log = PageLog::open(other.path(), "5ca9", &ocr).unwrap();
    let progress = Mutex::new(Vec::new());
    let on_page = |done, total| progress.lock().unwrap().push((done, total));
    let resuming = LoadOptions {
        ocr: ocr.clone(),
        on_ocr_page: &on_page,
        resume: Some(&log),
        ..LoadOptions::budget(BUDGET)
    };
    let doc = load(Format::Pdf, &bytes, "scan", &resuming).unwrap();
    let first = doc
        .tree
        .nodes()
        .iter()
        .find(|n| n.span.page == Some(1))
        .unwrap();
    assert_eq!(first.text, "Logged before the stop.");
    assert_eq!(doc.ocr_pages[0].confidence, 0.7);
    // Its word's box came through the log too: pixels at 300 dpi from the
    // top left of the 432 × 72 point page, back in PDF points.
    let boxes = doc.boxes(&first.span);
    let expected = [7.2, 55.2, 36.0, 64.8];
    assert_eq!(boxes.len(), 1, "{boxes:?}");
    let PdfRect { x0, y0, x1, y1 } = boxes[0];
    for (got, want) in [x0, y0, x1, y1].into_iter().zip(expected) {
        assert!((got - want).abs() < 1e-3, "{boxes:?}");
    }
    assert_eq!(doc.ocr_pages.len(), pages);
    // Every page counts in the progress, the logged one first.
    let progress = progress.into_inner().unwrap();
    assert_eq!(progress.len(), pages);
    assert_eq!(progress[0], (1, pages as u32));
    // The pages read in this pass went into the log too.
    drop(log);
    let log = PageLog::open(other.path(), "5ca9", &ocr).unwrap();
    assert!(log.page(pages as u32).is_some());
}

#[test]
fn a_language_that_is_not_installed_says_what_to_install() {
    let bytes = scanned_pdf_bytes(&[(KEEPER, true)]);
    let options = LoadOptions {
        ocr: OcrSettings {
            enabled: true,
            languages: vec!["qqq".to_owned()],
        },
        ..LoadOptions::budget(BUDGET)
    };
    let error = load(Format::Pdf, &bytes, "scan", &options)
        .unwrap_err()
        .to_string();
    assert!(error.contains("OCR could not run"), "{error}");
    assert!(error.contains("tesseract-ocr-<language>"), "{error}");
}

#[test]
fn an_image_too_large_to_read_is_refused_before_ocr_sees_it() {
    // A PNG whose header claims 100,000 × 100,000 pixels: 37 GiB decoded.
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    png.extend(100_000u32.to_be_bytes());
    png.extend(100_000u32.to_be_bytes());
    png.extend([8, 0, 0, 0, 0, 0, 0, 0, 0]);
    let options = LoadOptions {
        ocr: OcrSettings::default(),
        ..LoadOptions::budget(BUDGET)
    };
    match load(Format::Image, &png, "huge", &options) {
        Err(e @ LoadError::Ocr(_)) => assert!(e.to_string().contains("100000 × 100000"), "{e}"),
        other => panic!("{:?}", other.map(|d| d.tree.len())),
    }
}

#[test]
fn scans_and_images_are_found_by_search_and_marked_as_read_by_ocr() {
    let (data, docs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(
        docs.path().join("logbook.pdf"),
        scanned_pdf_bytes(&[(TYPED, false), (CLIFFS, true)]),
    )
    .unwrap();
    std::fs::write(
        docs.path().join("note.png"),
        rendered_page(KEEPER, 300, "-png"),
    )
    .unwrap();
    let added = folio(data.path(), &["add", docs.path().to_str().unwrap()]);
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    for (query, file, page) in [
        ("cormorants cliffs", "logbook.pdf", 2),
        ("schooner", "note.png", 1),
    ] {
        let hits = folio_json(data.path(), &["search", query, "--mode", "bm25", "-k", "3"]);
        let top = &hits[0];
        assert!(
            top["path"].as_str().unwrap().ends_with(file),
            "{query}: {hits}"
        );
        assert_eq!(top["page"], page, "{hits}");
        let confidence = top["ocr"]["confidence"].as_f64().expect("marked as OCR");
        assert!(confidence > 0.8, "{hits}");
        assert_eq!(top["ocr"]["doubtful"], false);
    }
    // The typed page of the same PDF is not marked.
    let typed = folio_json(
        data.path(),
        &["search", "barometers", "--mode", "bm25", "-k", "1"],
    );
    assert_eq!(typed[0]["page"], 1);
    assert!(typed[0]["ocr"].is_null(), "{typed}");

    // With OCR off the image is not a document, and the scan says why it
    // has no text.
    let off = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_folio"))
        .env("FOLIO_OCR", "off")
        .arg("--data-dir")
        .arg(off.path())
        .args(["add", docs.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let hits = folio_json(
        off.path(),
        &["search", "schooner", "--mode", "bm25", "-k", "3"],
    );
    assert_eq!(hits.as_array().map(Vec::len), Some(0), "{hits}");
    let typed = folio_json(
        off.path(),
        &["search", "barometers", "--mode", "bm25", "-k", "1"],
    );
    assert!(typed[0]["path"].as_str().unwrap().ends_with("logbook.pdf"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scan_killed_part_way_resumes_from_its_page_log_and_the_log_goes_once_stored() {
    const PAGES: usize = 160;
    let (data, docs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(docs.path().join("log.pdf"), repeated_scan_pdf(LINE, PAGES)).unwrap();
    let folio_add = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_folio"))
            .env("FOLIO_CONFIG", "/dev/null")
            .arg("--data-dir")
            .arg(data.path())
            .args(["add", docs.path().to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let logs = data.path().join("ocr-pages");
    let logged = || -> usize {
        std::fs::read_dir(&logs)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| {
                        std::fs::read_to_string(e.path())
                            .unwrap_or_default()
                            .lines()
                            .count()
                    })
                    .sum()
            })
            .unwrap_or(0)
    };

    let mut first = folio_add();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while logged() < PAGES_PER_BATCH && std::time::Instant::now() < deadline {
        assert!(
            first.try_wait().unwrap().is_none(),
            "folio add ended before it was killed"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    let kept = logged();
    assert!(
        (PAGES_PER_BATCH..PAGES).contains(&kept),
        "{kept} pages logged"
    );

    let second = folio_add().wait().unwrap();
    assert!(second.success());
    let hits = folio_json(
        data.path(),
        &["search", "harbour", "--mode", "bm25", "-k", "1"],
    );
    assert!(
        hits[0]["path"].as_str().unwrap().ends_with("log.pdf"),
        "{hits}"
    );
    // Stored, every page with its confidence; the log went with the pass.
    assert_eq!(logged(), 0);
    let library = open(data.path()).await;
    let read = scalar(&library, "SELECT COUNT(*) FROM ocr_pages").await;
    assert_eq!(read, PAGES as i64);
}
