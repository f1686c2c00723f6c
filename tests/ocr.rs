//! OCR on the real parts: Debian's Tesseract and poppler, pages drawn in the
//! test (text rendered by poppler, then put into a PDF as an image with no
//! text layer), the real embedding model and the real CLI.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use common::engine::{folio, folio_json};
use common::fixtures::{rendered_page, scanned_pdf_bytes};
use folio::ingest::loaders::{load, Format, LoadError, LoadOptions, OcrSettings};

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

fn all_text(doc: &folio::ingest::loaders::LoadedDocument) -> String {
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

#[test]
fn ocr_stops_between_pages_when_the_pass_is_stopped() {
    let bytes = scanned_pdf_bytes(&[(KEEPER, true), (CLIFFS, true)]);
    let stop = AtomicBool::new(false);
    let on_page = |_, _| stop.store(true, Ordering::SeqCst);
    let interrupted = || stop.load(Ordering::SeqCst);
    let options = LoadOptions {
        budget: BUDGET,
        ocr: OcrSettings::default(),
        on_ocr_page: &on_page,
        interrupted: &interrupted,
    };
    assert!(matches!(
        load(Format::Pdf, &bytes, "scan", &options),
        Err(LoadError::Interrupted)
    ));
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
